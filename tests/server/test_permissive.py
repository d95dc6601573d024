"""The permissive reading (``--permissive``: the server playing
``profiles/reference-server-permissive.toml``, whose ``readings`` are the lenient rows of
``model/readings.py``): each place the server reads leniently, through signed HTTP against it, and
the same request against the bundled (faithful) server where the contrast is the point. The
permissive server trusts one CA (the default identity's), so that "a certificate of another CA
authenticates" is the reading's doing and not an open door."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.contract import Contract
from conformance.profile import PERMISSIVE_PROFILE, load_profile
from conformance.signing import (
    WrongKeySigner,
    default_ca,
    default_identity,
    generate_ca,
    generate_tpp_identity,
)
from reference_server.app import Application
from reference_server.model.bank_style import style_of
from reference_server.transport.http import RunningServer, start
from server import bodies
from server import payment_support as support
from server.conftest import ErrorCapture, make_client
from server.payment_support import NCBCT, NDCT, World

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def permissive_server() -> Iterator[RunningServer]:
    """One server for the module playing the permissive profile (every lenient reading),
    trusting only the default CA; stopped at the module's end."""
    bank = style_of(load_profile(PERMISSIVE_PROFILE))
    running = start(Application(bank=bank, trust_ca=default_ca().certificate))
    yield running
    running.stop()


@pytest.fixture
def world(
    permissive_server: RunningServer, server_errors: ErrorCapture, contract: Contract
) -> Iterator[World]:
    yield from support.world_on(permissive_server, server_errors, contract, checked=False)


@pytest.fixture
def faithful(
    full_server: RunningServer, server_errors: ErrorCapture, contract: Contract
) -> Iterator[World]:
    yield from support.world_on(full_server, server_errors, contract, checked=False)


def create(world: World, psu: support.Psu, operation: str = "E16", **fields: Any) -> httpx.Response:
    maker = {"E16": world.ndct_body, "E17": world.periodic_body, "E18": world.ncbct_body}
    return world.create(operation, maker[operation](psu, **fields), psu)


def accepted(answer: httpx.Response) -> str:
    """The payment id of a creation the permissive server accepted (spec 5 item 6's 401)."""
    assert answer.status_code == 401, answer.text
    document = answer.json()
    assert document["transactionStatus"] == "RCVD"
    assert document["_links"]["scaRedirect"]["verbs"] == ["GET"]
    return str(document["paymentId"])


# -- empty-header-values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header", ["X_Request_ID", "TPP_Session_ID", "x_accept_fix", "PSU_Corporate_ID"]
)
def test_an_empty_header_value_is_a_value(world: World, faithful: World, header: str) -> None:
    for server, status in ((world, 401), (faithful, 400)):
        psu = server.new_psu()
        headers: dict[str, Any] = {header: ""}
        answer = server.create("E16", server.ndct_body(psu), psu, **headers)
        assert answer.status_code == status, answer.text


def test_an_empty_psu_id_is_still_no_uuid(world: World) -> None:
    psu = world.new_psu()
    answer = world.create("E16", world.ndct_body(psu), psu, PSU_ID="")
    assert answer.status_code == 400
    assert "PSU-ID" in answer.json()["message"]


# -- amount-18-digits ---------------------------------------------------------------------------


def test_an_amount_of_14_to_18_digits_is_accepted_19_are_not(world: World) -> None:
    psu = world.new_psu(balance=1_000_000_000)
    for amount, status in (
        ("12345678901234.00", 401),
        ("1234567890123456.00", 401),
        ("1234567890123456789", 400),
        ("123456789012345678.00", 400),
    ):
        answer = create(world, psu, instructedAmount={"amount": amount, "currency": "NOK"})
        assert answer.status_code == status, (amount, answer.text)


# -- past-execution-dates, end-before-start, day-of-execution-by-pattern ------------------------


def test_past_dates_an_end_before_start_and_day_32_are_accepted(world: World) -> None:
    psu = world.new_psu()
    yesterday = (world.today() - timedelta(days=1)).isoformat()
    accepted(create(world, psu, requestedExecutionDate=yesterday))
    start = (world.today() + timedelta(days=30)).isoformat()
    accepted(create(world, psu, "E17", startDate=yesterday))
    accepted(create(world, psu, "E17", startDate=start, endDate=yesterday))
    accepted(create(world, psu, "E17", dayOfExecution="32"))
    assert create(world, psu, "E17", dayOfExecution="abc").status_code == 400


# -- ownership-per-certificate ------------------------------------------------------------------


