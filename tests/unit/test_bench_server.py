"""The server benchmark's machinery (``bench/bench_server.py``, ``bench/load.py``,
``bench/bare_server.py``, ``python -m bench NAME``): requests are counted, percentiles ordered,
wrong statuses caught, the pre-signed requests are the bytes httpx would send. The speed budget
itself is checked by ``python -m bench server``, not here."""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator

import httpx
import pytest
from serving_support import running

from bench.__main__ import discover, select
from bench.bare_server import BODY, BareHandler, BareServer
from bench.bench_server import (
    ServerBenchmark,
    ServerFigures,
    bare_command,
    floor_request,
    measure,
    report,
    server_process,
    to_raw,
)
from bench.load import (
    LoadPool,
    LoadRound,
    RawRequest,
    WorkerSample,
    percentile,
    process_cpu_seconds,
    summarise,
)

_GET = b"GET /anything HTTP/1.1\r\nHost: bench\r\n\r\n"
_POST = b'POST /anything HTTP/1.1\r\nHost: bench\r\nContent-Length: 7\r\n\r\n{"a":1}'


@pytest.fixture
def bare() -> Iterator[tuple[str, int]]:
    """The bare handler in a thread of this process (port 0)."""
    with running(BareServer(("127.0.0.1", 0), BareHandler)) as server:
        yield str(server.server_address[0]), int(server.server_address[1])


def test_percentile_is_nearest_rank() -> None:
    values = [float(n) for n in range(1, 101)]
    assert percentile(values, 0.50) == 50.0
    assert percentile(values, 0.90) == 90.0
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 1.0) == 100.0
    assert percentile([7.0], 0.99) == 7.0
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_summarise_counts_every_worker_and_sums_their_rates() -> None:
    first = WorkerSample(2.0, array("d", [0.001] * 98 + [0.010, 0.020]), 0, None)
    second = WorkerSample(1.0, array("d", [0.002] * 50), 3, "E16: 400 (expected 201) {}")
    summary = summarise([first, second], server_cpu_seconds=0.3)
    assert summary.requests == 150
    assert summary.throughput == pytest.approx(100 / 2.0 + 50 / 1.0)
    assert summary.p50 <= summary.p90 <= summary.p99
    assert (summary.p50, summary.p99) == (0.001, 0.010)  # ranks 75 and 149 of 150
    assert summary.cpu_per_request == pytest.approx(0.3 / 150)
    assert summary.unexpected == 3
    assert summary.first_unexpected == "E16: 400 (expected 201) {}"


def _round(throughput: float, server_cpu_seconds: float | None) -> LoadRound:
    return LoadRound(10, throughput, 0.001, 0.002, 0.003, server_cpu_seconds, 0, None)


