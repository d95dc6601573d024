"""``conformance discover`` learning from refusals (issue 42): a refusal that names a header or
a body field is answered by sending it and asking again; an operation answering 405 or a 404
for its path is not offered; a bank that refuses the TPP itself is "not checked", never
"unchanged"; ``--out`` keeps an existing file. Each bank is the bundled reference server in this
process, behind a handler that adds the one demand the test is about."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.cli import main
from conformance.contract import Contract, load_contract
from conformance.discover.draft import write_draft
from conformance.discover.session import Discovery, discover
from conformance.profile import load_profile, profile_from_options
from reference_server.app import Application
from reference_server.model.bank_style import style_of
from reference_server.transport.http import start

#: A demand: the request, and the refusal it gets (None: the reference server answers).
Demand = Callable[[httpx.Request], httpx.Response | None]


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


@pytest.fixture(scope="module")
def server(contract: Contract) -> Iterator[str]:
    running = start(Application(contract=contract))
    yield running.url
    running.stop()
    _FORWARD.close()


#: The connection to the reference server of every demand's handler (closed with the server).
_FORWARD = httpx.HTTPTransport()


def _behind(demand: Demand) -> httpx.MockTransport:
    """The reference server, with ``demand`` answering first."""
    forward = _FORWARD

    def handler(request: httpx.Request) -> httpx.Response:
        refused = demand(request)
        if refused is not None:
            return refused
        response = forward.handle_request(request)
        response.read()
        return response

    return httpx.MockTransport(handler)


def _discover(url: str, demand: Demand, contract: Contract) -> Discovery:
    profile = profile_from_options(target=url)
    return discover(profile, transport=_behind(demand), contract=contract)


def _refusal(message: str, code: str = "FORMAT_ERROR", status: int = 400) -> httpx.Response:
    return httpx.Response(status, json={"code": code, "message": message})


def _body(request: httpx.Request) -> dict[str, Any]:
    try:
        document = json.loads(request.content or b"null")
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}


def test_a_header_the_refusal_names_is_sent_and_drafted(
    server: str, contract: Contract, tmp_path: Path
) -> None:
    """The account list refused without PSU-Device-ID (a header the contract lists as optional
    there, and whose set the spec does not show): sent from then on, and drafted."""

    def demand(request: httpx.Request) -> httpx.Response | None:
        at_list = request.method == "GET" and request.url.path.endswith("/v1/accounts")
        if at_list and "psu-device-id" not in request.headers:
            return _refusal("Missing required header(s): PSU-Device-ID")
        return None

    found = _discover(server, demand, contract)
    decision = found.decision(("required_headers", "AL"))
    assert decision is not None and "PSU-Device-ID" in decision.value
    assert any(line.startswith("PSU-Device-ID taught by: GET /v1/accounts → 400") for line in
               decision.evidence)  # fmt: skip
    out = tmp_path / "bank.toml"
    write_draft(found, out, contract)
    assert "PSU-Device-ID" in load_profile(out).required_for(contract.operations["AL"])
    assert "PSU-Device-ID taught by: GET /v1/accounts → 400" in out.read_text("utf-8")


def test_a_field_the_refusal_names_goes_into_the_template(server: str, contract: Contract) -> None:
    """The customer creation refused without ``name`` (a field the suite does not send): the
    template gets it, and the set-up body is sent again with it."""
    bodies: list[dict[str, Any]] = []

    def demand(request: httpx.Request) -> httpx.Response | None:
        if request.method == "POST" and request.url.path.endswith("/v1/sandbox/customers"):
            body = _body(request)
            bodies.append(body)
            if "name" not in body:
                return _refusal("name is required")
        return None

    found = _discover(server, demand, contract)
    decision = found.decision(("setup", "templates"))
    assert decision is not None and decision.value.get("SCU") == {"name": None}
    assert any(line.startswith("name taught by: POST /v1/sandbox/customers → 400") for line in
               decision.evidence)  # fmt: skip
    assert any("name" in body and "customerType" in body for body in bodies)  # sent again


@pytest.mark.parametrize(
    "message",
    ["iban: unknown field", "Additional properties are not allowed ('iban' was unexpected)"],
    ids=["named", "jsonschema"],
)
def test_a_field_the_refusal_names_as_unknown_is_removed_by_the_template(
    server: str, contract: Contract, tmp_path: Path, message: str
) -> None:
    """Issue 42: the account creation refused for a field of the suite's body the bank does not
    take ("iban: unknown field"): the draft's template sets it to null (the template's way of
    removing a key), the body is sent again without it, and the run's set-up body lacks it."""
    from conformance.generate import factories
    from conformance.profile.templates import apply_template

    bodies: list[dict[str, Any]] = []

    def demand(request: httpx.Request) -> httpx.Response | None:
        if request.method == "POST" and request.url.path.endswith("/v1/sandbox/accounts"):
            body = _body(request)
            bodies.append(body)
            if "iban" in body:
                return _refusal(message)
        return None

    found = _discover(server, demand, contract)
    decision = found.decision(("setup", "templates"))
    assert decision is not None and decision.value.get("SA") == {"iban": None}
    assert any(line.startswith("iban removed (null), taught by: POST /v1/sandbox/accounts → 400")
               for line in decision.evidence)  # fmt: skip
    assert any("bban" in body and "iban" not in body for body in bodies)  # sent again without
    out = tmp_path / "bank.toml"
    write_draft(found, out, contract)
    template = load_profile(out).setup_templates["SA"]
    made = apply_template(template, factories.sandbox_account_create(1, "12345678"))
    assert "iban" not in made and "bban" in made


