"""Recorded traffic judged offline (``conformance judge``): a HAR of a TPP with signing and body
mistakes gives TPP-side findings each naming the exact place, and none blamed on the reference
server, which refused each; the reference server's own exchange log judges the same."""

from __future__ import annotations

import argparse
import json
import shlex
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.cli import main
from conformance.commands.call import _with_values, add_arguments, parse_header
from conformance.report.release import suite_commit
from conformance.report.replays import VALUES_FILE
from conformance.signing import SignatureAuth, default_identity
from conformance.signing.canonical import SPEC5_SIGNED_HEADERS
from reference_server.app import Application
from reference_server.transport.exchange_log import ExchangeLog
from reference_server.transport.http import RunningServer, start

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = json.loads((ROOT / "schemas" / "examples" / "E16.json").read_text(encoding="utf-8"))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    running = start(Application())
    running.server.exchange_log = ExchangeLog(tmp_path / "exchanges.jsonl", running.url)
    try:
        yield running
    finally:
        running.stop()
        running.server.exchange_log.close()


def _har_entry(response: httpx.Response, started: datetime) -> dict[str, Any]:
    request = response.request
    body = request.content
    return {
        "startedDateTime": started.isoformat(),
        "time": response.elapsed.total_seconds() * 1000,
        "request": {
            "method": request.method,
            "url": str(request.url),
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": k.decode(), "value": v.decode()} for k, v in request.headers.raw],
            "queryString": [],
            "cookies": [],
            "headersSize": -1,
            "bodySize": len(body),
            **(
                {"postData": {"mimeType": "application/json", "text": body.decode()}}
                if body
                else {}
            ),
        },
        "response": {
            "status": response.status_code,
            "statusText": response.reason_phrase,
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": k.decode(), "value": v.decode()} for k, v in response.headers.raw],
            "cookies": [],
            "content": {
                "size": len(response.content),
                "mimeType": response.headers.get("content-type", ""),
                "text": response.text,
            },
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": len(response.content),
        },
        "cache": {},
        "timings": {"send": 0, "wait": 0, "receive": 0},
    }


def _record_a_careless_tpp(url: str) -> list[dict[str, Any]]:
    """A TPP app's E16 calls: one right, then one mistake each (what the HAR records)."""
    credentials = default_identity().signing_credentials()
    entries: list[dict[str, Any]] = []
    body = dict(EXAMPLE["body"])

    def send(
        payload: dict[str, Any],
        *,
        headers: dict[str, str] | None = None,
        auth: httpx.Auth | None = None,
        tamper: bytes | None = None,
    ) -> None:
        sent_headers = {**EXAMPLE["headers"], "X-Request-ID": f"req-{len(entries)}"}
        sent_headers.update(headers or {})
        sent_headers = {k: v for k, v in sent_headers.items() if v}
        with httpx.Client(base_url=url, timeout=10) as client:
            request = client.build_request(
                "POST", EXAMPLE["path"], json=payload, headers=sent_headers
            )
            flow = (auth or SignatureAuth(credentials)).sync_auth_flow(request)
            signed = next(flow)
            if tamper is not None:  # the body changed after signing (a bug in the app)
                signed = httpx.Request(
                    "POST",
                    signed.url,
                    headers={**dict(signed.headers), "content-length": str(len(tamper))},
                    content=tamper,
                )
            started = datetime.now(UTC)
            response = client.send(signed)
            entries.append(_har_entry(response, started))

    send(body)  # 0: right
    changed = json.dumps({**body, "creditorName": "Someone Else"}).encode()
    send(body, tamper=changed)  # 1: Digest of another body
    send(  # 2: PSU-ID present but not signed
        body,
        auth=SignatureAuth(
            credentials, signed_headers=[h for h in SPEC5_SIGNED_HEADERS if h != "psu-id"]
        ),
    )
    send({**body, "creditorName": "N" * 71})  # 3: too long (spec 2.7, spec 8)
    send(  # 4: both remittance forms (spec 2.7)
        {**body, "remittanceInformationUnstructured": "invoice 42"}
    )
    send(body, headers={"TPP-Redirect-URI": ""})  # 5: a required header left out
    return entries


#: Entry → (rule, exact place) of the TPP finding it must carry.
EXPECTED = {
    1: ("TPP-digest-mismatch", "Digest"),
    2: ("TPP-signature-headers-list", "psu-id"),
    3: ("TPP-body-maxLength", "body /creditorName"),
    4: ("XF-remittance-exclusive", "body /remittanceInformationUnstructured"),
    5: ("TPP-header-required", "TPP-Redirect-URI"),
}


