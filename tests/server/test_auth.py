"""Authentication and header checks (spec 5, spec 4.2, spec 7 rules 3 and 7) over signed HTTP.

Each broken signer of ``conformance.signing`` breaks one spec 5 requirement; the server must
refuse each with the answer recorded in ``reference_server/assumptions.md``.
"""

from __future__ import annotations

import base64
import datetime as dt
import random
import uuid
from collections.abc import Callable, Iterator

import httpx
import pytest

from conformance.contract import load_contract
from conformance.contract.identifiers import generate_national_id
from conformance.signing import (
    BodyChangedAfterSigningSigner,
    IncompleteHeadersSigner,
    KeyIdIssuerMismatchSigner,
    KeyIdSerialMismatchSigner,
    NoDigestSigner,
    SignatureAuth,
    StaleDigestSigner,
    TppIdentity,
    WrongAlgorithmSigner,
    WrongKeySigner,
    default_ca,
    default_identity,
    generate_ca,
    generate_tpp_identity,
)
from reference_server.transport.http import RunningServer, start
from server import bodies
from server.conftest import core_app, make_client

Factory = Callable[..., httpx.Client]

NDCT = "/v1/payments/norwegian-domestic-credit-transfers"


class DroppingSigner(SignatureAuth):
    """Signs, then removes one header from what is sent."""

    def __init__(self, *args: object, drop: str, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.drop = drop

    def outgoing(self, request: httpx.Request) -> httpx.Request:
        del request.headers[self.drop]
        return request


class ReplacingSigner(SignatureAuth):
    """Signs, then replaces one header's value in what is sent."""

    def __init__(self, *args: object, header: str, value: str, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.header, self.value = header, value

    def outgoing(self, request: httpx.Request) -> httpx.Request:
        request.headers[self.header] = self.value
        return request


def credentials(identity: TppIdentity | None = None):
    return (identity or default_identity()).signing_credentials()


def new_customer_body() -> dict:
    return bodies.customer()


def payment_headers(**changes: str | None) -> dict[str, str]:
    """Every header E16 requires (spec 4.2), with changes; None removes one."""
    headers = {
        "x-accept-fix": "amount-as-string",
        "TPP-Session-ID": "session-1",
        "TPP-Redirect-URI": "https://tpp.example/return",
        "PSU-ID": str(uuid.uuid4()),
        "PSU-IP-Address": "192.0.2.10",
    }
    for name, value in changes.items():
        name = name.replace("_", "-")
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value
    return headers


# -- required headers (spec 4.2) ----------------------------------------------------------------


@pytest.mark.parametrize("header", ["TPP-Signature-Certificate", "Signature"])
def test_missing_signature_header_is_required(client_factory: Factory, header: str) -> None:
    signer = DroppingSigner(credentials(), drop=header)
    response = client_factory(auth=signer).get("/v1/sandbox/customers")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "HTTP_HEADER_REQUIRED"
    assert header in body["message"]


def test_missing_x_request_id_is_required(server: RunningServer, app: object) -> None:
    with httpx.Client(base_url=server.url, auth=SignatureAuth(credentials())) as plain:
        response = plain.get("/v1/sandbox/customers")
    assert response.status_code == 400
    assert response.json()["code"] == "HTTP_HEADER_REQUIRED"
    assert "X-Request-ID" in response.json()["message"]
    assert "x-request-id" not in response.headers


def test_empty_required_header_counts_as_missing(client: httpx.Client) -> None:
    response = client.get("/v1/sandbox/customers", headers={"X-Request-ID": ""})
    assert response.status_code == 400
    assert response.json()["code"] == "HTTP_HEADER_REQUIRED"


def test_body_without_digest_is_refused(client_factory: Factory) -> None:
    """E7 lists Digest (spec 4.2); spec 5 item 4: a body carries a Digest."""
    response = client_factory(auth=NoDigestSigner(credentials())).post(
        "/v1/sandbox/customers", json=new_customer_body()
    )
    assert response.status_code == 400
    assert response.json()["code"] == "HTTP_HEADER_REQUIRED"
    assert "Digest" in response.json()["message"]


def test_get_listing_digest_as_required_needs_it(client_factory: Factory) -> None:
    """E13 lists Digest among its required headers although it is a GET (spec 4.2)."""
    plain = client_factory(auth=SignatureAuth(credentials()))
    response = plain.get("/v1/sandbox/agreements/a/engagements/b")
    assert response.status_code == 400
    assert response.json()["code"] == "HTTP_HEADER_REQUIRED"


@pytest.mark.parametrize(
    "header",
    ["x-accept-fix", "TPP-Session-ID", "TPP-Redirect-URI", "PSU-ID", "PSU-IP-Address"],
)
def test_payment_required_headers_are_named_in_tpp_messages(
    client: httpx.Client, header: str
) -> None:
    response = client.post(NDCT, json={}, headers=payment_headers(**{header: None}))
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "HTTP_HEADER_REQUIRED"
    assert body["tppMessages"][0] == {
        "category": "ERROR",
        "code": "HTTP_HEADER_REQUIRED",
        "path": header,
        "text": f"{header} is required (spec 4.2)",
    }
    assert body["message"].startswith(f"{header} is required for E16 (spec 4.2)")


def test_a_refusal_lists_every_missing_header_and_every_body_problem(
    client: httpx.Client,
) -> None:
    """One answer names everything the request must fix: each missing header, then the body's
    schema errors (spec 7's tppMessages is a list)."""
    headers = payment_headers(**{"PSU-ID": None, "TPP-Session-ID": None})
    response = client.post(NDCT, json={"creditorName": "x"}, headers=headers)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "HTTP_HEADER_REQUIRED"
    messages = body["tppMessages"]
    assert [m["path"] for m in messages[:2]] == ["TPP-Session-ID", "PSU-ID"]
    assert {m["code"] for m in messages[2:]} == {"FORMAT_ERROR"}
    assert any("instructedAmount" in m["text"] for m in messages[2:])
    assert "TPP-Session-ID, PSU-ID are required" in body["message"]
    assert "the body also has problems" in body["message"]


def test_a_schema_refusal_names_every_error_in_its_message(client: httpx.Client) -> None:
    """Without tppMessages (a sandbox operation) the message carries all the schema errors."""
    response = client.post("/v1/sandbox/customers", json={"customerType": 5, "customerName": 7})
    assert response.status_code == 400
    message = response.json()["message"]
    assert "customerType" in message and "customerName" in message and "and 2 more" in message


def test_x_psu_identity_stands_in_for_psu_id(client: httpx.Client) -> None:
    identity = generate_national_id(random.Random(7))
    headers = payment_headers(PSU_ID=None, **{"X-PSU-IDENTITY": identity})
    response = client.post(NDCT, json={}, headers=headers)
    assert response.json()["code"] != "HTTP_HEADER_REQUIRED"


@pytest.mark.parametrize("identity", ["12345678901", "1234", "=?utf-8?B?MTIz?="])
def test_invalid_x_psu_identity_is_a_format_error(client: httpx.Client, identity: str) -> None:
    headers = payment_headers(**{"X-PSU-IDENTITY": identity})
    response = client.post(NDCT, json={}, headers=headers)
    assert response.status_code == 400
    assert response.json()["code"] == "FORMAT_ERROR"
    assert response.json()["tppMessages"][0]["path"] == "X-PSU-IDENTITY"


# -- signature (spec 5 parts 1-4) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("signer", "header"),
    [
        (StaleDigestSigner, "Digest"),
        (BodyChangedAfterSigningSigner, "Digest"),
        (WrongKeySigner, "Signature"),
        (KeyIdSerialMismatchSigner, "Signature"),
        (KeyIdIssuerMismatchSigner, "Signature"),
        (IncompleteHeadersSigner, "Signature"),
        (WrongAlgorithmSigner, "Signature"),
    ],
)
def test_broken_signatures_are_401(client_factory: Factory, signer: type, header: str) -> None:
    client = client_factory(auth=signer(credentials()))
    response = client.post("/v1/sandbox/customers", json=new_customer_body())
    assert response.status_code == 401, response.text
    assert response.json()["code"] == "SIGNATURE_INVALID"


def test_sha512_digest_is_accepted(client_factory: Factory) -> None:
    client = client_factory(auth=SignatureAuth(credentials(), digest_algorithm="SHA-512"))
    assert client.post("/v1/sandbox/customers", json=new_customer_body()).status_code == 201


@pytest.mark.parametrize(
    ("header", "value", "status", "code"),
    [
        ("Signature", "not a signature", 400, "FORMAT_ERROR"),
        ("Digest", "MD5=1B2M2Y8AsgTpgAmY7PhCfg==", 400, "FORMAT_ERROR"),
        ("TPP-Signature-Certificate", "bm90IGEgY2VydGlmaWNhdGU=", 401, "CERTIFICATE_INVALID"),
    ],
)
def test_malformed_security_headers(
    client_factory: Factory, header: str, value: str, status: int, code: str
) -> None:
    client = client_factory(auth=ReplacingSigner(credentials(), header=header, value=value))
    response = client.post("/v1/sandbox/customers", json=new_customer_body())
    assert response.status_code == status
    assert response.json()["code"] == code


def test_signature_with_non_ascii_issuer_is_rfc2047_encoded_and_accepted(
    client_factory: Factory,
) -> None:
    """Spec 5 part 3: a non-ASCII value in Signature is sent MIME-encoded (RFC 2047)."""
    ca = generate_ca("Tillitsenter Ø", key=default_ca().private_key)
    identity = generate_tpp_identity(ca, key=default_identity().private_key)
    client = client_factory(identity=identity)
    response = client.post("/v1/sandbox/customers", json=new_customer_body())
    assert response.request.headers["Signature"].startswith("=?utf-8?B?")
    assert response.status_code == 201


def test_expired_certificate_is_401(client_factory: Factory) -> None:
    now = dt.datetime.now(dt.UTC)
    expired = generate_tpp_identity(
        default_ca(),
        not_before=now - dt.timedelta(days=400),
        not_after=now - dt.timedelta(days=1),
        key=default_identity().private_key,
    )
    response = client_factory(identity=expired).get("/v1/sandbox/customers")
    assert response.status_code == 401
    assert response.json()["code"] == "CERTIFICATE_INVALID"


def test_payment_401_carries_a_listed_tpp_message_code(client_factory: Factory) -> None:
    # Not checked against the contract: E16's 401 is documented only as the scaRedirect answer
    # (ScaRedirectErrorResponse), which a rejected signature cannot carry (reported).
    client = client_factory(auth=WrongKeySigner(credentials()), checked=False)
    response = client.post(NDCT, json={}, headers=payment_headers())
    assert response.status_code == 401
    assert response.json()["tppMessages"][0]["code"] == "FORBIDDEN"


@pytest.fixture
def trusting_server() -> Iterator[RunningServer]:
    running = start(core_app(trust_ca=default_ca().certificate))
    yield running
    running.stop()


def test_trusted_ca_accepts_its_certificates(trusting_server: RunningServer, contract) -> None:
    with make_client(trusting_server.url, contract) as client:
        assert client.get("/v1/sandbox/customers").status_code == 200


def test_certificate_of_another_ca_is_401_under_trust(
    trusting_server: RunningServer,
    contract,
) -> None:
    stranger = generate_tpp_identity(
        generate_ca("Another CA", key=default_ca().private_key),
        key=default_identity().private_key,
    )
    with make_client(trusting_server.url, contract, identity=stranger) as client:
        response = client.get("/v1/sandbox/customers")
    assert response.status_code == 401
    assert response.json()["code"] == "CERTIFICATE_INVALID"
    assert "Another CA" in response.json()["message"]


def test_several_trusted_cas_each_accept_their_certificates_and_no_other(contract) -> None:
    """``--trust`` repeated (spec 5 part 1): a certificate chains to one of the CAs, any one."""
    key = default_identity().private_key
    utf8_ca = generate_ca("Conformance Test CA Ærø", key=default_ca().private_key)
    running = start(core_app(trust_ca=[default_ca().certificate, utf8_ca.certificate]))
    try:
        for identity in (default_identity(), generate_tpp_identity(utf8_ca, key=key)):
            with make_client(running.url, contract, identity=identity) as client:
                response = client.get("/v1/sandbox/customers")
            assert response.status_code == 200, identity.certificate.issuer
        stranger = generate_tpp_identity(
            generate_ca("Another CA", key=default_ca().private_key), key=key
        )
        with make_client(running.url, contract, identity=stranger) as client:
            response = client.get("/v1/sandbox/customers")
        assert response.status_code == 401
        assert response.json()["code"] == "CERTIFICATE_INVALID"
        assert "Another CA" in response.json()["message"]
        # Named after a trusted CA, signed by another key: told against the CA it names.
        forged = generate_tpp_identity(generate_ca("Conformance Test CA Ærø", key=key), key=key)
        with make_client(running.url, contract, identity=forged) as client:
            response = client.get("/v1/sandbox/customers")
        assert response.status_code == 401
        assert "signature does not verify" in response.json()["message"]
    finally:
        running.stop()


# -- PSD2 roles ---------------------------------------------------------------------------------


def identity_with(roles: tuple[str, ...], *, qc_statement: bool = True) -> TppIdentity:
    return generate_tpp_identity(
        default_ca(), roles=roles, qc_statement=qc_statement, key=default_identity().private_key
    )


def test_payment_needs_psp_pi(client_factory: Factory) -> None:
    client = client_factory(identity=identity_with(("PSP_AI",)))
    response = client.post(NDCT, json={}, headers=payment_headers())
    assert response.status_code == 403
    assert response.json()["code"] == "FORBIDDEN"
    assert "PSP_PI" in response.json()["message"]


def test_accounts_need_psp_ai(client_factory: Factory) -> None:
    client = client_factory(identity=identity_with(("PSP_PI",)))
    response = client.get("/v1/accounts", headers=payment_headers())
    assert response.status_code == 403
    assert "PSP_AI" in response.json()["message"]


@pytest.mark.parametrize(("roles", "qc"), [(("PSP_PI",), True), ((), True), (("PSP_AI",), False)])
def test_sandbox_takes_any_role_or_none(
    client_factory: Factory, roles: tuple[str, ...], qc: bool
) -> None:
    client = client_factory(identity=identity_with(roles, qc_statement=qc))
    assert client.get("/v1/sandbox/customers").status_code == 200


def test_certificate_without_roles_is_not_refused_for_payments(client_factory: Factory) -> None:
    client = client_factory(identity=identity_with(("PSP_AI",), qc_statement=False))
    response = client.post(NDCT, json={}, headers=payment_headers())
    assert response.status_code != 403


# -- header formats and the PSU (spec 7 rules 3 and 7) ------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"PSU-ID": "not-a-uuid"},
        {"PSU-ID": "=?utf-8?B?bm90LWEtdXVpZA==?="},
        {"PSU-Context": "BUSINESS"},
        {"PSU-Device-ID": "device-1"},
        {"PSU-IP-Address": "999.1.1.1"},
        {"PSU-HTTP-Method": "TRACE"},
    ],
)
def test_malformed_psu_headers_are_validation_errors(client: httpx.Client, headers: dict) -> None:
    """Spec 7 rule 7 (PSU-ID) and the header schemas of spec 4.2."""
    response = client.get("/v1/sandbox/customers", headers=headers)
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "FORMAT_ERROR"
    assert next(iter(headers)) in body["message"]