def test_an_operation_answering_405_is_not_offered(
    server: str, contract: Contract, tmp_path: Path
) -> None:
    """The agreement creation's route takes GET only (405 to POST and to the odd method, Allow:
    GET): not offered. The card account creation answers 405 to its own method, but its route
    answers the odd method as one that takes POST: undecided, with both exchanges."""

    def demand(request: httpx.Request) -> httpx.Response | None:
        path = request.url.path
        if path.endswith("/v1/sandbox/agreements") and request.method != "GET":
            refused = _refusal("Method Not Allowed", "SERVICE_INVALID", 405)
            refused.headers["Allow"] = "GET"
            return refused
        if path.endswith("/v1/sandbox/card-accounts") and request.method == "POST":
            return _refusal("Method Not Allowed", "SERVICE_INVALID", 405)
        return None

    found = _discover(server, demand, contract)
    decision = found.decision(("operations", "unsupported"))
    assert decision is not None and "SAG" in decision.value and "SCA" not in decision.value
    disagree = [line for line in decision.evidence if line.startswith("SCA undecided")]
    assert disagree and "PATCH /v1/sandbox/card-accounts → 405" in disagree[0]
    assert "POST /v1/sandbox/card-accounts → 405" in disagree[0]
    out = tmp_path / "bank.toml"
    write_draft(found, out, contract)  # the draft names both answers of the undecided one
    undecided = [line for line in out.read_text("utf-8").splitlines() if "SCA undecided" in line]
    assert undecided and "PATCH /v1/sandbox/card-accounts → 405" in undecided[0]
    assert "POST /v1/sandbox/card-accounts → 405" in undecided[0]
    assert "SAG" in load_profile(out).unsupported_operations


