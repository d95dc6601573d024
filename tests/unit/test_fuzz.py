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


def test_the_signed_sample_includes_bodies_nested_past_the_bounded_reader() -> None:
    """The fuzz's deep JSON goes past the bounded reader's 64 levels and Python's recursion
    limit (security-5.md M4: a 500 with a traceback once)."""
    said = [case.what for case in cases(20261125, 400)]
    assert any("nested 100000 deep" in what for what in said)
    assert any("nested 65 deep" in what for what in said)


def test_framing_attacks_get_a_status_below_500_and_no_traceback(server: RunningServer) -> None:
    """security-5.md H2, M5, L5, L6, L16, L21 and deep bodies, as raw requests: every case gets
    a status line below 500 (no silent close), and the server logs no traceback."""
    from bench.fuzz_framing import framing_cases, run_framing

    result, unanswered, tracebacks = run_framing(server.url, framing_cases(20261129, 96))
    assert result.sent == 96 and unanswered == []
    assert result.server_errors == [] and tracebacks == 0


def test_framing_attacks_through_the_proxy_are_refused_and_judging_goes_on(
    server: RunningServer,
) -> None:
    """The same cases through ``conformance proxy`` in front of the server, its judge on: every
    case answered below 500, nothing the judge failed on, no traceback."""
    from bench.fuzz_framing import framing_cases, run_framing
    from conformance.traffic.options import judge_for
    from conformance.traffic.proxy import JudgeWorker, Upstream, start_proxy
    from conformance.traffic.session import TrafficSession

    session = TrafficSession(judge_for(None, []), quiet=True)
    worker = JudgeWorker(session.take, lambda _verdict: None)
    proxy = start_proxy(Upstream(server.url), worker.put)
    try:
        result, unanswered, tracebacks = run_framing(proxy.url, framing_cases(20261129, 96))
    finally:
        proxy.stop()
        worker.close()
    assert result.sent == 96 and unanswered == []
    assert result.server_errors == [] and tracebacks == 0
    assert session.unjudged == []