def test_rfc2047_encoded_psu_id_is_decoded(client: httpx.Client) -> None:
    psu = str(uuid.uuid4())
    encoded = "=?utf-8?B?" + base64.b64encode(psu.encode()).decode() + "?="
    response = client.get("/v1/sandbox/customers", headers={"PSU-ID": encoded})
    assert response.status_code == 200


def test_undecodable_rfc2047_value_is_400(client: httpx.Client) -> None:
    response = client.get("/v1/sandbox/customers", headers={"PSU-ID": "=?bogus-charset?B?YQ==?="})
    assert response.status_code == 400


def test_corporate_context_needs_corporate_id(client: httpx.Client) -> None:
    """Spec 7 rule 3."""
    response = client.get("/v1/sandbox/customers", headers={"PSU-Context": "CORPORATE"})
    assert response.status_code == 400
    assert "PSU-Corporate-ID" in response.json()["message"]
    headers = {"PSU-Context": "CORPORATE", "PSU-Corporate-ID": "agreement-1"}
    assert client.get("/v1/sandbox/customers", headers=headers).status_code == 200


def test_psu_of_a_corporate_customer_needs_corporate_id(client: httpx.Client) -> None:
    """Spec 7 rule 3: the PSU-ID of a CORPORATE sandbox customer makes the request corporate."""
    corporate = client.post(
        "/v1/sandbox/customers", json=bodies.customer("CORPORATE", "Firma AS")
    ).json()
    response = client.get("/v1/sandbox/customers", headers={"PSU-ID": corporate["customerId"]})
    assert response.status_code == 400
    person = client.post("/v1/sandbox/customers", json=bodies.customer()).json()
    assert (
        client.get("/v1/sandbox/customers", headers={"PSU-ID": person["customerId"]}).status_code
        == 200
    )