def _judge(path: Path, reports: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(["judge", str(path), "--reports", str(reports)])
    output = capsys.readouterr().out
    assert code == 1, output  # must findings (the TPP's)
    document: dict[str, Any] = json.loads((reports / "compliance.json").read_text("utf-8"))
    return document


def _check(document: dict[str, Any]) -> None:
    traffic = document["traffic"]
    assert traffic["findings_by_side"]["bank"] == {"must": 0, "should": 0}
    found = {(f["exchange"], f["rule"], f["place"]) for f in traffic["findings"]}
    for entry, (rule, place) in EXPECTED.items():
        assert (f"X{entry + 1:05d}-E16", rule, place) in found, (entry, rule, found)
    assert not any(f["exchange"] == "X00001-E16" for f in traffic["findings"])
    sides = {f["side"] for f in traffic["findings"]}
    assert sides == {"TPP"}
    must = [f for f in traffic["findings"] if f["level"] == "must"]
    assert all(f["quote"] for f in must if f["rule"].startswith("TPP-signature"))


def test_a_har_of_a_careless_tpp_names_each_mistake_and_its_place(
    server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    har = {
        "log": {
            "version": "1.2",
            "creator": {"name": "test", "version": "1"},
            "entries": _record_a_careless_tpp(server.url),
        }
    }
    path = tmp_path / "tpp.har"
    path.write_text(json.dumps(har), encoding="utf-8")
    document = _judge(path, tmp_path / "reports", capsys)
    _check(document)
    markdown = (tmp_path / "reports" / "compliance.md").read_text(encoding="utf-8")
    assert "TPP: " in markdown
    # from a checkout, the suite's commit is named (issue 44), as a run's reports name it
    commit = suite_commit()
    assert commit is not None and document["run"]["suite_commit"] == commit
    assert f"Suite commit: {commit}" in markdown
    # the TPP's mistakes make the TPP's side NOT CONFORMANT, never the bank's, which refused each
    sides = document["traffic"]["sides"]
    assert (sides["TPP"]["verdict"], sides["bank"]["verdict"]) == ("NOT CONFORMANT", "CONFORMANT")
    assert "**Bank (its answers): CONFORMANT at must level: no must finding in the 6" in markdown
    must = sides["TPP"]["must"]
    tpp = markdown.split("## TPP: must findings")[1].split("\n## ")[0]
    causes = tpp.count("### Cause ")
    assert f"TPP's must findings: {must} findings, {causes} causes, in {must} exchanges" in tpp
    assert causes == len(EXPECTED)  # each mistake its own cause, each listed
    junit = (tmp_path / "reports" / "junit.xml").read_text(encoding="utf-8")
    assert junit.count("<testcase") >= 6
    assert list((tmp_path / "reports" / "allure-results").glob("*-result.json"))


def test_the_reference_servers_exchange_log_is_judged_the_same(
    server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = len(_record_a_careless_tpp(server.url))
    log = tmp_path / "exchanges.jsonl"
    # the server writes an exchange's line just after its answer has gone: wait for the last
    deadline = time.monotonic() + 5
    while len(log.read_text(encoding="utf-8").splitlines()) < sent:
        assert time.monotonic() < deadline, "the exchange log lacks lines"
        time.sleep(0.01)
    assert oct(log.stat().st_mode & 0o777) == oct(0o600)  # sensitive: the owner's only
    _check(_judge(log, tmp_path / "reports", capsys))


def test_a_file_that_is_not_har_is_refused_naming_the_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": [{"request": {}}]}}))
    assert main(["judge", str(path), "--reports", str(tmp_path / "r")]) == 2
    error = capsys.readouterr().err
    assert "not a HAR 1.2 file" in error and "$.log.entries[0]" in error


def _raw_entry(
    method: str, url: str, request_body: str, status: int, answer: str
) -> dict[str, Any]:
    """A HAR entry of the given bodies (JSON text), whatever they hold."""
    return {
        "startedDateTime": datetime.now(UTC).isoformat(),
        "time": 1,
        "request": {
            "method": method, "url": url, "httpVersion": "HTTP/1.1",
            "headers": [{"name": "Content-Type", "value": "application/json"}],
            "queryString": [], "cookies": [], "headersSize": -1, "bodySize": len(request_body),
            **({"postData": {"mimeType": "application/json", "text": request_body}}
               if request_body else {}),
        },
        "response": {
            "status": status, "statusText": "", "httpVersion": "HTTP/1.1",
            "headers": [{"name": "Content-Type", "value": "application/json"}], "cookies": [],
            "content": {"size": len(answer), "mimeType": "application/json", "text": answer},
            "redirectURL": "", "headersSize": -1, "bodySize": len(answer),
        },
        "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0},
    }  # fmt: skip


def test_deeply_nested_bodies_are_judged_and_the_reports_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """security-5.md M3 (attempts 103 and 105): a request body nested 200,000 deep and an
    answer 50,000 deep on the interface, and one outside it, once a RecursionError traceback
    with no reports; now judged (the body is not JSON the judge reads) and reported."""
    deep, deeper = "[" * 50_000 + "]" * 50_000, "[" * 200_000 + "]" * 200_000
    base = "http://bank.example"
    entries = [
        _raw_entry("POST", f"{base}/v1/payments/sepa-credit-transfers", deeper, 400, deep),
        _raw_entry("POST", f"{base}/outside/the/interface", deeper, 200, deep),
        _raw_entry("GET", f"{base}/v1/accounts", "", 200, deep),
    ]
    har = tmp_path / "deep.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
                                       "entries": entries}}), encoding="utf-8")  # fmt: skip
    reports = tmp_path / "reports"
    code = main(["judge", str(har), "--reports", str(reports)])
    out = capsys.readouterr().out
    assert code == 1, out[-2000:]
    assert "3 exchanges" in out
    assert "nested deeper than" in (reports / "compliance.json").read_text(encoding="utf-8")
    assert (reports / "junit.xml").is_file()


