"""The run's own traffic for tools (``conformance run --traffic``): ``events.ndjson``, an event per
exchange and per verdict as the run goes, and ``traffic.har``, both masked; the HAR is one
``conformance judge`` reads."""

from __future__ import annotations

import base64
import json
import random
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from conformance.contract.identifiers import generate_national_id
from conformance.exchange import Exchange
from conformance.report.exchange_record import exchange_record
from conformance.report.masking import scrub_identities
from conformance.report.traffic_files import append_event, har_of, read_events
from conformance.traffic.har import read_har


def test_a_run_streams_its_exchanges_and_verdicts_and_writes_a_har(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--smoke", "-n", "2", "--traffic",
         "--reports", str(reports)],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    events = list(read_events(reports / "events.ndjson"))
    kinds = [event["event"] for event in events]
    assert kinds[0] == "run" and kinds[-1] == "end"
    assert events[-1]["verdict"].startswith("SMOKE RUN PASSED")
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    verdicts = {e["scenario"]: e["verdict"] for e in events if e["event"] == "verdict"}
    assert verdicts == {item["id"]: item["verdict"] for item in document["scenarios"]}
    # each scenario's exchanges come before its verdict, as they happened
    seen: set[str] = set()
    for event in events:
        if event["event"] == "exchange":
            assert event["scenario"] not in seen  # never after its scenario's verdict
        elif event["event"] == "verdict":
            seen.add(event["scenario"])
    exchanges = [event for event in events if event["event"] == "exchange"]
    assert exchanges
    har = reports / "traffic.har"
    read = list(read_har(har))
    assert len(read) == len(exchanges)
    # (the HAR reader orders by startedDateTime; two processes' lines may come in another order)
    assert sorted(f"{x.method} {x.url}" for x, _ in read) == sorted(
        f"{e['exchange']['method']} {e['exchange']['url']}" for e in exchanges
    )
    for path in (har, reports / "events.ndjson"):  # masked: no identity number left
        text = path.read_text(encoding="utf-8")
        assert scrub_identities(text) == text


def test_a_body_that_is_not_text_is_kept_in_base64(tmp_path: Path) -> None:
    exchange = Exchange(
        method="POST", url="https://bank.example/v1/x", request_headers=(("Content-Type", "a/b"),),
        request_body=b"\xff\xfe", signing_string=None, status=200,
        response_headers=(("Content-Type", "application/json"),), response_body=b'{"a": 1}',
        elapsed=0.012,
    )  # fmt: skip
    events = tmp_path / "events.ndjson"
    record = exchange_record(exchange, datetime(2026, 1, 1, tzinfo=UTC))
    append_event(events, "exchange", scenario="E1-x", position=0, exchange=record)
    append_event(events, "verdict", scenario="E1-x", verdict="passed")
    (entry,) = har_of(events)["log"]["entries"]
    assert entry["request"]["postData"] == {
        "mimeType": "a/b",
        "text": base64.b64encode(b"\xff\xfe").decode(),
        "encoding": "base64",
    }
    assert entry["response"]["content"]["text"] == '{"a": 1}'
    assert entry["time"] == 12.0 and entry["comment"] == "E1-x"
    har = tmp_path / "t.har"
    har.write_text(json.dumps(har_of(events)), encoding="utf-8")
    ((read, _),) = read_har(har)
    assert read.request_body == b"\xff\xfe" and read.status == 200


def test_an_identity_number_in_a_header_is_masked(tmp_path: Path) -> None:
    number = generate_national_id(random.Random(3))
    exchange = Exchange(
        method="GET", url="https://bank.example/v1/accounts",
        request_headers=(("X-PSU-IDENTITY", number),), request_body=b"", signing_string=None,
        status=200, response_headers=(), response_body=f'{{"id": "{number}"}}'.encode(),
        elapsed=0.0,
    )  # fmt: skip
    record = exchange_record(exchange, datetime(2026, 1, 1, tzinfo=UTC))
    assert number not in json.dumps(record)
    assert number not in base64.b64decode(record["response_body"]).decode()
    assert record["request_headers"][0][0] == "X-PSU-IDENTITY"
