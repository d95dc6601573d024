"""The suite benchmark's machinery (``bench/bench_suite.py``, ``bench/replay.py``,
``bench/suite_recorder.py``): requests are counted from the server's log, the recorded mix is
replayed as many times as the suite sent requests, the floor's requests reach the server, and
the ratio and medians are computed as stated. The speed budget itself is checked by
``python -m bench suite``, not here."""

from __future__ import annotations

import base64
import json
from collections import Counter
from dataclasses import fields, replace
from pathlib import Path

import pytest

from bench.bench_suite import (
    BUDGET,
    SuiteBenchmark,
    SuiteRound,
    SuiteRun,
    Verdicts,
    check_round,
    floor_requests,
    load_recorded,
    logged_requests,
    logged_status,
    measure_round,
    ratio,
    report,
    status_classes,
    suite_command,
)
from bench.replay import ReplayRequest, split
from bench.suite_recorder import KEPT_HEADERS_EXCLUDED, exchange_record
from conformance.bankside.bundled import BundledIdentity, trust_anchor_arguments
from conformance.commands.run import PREFLIGHT_MOST, PREFLIGHT_SAMPLES
from conformance.exchange import Exchange


def _request(index: int) -> ReplayRequest:
    return ReplayRequest("GET", f"/v1/sandbox/customers?n={index}", (), b"")


def _run(seconds: float, requests: int = 100, verdicts: Verdicts | None = None) -> SuiteRun:
    return SuiteRun(
        seconds=seconds,
        requests=requests,
        recorded=requests - 4,
        workers=2,
        exit_code=0,
        verdicts=verdicts or Verdicts(passed=10, failed=0, errors=0, skipped=1),
        statuses=Counter({200: 60, 400: 40}),
        cpu_seconds=seconds * 1.5,
        server_cpu_seconds=1.0,
    )


def _round(suite_seconds: float, floor_seconds: float, requests: int = 100) -> SuiteRound:
    return SuiteRound(
        suite=_run(suite_seconds, requests),
        floor_seconds=floor_seconds,
        floor_requests=requests,
        floor_logged=requests,
        floor_statuses=Counter({200: 55, 404: 45}),
        floor_cpu_seconds=0.5,
        floor_server_cpu_seconds=None,
    )


def test_ratio_is_suite_over_floor() -> None:
    assert ratio(3.0, 2.0) == 1.5
    assert _round(9.0, 3.0).ratio == 3.0
    with pytest.raises(ValueError):
        ratio(1.0, 0.0)


def test_the_benchmark_takes_medians_and_the_median_of_the_rounds_ratios() -> None:
    result = SuiteBenchmark((_round(10.0, 5.0), _round(30.0, 10.0), _round(12.0, 4.0, 102)))
    assert result.suite_seconds == 12.0
    assert result.floor_seconds == 5.0
    assert result.ratio == 3.0  # rounds 2.0, 3.0, 3.0: not 12.0 / 5.0
    assert result.requests == 100
    assert result.suite_cpu == (18.0, 1.0)
    assert result.floor_cpu == (0.5, None)  # a round without /proc figures makes it unknown
    text = report(result)
    assert "ratio 3.00 (rounds: 2.00, 3.00, 3.00" in text
    assert f"budget {BUDGET:.2f}" in text
    assert "2 processes in parallel, ~50 requests each" in text
    assert "answers: suite 2xx 60 / 4xx 40; floor 2xx 55 / 4xx 45" in text


def test_a_round_is_refused_when_the_suite_fails_or_judges_differently() -> None:
    good = _round(10.0, 5.0)
    check_round(good, None, 0)
    check_round(good, good, 1)
    failed = replace(good, suite=replace(good.suite, exit_code=1))
    with pytest.raises(RuntimeError, match="exited with 1"):
        check_round(failed, None, 0)
    other = Verdicts(passed=9, failed=0, errors=0, skipped=2)
    judged = replace(good, suite=_run(10.0, verdicts=other))
    with pytest.raises(RuntimeError, match="differ from round 1"):
        check_round(judged, good, 1)
    short = replace(good, floor_logged=99)
    with pytest.raises(RuntimeError, match="logged 99"):
        check_round(short, None, 0)


def test_the_floor_repeats_the_recorded_mix_up_to_the_logged_count() -> None:
    recorded = [_request(index) for index in range(3)]
    chosen = floor_requests(recorded, 7)
    assert [item.path for item in chosen] == [recorded[i % 3].path for i in range(7)]
    assert floor_requests(recorded, 2) == recorded[:2]
    with pytest.raises(RuntimeError):
        floor_requests([], 5)


def test_split_gives_contiguous_shares_differing_by_at_most_one() -> None:
    requests = [_request(index) for index in range(11)]
    shares = split(requests, 3)
    assert [len(share) for share in shares] == [4, 4, 3]
    assert [item for share in shares for item in share] == requests
    assert split(requests[:1], 2) == [requests[:1], []]
    with pytest.raises(ValueError):
        split(requests, 0)


