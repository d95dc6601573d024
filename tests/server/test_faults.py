"""Each deliberate fault (``reference_server.faults``) changes exactly the behaviour it names:
the faithful server refuses the request, the faulty one lets it through."""

from __future__ import annotations

import ast
import datetime as dt
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

import reference_server
from conformance.signing import (
    IncompleteHeadersSigner,
    KeyIdSerialMismatchSigner,
    SignatureAuth,
    SigningCredentials,
    StaleDigestSigner,
    WrongKeySigner,
    default_identity,
)
from reference_server.app import Application
from reference_server.faults import FAULTS, UnknownFaultError, check_names
from reference_server.faults.core import CORE_FAULTS
from reference_server.transport.http import RunningServer
from server import bodies

Start = Callable[..., tuple[RunningServer, httpx.Client]]
Scenario = Callable[[httpx.Client], httpx.Response]


def _credentials() -> SigningCredentials:
    return default_identity().signing_credentials()


def _new_account(client: httpx.Client) -> dict:
    customer = client.post("/v1/sandbox/customers", json=bodies.customer()).json()
    return client.post(
        "/v1/sandbox/accounts", json=bodies.account(customer["customerNumber"])
    ).json()


def _future_transaction(client: httpx.Client) -> httpx.Response:
    account = _new_account(client)
    item = bodies.account_transaction(account, bookingDate=bodies.days_ago(-3))
    return client.post(f"/v1/sandbox/accounts/{account['id']}/transactions", json=[item])


def _foreign_debtor(client: httpx.Client) -> httpx.Response:
    account, other = _new_account(client), _new_account(client)
    item = bodies.account_transaction(other)
    return client.post(f"/v1/sandbox/accounts/{account['id']}/transactions", json=[item])


def _limit_zero(client: httpx.Client) -> httpx.Response:
    account = _new_account(client)
    return client.get(f"/v1/sandbox/accounts/{account['id']}/transactions?limit=0")


def _corporate_without_id(client: httpx.Client) -> httpx.Response:
    """Spec 7 rule 3: the PSU-ID of a CORPORATE customer, no PSU-Corporate-ID."""
    corporate = client.post(
        "/v1/sandbox/customers", json=bodies.customer("CORPORATE", "Firma AS")
    ).json()
    return client.get("/v1/sandbox/customers", headers={"PSU-ID": corporate["customerId"]})


def _signer(kind: type[SignatureAuth], **options: object) -> Callable[[], SignatureAuth]:
    return lambda: kind(_credentials(), digest_empty_body=True, **options)  # type: ignore[arg-type]


def _replayed(client: httpx.Client) -> httpx.Response:
    """A sandbox customer created, then the byte-identical request (same signature) again."""
    request = client.build_request(
        "POST", "/v1/sandbox/customers", json=bodies.customer(), headers={"X-Request-ID": "r-1"}
    )
    signed = next(SignatureAuth(_credentials()).sync_auth_flow(request))
    assert client.send(signed, auth=None).status_code == 201
    return client.send(signed, auth=None)


