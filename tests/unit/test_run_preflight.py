"""The probe before a run (``conformance.bankside.preflight``): a target whose error answers
alone are not JSON is judged by the scenarios (spec 7), while a base URL that answers no JSON at
all is refused in one line."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from serving_support import serving

from conformance.bankside.preflight import base_url_candidates, certificate_warnings, preflight
from conformance.bankside.trace import PREFLIGHT_TAG, TRACE_ENV
from conformance.contract.trace import TRACE_HEADER
from conformance.errors import TargetError
from conformance.profile import TargetProfile, TlsSettings
from conformance.signing import generate_ca, generate_qwac, generate_tpp_identity, write_identity

HTML = ("text/html", b"<!DOCTYPE html><html><body>Error</body></html>")
JSON = ("application/json", b"[]")


Answer = tuple[int, tuple[str, bytes]]


def _target(
    answers: Mapping[str, Answer],
    otherwise: Answer = (404, HTML),
    seen: list[str | None] | None = None,
) -> type[http.server.BaseHTTPRequestHandler]:
    """A stand-in target's handler: path → (status, (content type, body)), ``otherwise`` at any
    other path; each request's trace header put in ``seen`` when given."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if seen is not None:
                seen.append(self.headers.get(TRACE_HEADER))
            status, (content_type, body) = answers.get(self.path, otherwise)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def _serve(answers: Mapping[str, Answer]) -> Iterator[str]:
    """A stand-in target on port 0: path → (status, (content type, body)); 404 HTML otherwise."""
    with serving(_target(answers)) as url:
        yield url


@pytest.fixture
def html_errors_target() -> Iterator[str]:
    """Errors in HTML (spec 7 broken), the sandbox customer list in JSON."""
    yield from _serve({"/v1/accounts": (401, HTML), "/v1/sandbox/customers": (200, JSON)})


@pytest.fixture
def website() -> Iterator[str]:
    """Not the interface at all: HTML whatever the path."""
    yield from _serve({"/v1/accounts": (200, HTML), "/v1/sandbox/customers": (200, HTML)})


def profile(url: str) -> TargetProfile:
    return TargetProfile(name="probe", base_url=url)


def test_a_target_whose_errors_are_html_passes_the_probe(html_errors_target: str) -> None:
    preflight(profile(html_errors_target))


def test_a_base_url_that_answers_no_json_is_refused(website: str) -> None:
    with pytest.raises(TargetError, match=r"text/html.*base URL of the interface"):
        preflight(profile(website))


@pytest.fixture
def at_the_root() -> Iterator[str]:
    """The interface at the host's root: the account list refused in JSON, the rest 404."""
    yield from _serve(
        {"/v1/accounts": (400, JSON), "/v1/sandbox/customers": (200, JSON)},
    )


def test_a_wrong_base_path_is_one_line_naming_the_base_url_that_answers(at_the_root: str) -> None:
    with pytest.raises(TargetError) as raised:
        preflight(profile(at_the_root + "/api/psd2"))
    message = raised.value.message
    assert raised.value.exit_code == 3
    assert "\n" not in message
    assert message.startswith("every probe answered 404")
    assert f"give --target {at_the_root} " in message


def test_a_base_url_ending_in_v1_is_told_to_drop_it(at_the_root: str) -> None:
    with pytest.raises(TargetError, match=rf"give --target {at_the_root} "):
        preflight(profile(at_the_root + "/v1"))


def test_404_everywhere_names_the_likely_cause_without_a_guess(website: str) -> None:
    with pytest.raises(TargetError, match=r"every probe answered 404.*part before /v1"):
        preflight(profile(website + "/nowhere"))


def test_an_html_refusal_alone_is_the_interface_answering() -> None:
    """A production-like bank (no sandbox: the account list is the only probe) whose errors are
    HTML pages: the probe lets the run go on, and the error-body scenarios judge spec 7."""
    for url in _serve({"/v1/accounts": (401, HTML)}):
        no_sandbox = TargetProfile(
            name="probe", base_url=url, unsupported_operations=frozenset({"E9"})
        )
        assert preflight(no_sandbox)  # an answer time: the run goes on


def _refusal(code: str, *, in_messages: bool = False) -> tuple[str, bytes]:
    """A spec 7 error body refusing the request's certificate or signature with ``code`` (at the
    top, or in ``tppMessages``, as a payment response carries it)."""
    body: dict[str, object] = {"status": 401, "message": "not a certificate we know"}
    body |= (
        {"tppMessages": [{"category": "ERROR", "code": code}]} if in_messages else {"code": code}
    )
    return ("application/json", json.dumps(body).encode())