@pytest.mark.parametrize("reference_cpu", [None, 0.0])
def test_a_round_without_a_cpu_reading_is_compared_by_wall_time(
    reference_cpu: float | None,
) -> None:
    """No /proc, or fewer requests than one clock tick of CPU: the wall-time ratio, not 0."""
    result = ServerBenchmark(
        reference=ServerFigures("reference", (_round(100.0, reference_cpu),)),
        bare=ServerFigures("bare", (_round(400.0, 0.01),)),
        floor=None,
        workers=1,
        duration=1.0,
    )
    assert result.basis == "wall time"
    assert result.ratio == pytest.approx(4.0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_process_cpu_seconds_reads_this_process() -> None:
    import os

    before = process_cpu_seconds(os.getpid())
    assert before is not None and before > 0
    sum(n * n for n in range(300_000))
    after = process_cpu_seconds(os.getpid())
    assert after is not None and after >= before
    assert process_cpu_seconds(2**22 + 12345) is None  # beyond pid_max: no such process


def test_to_raw_is_the_request_httpx_would_send() -> None:
    request = httpx.Request(
        "POST",
        "http://127.0.0.1:8000/v1/payments/x?allowLogicalDuplicate=true",
        headers={"X-Request-ID": "r-1"},
        content=b'{"a": 1}',
    )
    raw = to_raw(request)
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/payments/x?allowLogicalDuplicate=true HTTP/1.1"
    assert b"Host: 127.0.0.1:8000" in lines
    assert b"X-Request-ID: r-1" in lines
    assert b"Content-Length: 8" in lines
    assert body == b'{"a": 1}'


def test_floor_request_keeps_the_header_block_on_the_control_route() -> None:
    signed = RawRequest(
        "E16",
        b"POST /v1/payments/x HTTP/1.1\r\nHost: h\r\nSignature: s\r\n"
        b"Content-Length: 2\r\nContent-Type: application/json\r\n\r\n{}",
        201,
    )
    floor = floor_request(signed)
    assert floor.data == b"GET /_control/clock HTTP/1.1\r\nHost: h\r\nSignature: s\r\n\r\n"
    assert floor.expected_status == 200


def test_load_pool_counts_requests_and_orders_percentiles(bare: tuple[str, int]) -> None:
    requests = [RawRequest("GET", _GET, 200), RawRequest("POST", _POST, 201)]
    with LoadPool(requests, workers=2) as pool:
        round_ = pool.run(*bare, duration=30.0, limit=25)
        again = pool.run(*bare, duration=30.0, limit=5)  # a second round on fresh connections
    assert round_.requests == 50
    assert again.requests == 10
    assert round_.unexpected == 0 and round_.first_unexpected is None
    assert 0 < round_.p50 <= round_.p90 <= round_.p99
    assert round_.throughput > 0
    assert round_.server_cpu_seconds is None  # no server pid given


def test_load_pool_reports_answers_with_an_unexpected_status(bare: tuple[str, int]) -> None:
    with LoadPool([RawRequest("GET wants 204", _GET, 204)], workers=1) as pool:
        round_ = pool.run(*bare, duration=30.0, limit=3)
    assert round_.unexpected == 3
    assert round_.first_unexpected is not None
    assert round_.first_unexpected.startswith("GET wants 204: 200 (expected 204)")
    assert BODY.decode() in round_.first_unexpected


def test_bare_server_script_announces_its_url_and_answers() -> None:
    with server_process("bare", bare_command(), timeout=30) as bare:
        assert bare.url.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=bare.url) as client:
            answer = client.post("/v1/anything", content=b"{}")
        assert answer.status_code == 201
        assert answer.content == BODY
        assert answer.headers["content-length"] == str(len(BODY))
    assert bare.process.poll() is not None  # stopped on leaving the block


def test_bench_main_selects_modules_by_short_or_full_name() -> None:
    available = discover()
    assert "bench.bench_server" in available and "bench.bench_signing" in available
    for name in ("server", "bench_server", "bench.bench_server", "bench/bench_server.py"):
        assert select([name], available) == ["bench.bench_server"]
    assert select(["signing", "server"], available) == ["bench.bench_signing", "bench.bench_server"]
    with pytest.raises(
        ValueError,
        match="no benchmark 'nope'; known: bundled, fuzz, hostile, latency, maketest, prism, "
        "proxy, server, signing, suite, validator",
    ):
        select(["nope"], available)


def test_measure_runs_both_servers_with_signed_requests() -> None:
    """The whole path, tiny: both server processes, SDF set-up, signed E12 + E16 replayed
    (each accepted, or ``measure`` raises), one round of 2 x 6 requests per server and on the
    unsigned floor route; then once without the floor row."""
    result = measure(rounds=1, duration=30.0, workers=2, warmup=0.0, limit=6)
    assert result.floor is not None
    for figures in (result.reference, result.bare, result.floor):
        assert len(figures.rounds) == 1
        assert figures.requests == 12
        assert 0 < figures.p50 <= figures.p90 <= figures.p99
        assert figures.throughput > 0
        if sys.platform.startswith("linux"):
            assert figures.cpu_per_request is not None
    assert result.ratio > 0
    text = report(result)
    assert "baseline" in text and "reference server" in text and "/_control/clock" in text
    without_floor = measure(rounds=1, duration=30.0, workers=1, warmup=0.0, limit=2, floor=False)
    assert without_floor.floor is None
    assert without_floor.reference.requests == without_floor.bare.requests == 2