@pytest.mark.parametrize("kind", ["har", "exchange-log"])
def test_a_capture_nested_deep_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """security-5.md M3 (attempts 102 and 104): the file itself nested 200,000 deep."""
    path = tmp_path / "capture"
    deep = "[" * 200_000 + "]" * 200_000
    if kind == "har":
        path.write_text('{"log": ' + deep + "}", encoding="utf-8")
    else:
        first = {"at": "x", "method": "GET", "target": "/", "request_headers": [], "status": 200,
                 "response_headers": []}  # fmt: skip
        path.write_text(json.dumps(first)[:-1] + ', "x": ' + deep + "}\n", encoding="utf-8")
    assert main(["judge", str(path)]) == 2
    assert "nested deeper than" in capsys.readouterr().err


def _secret_entry(
    path: str, headers: list[tuple[str, str]], status: int, body: Any, at: str
) -> dict[str, Any]:
    return {
        "startedDateTime": at, "time": 1,
        "request": {"method": "GET", "url": "https://psd2.bank.example" + path,
                    "httpVersion": "HTTP/1.1",
                    "headers": [{"name": k, "value": v} for k, v in headers]},
        "response": {"status": status,
                     "headers": [{"name": "Content-Type", "value": "application/json"}],
                     "content": {"mimeType": "application/json", "text": json.dumps(body)}},
    }  # fmt: skip


def test_secrets_are_masked_by_value_in_every_report_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """security-5.md M1 (a Consent-ID first seen in a path, a PSU-ID in a query: once leaked in
    junit.xml, Allure and the terminal), M2 (a bearer token the bank echoes in its error text:
    once in every report) and L15 (a token with a quote: its tail once kept)."""
    consent, psu, token = CONSENT, PSU, TOKEN
    reports = _judge_secrets(tmp_path)
    out = capsys.readouterr().out
    texts = {"terminal": out} | {
        str(path.relative_to(reports)): path.read_text(encoding="utf-8", errors="replace")
        for path in reports.rglob("*")
        if path.is_file() and path.name != VALUES_FILE  # the real values: its own test below
    }
    for secret in (consent, psu, token.split('"')[0], "TOKENTAIL"):
        leaked = sorted(name for name, text in texts.items() if secret in text)
        assert leaked == [], f"{secret} in {leaked}"


CONSENT, PSU, TOKEN = "CONSENTSECRET9f3a7b21", "PSUSECRET77123", 'SECRETBEARER"TOKENTAIL'


