"""Throttled answers (429/503 with Retry-After) are retried within the profile's budget
(``conformance.target.retry``), against a reference server that throttles like a gateway."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from conformance.target.client import TargetClient
from conformance.target.retry import RetryPolicy, retry_after_seconds
from reference_server.app import Application, Throttle
from reference_server.http import start

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds(format_datetime(NOW + timedelta(seconds=5), usegmt=True), NOW) == 5
    assert retry_after_seconds(format_datetime(NOW - timedelta(seconds=5), usegmt=True), NOW) == 0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


@pytest.mark.parametrize(
    ("status", "header", "retried", "waited", "delay"),
    [
        (429, "1", 0, 0.0, 1.0),
        (503, "0", 2, 0.0, 0.0),
        (429, "1", 3, 0.0, None),  # attempts used up
        (429, "31", 0, 0.0, None),  # beyond the total wait: the answer stands
        (429, None, 0, 0.0, None),  # no Retry-After: a verdict, not a throttle
        (400, "1", 0, 0.0, None),
    ],
)
def test_the_budget_bounds_retries(
    status: int, header: str | None, retried: int, waited: float, delay: float | None
) -> None:
    assert RetryPolicy(attempts=3, max_wait=30).delay(status, header, retried, waited) == delay


def test_a_throttled_request_is_retried_and_the_throttled_answers_are_kept() -> None:
    server = start(Application(modules=(), throttle=Throttle(every=2, retry_after=0)))
    try:
        client = TargetClient(server.url, sign=False, verify=False)
        first = client.get("/v1/nothing")  # 1st request: not throttled
        second = client.get("/v1/nothing")  # 2nd: throttled once, then answered
        assert first.status == second.status == 404 and not first.retries
        assert [retry.status for retry in second.retries] == [429]
        assert second.retries[0].response_header("retry-after") == "0"
        assert "after 1 throttled attempt(s)" in second.render()
        assert len(client.exchanges) == 3  # every attempt is recorded
        assert client.exchanges[-1].retries == second.retries  # the final one carries them
        client.close()
    finally:
        server.stop()


def test_without_a_budget_the_throttled_answer_stands() -> None:
    server = start(Application(modules=(), throttle=Throttle(every=1, retry_after=0)))
    try:
        client = TargetClient(server.url, sign=False, verify=False, retry=RetryPolicy(attempts=0))
        assert client.get("/v1/nothing").status == 429
        client.close()
    finally:
        server.stop()