def test_check_on_a_refused_certificate_is_not_checked(
    server: str,
    contract: Contract,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every probe refused 401 CERTIFICATE_INVALID: one line, exit 3, never "as it says"."""
    profile = tmp_path / "bank.toml"
    profile.write_text(f'base_url = "{server}"\n', encoding="utf-8")
    refused = _refusal("the TPP certificate is not trusted", "CERTIFICATE_INVALID", 401)
    transport = _behind(lambda request: refused)
    from conformance.discover import session

    probe = session.discover
    monkeypatch.setattr(
        session, "discover", lambda given, **kw: probe(given, transport=transport, **kw)
    )
    code = main(["discover", "--check", str(profile)])
    captured = capsys.readouterr()
    assert code == 3 and "answers as" not in captured.out
    assert captured.err.count("\n") == 1 and "CERTIFICATE_INVALID" in captured.err
    assert "not checked" in captured.err


@pytest.mark.parametrize(
    ("code", "status", "said"),
    [("HTTP_HEADER_REQUIRED", 401, "X-Gateway-Key"), ("SIGNATURE_INVALID", 403, "SIGNATURE")],
    ids=["gateway-header", "signature"],
)
def test_check_on_refused_probes_is_not_checked(
    server: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    code: str,
    status: int,
    said: str,
) -> None:
    """Issue 42 item 6: a gateway header no profile key names, or the signature, refused on
    every probe: "not checked" in one line, exit 3."""
    profile = tmp_path / "bank.toml"
    profile.write_text(f'base_url = "{server}"\n', encoding="utf-8")
    refused = _refusal("Missing required header(s): X-Gateway-Key", code, status)
    transport = _behind(lambda request: refused)
    from conformance.discover import session

    probe = session.discover
    monkeypatch.setattr(
        session, "discover", lambda given, **kw: probe(given, transport=transport, **kw)
    )
    assert main(["discover", "--check", str(profile)]) == 3
    captured = capsys.readouterr()
    assert "answers as" not in captured.out and captured.err.count("\n") == 1
    assert "not checked" in captured.err and said in captured.err


def test_check_on_an_unreachable_bank_is_not_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "bank.toml"
    profile.write_text('base_url = "http://127.0.0.1:9"\n', encoding="utf-8")
    assert main(["discover", "--check", str(profile)]) == 3
    captured = capsys.readouterr()
    assert "answers as" not in captured.out
    assert "not checked" in captured.err and "refused the connection" in captured.err


def test_the_terminal_shows_toml(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42 item 5: each decided key is printed as the file has it (TOML: ``true``, lists
    in brackets), never as a Python value (``True``, tuples)."""
    out = tmp_path / "bank.toml"
    assert main(["discover", "--target", server, "--out", str(out)]) == 0
    decided = [line for line in capsys.readouterr().out.splitlines() if line.startswith("decided")]
    assert decided
    for line in decided:
        _, _, value = line.removeprefix("decided").strip().rpartition("] ")[2].partition(" = ")
        assert tomllib.loads(f"v = {value}")["v"] is not None, line
    assert "sandbox = true" in "\n".join(decided)


def test_out_keeps_an_existing_file_unless_forced(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bank.toml"
    out.write_text("# mine\n", encoding="utf-8")
    code = main(["discover", "--target", server, "--out", str(out)])
    assert code != 0 and out.read_text(encoding="utf-8") == "# mine\n"
    assert "--force" in capsys.readouterr().err
    assert main(["discover", "--target", server, "--out", str(out), "--force"]) == 0
    assert tomllib.loads(out.read_text(encoding="utf-8"))["base_url"] == server


def test_the_certificate_given_is_written_into_the_draft(server: str, tmp_path: Path) -> None:
    """``--cert``/``--key`` given are the draft's, so that its next command signs as they."""
    ids = tmp_path / "ids"
    assert main(["certs", "--out", str(ids)]) == 0
    out = tmp_path / "bank.toml"
    args = ["discover", "--target", server, "--out", str(out)]
    assert main([*args, "--cert", str(ids / "tpp.pem"), "--key", str(ids / "tpp.key")]) == 0
    profile = load_profile(out)
    assert profile.certificate is not None and Path(profile.certificate).name == "tpp.pem"


def test_query_names_are_the_ones_the_bank_reads(contract: Contract, tmp_path: Path) -> None:
    """A bank that reads AT's dates as ``dateFrom``/``dateTo`` (NextGenPSD2): drafted in
    ``[query.AT]``; the bundled one's are the contract's (a comment only)."""
    style = tmp_path / "style.toml"
    style.write_text(
        'base_url = "http://127.0.0.1:1"\n[query.AT]\nfromDate = "dateFrom"\ntoDate = "dateTo"\n',
        encoding="utf-8",
    )
    renamed = start(Application(contract=contract, bank=style_of(load_profile(style), {})))
    try:
        found = discover(profile_from_options(target=renamed.url), contract=contract)
    finally:
        renamed.stop()
    assert found.decision(("query", "AT", "fromDate")).value == "dateFrom"  # type: ignore[union-attr]
    assert found.decision(("query", "AT", "toDate")).value == "dateTo"  # type: ignore[union-attr]
    out = tmp_path / "bank.toml"
    write_draft(found, out, contract)
    assert load_profile(out).query_name("AT", "fromDate") == "dateFrom"


def test_a_break_is_a_finding_never_the_bank_s_choice(
    server: str, contract: Contract, tmp_path: Path
) -> None:
    """A payment creation refused without PSU-Context (optional where spec 4.2 shows E16's
    set), and a tppMessages code outside spec 7's list: findings of the draft, and neither is
    written into the profile."""

    def demand(request: httpx.Request) -> httpx.Response | None:
        path = request.url.path
        if request.method != "POST":
            return None
        ndct = path.endswith("/v1/payments/norwegian-domestic-credit-transfers")
        if ndct and "psu-context" not in request.headers:
            return _refusal("PSU-Context is required")
        if path.endswith("/v1/payments/norwegian-cross-border-credit-transfers"):
            return httpx.Response(400, json={
                "code": "FORMAT_ERROR", "message": "no",
                "tppMessages": [{"category": "ERROR", "code": "BODY_NOT_LIKED"}],
            })  # fmt: skip
        return None

    found = _discover(server, demand, contract)
    assert any(line.startswith("E16 was refused without PSU-Context") for line in found.findings)
    assert any("tppMessages code BODY_NOT_LIKED" in line for line in found.findings)
    assert _decision_value(found, "sca", "start") is not None  # decided once it was sent
    out = tmp_path / "bank.toml"
    write_draft(found, out, contract)
    text = out.read_text(encoding="utf-8")
    assert "# FINDING (a break of a stated rule" in text
    assert "PSU-Context" not in load_profile(out).required_for(contract.operations["E16"])


def _decision_value(found: Discovery, *key: str) -> Any:
    decision = found.decision(key)
    assert decision is not None, key
    return decision.value


def test_a_query_finding_says_the_profile_may_be_the_cause(contract: Contract) -> None:
    """A should finding on AT's ``fromDate`` (a name spec 4.3 does not state) says that the
    profile may be the cause, unless its ``[query.AT]`` names the parameter; E3's (stated)
    never."""
    from types import SimpleNamespace

    from conformance.scenario import Mutation
    from conformance.suite.test_conformance import _query_name_hint

    def hint(op_id: str, names: dict[str, dict[str, str]]) -> str:
        mutation = Mutation(
            target="query", pointer=("fromDate",), action="set", value="x", keyword="format"
        )
        scenario = SimpleNamespace(operation=op_id, mutation=mutation)
        ctx = SimpleNamespace(contract=contract, profile=SimpleNamespace(query_names=names))
        return _query_name_hint(scenario, ctx)  # type: ignore[arg-type]

    assert "the profile may be the cause" in hint("AT", {})
    assert hint("AT", {"AT": {"fromDate": "dateFrom"}}) == ""
    assert hint("E3", {}) == ""


def test_every_probe_carries_its_operation_s_full_header_set(
    server: str, contract: Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42 item 3: each probe sends the headers the suite sends on its operation
    (``standard_headers``: the required ones and those the silences ledger adds), but for the
    one header a header-set probe asks about; so a refusal for a missing header the suite
    would send never decides a key."""
    from conformance.bankside.request import standard_headers
    from conformance.discover.probe import Prober

    sent: list[tuple[str, Prober, Any]] = []
    close = Prober.close

    def keep(prober: Prober) -> None:
        sent.extend((op_id, prober, exchange) for op_id, exchange in prober.seen)
        close(prober)

    monkeypatch.setattr(Prober, "close", keep)
    profile = profile_from_options(target=server)
    discover(profile, contract=contract)
    assert len({op_id for op_id, _, _ in sent}) >= 20, sorted({op for op, _, _ in sent})
    assert any(len(standard_headers(contract.operations[op], p.profile, p.psu)) >= 4
               for op, p, _ in sent)  # fmt: skip
    whole: set[str] = set()
    for op_id, prober, exchange in sent:
        given = {name.lower() for name, _ in exchange.request_headers}
        full = standard_headers(contract.operations[op_id], prober.profile, prober.psu)
        missing = {name for name in full if name.lower() not in given}
        # a header-set probe leaves out the one header it asks about
        assert len(missing) <= 1, (op_id, exchange.method, exchange.path, sorted(missing))
        if not missing:
            whole.add(op_id)
    assert whole == {op_id for op_id, _, _ in sent}  # every operation probed with its full set