def _judge_secrets(tmp_path: Path) -> Path:
    """The judged reports of a HAR whose requests carry a Consent-ID, a PSU-ID and a token."""
    consent, psu, token = CONSENT, PSU, TOKEN
    entries = [
        _secret_entry(f"/v1/consents/{consent}/status", [], 200, {"consentStatus": "valid"},
                      "2026-11-29T03:53:03Z"),
        _secret_entry("/v1/accounts", [("Consent-ID", consent), ("PSU-ID", psu),
                                       ("Authorization", f"Bearer {token}")], 401,
                      {"tppMessages": [{"category": "ERROR", "code": "TOKEN_INVALID",
                                        "text": f"token {token} is unknown"}]},
                      "2026-11-29T03:53:04Z"),
        _secret_entry(f"/v1/accounts?psuId={psu}", [], 400, {}, "2026-11-29T03:53:05Z"),
    ]  # fmt: skip
    har = tmp_path / "secrets.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}), encoding="utf-8")
    reports = tmp_path / "reports"
    main(["judge", str(har), "--reports", str(reports)])
    return reports


def test_a_masked_replay_names_the_values_file_that_call_puts_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 44 item 1 for traffic: the replay line of an exchange whose secrets the reports
    mask names the judge's owner-only values file and the entry (``--values FILE --entry ID``),
    and ``call`` given that line sends the real Consent-ID and PSU-ID, not ``***``."""
    reports = _judge_secrets(tmp_path)
    capsys.readouterr()
    values = reports / VALUES_FILE
    assert values.stat().st_mode & 0o777 == 0o600
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    entry = next(item for item in document["scenarios"] if item["id"].startswith("X00002"))
    line = entry["reproduce"]
    assert f"--values {values} --entry {entry['id']}" in line and CONSENT not in line
    words = shlex.split(line)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(words[words.index("call") + 1 :])
    given = [parse_header(header) for header in args.headers]
    assert dict(given)["Consent-ID"] != CONSENT  # masked as printed
    _, sent, _ = _with_values(args, args.path, given, None)
    assert dict(sent)["Consent-ID"] == CONSENT and dict(sent)["PSU-ID"] == PSU
    main(["judge", str(tmp_path / "secrets.har"), "--reports", str(reports)])
    assert len(values.read_text(encoding="utf-8").splitlines()) == len(
        [item for item in document["scenarios"] if "--entry" in item.get("reproduce", "")]
    )  # the values of the latest reports only


def test_a_capture_with_nothing_to_judge_is_not_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """security-5.md L13: a HAR with 0 entries ended NOT JUDGED with exit 0, so a CI gate on an
    empty capture passed; now exit 3."""
    har = tmp_path / "empty.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": []}}), encoding="utf-8")
    assert main(["judge", str(har), "--reports", str(tmp_path / "r")]) == 3
    assert "NOT JUDGED: no exchange of the interface was judged" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("url", "text", "said"),
    [
        ("http://[::1/v1/x", "", "is not a URL"),
        ("http://bank.example/v1/accounts", "\ud800", "not Unicode text that UTF-8 can hold"),
    ],
    ids=["invalid-ipv6-url", "lone-surrogate"],
)
def test_an_entry_that_cannot_be_an_exchange_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, text: str, said: str
) -> None:
    """security-5.md L8 (attempts 89, 92): a traceback, exit 1; now one line naming the
    entry, exit 2."""
    har = tmp_path / "odd.har"
    entry = _raw_entry("POST", url, text, 200, "{}")
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}), encoding="utf-8")
    assert main(["judge", str(har), "--reports", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert said in err and "entry 0" in err and "Traceback" not in err


def test_an_entry_whose_start_is_not_a_date_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """security-5.md L12: an unparsable startedDateTime was taken as the present moment, which
    then drove the certificate-validity and Date checks."""
    har = tmp_path / "undated.har"
    entry = _raw_entry("GET", "http://bank.example/v1/accounts", "", 200, "{}")
    entry["startedDateTime"] = "not a date"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}), encoding="utf-8")
    assert main(["judge", str(har), "--reports", str(tmp_path / "r")]) == 2
    assert "entry 0: startedDateTime 'not a date' is not" in capsys.readouterr().err


@pytest.mark.parametrize("url", ["not a url", "ftp://bank.example/v1/accounts", "/v1/accounts"])
def test_an_entry_that_is_not_an_http_url_names_the_entry_not_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    """security-5.md L11: such a URL was refused with "--target must be an http:// or https://
    URL", an option the user never gave; a folder was said not to exist."""
    har = tmp_path / "odd.har"
    entry = _raw_entry("GET", url, "", 200, "{}")
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}), encoding="utf-8")
    assert main(["judge", str(har)]) == 2
    err = capsys.readouterr().err
    assert "entry 0: the request URL" in err and "--target" not in err
    assert main(["judge", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
