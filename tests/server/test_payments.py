"""Payments through signed HTTP: E16, E17, E18 (spec 2.6, 2.7, 4.3), PS, PC (spec 7 rule 6), PA.

Every 2xx body is checked against the contract by the client's response hook
(``conftest.check_against_contract``).
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from server import payment_support as support
from server.payment_support import NCBCT, NDCT, World


def error_code(response) -> str:
    return str(response.json()["code"])


# -- creation (E16, E17, E18) --------------------------------------------------------------------


@pytest.mark.parametrize("operation", ["E16", "E17", "E18"])
def test_creation_answers_201_rcvd_with_location_and_next_step_links(
    world: World, psu: support.Psu, operation: str
) -> None:
    maker = {"E16": world.ndct_body, "E17": world.periodic_body, "E18": world.ncbct_body}
    answer = world.create(operation, maker[operation](psu), psu)
    assert answer.status_code == 201, answer.text
    document = answer.json()
    product = NCBCT if operation == "E18" else NDCT
    path = f"/v1/payments/{product}/{document['paymentId']}"
    assert document["transactionStatus"] == "RCVD"
    assert answer.headers["Location"] == path
    links = document["_links"]
    assert links["status"] == {"href": f"{path}/status", "verbs": ["GET"]}
    assert links["startAuthorisation"] == {"href": f"{path}/authorisations", "verbs": ["POST"]}
    assert links["self"]["href"] == path
    assert "scaRedirect" not in links  # no PSU-Context: no single-SCA initiation


def test_ncbct_carries_a_fee_and_ndct_none(world: World, psu: support.Psu) -> None:
    ncbct = world.create("E18", world.ncbct_body(psu), psu).json()
    ndct = world.create("E16", world.ndct_body(psu), psu).json()
    assert ncbct["transactionFeeIndicator"] is True
    assert ncbct["transactionFees"] == {"amount": "50.00", "currency": "NOK"}
    assert ndct["transactionFeeIndicator"] is False
    assert "transactionFees" not in ndct


def test_psu_context_starts_the_single_sca_at_creation(world: World, psu: support.Psu) -> None:
    answer = world.create("E16", world.ndct_body(psu), psu, PSU_Context="PRIVATE")
    assert answer.status_code == 201, answer.text
    document = answer.json()
    redirect = document["_links"]["scaRedirect"]
    assert redirect["verbs"] == ["GET"] and redirect["href"].startswith("/sca/")
    landing = world.approve(redirect["href"], psu)
    assert landing["scaStatus"] == "FINALISED"
    assert world.status(document["paymentId"]) == "ACTC"


def test_periodic_payment_is_reached_under_the_ndct_product(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu, "E17")
    assert world.status(payment_id, NDCT) == "RCVD"
    wrong = world.client.get(f"/v1/payments/{NCBCT}/{payment_id}/status")
    assert wrong.status_code == 404
    assert error_code(wrong) == "RESOURCE_UNKNOWN"


def test_deprecated_structured_remittance_is_accepted_with_a_warning(
    world: World, psu: support.Psu
) -> None:
    body = world.ndct_body(psu)
    del body["remittanceInformationUnstructured"]
    body["remittanceInformationStructured"] = {"reference": "Invoice 42"}
    answer = world.create("E16", body, psu)
    assert answer.status_code == 201, answer.text
    (warning,) = answer.json()["tppMessages"]
    assert warning["category"] == "WARNING"
    assert warning["path"] == "remittanceInformationStructured"


# -- rules the pipeline enforces, seen from here (spec 2.7, spec 7 rule 2, 4) -------------------


def test_ncbct_of_nok_100000_without_regulatory_reporting_is_rejected(
    world: World, psu: support.Psu
) -> None:
    body = world.ncbct_body(psu, instructedAmount={"amount": "100000.00", "currency": "NOK"})
    del body["regulatoryReportingCode"], body["regulatoryReportingInformation"]
    refused = world.create("E18", body, psu)
    assert refused.status_code == 400
    paths = {message["path"] for message in refused.json()["tppMessages"]}
    assert paths == {"regulatoryReportingCode", "regulatoryReportingInformation"}
    below = dict(body, instructedAmount={"amount": "99999.99", "currency": "NOK"})
    assert world.create("E18", below, psu).status_code == 201


@pytest.mark.parametrize("amount", ["100", "100.5", "100.505"])
def test_nok_amount_with_other_than_two_decimals_is_rejected(
    world: World, psu: support.Psu, amount: str
) -> None:
    body = world.ndct_body(psu, instructedAmount={"amount": amount, "currency": "NOK"})
    refused = world.create("E16", body, psu)
    assert refused.status_code == 400
    assert refused.json()["tppMessages"][0]["path"] == "instructedAmount/amount"


@pytest.mark.parametrize(
    ("reference", "code"), [("12345678901", "KID_INVALID"), ("   ", "KID_MISSING")]
)
def test_bad_kid_is_400_not_401(world: World, psu: support.Psu, reference: str, code: str) -> None:
    body = world.ndct_body(psu)
    del body["remittanceInformationUnstructured"]
    body["remittanceInformationStructuredArray"] = [
        {"reference": reference, "referenceType": "KID"}
    ]
    refused = world.create("E16", body, psu)
    assert refused.status_code == 400  # spec 7 rule 2
    assert refused.json()["code"] == code


def test_monthly_variable_with_a_repeated_month_is_rejected(world: World, psu: support.Psu) -> None:
    body = world.periodic_body(psu, frequency="MonthlyVariable", monthsOfExecution=[3, 3])
    refused = world.create("E17", body, psu)
    assert refused.status_code == 400
    assert error_code(refused) == "FORMAT_ERROR"


# -- execution dates (EXECUTION_DATE_INVALID) ----------------------------------------------------


@pytest.mark.parametrize(("days", "accepted"), [(-1, False), (0, True), (365, True), (366, False)])
def test_requested_execution_date_window(
    world: World, psu: support.Psu, days: int, accepted: bool
) -> None:
    day = (world.today() + timedelta(days=days)).isoformat()
    answer = world.create("E16", world.ndct_body(psu, requestedExecutionDate=day), psu)
    if accepted:
        assert answer.status_code == 201, answer.text
    else:
        assert answer.status_code == 400
        assert error_code(answer) == "EXECUTION_DATE_INVALID"
        assert answer.json()["tppMessages"][0]["path"] == "requestedExecutionDate"


def test_periodic_end_before_start_is_rejected(world: World, psu: support.Psu) -> None:
    start = world.today() + timedelta(days=10)
    body = world.periodic_body(
        psu, startDate=start.isoformat(), endDate=(start - timedelta(days=1)).isoformat()
    )
    refused = world.create("E17", body, psu)
    assert refused.status_code == 400
    assert error_code(refused) == "EXECUTION_DATE_INVALID"
    assert refused.json()["tppMessages"][0]["path"] == "endDate"


def test_periodic_start_in_the_past_is_rejected(world: World, psu: support.Psu) -> None:
    body = world.periodic_body(psu, startDate=(world.today() - timedelta(days=1)).isoformat())
    refused = world.create("E17", body, psu)
    assert refused.status_code == 400
    assert error_code(refused) == "EXECUTION_DATE_INVALID"


# -- logical duplicates (spec 4.3 E16/E18 allowLogicalDuplicate) --------------------------------


@pytest.mark.parametrize("operation", ["E16", "E18"])
def test_logical_duplicate_is_refused_unless_allowed(
    world: World, psu: support.Psu, operation: str
) -> None:
    body = world.ndct_body(psu) if operation == "E16" else world.ncbct_body(psu)
    assert world.create(operation, body, psu).status_code == 201
    again = world.create(operation, body, psu)
    assert again.status_code == 400
    assert error_code(again) == "CONFLICT"
    assert again.json()["tppMessages"][0]["code"] == "CONFLICT"
    allowed = world.create(operation, body, psu, params={"allowLogicalDuplicate": "true"})
    assert allowed.status_code == 201


def test_same_body_from_another_psu_is_not_a_duplicate(world: World, psu: support.Psu) -> None:
    other = world.new_psu("Ola Nordmann")
    body = world.ndct_body(psu)
    assert world.create("E16", body, psu).status_code == 201
    assert world.create("E16", body, other).status_code == 201


def test_a_cancelled_payment_does_not_block_its_duplicate(world: World, psu: support.Psu) -> None:
    body = world.ndct_body(psu)
    first = world.create("E16", body, psu).json()["paymentId"]
    assert world.cancel(first).status_code == 204
    assert world.create("E16", body, psu).status_code == 201


def test_different_amount_is_not_a_duplicate(world: World, psu: support.Psu) -> None:
    body = world.ndct_body(psu, instructedAmount={"amount": "10.00", "currency": "NOK"})
    assert world.create("E16", body, psu).status_code == 201
    other = dict(body, instructedAmount={"amount": "10.01", "currency": "NOK"})
    assert world.create("E16", other, psu).status_code == 201


# -- products ------------------------------------------------------------------------------------


def test_unknown_product_is_404_product_unknown(world: World, psu: support.Psu) -> None:
    answer = world.client.post(
        "/v1/payments/sepa-credit-transfers", json=world.ndct_body(psu), headers=psu.headers()
    )
    assert answer.status_code == 404
    assert error_code(answer) == "PRODUCT_UNKNOWN"


def test_known_product_on_the_periodic_endpoint_is_403_product_invalid(
    world: World, psu: support.Psu
) -> None:
    """Spec 7, the E17 row: NCBCT is a product the interface offers (E18), not a periodic one."""
    answer = world.client.post(
        f"/v1/periodic-payments/{NCBCT}", json=world.periodic_body(psu), headers=psu.headers()
    )
    assert answer.status_code == 403, answer.text
    document = answer.json()
    assert error_code(answer) == "PRODUCT_INVALID"
    assert document["status"] == 403
    assert [(m["code"], m["path"]) for m in document["tppMessages"]] == [
        ("PRODUCT_INVALID", "payment-product")
    ]


def test_unknown_product_on_the_periodic_endpoint_stays_404_product_unknown(
    world: World, psu: support.Psu
) -> None:
    answer = world.client.post(
        "/v1/periodic-payments/sepa-credit-transfers",
        json=world.periodic_body(psu),
        headers=psu.headers(),
    )
    assert answer.status_code == 404, answer.text
    assert error_code(answer) == "PRODUCT_UNKNOWN"
    assert answer.json()["tppMessages"][0]["path"] == "payment-product"


# -- PS ------------------------------------------------------------------------------------------


def test_status_reports_funds_available_from_the_sandbox_balance(world: World) -> None:
    psu = world.new_psu(balance=1000)
    small = world.payment(psu, instructedAmount={"amount": "999.00", "currency": "NOK"})
    large = world.payment(psu, instructedAmount={"amount": "1000.01", "currency": "NOK"})
    read = world.client.get(f"/v1/payments/{NDCT}/{small}/status").json()
    assert read == {"transactionStatus": "RCVD", "fundsAvailable": True}
    assert world.client.get(f"/v1/payments/{NDCT}/{large}/status").json()["fundsAvailable"] is False


def test_status_of_a_payment_from_a_non_sandbox_account_omits_funds(world: World) -> None:
    psu = world.new_psu()
    body = world.ndct_body(psu, debtorAccount={"bban": "12345678903", "currency": "NOK"})
    payment_id = world.create("E16", body, psu).json()["paymentId"]
    read = world.client.get(f"/v1/payments/{NDCT}/{payment_id}/status").json()
    assert read == {"transactionStatus": "RCVD"}


def test_status_of_an_unknown_payment_is_404(world: World) -> None:
    answer = world.client.get(f"/v1/payments/{NDCT}/no-such-payment/status")
    assert answer.status_code == 404
    assert error_code(answer) == "RESOURCE_UNKNOWN"
    assert answer.json()["tppMessages"][0]["code"] == "RESOURCE_UNKNOWN"


# -- PC (spec 7 rule 6) --------------------------------------------------------------------------


def test_received_payment_is_cancelled(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu)
    answer = world.cancel(payment_id)
    assert answer.status_code == 204 and answer.content == b""
    assert world.status(payment_id) == "CANC"


def test_accepted_payment_waits_for_its_cancellations_authorisation(
    world: World, psu: support.Psu
) -> None:
    payment_id = world.payment(psu)
    world.authorised(psu, payment_id)
    assert world.status(payment_id) == "ACTC"
    assert world.cancel(payment_id).status_code == 202  # test_cancellation.py: the rest
    assert world.status(payment_id) == "ACTC"


def test_pending_payment_refuses_cancellation(world: World, psu: support.Psu) -> None:
    later = (world.today() + timedelta(days=5)).isoformat()
    payment_id = world.payment(psu, requestedExecutionDate=later)
    world.authorised(psu, payment_id)
    world.run_batch()
    assert world.status(payment_id) == "PDNG"
    refused = world.cancel(payment_id)
    assert refused.status_code == 400
    assert error_code(refused) == "CANCELLATION_INVALID"
    assert world.status(payment_id) == "PDNG"


def test_settled_payment_refuses_cancellation(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu)
    world.authorised(psu, payment_id)
    world.run_batch()
    world.run_batch()
    assert world.status(payment_id) == "ACSC"
    assert world.cancel(payment_id).status_code == 400


def test_cancelling_twice_is_refused(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu)
    assert world.cancel(payment_id).status_code == 204
    assert world.cancel(payment_id).status_code == 400


def test_cancelling_an_unknown_payment_is_404(world: World) -> None:
    assert world.cancel("no-such-payment").status_code == 404


# -- PA ------------------------------------------------------------------------------------------


def test_payment_authorisation_starts_and_finishes_like_a_basket(
    world: World, psu: support.Psu
) -> None:
    payment_id = world.payment(psu, "E18")
    started = world.authorise_payment(payment_id, psu, NCBCT)
    assert started.status_code == 201, started.text
    record = started.json()
    assert record["scaStatus"] == "STARTED"
    assert record["_links"]["self"]["verbs"] == ["GET"]
    assert started.headers["Location"] == record["_links"]["self"]["href"]
    landing = world.approve(record["_links"]["scaRedirect"]["href"], psu)
    assert landing == {
        "state": "s1",
        "authorisationId": record["authorisationId"],
        "scaStatus": "FINALISED",
    }
    assert world.status(payment_id, NCBCT) == "ACTC"
    status = world.browser.get(record["_links"]["self"]["href"]).json()
    assert status["scaStatus"] == "FINALISED"


def test_payment_authorisation_cancelled_by_the_psu_rejects_the_payment(
    world: World, psu: support.Psu
) -> None:
    payment_id = world.payment(psu)
    record = world.authorise_payment(payment_id, psu).json()
    final = world.sca(record["_links"]["scaRedirect"]["href"], None, action="cancel")
    assert final.status_code == 303
    assert support.landing(final)["scaStatus"] == "FAILED"
    assert world.status(payment_id) == "RJCT"


def test_payment_in_a_basket_cannot_be_authorised_alone(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu)
    world.basket_id([payment_id], psu)
    refused = world.authorise_payment(payment_id, psu)
    assert refused.status_code == 400
    assert error_code(refused) == "RESOURCE_BLOCKED"
    assert refused.json()["tppMessages"][0]["code"] == "BAD_REQUEST"


def test_authorised_payment_cannot_be_authorised_again(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu)
    record = world.authorise_payment(payment_id, psu).json()
    world.approve(record["_links"]["scaRedirect"]["href"], psu)
    refused = world.authorise_payment(payment_id, psu)
    assert refused.status_code == 400
    assert error_code(refused) == "RESOURCE_BLOCKED"


def test_payment_authorisation_for_an_unknown_psu_is_401_with_sca_redirect(
    world: World, psu: support.Psu
) -> None:
    payment_id = world.payment(psu)
    stranger = support.Psu("3fa85f64-5717-4562-b3fc-2c963f66afa6", "0", "Nobody", psu.account)
    refused = world.authorise_payment(payment_id, stranger)
    assert refused.status_code == 401
    body = refused.json()
    assert body["code"] == "PSU_CREDENTIALS_INVALID"
    redirect = body["_links"]["scaRedirect"]
    assert redirect["verbs"] == ["GET"]
    # the PSU identifies on the page with a sandbox customer number and authorises there
    landing = world.approve(redirect["href"], psu)
    assert landing["scaStatus"] == "FINALISED"
    assert world.status(payment_id) == "ACTC"


def test_authorising_an_unknown_payment_is_404(world: World, psu: support.Psu) -> None:
    assert world.authorise_payment("no-such-payment", psu).status_code == 404