@pytest.mark.parametrize(
    ("code", "in_messages"),
    [("CERTIFICATE_INVALID", False), ("CERTIFICATE_EXPIRED", False), ("SIGNATURE_INVALID", True)],
)
def test_the_suite_s_own_certificate_refused_on_every_probe_is_one_line_naming_it(
    tmp_path: Path, code: str, in_messages: bool
) -> None:
    """Spec 7 lists no authentication code: the Berlin Group's names, by their prefix."""
    files = write_identity(generate_tpp_identity(generate_ca()), tmp_path, ca=None)
    refused = (401, _refusal(code, in_messages=in_messages))
    for url in _serve({"/v1/accounts": refused, "/v1/sandbox/customers": refused}):
        signed = TargetProfile(
            name="probe", base_url=url, certificate=files["certificate"], key=files["key"]
        )
        with pytest.raises(TargetError) as raised:
            preflight(signed)
    message = raised.value.message
    assert raised.value.exit_code == 3 and "\n" not in message
    assert message.startswith(
        "NOT JUDGED: the target refused the suite's own signing certificate "
        f"{files['certificate']} (subject CN=Conformance Test TPP,"
    )
    assert f'on every probe: 401 {code} "not a certificate we know"' in message
    assert "--cert and --key" in message and "no scenario was run" in message


def test_a_refusal_of_one_probe_is_for_the_scenarios_to_judge() -> None:
    """One probe refused for the certificate, the other answered: the interface answers."""
    for url in _serve(
        {
            "/v1/accounts": (401, _refusal("CERTIFICATE_INVALID")),
            "/v1/sandbox/customers": (200, JSON),
        }
    ):
        assert preflight(profile(url))


def test_a_refusal_of_another_kind_lets_the_run_go_on() -> None:
    """A 401 with no certificate or signature code (an SCA redirect, a consent) is an answer."""
    refused = (401, _refusal("CONSENT_INVALID"))
    for url in _serve({"/v1/accounts": refused, "/v1/sandbox/customers": refused}):
        assert preflight(profile(url))


def test_the_candidates_shorten_the_path_one_segment_at_a_time() -> None:
    assert base_url_candidates("https://bank.example/api/psd2/v1") == [
        "https://bank.example/api/psd2",
        "https://bank.example/api",
        "https://bank.example",
    ]
    assert base_url_candidates("https://bank.example") == []


def test_certificates_that_end_within_30_days_are_one_warning_each(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    ca = generate_ca()
    soon = generate_tpp_identity(ca, not_before=now - timedelta(days=350), valid_days=360)
    files = write_identity(soon, tmp_path / "seal")
    qwac = generate_qwac(ca, not_before=now - timedelta(days=400), valid_days=390)
    tls = write_identity(qwac, tmp_path / "qwac", stem="qwac")
    base = TargetProfile(
        name="probe",
        base_url="http://127.0.0.1:1",
        certificate=files["certificate"],
        key=files["key"],
        tls=TlsSettings(certificate=tls["certificate"], key=tls["key"]),
    )
    warnings = certificate_warnings(base, now=now)
    assert len(warnings) == 2
    assert warnings[0].startswith("the signing certificate tpp.pem expires on ")
    assert "(in 9 days)" in warnings[0] or "(in 10 days)" in warnings[0]
    assert warnings[1].startswith("the TLS client certificate (QWAC) qwac.pem expired on ")
    fresh = write_identity(generate_tpp_identity(ca), tmp_path / "fresh")
    assert (
        certificate_warnings(replace(base, certificate=fresh["certificate"], tls=TlsSettings()))
        == []
    )


def test_a_near_target_is_timed_more_often_within_the_budget() -> None:
    """Six answers at least; more until the budget's seconds have passed, at most ``most``:
    the fastest of many is the one a busy machine did not hold up."""
    for url in _serve({"/v1/accounts": (401, HTML)}):
        near = TargetProfile(name="probe", base_url=url, unsupported_operations=frozenset({"E9"}))
        assert len(preflight(near, 6)) == 6
        timed = preflight(near, 6, budget=5.0, most=21)
        assert len(timed) == 21  # 21 local answers take well under 5 s
        assert len(preflight(near, 6, budget=0.0, most=21)) == 6  # the budget spent at once


DEEP = ("application/json", b"[" * 100_000 + b"]" * 100_000)


@pytest.fixture
def deep_target() -> Iterator[str]:
    """Every interface answer nested 100,000 deep."""
    yield from _serve({"/v1/accounts": (200, DEEP), "/v1/sandbox/customers": (200, DEEP)})


def test_a_base_url_that_answers_json_nested_too_deep_is_one_line(deep_target: str) -> None:
    """security-5.md M15 (attempt 183): the preflight's read of the answer ended in a
    RecursionError traceback, exit 1 (a must failure); now one line (a TargetError, exit 3)."""
    with pytest.raises(TargetError, match="nested deeper than"):
        preflight(profile(deep_target))


def test_a_recording_run_tags_the_preflights_probes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the self-check's recording run every probe carries the preflight's tag (its faults
    then run on their scenarios, the preflight being part of every run); otherwise none."""
    seen: list[str | None] = []
    with serving(_target({}, otherwise=(200, JSON), seen=seen)) as url:
        preflight(profile(url), 3)
        assert seen and set(seen) == {None}
        seen.clear()
        monkeypatch.setenv(TRACE_ENV, str(tmp_path))
        preflight(profile(url), 3)
        assert len(seen) >= 4 and set(seen) == {PREFLIGHT_TAG}  # the reachability probe too