#: fault → (signer factory or None for the default, the request, status faithful, status faulty)
SCENARIOS: dict[str, tuple[Callable[[], SignatureAuth] | None, Scenario, int, int]] = {
    "skip-digest-check": (
        _signer(StaleDigestSigner),
        lambda c: c.post("/v1/sandbox/customers", json=bodies.customer()),
        401,
        201,
    ),
    "accept-any-signature": (
        _signer(WrongKeySigner),
        lambda c: c.get("/v1/sandbox/customers"),
        401,
        200,
    ),
    "accept-keyid-mismatch": (
        _signer(KeyIdSerialMismatchSigner),
        lambda c: c.get("/v1/sandbox/customers"),
        401,
        200,
    ),
    "replay-accepted": (None, _replayed, 401, 201),
    "stale-date-accepted": (
        _signer(SignatureAuth, clock=lambda: dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)),
        lambda c: c.get("/v1/sandbox/customers"),
        401,
        200,
    ),
    "ignore-headers-list": (
        _signer(IncompleteHeadersSigner),
        lambda c: c.get("/v1/sandbox/customers"),
        401,
        200,
    ),
    # E13 requires Digest although it is a GET (spec 4.2); this signer sends none on GETs.
    "ignore-required-header": (
        lambda: SignatureAuth(_credentials()),
        lambda c: c.get("/v1/sandbox/agreements/a/engagements/b"),
        400,
        404,
    ),
    "no-limit-minimum": (None, _limit_zero, 400, 200),
    "accept-future-sandbox-dates": (None, _future_transaction, 400, 201),
    "accept-foreign-debtor": (None, _foreign_debtor, 400, 201),
    "accept-invalid-customer-type": (
        None,
        lambda c: c.post("/v1/sandbox/customers", json=bodies.customer("BUSINESS")),
        400,
        201,
    ),
    "corporate-without-id-accepted": (None, _corporate_without_id, 400, 200),
    "no-psu-id-format-check": (
        None,
        lambda c: c.get("/v1/sandbox/customers", headers={"PSU-ID": "not-a-uuid"}),
        400,
        200,
    ),
    "server-error-on-invalid-utf8": (
        None,
        lambda c: c.post(
            "/v1/sandbox/customers",
            content=b'{"customerType": "\xff"}',
            headers={"Content-Type": "application/json"},
        ),
        400,
        500,
    ),
    "server-error-on-wrong-content-type": (
        None,
        lambda c: c.post(
            "/v1/sandbox/customers", content=b"{}", headers={"Content-Type": "text/plain"}
        ),
        415,
        500,
    ),
    "server-error-on-oversized-body": (
        None,
        lambda c: c.post(
            "/v1/sandbox/customers",
            content=b" " * (1024 * 1024 + 1),
            headers={"Content-Type": "application/json"},
        ),
        413,
        500,
    ),
    "server-error-on-unknown-resource": (
        None,
        lambda c: c.get("/v1/sandbox/accounts/00000000-0000-4000-8000-000000000000"),
        404,
        500,
    ),
    "redirect-preferred-false-refused": (
        None,
        lambda c: c.get("/v1/sandbox/customers", headers={"TPP-Redirect-Preferred": "false"}),
        200,
        400,
    ),
    "trace-not-implemented": (
        None,
        lambda c: c.request("TRACE", "/v1/sandbox/customers"),
        405,
        501,
    ),
    "server-error-on-malformed-json": (
        None,
        lambda c: c.post(
            "/v1/sandbox/customers",
            content=b'{"customerType": ',
            headers={"Content-Type": "application/json"},
        ),
        400,
        500,
    ),
}


def test_every_core_fault_has_a_scenario() -> None:
    tested_apart = {
        "html-errors",
        "no-content-type",
        "with-accounts-ignored",
        "with-agreements-ignored",  # its scenario: SB-customers-with-agreements-listed
        "unstable-transaction-ids",
        "sca-no-return",  # a suite-level test: tests/suite/test_runners.py
        "tpp-ownership-unchecked",  # tests/server/test_ownership.py
        "psu-ownership-unchecked",  # tests/server/test_ownership.py
        "nok-redirect-ignored",  # tests/server/test_sca_flow.py
        "sandbox-initialize-keeps-changes",  # tests/server/test_sandbox_fill.py
    }
    assert {fault.name for fault in CORE_FAULTS} == set(SCENARIOS) | tested_apart


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_fault_lets_through_what_the_faithful_server_refuses(
    faulty_server: Start, name: str
) -> None:
    signer, scenario, faithful_status, faulty_status = SCENARIOS[name]
    auth = signer() if signer else None
    _, faithful = faulty_server(auth=auth)
    _, faulty = faulty_server(name, auth=auth)
    assert scenario(faithful).status_code == faithful_status
    assert scenario(faulty).status_code == faulty_status


