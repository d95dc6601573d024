"""``conformance discover`` (issue 31), fast: each decision read from recorded answers or made
against the reference server in this process (one server per bank style), the draft and its
comments, ``--check``, and a bank that answers nothing useful (5xx, HTML, a timeout, no
connection) getting one line and a draft that says what could not be decided. The round trip
against every example profile is ``test_discover_round_trip.py`` (slow)."""

from __future__ import annotations

import dataclasses
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.cli import main
from conformance.contract import Contract, load_contract
from conformance.discover.base_path import decide_base_url
from conformance.discover.check import differences
from conformance.discover.draft import write_draft
from conformance.discover.evidence import describe
from conformance.discover.gateway import env_name, named_headers
from conformance.discover.header_sets import names_header
from conformance.discover.probe import Prober
from conformance.discover.sca import approach_of
from conformance.discover.session import Discovery, discover
from conformance.discover.setup_fields import named_fields, unknown_fields, value_for
from conformance.discover.toml_text import toml_value
from conformance.exchange import Exchange
from conformance.profile import DEMANDING_PROFILE, load_profile, profile_from_options
from reference_server.app import Application
from reference_server.model.bank_style import style_of
from reference_server.transport.http import start

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "profiles" / "examples"


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def answer(status: int, body: Any, path: str = "/v1/accounts", method: str = "GET") -> Exchange:
    return Exchange(
        method=method, url=f"http://bank.test{path}", request_headers=(), request_body=b"",
        signing_string=None, status=status,
        response_headers=(("Content-Type", "application/json"),),
        response_body=body if isinstance(body, bytes) else json.dumps(body).encode(),
        elapsed=0.001, base_url="http://bank.test",
    )  # fmt: skip


# --- reading answers ------------------------------------------------------------------------


def test_an_exchange_is_one_line_with_its_decisive_part() -> None:
    refused = answer(401, {"code": "HTTP_HEADER_REQUIRED", "message": "the gateway wants X-Key"})
    assert describe(refused) == (
        'GET /v1/accounts → 401 HTTP_HEADER_REQUIRED "the gateway wants X-Key"'
    )
    linked = answer(201, {"_links": {"scaRedirect": {}, "self": {}}}, "/v1/payments/p", "POST")
    assert describe(linked) == "POST /v1/payments/p → 201 _links: scaRedirect, self"
    assert describe(answer(503, b"<html>down</html>")).endswith("(not JSON: application/json)")


def test_a_gateway_header_is_one_no_operation_lists(contract: Contract) -> None:
    known = {"x-request-id", "psu-id"}
    by_path = answer(401, {"tppMessages": [{"path": "X-IBM-Client-Id"}], "message": "no"})
    assert named_headers(by_path, known) == ["X-IBM-Client-Id"]
    by_message = answer(403, {"message": "missing header X-API-Key"})
    assert named_headers(by_message, known) == ["X-API-Key"]
    assert named_headers(answer(400, {"message": "PSU-ID is missing"}), known) == []
    assert named_headers(answer(200, {"message": "X-Other-Header"}), known) == []
    assert env_name("X-IBM-Client-Id") == "X_IBM_CLIENT_ID"


def test_a_required_header_is_one_the_refusal_names() -> None:
    assert names_header(
        answer(400, {"tppMessages": [{"path": "PSU-IP-Address"}]}), "PSU-IP-Address"
    )
    assert names_header(answer(400, {"message": "x-accept-fix is required"}), "x-accept-fix")
    assert not names_header(answer(404, {"message": "no payment x-accept-fix"}), "x-accept-fix")
    assert not names_header(answer(400, {"message": "body invalid"}), "PSU-ID")


def test_creation_fields_are_read_from_a_400(contract: Contract) -> None:
    refused = answer(
        400,
        {"message": "'customerNumber' is a required property (and 1 more: 'status' is a "
         "required property)", "tppMessages": [{"path": "/product"}]},
    )  # fmt: skip
    assert named_fields(refused) == ["product", "customerNumber", "status"]
    assert named_fields(answer(400, {"message": "status is required (enabled or disabled)"})) == [
        "status"
    ]
    assert named_fields(answer(404, {"message": "'x' is a required property"})) == []
    jsonpath = {"message": "$.customerNumber: is required (of the owner)", "path": "$.owner"}
    assert named_fields(answer(400, jsonpath)) == ["owner", "customerNumber"]
    assert unknown_fields(answer(400, {"message": "body: unknown member 'bban'"})) == ["bban"]
    assert value_for(contract, "SCA", "status") == "enabled"  # the schema's first value
    assert value_for(contract, "SCA", "colour") is None  # unknown to the contract