def test_the_server_log_is_counted_by_request_lines(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        "2026-01-01 10:00:00,000 INFO reference_server.http: GET / 404 0.4ms X-Request-ID=-\n"
        "2026-01-01 10:00:00,001 INFO reference_server: batch run moved 2 payment(s)\n"
        "2026-01-01 10:00:00,002 INFO reference_server.http: POST /sca/abc 303 1.0ms "
        "X-Request-ID=-\n"
        "2026-01-01 10:00:00,003 INFO reference_server.http: GARBAGE 400 (bad request line)\n",
        encoding="utf-8",
    )
    lines = logged_requests(log)
    assert len(lines) == 3
    assert [logged_status(line) for line in lines] == [404, 303, 400]
    assert logged_requests(tmp_path / "missing.log") == []
    assert status_classes(Counter({404: 1, 303: 1, 400: 2})) == "3xx 1 / 4xx 3"


def test_junit_counts(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite name="pytest" errors="1" failures="2" skipped="3" tests="10">'
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    verdicts = Verdicts.from_junit(junit)
    assert verdicts == Verdicts(passed=4, failed=2, errors=1, skipped=3)
    assert str(verdicts) == "4 passed, 3 skipped, 2 failed, 1 errors"


def test_recorded_exchanges_replay_what_the_scenario_sent(tmp_path: Path) -> None:
    exchange = Exchange(
        method="POST",
        url="http://127.0.0.1:9/v1/consents?x=1",
        request_headers=(
            ("Host", "127.0.0.1:9"),
            ("X-Request-ID", "old"),
            ("PSU-ID", "psu-1"),
            ("Digest", "SHA-256=abc"),
            ("Signature", "keyId=..."),
            ("Content-Type", "application/json"),
        ),
        request_body=b'{"a": 1}',
        signing_string=None,
        status=201,
        response_headers=(),
        response_body=b"{}",
        elapsed=0.01,
        signer="standard",
        base_url="http://127.0.0.1:9",
    )
    record = exchange_record(exchange)
    assert {name.lower() for name, _ in record["headers"]} == {"psu-id", "content-type"}
    assert not {name.lower() for name, _ in record["headers"]} & KEPT_HEADERS_EXCLUDED
    (tmp_path / "exchanges-gw1.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    other = {**record, "path": "/v1/accounts", "method": "GET", "body": ""}
    (tmp_path / "exchanges-gw0.jsonl").write_text(json.dumps(other) + "\n", encoding="utf-8")
    loaded = load_recorded(tmp_path)
    assert [item.path for item in loaded] == ["/v1/accounts", "/v1/consents?x=1"]  # gw0 first
    assert loaded[1].body == base64.b64decode(record["body"]) == b'{"a": 1}'
    assert loaded[1].headers == (("PSU-ID", "psu-1"), ("Content-Type", "application/json"))


def test_the_suite_runs_as_conformance_run_aimed_at_the_server(tmp_path: Path) -> None:
    identity = BundledIdentity(
        **{field.name: tmp_path / f"{field.name}.pem" for field in fields(BundledIdentity)}
    )
    command = suite_command(
        "http://127.0.0.1:9", identity, tmp_path / "r", pytest_args=["-k", "E12"]
    )
    assert command[1:4] == ["-m", "conformance", "run"]
    assert command[command.index("--target") + 1] == "http://127.0.0.1:9"
    assert command[command.index("--cert") + 1] == str(identity.certificate)
    assert command[command.index("-n") + 1] == "auto"
    after = command[command.index("--") + 1 :]
    assert after[after.index("--trust-anchor") + 1] == str(identity.ca_certificate)
    assert after[after.index("--trust-anchor-key") + 1] == str(identity.ca_key)
    # Every trust-anchor option a bundled `conformance run` gives pytest (held to
    # pytest_arguments by tests/unit/test_run_command.py), and nothing else.
    anchors = trust_anchor_arguments(identity)
    assert after[after.index("--trust-anchor") :][: len(anchors)] == anchors
    assert sum(flag.startswith("--trust-anchor") for flag in after) == 4
    assert after[after.index("-p") + 1] == "bench.suite_recorder"
    assert after[-2:] == ["-k", "E12"]


def test_a_round_on_a_small_selection_counts_every_request(tmp_path: Path) -> None:
    measured = measure_round(tmp_path, numprocesses="0", pytest_args=["-k", "E12"])
    suite = measured.suite
    assert suite.exit_code == 0, suite
    assert suite.verdicts.passed > 0 and suite.verdicts.failed == suite.verdicts.errors == 0
    assert suite.workers == 1
    # Every scenario exchange was recorded; the log also has `conformance run`'s preflight (the
    # unsigned reachability GET and the signed probe it times six to 21 times; the plugin, told
    # that they passed, does not repeat them).
    assert suite.recorded > 0
    assert 1 + PREFLIGHT_SAMPLES <= suite.requests - suite.recorded <= 1 + PREFLIGHT_MOST
    assert sum(suite.statuses.values()) == suite.requests
    assert measured.floor_requests == measured.floor_logged == suite.requests
    assert sum(measured.floor_statuses.values()) == suite.requests
    assert measured.floor_seconds > 0 and suite.seconds > 0
    assert measured.ratio == suite.seconds / measured.floor_seconds
    check_round(measured, None, 0)