def test_a_resource_belongs_to_the_certificate_not_the_organisation(
    world: World, faithful: World, contract: Contract
) -> None:
    sibling = generate_tpp_identity(default_ca())  # the same organisation, another certificate
    for server in (world, faithful):
        psu = server.new_psu()
        answer = create(server, psu)
        payment_id = answer.json()["paymentId"]
        status = f"/v1/payments/{NDCT}/{payment_id}/status"
        assert server.client.get(status).status_code == 200
        url = str(server.client.base_url)
        with make_client(url, contract, identity=sibling, checked=False) as other:
            expected = 404 if server is world else 200
            assert other.get(status).status_code == expected


# -- sca-by-401 ---------------------------------------------------------------------------------


def test_payment_creation_answers_401_with_the_payment_and_its_redirect(world: World) -> None:
    psu = world.new_psu()
    for operation, product in (("E16", NDCT), ("E17", NDCT), ("E18", NCBCT)):
        payment_id = accepted(create(world, psu, operation))
        assert world.status(payment_id, product) == "RCVD"
    payment_id = accepted(create(world, psu))
    redirect = create(world, psu).json()["_links"]["scaRedirect"]["href"]
    world.approve(redirect, psu)
    assert world.status(payment_id) == "RCVD"  # another payment's SCA


def test_the_payment_sca_of_the_401_authorises_it(world: World) -> None:
    psu = world.new_psu()
    answer = create(world, psu)
    payment_id = accepted(answer)
    world.approve(answer.json()["_links"]["scaRedirect"]["href"], psu)
    assert world.status(payment_id) == "ACTC"


def test_basket_authorisation_answers_401_with_the_redirect(world: World) -> None:
    psu = world.new_psu()
    ids = [accepted(create(world, psu)) for _ in range(2)]
    basket_id = world.basket_id(ids, psu)
    started = world.start_basket(basket_id, psu)
    assert started.status_code == 401, started.text
    world.approve(started.json()["_links"]["scaRedirect"]["href"], psu)
    assert [world.status(payment_id) for payment_id in ids] == ["ACTC", "ACTC"]
    unknown = world.start_basket(str(uuid.uuid4()), psu)
    assert unknown.status_code == 404


# -- duplicates-allowed-by-default --------------------------------------------------------------


def test_a_logical_duplicate_is_refused_only_when_the_tpp_says_false(world: World) -> None:
    psu = world.new_psu()
    body = world.ndct_body(psu)
    first = accepted(world.create("E16", body, psu))
    assert accepted(world.create("E16", body, psu)) != first
    refused = world.create("E16", body, psu, params={"allowLogicalDuplicate": "false"})
    assert refused.status_code == 400
    assert refused.json()["code"] == "CONFLICT"


# -- kid-unchecked ------------------------------------------------------------------------------


def _kid(reference: str) -> list[dict[str, str]]:
    return [{"reference": reference, "referenceType": "KID"}]


def test_any_non_empty_kid_is_accepted(world: World) -> None:
    psu = world.new_psu()
    for reference, status in (("1234567890", 401), (" ", 401), ("", 400)):
        body = world.ndct_body(psu, remittanceInformationStructuredArray=_kid(reference))
        del body["remittanceInformationUnstructured"]
        assert world.create("E16", body, psu).status_code == status, reference


# -- basket-authorised-again --------------------------------------------------------------------


def test_a_basket_starts_another_authorisation_unless_all_its_payments_are_gone(
    world: World,
) -> None:
    psu = world.new_psu()
    ids = [accepted(create(world, psu)) for _ in range(2)]
    basket_id = world.basket_id(ids, psu)
    first = world.start_basket(basket_id, psu)
    world.approve(first.json()["_links"]["scaRedirect"]["href"], psu)
    assert world.start_basket(basket_id, psu).status_code == 401  # another signer
    for payment_id in ids:  # authorised: each cancellation needs its own SCA (PCA)
        assert world.cancel(payment_id).status_code == 202
        started = world.client.post(
            f"/v1/payments/{support.NDCT}/{payment_id}/cancellation-authorisations",
            headers=psu.headers(),
        )
        world.approve(started.json()["_links"]["scaRedirect"]["href"], psu)
        assert world.status(payment_id) == "CANC"
    blocked = world.start_basket(basket_id, psu)
    assert blocked.status_code == 400
    assert blocked.json()["code"] == "RESOURCE_BLOCKED"


# -- certificates-unvalidated -------------------------------------------------------------------