def test_corporate_context_without_corporate_id_is_accepted_only_with_the_fault(
    faulty_server: Start,
) -> None:
    """Spec 7 rule 3 through ``PSU-Context: CORPORATE``: the faithful server names the missing
    header; the faulty one answers as if the PSU had sent it."""
    headers = {"PSU-Context": "CORPORATE"}
    _, faithful = faulty_server()
    _, faulty = faulty_server("corporate-without-id-accepted")
    refused = faithful.get("/v1/sandbox/customers", headers=headers)
    assert refused.status_code == 400
    assert refused.json()["code"] == "HTTP_HEADER_REQUIRED"
    assert "PSU-Corporate-ID" in refused.json()["message"]
    accepted = faulty.get("/v1/sandbox/customers", headers=headers)
    assert accepted.status_code == 200, accepted.text


def test_html_errors_fault_answers_html(faulty_server: Start) -> None:
    _, faithful = faulty_server()
    _, faulty = faulty_server("html-errors")
    assert faithful.get("/v1/nothing").headers["content-type"] == "application/json"
    response = faulty.get("/v1/nothing")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert response.text.startswith("<!DOCTYPE html>")


def test_no_content_type_fault_drops_it_from_successful_answers_only(faulty_server: Start) -> None:
    _, faithful = faulty_server()
    _, faulty = faulty_server("no-content-type")
    assert faithful.get("/v1/sandbox/customers").headers["content-type"] == "application/json"
    assert "content-type" not in faulty.get("/v1/sandbox/customers").headers
    assert faulty.get("/v1/nothing").headers["content-type"] == "application/json"


def test_with_accounts_ignored_fault_lists_no_accounts(faulty_server: Start) -> None:
    for fault, listed in (((), True), (("with-accounts-ignored",), False)):
        _, client = faulty_server(*fault)
        customer = client.post("/v1/sandbox/customers", json=bodies.customer()).json()
        account = client.post(
            "/v1/sandbox/accounts", json=bodies.account(customer["customerNumber"])
        ).json()
        customers = client.get("/v1/sandbox/customers", params={"withAccounts": "true"}).json()
        (entry,) = [c for c in customers if c["customerId"] == customer["customerId"]]
        assert (account["id"] in entry["accounts"]) is listed


def test_unstable_transaction_ids_fault_renames_them_per_listing(faulty_server: Start) -> None:
    for fault, stable in (((), True), (("unstable-transaction-ids",), False)):
        _, client = faulty_server(*fault)
        customer = client.post("/v1/sandbox/customers", json=bodies.customer()).json()
        account = client.post(
            "/v1/sandbox/accounts", json=bodies.account(customer["customerNumber"])
        ).json()
        path = f"/v1/sandbox/accounts/{account['id']}/transactions"
        debtor = {"iban": account["iban"], "bban": account["bban"]}
        assert client.post(path, json=[bodies.account_transaction(debtor)]).status_code == 201
        first, second = (client.get(path).json() for _ in range(2))
        assert ([t["id"] for t in first] == [t["id"] for t in second]) is stable


def test_fault_table_names_the_rule_each_breaks() -> None:
    for name, fault in FAULTS.items():
        assert fault.name == name
        assert fault.rule.startswith("spec "), name
        assert fault.description


def test_unknown_fault_is_refused() -> None:
    assert check_names(["html-errors"]) == {"html-errors"}
    with pytest.raises(UnknownFaultError, match="no-such-fault"):
        check_names(["html-errors", "no-such-fault"])


def test_checking_an_unregistered_fault_raises() -> None:
    app = Application()
    assert app.faulty("html-errors") is False
    with pytest.raises(ValueError, match="no-such-fault"):
        app.faulty("no-such-fault")


def test_every_fault_the_server_checks_is_registered() -> None:
    checked = {
        node.args[0].value
        for path in Path(reference_server.__file__).parent.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "faulty"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }
    assert checked, "no faulty(...) call found: the pattern no longer matches the code"
    assert checked <= FAULTS.keys(), sorted(map(str, checked - FAULTS.keys()))