def test_corporate_payment_without_corporate_id_is_400(client: httpx.Client) -> None:
    response = client.post(NDCT, json={}, headers=payment_headers(**{"PSU-Context": "CORPORATE"}))
    assert response.status_code == 400
    assert response.json()["tppMessages"][0]["path"] == "PSU-Corporate-ID"


# -- freshness of the signed Date (issue 14; spec 5 signs Date, states no window) ---------------


def _signed_at(offset_seconds: float) -> SignatureAuth:
    moment = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=offset_seconds)
    return SignatureAuth(credentials(), clock=lambda: moment)


@pytest.mark.parametrize("offset", [-3900, 3900], ids=["an-hour-old", "an-hour-ahead"])
def test_a_date_outside_the_clock_skew_is_refused(client_factory: Factory, offset: int) -> None:
    response = client_factory(auth=_signed_at(offset)).get("/v1/sandbox/customers")
    assert response.status_code == 401
    body = response.json()
    assert body["code"] == "SIGNATURE_INVALID" and "stale or replayed" in body["message"]


def test_a_date_within_the_skew_is_accepted_whatever_the_sandbox_clock_says(
    faulty_server: Callable[..., tuple[RunningServer, httpx.Client]],
) -> None:
    running, client = faulty_server()  # a server of its own: its clock is moved
    recent = make_client(running.url, load_contract(), auth=_signed_at(-240), checked=False)
    with recent:
        assert recent.get("/v1/sandbox/customers").status_code == 200
    moved = client.post("/_control/clock", json={"advance": "P30D"})  # the sandbox's own date
    assert moved.status_code == 200
    assert client.get("/v1/sandbox/customers").status_code == 200  # real time still counts