def test_expired_and_untrusted_certificates_authenticate_a_bad_signature_does_not(
    world: World, contract: Contract
) -> None:
    now = datetime.now(UTC)
    expired = generate_tpp_identity(
        default_ca(), not_before=now - timedelta(days=400), not_after=now - timedelta(days=30)
    )
    untrusted = generate_tpp_identity(generate_ca("Another CA"))
    url = str(world.client.base_url)
    for identity in (expired, untrusted):
        with make_client(url, contract, identity=identity, checked=False) as client:
            assert client.get("/v1/sandbox/customers").status_code == 200
    wrong_key = WrongKeySigner(default_identity().signing_credentials())
    with make_client(url, contract, auth=wrong_key, checked=False) as forged:
        assert forged.get("/v1/sandbox/customers").status_code == 401


# -- tpp-header-values, psu-headers-on-named-operations -----------------------------------------


def test_tpp_header_values_are_taken_as_they_come(world: World) -> None:
    psu = world.new_psu()
    choices: tuple[dict[str, Any], ...] = (
        {"TPP_Redirect_URI": "abc"},
        {"TPP_Redirect_Preferred": "maybe"},
    )
    for headers in choices:
        accepted(world.create("E16", world.ndct_body(psu), psu, **headers))


def test_psu_headers_are_not_checked_where_spec_4_2_shows_no_header_set(world: World) -> None:
    psu = world.new_psu()
    payment_id = accepted(create(world, psu))
    status = f"/v1/payments/{NDCT}/{payment_id}/status"
    for name, value in (
        ("PSU-ID", "not-a-uuid"),
        ("PSU-Device-ID", "not-a-uuid"),
        ("PSU-Context", "ZZZ"),
        ("PSU-HTTP-Method", "ZZZ"),
    ):
        assert world.client.get(status, headers={name: value}).status_code == 200, name
    sandbox = world.client.post(
        "/v1/sandbox/customers", json=bodies.customer(), headers={"PSU-ID": "not-a-uuid"}
    )
    assert sandbox.status_code == 400  # spec 7 rule 7
    numbered = world.create("E16", world.ndct_body(psu), psu, PSU_Device_ID="not-a-uuid")
    assert numbered.status_code == 400  # spec 4.2: "(UUID)"


# -- lenient-list-parameters --------------------------------------------------------------------


def _consent(world: World, psu: support.Psu) -> tuple[str, str]:
    """A consent the PSU approved on the SCA page, and the account's resource id (AL)."""
    created = world.client.post(
        "/v1/consents",
        json={
            "access": {"accounts": [{"iban": psu.iban}], "transactions": [{"iban": psu.iban}]},
            "recurringIndicator": True,
            "validUntil": (world.today() + timedelta(days=30)).isoformat(),
            "frequencyPerDay": 4,
            "combinedServiceIndicator": False,
        },
        headers={"PSU-ID": psu.customer_id},
    )
    assert created.status_code == 201, created.text
    consent_id = created.json()["consentId"]
    started = world.client.post(
        f"/v1/consents/{consent_id}/authorisations", headers={"PSU-ID": psu.customer_id}
    )
    world.approve(started.json()["_links"]["scaRedirect"]["href"], psu)
    listed = world.client.get(
        "/v1/accounts", headers={"PSU-ID": psu.customer_id, "Consent-ID": consent_id}
    )
    assert listed.status_code == 200, listed.text
    return consent_id, str(listed.json()["accounts"][0]["resourceId"])


def test_list_parameters_are_taken_when_they_make_sense(world: World) -> None:
    psu = world.new_psu()
    world.client.post(
        f"/v1/sandbox/accounts/{psu.account['id']}/transactions",
        json=[bodies.account_transaction(psu.account)],
    )
    listed = world.client.get(
        f"/v1/sandbox/accounts/{psu.account['id']}/transactions", params={"offset": "-1"}
    )
    assert listed.status_code == 200
    assert len(listed.json()) == 1
    consent_id, account_id = _consent(world, psu)
    headers = {"PSU-ID": psu.customer_id, "Consent-ID": consent_id}
    path = f"/v1/accounts/{account_id}/transactions"
    for params in ({}, {"bookingStatus": "ZZZ"}, {"limit": "abc", "fromDate": "2026-02-30"}):
        answer = world.client.get(path, params=params, headers=headers)
        assert answer.status_code == 200, (params, answer.text)
        assert set(answer.json()["transactions"]) >= {"booked", "pending"}


# -- lenient-sandbox-transactions ---------------------------------------------------------------


