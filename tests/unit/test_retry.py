"""Throttled answers (429/503 with Retry-After) are retried within the profile's budget
(``conformance.bankside.retry``), against a reference server that throttles like a gateway; the
pacer keeps a run under the profile's rate_limit; the run's workers are sized for the distance
to the target (``conformance.bankside.concurrency``)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from conformance.bankside.client import TargetClient
from conformance.bankside.concurrency import (
    choose_concurrency,
    fastest_answer,
    is_loopback,
    round_trip,
)
from conformance.bankside.retry import Pacer, RetryPolicy, retry_after_seconds, worker_share
from reference_server.app import Application, Throttle
from reference_server.transport.http import start

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


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_the_pacer_spaces_requests_evenly_under_the_rate() -> None:
    clock = FakeClock()
    pacer = Pacer(4.0, clock=clock, sleep=clock.sleep)
    waits = [pacer.wait() for _ in range(5)]
    assert waits == [0.0, 0.25, 0.25, 0.25, 0.25]  # 4 a second, evenly
    clock.now += 10  # idle time is not saved up for a burst
    assert pacer.wait() == 0.0 and pacer.wait() == 0.25
    assert Pacer(None).wait() == 0.0


def test_the_rate_limit_is_shared_between_the_workers() -> None:
    assert worker_share(20.0, 4) == 5.0
    assert worker_share(20.0, 0) == 20.0
    assert worker_share(None, 4) is None


def test_a_client_under_a_rate_limit_sends_no_faster() -> None:
    running = start(Application())
    try:
        with TargetClient(running.url, pacer=Pacer(50.0)) as client:
            started = time.monotonic()
            for _ in range(6):
                client.get("/v1/accounts")
            assert time.monotonic() - started >= 5 / 50.0
    finally:
        running.stop()


@pytest.mark.parametrize(
    ("samples", "rate_limit", "cpus", "workers", "threads"),
    [
        ((0.0004,), None, 2, 2, 1),  # the bundled server, one sample: CPU-bound
        ((0.0004, 0.0004), None, 2, 2, 1),  # near: CPU-bound
        # a busy machine: some answers queue for the CPUs, one does not: CPU-bound still
        ((0.1, 0.020, 0.0015, 0.030, 0.009, 0.012), None, 2, 2, 1),
        ((), None, 2, 2, 1),  # not measured
        ((0.200, 0.025, 0.025, 0.026), None, 2, 2, 10),  # the cold start left out
        ((0.025, 0.025), None, 8, 8, 10),  # never more processes than CPUs
        ((0.3, 0.3), None, 2, 2, 16),  # at most 16 in flight per worker
        ((0.025, 0.025), 20.0, 2, 1, 1),  # 20 a second keep one busy at 25 ms
        ((0.2, 0.2), 20.0, 8, 4, 1),  # at 200 ms, four
        ((0.2, 0.2), 40.0, 2, 2, 4),  # 8 in flight: 2 workers x 4
        ((0.0004,), 5.0, 2, 1, 1),
    ],
)
def test_concurrency_is_chosen_by_the_answer_time(
    samples: tuple[float, ...],
    rate_limit: float | None,
    cpus: int,
    workers: int,
    threads: int,
) -> None:
    chosen = choose_concurrency(samples=samples, rate_limit=rate_limit, cpus=cpus)
    assert (chosen.workers, chosen.threads) == (workers, threads), chosen.reason
    assert chosen.line().startswith("conformance: ")


def test_a_slow_loopback_target_gets_scenarios_in_flight() -> None:
    # a bank behind `kubectl port-forward` or an SSH tunnel: a loopback address, answers 25 ms
    # away; what counts is the answer time, not the address
    samples = (0.031, 0.026, 0.025, 0.027, 0.025, 0.026)
    chosen = choose_concurrency(samples=samples, where="the target (a loopback address)", cpus=2)
    assert (chosen.workers, chosen.threads) == (2, 10)
    assert chosen.line() == (
        "conformance: 2 workers, 10 scenarios in flight in each (the target (a loopback "
        "address) is 26 ms away (median of 5 answers after the first, the fastest 25 ms): one "
        "worker per CPU, the waits overlapped)"
    )


def test_the_round_trip_leaves_the_cold_start_out() -> None:
    assert round_trip(()) is None
    assert round_trip((0.5,)) == 0.5
    assert round_trip((0.5, 0.02, 0.03, 0.04)) == 0.03
    assert fastest_answer(()) is None
    assert fastest_answer((0.5,)) == 0.5
    assert fastest_answer((0.001, 0.02, 0.03, 0.04)) == 0.02


def test_the_choice_line_says_what_and_why() -> None:
    samples = (0.004, 0.0015, 0.0012)
    line = choose_concurrency(samples=samples, where="the bundled server", cpus=2).line()
    assert line == (
        "conformance: 2 workers, one scenario at a time (the bundled server answers in 1.2 ms "
        "(the fastest of 2 after the first): CPU-bound, one worker per CPU)"
    )
    far = choose_concurrency(samples=(0.1, 0.025), cpus=2)
    assert far.line().startswith("conformance: 2 workers, 10 scenarios in flight in each (")
    assert "the target is 25 ms away" in far.line()


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8000", True),
        ("http://127.0.0.2:8000/api", True),
        ("https://localhost:8443", True),
        ("http://[::1]:8000", True),
        ("https://psd2.bank.invalid", False),
        ("http://192.0.2.10:8000", False),
    ],
)
def test_a_loopback_target_is_recognised(url: str, loopback: bool) -> None:
    assert is_loopback(url) is loopback