def test_the_stale_date_fault_accepts_an_old_date(
    faulty_server: Callable[..., tuple[RunningServer, httpx.Client]],
) -> None:
    _, old = faulty_server("stale-date-accepted", auth=_signed_at(-7200))
    assert old.get("/v1/sandbox/customers").status_code == 200


def test_a_replayed_read_is_answered_and_a_replayed_change_refused(client: httpx.Client) -> None:
    """Replay protection covers requests that change state; a read changes nothing."""
    signer = SignatureAuth(credentials())
    once = {"X-Request-ID": str(uuid.uuid4())}
    read = next(
        signer.sync_auth_flow(client.build_request("GET", "/v1/sandbox/customers", headers=once))
    )
    assert client.send(read, auth=None).status_code == 200
    assert client.send(read, auth=None).status_code == 200
    change = client.build_request(
        "POST", "/v1/sandbox/customers", json=new_customer_body(), headers=once
    )
    signed = next(signer.sync_auth_flow(change))
    assert client.send(signed, auth=None).status_code == 201
    again = client.send(signed, auth=None)
    assert again.status_code == 401
    assert "already used" in again.json()["message"]


def test_the_same_signature_on_another_path_is_no_replay(client: httpx.Client) -> None:
    """Spec 5's signing string need not cover the request target: two bodiless requests to
    different paths with the same signed headers (same Date and X-Request-ID) carry the same
    Signature, and the second is no replay of the first. The same request twice is one."""
    signer = SignatureAuth(credentials())
    headers = {"X-Request-ID": str(uuid.uuid4())}
    first = next(
        signer.sync_auth_flow(
            client.build_request("POST", "/v1/sandbox/data-fill", headers=headers)
        )
    )
    other = client.build_request("POST", "/v1/sandbox/initialize", headers=dict(first.headers))
    assert other.headers["Signature"] == first.headers["Signature"]
    assert "already used" not in client.send(first, auth=None).text
    elsewhere = client.send(other, auth=None)
    assert "already used" not in elsewhere.text, elsewhere.text
    again = client.send(first, auth=None)
    assert again.status_code == 401 and "already used" in again.json()["message"]