def test_sandbox_transaction_currency_and_dates_are_strings(world: World) -> None:
    psu = world.new_psu()
    item = bodies.account_transaction(psu.account, currency="ZZZ", bookingDate="2026-02-30")
    answer = world.client.post(
        f"/v1/sandbox/accounts/{psu.account['id']}/transactions", json=[item]
    )
    assert answer.status_code == 201, answer.text
    future = (world.today() + timedelta(days=3)).isoformat()
    refused = world.client.post(
        f"/v1/sandbox/accounts/{psu.account['id']}/transactions",
        json=[bodies.account_transaction(psu.account, valueDate=future)],
    )
    assert refused.status_code == 400  # a calendar date after today: spec 4.3 E7


def test_a_card_item_s_transaction_date_is_no_value_date(world: World) -> None:
    psu = world.new_psu()
    card = world.client.post(
        "/v1/sandbox/card-accounts", json=bodies.card_account(psu.customer_number)
    )
    assert card.status_code == 201, card.text
    card_id = card.json()["cardAccount"]["resourceId"]
    path = f"/v1/sandbox/card-accounts/{card_id}/transactions"
    future = (world.today() + timedelta(days=3)).isoformat()
    later = world.client.post(path, json=[bodies.card_transaction("C1", transactionDate=future)])
    assert later.status_code == 200, later.text  # unshown-success-statuses: 200, not 201
    booked_later = world.client.post(path, json=[bodies.card_transaction("C2", bookingDate=future)])
    assert booked_later.status_code == 400


# -- minimal-error-bodies, no-tpp-messages, basket-own-codes ------------------------------------


def test_error_bodies_carry_code_and_message_or_message_only(world: World) -> None:
    psu = world.new_psu()
    refused = create(world, psu, creditorName="x" * 71)
    assert refused.status_code == 400
    assert set(refused.json()) == {"code", "message"}  # no tppMessages, no id/system/status
    unknown = world.client.get(f"/v1/sandbox/accounts/{uuid.uuid4()}")
    assert unknown.status_code == 404
    assert set(unknown.json()) == {"message"}
    status = world.client.get(f"/v1/payments/{NDCT}/{uuid.uuid4()}/status")
    assert status.status_code == 404
    assert set(status.json()) == {"message"}


def test_basket_errors_carry_their_own_code_in_tpp_messages(world: World) -> None:
    psu = world.new_psu()
    periodic = accepted(create(world, psu, "E17"))
    mixed = world.basket([periodic], psu)
    assert mixed.status_code == 400
    document = mixed.json()
    assert document["code"] == "REFERENCE_MIX_INVALID"  # spec 7 rule 1
    assert [m["code"] for m in document["tppMessages"]] == ["REFERENCE_MIX_INVALID"]
    assert "status" not in document


# -- unshown-success-statuses -------------------------------------------------------------------


def test_unshown_success_statuses(world: World) -> None:
    psu = world.new_psu()
    balances = [{"balanceAmount": {"currency": "NOK", "amount": 5}, "balanceType": "expected"}]
    changed = world.client.put(f"/v1/sandbox/accounts/{psu.account['id']}/balances", json=balances)
    assert (changed.status_code, changed.json()) == (200, balances)
    payment_id = accepted(create(world, psu))
    cancelled = world.cancel(payment_id)
    assert (cancelled.status_code, cancelled.json()) == (200, {"transactionStatus": "CANC"})
    client = world.client
    corporation = client.post("/v1/sandbox/customers", json=bodies.customer("CORPORATE")).json()
    account = client.post(
        "/v1/sandbox/accounts", json=bodies.account(corporation["customerNumber"])
    )
    agreement = client.post(
        "/v1/sandbox/agreements", json={"name": "Firma avtale", "owner": corporation["customerId"]}
    )
    engaged = client.post(
        f"/v1/sandbox/agreements/{agreement.json()['id']}/engagements",
        json=bodies.engagement(psu.customer_id, account.json()["iban"]),
    )
    assert engaged.status_code == 200, engaged.text


# -- details-without-transaction-id -------------------------------------------------------------


def test_transaction_details_leave_the_transaction_id_out(world: World) -> None:
    psu = world.new_psu()
    made = world.client.post(
        f"/v1/sandbox/accounts/{psu.account['id']}/transactions",
        json=[bodies.account_transaction(psu.account)],
    )
    transaction_id = made.json()[0]["id"]
    _, account_id = _consent(world, psu)
    details = world.client.get(
        f"/v1/accounts/{account_id}/transactions/{transaction_id}",
        headers={"PSU-ID": psu.customer_id, "PSU-IP-Address": "192.0.2.10"},
    )
    assert details.status_code == 200, details.text
    document = details.json()["transactionsDetails"]
    assert "transactionId" not in document
    assert document["bookingDate"] == bodies.days_ago(4)