def test_the_sca_approach_is_read_from_the_links() -> None:
    assert approach_of(answer(201, {"_links": {"scaRedirect": {}, "scaStatus": {}}})) == "redirect"
    assert approach_of(answer(201, {"_links": {"scaOAuth": {}}})) == "oauth"
    assert approach_of(answer(201, {"_links": {"scaStatus": {}, "self": {}}})) == "decoupled"
    assert approach_of(answer(201, {"_links": {"startAuthorisation": {}}})) is None
    assert approach_of(None) is None


def test_toml_values_read_back() -> None:
    values = {"a": 'x"y', "b": True, "c": 2.5, "d": ["P", "Q"], "e": {"periodic": "/v1/p"}}
    text = "\n".join(f"{name} = {toml_value(value)}" for name, value in values.items())
    assert tomllib.loads(text) == values


# --- a bank that answers nothing useful ----------------------------------------------------


def _profile(url: str = "http://bank.test") -> Any:
    return profile_from_options(target=url)


def _html(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200, content=b"<html>portal</html>", headers={"Content-Type": "text/html"}
    )


def _down(request: httpx.Request) -> httpx.Response:
    return httpx.Response(503, json={"error": "maintenance"})


def _timeout(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("no answer", request=request)


@pytest.mark.parametrize("handler", [_html, _down, _timeout], ids=["html", "5xx", "timeout"])
def test_a_bank_answering_nothing_useful_gets_a_draft_of_what_was_not_decided(
    handler: Any, tmp_path: Path, contract: Contract
) -> None:
    found = discover(_profile(), transport=httpx.MockTransport(handler), contract=contract)
    assert found.stopped is not None and "answered none of the probes" in found.stopped
    assert found.decisions and not any(d.is_decided for d in found.decisions)
    out = tmp_path / "bank.toml"
    write_draft(found, out, contract)
    text = out.read_text("utf-8")
    assert "DISCOVERY STOPPED" in text and "# undecided [sca] start" in text
    assert load_profile(out).sca.start == "authorisation"  # the draft is a profile


def test_the_command_says_one_line_and_writes_the_draft(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bank.toml"
    code = main(["discover", "--target", "http://127.0.0.1:9", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("conformance: discover: ")
    assert "refused the connection" in err and out.is_file()


def test_the_base_path_moves_to_where_the_interface_answers(contract: Contract) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/api/v1/"):
            return httpx.Response(401, json={"code": "CONSENT_UNKNOWN"})
        return httpx.Response(404, json={"code": "RESOURCE_UNKNOWN"})

    prober = Prober(
        contract, _profile("http://bank.test/api/psd2"), transport=httpx.MockTransport(handler)
    )
    decision = decide_base_url(prober)
    assert decision.value == "http://bank.test/api"
    assert "GET /api/psd2/v1/accounts → 404" in decision.evidence[0]
    assert prober.profile.base_url == "http://bank.test/api"


# --- against the reference server, in this process -----------------------------------------


def _example(name: str) -> Any:
    return load_profile(EXAMPLES / f"{name}.toml")


@pytest.fixture(scope="module")
def styles(contract: Contract) -> Iterator[dict[str, str]]:
    """The reference server as four banks: the bundled one, a gateway bank, a decoupled one
    with periodic service paths, a bank of consents at first access; and the demanding
    reading."""
    env = {"EXAMPLE_BANK_CLIENT_ID": "k-1", "EXAMPLE_BANK_API_KEY": "k-2"}
    apps = {
        "bundled": Application(contract=contract),
        "demanding": Application(contract=contract, bank=style_of(load_profile(DEMANDING_PROFILE))),
        **{
            name: Application(
                contract=contract, bank=style_of(load_profile(EXAMPLES / f"{name}.toml"), env)
            )
            for name in ("gateway-bank", "decoupled-bankid", "first-access-consents")
        },
    }
    running = {name: start(app) for name, app in apps.items()}
    yield {name: server.url for name, server in running.items()}
    for server in running.values():
        server.stop()


def _discover(url: str, contract: Contract) -> Discovery:
    return discover(_profile(url), contract=contract)


def _value(found: Discovery, *key: str) -> Any:
    decision = found.decision(key)
    assert decision is not None, key
    return decision.value


def test_the_bundled_bank_is_the_suite_s_defaults(
    styles: dict[str, str], contract: Contract, tmp_path: Path
) -> None:
    found = _discover(styles["bundled"], contract)
    assert found.stopped is None and found.cleanup.nothing_left
    assert _value(found, "sca", "start") == "authorisation"
    assert _value(found, "sca", "approach") == "redirect"
    assert _value(found, "consent", "model") == "detailed"
    assert _value(found, "product_ids", "ncbct") == "norwegian-cross-border-credit-transfers"
    assert _value(found, "operations", "unsupported") == []
    assert _value(found, "setup", "templates") == {}
    out = tmp_path / "bank.toml"
    write_draft(found, out, contract)
    text = out.read_text("utf-8")
    assert "# decided by\n#   POST /v1/payments/norwegian-domestic-credit-transfers → 201" in text
    assert '# undecided [sca] mode (the default: "reference")' in text
    assert "[required_headers] PA: the suite's default" in text
    assert load_profile(out).sca.start == "authorisation"
    bundled = dataclasses.replace(
        load_profile(ROOT / "profiles" / "reference-server.toml"), base_url=styles["bundled"]
    )
    assert differences(found, bundled, contract) == []


def test_a_gateway_header_and_the_ncbct_id_are_found(
    styles: dict[str, str], contract: Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("X_IBM_CLIENT_ID", raising=False)
    stopped = _discover(styles["gateway-bank"], contract)  # the header's value not given
    assert stopped.stopped is not None and "set X_IBM_CLIENT_ID" in stopped.stopped
    monkeypatch.setenv("X_IBM_CLIENT_ID", "k-1")
    found = _discover(styles["gateway-bank"], contract)
    assert _value(found, "headers", "X-IBM-Client-Id") == "env:X_IBM_CLIENT_ID"
    assert _value(found, "product_ids", "ncbct") == "international-credit-transfers"
    assert found.cleanup.nothing_left


def test_periodic_paths_and_decoupled_sca_are_found(
    styles: dict[str, str], contract: Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("X_API_KEY", "k-2")
    found = _discover(styles["decoupled-bankid"], contract)
    assert _value(found, "paths", "PS", "periodic").startswith("/v1/periodic-payments/")
    assert _value(found, "paths", "PC", "periodic").startswith("/v1/periodic-payments/")
    assert _value(found, "sca", "approach") == "decoupled"
    assert found.cleanup.nothing_left
    assert any("sandbox customer" in note for note in found.notes)  # kept, and said so


def test_consent_at_first_access_is_found(styles: dict[str, str], contract: Contract) -> None:
    found = _discover(styles["first-access-consents"], contract)
    assert _value(found, "consent", "model") == "first-access"
    assert not any(d.key == ("required_headers", "CC") for d in found.decisions)


def test_the_demanding_reading_wants_a_template_and_sca_at_creation(
    styles: dict[str, str], contract: Contract, tmp_path: Path
) -> None:
    found = _discover(styles["demanding"], contract)
    assert _value(found, "setup", "templates") == {"SCA": {"status": "enabled"}}
    assert _value(found, "sca", "start") == "creation"
    out = tmp_path / "bank.toml"
    folder = write_draft(found, out, contract)
    assert folder is not None and json.loads((folder / "SCA.json").read_text()) == {
        "status": "enabled"
    }
    assert load_profile(out).setup_templates["SCA"] == {"status": "enabled"}


def test_check_lists_where_the_bank_differs(
    styles: dict[str, str], contract: Contract, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "bank.toml"
    profile.write_text(
        f'base_url = "{styles["demanding"]}"\n[sca]\nstart = "authorisation"\n', encoding="utf-8"
    )
    assert main(["discover", "--check", str(profile)]) == 1
    err = capsys.readouterr().err
    assert "[sca] start: the profile says 'authorisation', the bank answered 'creation'" in err
    assert "[setup] templates" in err


def test_the_sandbox_reset_and_data_fill_are_never_sent(contract: Contract) -> None:
    """At a bank that answers no 405 (every PATCH 404), the own method of each operation is
    asked, but never that of the data fill or the reset, which would put data back."""
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(f"{request.method} {request.url.path}")
        if request.method == "PATCH":
            return httpx.Response(404, json={"code": "RESOURCE_UNKNOWN"})
        return httpx.Response(400, json={"code": "FORMAT_ERROR", "message": "refused"})

    found = discover(_profile(), transport=httpx.MockTransport(handler), contract=contract)
    assert found.stopped is None
    assert "POST /v1/sandbox/customers" in sent  # the own method of the others is asked
    assert not [line for line in sent if line.startswith("POST /v1/sandbox/initialize")]
    assert not [line for line in sent if line.startswith("POST /v1/sandbox/data-fill")]


def _deep(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200,
        content=b"[" * 100_000 + b"]" * 100_000,
        headers={"Content-Type": "application/json"},
    )


def test_a_bank_answering_json_nested_too_deep_decides_nothing_and_the_draft_is_written(
    tmp_path: Path, contract: Contract
) -> None:
    """security-5.md M15 (attempts 179, 180): every answer nested 100,000 deep once ended in a
    traceback (``no TOML form for NoneType``); now nothing is decided from them and the draft is
    written."""
    found = discover(_profile(), transport=httpx.MockTransport(_deep), contract=contract)
    out = tmp_path / "bank.toml"
    write_draft(found, out, contract)
    assert load_profile(out).base_url == "http://bank.test"


def _redirect(request: httpx.Request) -> httpx.Response:
    return httpx.Response(302, headers={"Location": str(request.url)})


def _huge(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"filler": "x" * (2 * 1024 * 1024)})


@pytest.mark.parametrize("handler", [_redirect, _huge], ids=["302-everywhere", "2-mb-object"])
def test_a_bank_answering_redirects_or_megabytes_decides_nothing(
    handler: Any, contract: Contract
) -> None:
    """security-5.md H5 (attempts 168, 174): every answer a 302 to itself, or a JSON object of
    megabytes, once wrote 24 keys as decided with exit 0; now the interface answered none."""
    found = discover(_profile(), transport=httpx.MockTransport(handler), contract=contract)
    assert found.stopped is not None and "answered none of the probes" in found.stopped
    assert not any(decision.is_decided for decision in found.decisions)


def test_a_base_url_probe_that_fails_still_writes_the_draft(
    tmp_path: Path, contract: Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    """security-5.md M15: any exception in the base-URL group left base_url undecided with the
    default None, and the draft writer then raised ``TypeError: no TOML form for NoneType``."""
    from conformance.discover import session

    def broken(prober: Prober) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(session, "decide_base_url", broken)
    found = discover(_profile(), transport=httpx.MockTransport(_deep), contract=contract)
    out = tmp_path / "bank.toml"
    write_draft(found, out, contract)
    assert load_profile(out).base_url == "http://bank.test"
    assert "the probe failed: RecursionError" in out.read_text("utf-8")


class _Flapping(httpx.BaseTransport):
    """The bundled bank behind a gateway that answers every second request (of ``method``,
    when given) 404."""

    def __init__(self, method: str | None = None, query: bytes | None = None) -> None:
        self.inner = httpx.HTTPTransport()
        self.method = method
        self.query = query
        self.count = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        asked = self.query is None or self.query in request.url.query
        if self.method in (None, request.method) and asked:
            self.count += 1
            if self.count % 2 == 0:
                body = {"status": 404, "code": "NOT_FOUND", "message": "no"}
                return httpx.Response(404, json=body)
        return self.inner.handle_request(request)


def _flapping_discovery(
    url: str, contract: Contract, method: str | None, query: bytes | None = None
) -> Discovery:
    transport = _Flapping(method, query)
    try:
        return discover(_profile(url), transport=transport, contract=contract)
    finally:
        transport.inner.close()


def test_a_bank_whose_answers_change_between_probes_decides_nothing(
    styles: dict[str, str], contract: Contract
) -> None:
    """security-5.md M14 (attempt 178): a gateway answering every second request 404 once got
    18 existing operations written as unsupported, as decided, and exit 0; now each deciding
    request goes twice, and two answers that differ decide nothing: here, not even the base
    URL, so discovery stops and says why."""
    found = _flapping_discovery(styles["bundled"], contract, None)
    assert found.stopped is not None and "answers changed between two probes" in found.stopped
    assert not any(decision.is_decided for decision in found.decisions)


def test_an_operation_whose_answers_change_between_probes_is_undecided_with_both(
    styles: dict[str, str], contract: Contract
) -> None:
    """M14, the operations: the odd method's answers flap (404, then 405), so no operation is
    written as unsupported, and the draft names both answers of each."""
    found = _flapping_discovery(styles["bundled"], contract, "PATCH")
    assert found.stopped is None
    assert _value(found, "operations", "unsupported") == []
    unsupported = found.decision(("operations", "unsupported"))
    assert unsupported is not None
    changed = [line for line in unsupported.evidence if "changed between two probes" in line]
    assert len(changed) > 10
    assert all(" → 404 NOT_FOUND" in line and " → 405 " in line for line in changed)


def test_a_query_name_whose_answers_change_between_probes_is_undecided(
    styles: dict[str, str], contract: Contract
) -> None:
    """M14, the query names: the transactions' answers to ``fromDate`` flap, so neither it nor
    ``dateFrom`` is decided, and the draft names both answers."""
    found = _flapping_discovery(styles["bundled"], contract, "GET", b"fromDate=not-a-date")
    decision = found.decision(("query", "AT", "fromDate"))
    assert decision is not None and not decision.is_decided
    assert "changed between two probes" in decision.why
    assert any(" → 404 NOT_FOUND" in line for line in decision.evidence)
