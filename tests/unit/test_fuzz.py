"""The seeded negative-mode fuzz (``bench.fuzz``; issue 14): a sample of every operation's
requests broken at random, signed, gets no 5xx and logs no traceback; the cases are the same for
the same seed. The benchmark runs 10,000 (``python -m bench fuzz``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.fuzz import cases, run_fuzz
from conformance.contract import load_contract
from reference_server.app import Application
from reference_server.transport.http import RunningServer, start


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    running = start(Application())
    yield running
    running.stop()


def test_the_cases_are_the_same_for_a_seed_and_cover_every_operation() -> None:
    first, again = list(cases(11, 93)), list(cases(11, 93))
    assert first == again
    assert {case.operation for case in first} == set(load_contract().operations)
    assert list(cases(12, 93)) != first


def test_a_seeded_sample_gets_no_server_error_and_no_traceback(server: RunningServer) -> None:
    result, tracebacks = run_fuzz(server.url, cases(20261125, 400))
    assert result.sent == 400
    assert result.server_errors == [] and tracebacks == 0
    assert sum(n for status, n in result.statuses.items() if 400 <= status < 500) > 200
