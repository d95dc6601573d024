"""Each payment-side fault changes exactly the behaviour it names (``reference_server/faults``): the
same steps against the faithful server and against one started with the fault give the answer
the rule demands and the wrong one.

Five faults sit in rules the pipeline enforces before a handler runs (body schema, cross-field
checks): ``reference_server.faults.payments`` offers the decisions, which ``validation.check_body``
consults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from conformance.contract import Contract
from conformance.generate import factories
from reference_server.app import Application
from reference_server.faults import FAULTS
from reference_server.faults import payments as payment_faults
from server import bodies
from server import payment_support as support
from server.conftest import ErrorCapture
from server.payment_support import World

#: A consent valid far beyond the days these tests move the clock (the SCA ages, not
#: validUntil).
FAR = date(9999, 12, 31)

Scenario = Callable[[World], Any]


@pytest.fixture
def faulty(
    world: World, server_errors: ErrorCapture, contract: Contract
) -> Iterator[Callable[[str], World]]:
    """Worlds on servers started with one fault (stopped after the test)."""
    made: list[tuple[Any, World]] = []

    def factory(fault: str) -> World:
        running = support.start_faulty(fault)
        made.append((running, World(running.app, running.url, contract, checked=False)))
        return made[-1][1]

    yield factory
    for running, other in made:
        other.close()
        running.stop()


def compare(world: World, faulty: Callable[[str], World], fault: str, scenario: Scenario):
    """The scenario's outcome on the faithful server and with ``fault`` switched on."""
    return scenario(world), scenario(faulty(fault))


# -- the table -----------------------------------------------------------------------------------


def test_every_payment_fault_is_registered_with_its_rule() -> None:
    names = {fault.name for fault in payment_faults.PAYMENT_FAULTS}
    assert names == {
        "basket-best-case", "no-basket-limit", "allow-periodic-in-basket", "kid-error-401",
        "duplicate-months-accepted", "delete-pdng-allowed", "account-gone-404", "no-daily-limit",
        "no-consent-age-check", "page-size-100", "no-regulatory-check", "ignore-minor-units",
        "logical-duplicate-allowed", "sca-start-not-started", "long-creditor-name-accepted",
        "long-remittance-accepted", "empty-remittance-accepted", "long-ultimate-debtor-accepted",
        "remittance-forms-mixed-accepted", "two-debtor-references-accepted",
        "ncbct-without-creditor-agent-accepted", "basket-reauthorisation-allowed",
        "past-execution-date-accepted", "periodic-end-before-start-accepted", "long-iban-accepted",
        "amount-precision-unchecked", "fee-indicator-false",
        "day-of-execution-unchecked", "tpp-message-code-outside-list",
        "basket-read-status-stale", "cancellation-without-sca", "paging-next-overlaps",
        "batch-advances-periodic",
    }  # fmt: skip
    for name in names:
        assert FAULTS[name].rule.startswith("spec ")


def test_pipeline_decisions_follow_the_faults() -> None:
    faithful, broken = (
        Application(),
        Application(faults=("ignore-minor-units", "no-basket-limit", "kid-error-401")),
    )
    name = "check_amount_fraction_digits"
    assert not payment_faults.skipped_check(faithful, name)
    assert payment_faults.skipped_check(broken, name)
    assert not payment_faults.skipped_check(broken, "check_kid_check_digit")
    assert payment_faults.tolerated_schema_error(broken, "E1", "paymentIds", "maxItems")
    assert not payment_faults.tolerated_schema_error(faithful, "E1", "paymentIds", "maxItems")
    assert not payment_faults.tolerated_schema_error(broken, "E1", "paymentIds", "minItems")
    assert payment_faults.violation_status(faithful, "KID_INVALID") == 400
    assert payment_faults.violation_status(broken, "KID_INVALID") == 401
    assert payment_faults.violation_status(broken, "FORMAT_ERROR") == 400


# -- faults in the payment-side handlers ---------------------------------------------------------


def test_basket_best_case(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> str:
        psu = w.new_psu()
        first, second = w.payment(psu), w.payment(psu)
        basket_id = w.basket_id([first, second], psu)
        w.cancel(second)
        return w.basket_status(basket_id)

    assert compare(world, faulty, "basket-best-case", scenario) == ("RJCT", "RCVD")


def test_basket_read_status_stale(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> tuple[str, str]:
        psu = w.new_psu()
        payment_id = w.payment(psu)
        basket_id = w.basket_id([payment_id, w.payment(psu)], psu)
        w.cancel(payment_id)
        read = w.read_basket(basket_id, psu, "status").json()["transactionStatus"]
        return w.basket_status(basket_id), read  # the control shows the truth either way

    assert compare(world, faulty, "basket-read-status-stale", scenario) == (
        ("RJCT", "RJCT"),
        ("RJCT", "RCVD"),
    )


def test_cancellation_without_sca(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> tuple[int, str]:
        psu = w.new_psu()
        payment_id = w.payment(psu)
        started = w.authorise_payment(payment_id, psu)
        w.approve(started.json()["_links"]["scaRedirect"]["href"], psu)
        return w.cancel(payment_id).status_code, w.status(payment_id)

    assert compare(world, faulty, "cancellation-without-sca", scenario) == (
        (202, "ACTC"),
        (204, "CANC"),
    )


def test_batch_advances_periodic(world: World, faulty: Callable[[str], World]) -> None:
    """Spec 3: "The sandbox advances payments (except periodic ones)"; the fault moves them."""

    def scenario(w: World) -> str:
        psu = w.new_psu()
        periodic = w.payment(psu, "E17")
        record = w.authorise_payment(periodic, psu).json()
        w.approve(record["_links"]["scaRedirect"]["href"], psu)
        w.run_batch()
        return w.status(periodic)

    before, after = compare(world, faulty, "batch-advances-periodic", scenario)
    assert before == "ACTC"
    assert after in {"PDNG", "ACSP"}


def test_allow_periodic_in_basket(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu = w.new_psu()
        return w.basket([w.payment(psu, "E17")], psu).status_code

    assert compare(world, faulty, "allow-periodic-in-basket", scenario) == (400, 201)


def test_delete_pdng_allowed(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu = w.new_psu()
        later = (w.today() + timedelta(days=5)).isoformat()
        payment_id = w.payment(psu, requestedExecutionDate=later)
        w.authorised(psu, payment_id)
        w.run_batch()
        assert w.status(payment_id) == "PDNG"
        return w.cancel(payment_id).status_code

    assert compare(world, faulty, "delete-pdng-allowed", scenario) == (400, 204)


def test_logical_duplicate_allowed(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu = w.new_psu()
        body = w.ndct_body(psu)
        w.create("E16", body, psu)
        return w.create("E16", body, psu).status_code

    assert compare(world, faulty, "logical-duplicate-allowed", scenario) == (400, 201)


def test_sca_start_not_started(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> str:
        psu = w.new_psu()
        basket_id = w.basket_id([w.payment(psu)], psu)
        return str(w.start_basket(basket_id, psu).json()["scaStatus"])

    assert compare(world, faulty, "sca-start-not-started", scenario) == ("STARTED", "RECEIVED")


# -- faults in the account side ------------------------------------------------------------------


def consented_psu(w: World, transactions: int = 1) -> tuple[support.Psu, str, list[dict]]:
    """A PSU with ``transactions`` sandbox transactions and a valid consent on its account."""
    psu = w.new_psu()
    items = [bodies.account_transaction(psu.account) for _ in range(transactions)]
    created = w.client.post(f"/v1/sandbox/accounts/{psu.account['id']}/transactions", json=items)
    body = factories.consent_request(w.seed(), [psu.iban], valid_until=FAR)
    consent_id = w.client.post(
        "/v1/consents", json=body, headers={"PSU-ID": psu.customer_id}
    ).json()["consentId"]
    started = w.client.post(
        f"/v1/consents/{consent_id}/authorisations", headers={"PSU-ID": psu.customer_id}
    ).json()
    w.approve(started["_links"]["scaRedirect"]["href"], psu)
    return psu, consent_id, created.json()


def details(w: World, psu: support.Psu, transaction_id: str) -> httpx.Response:
    return w.client.get(f"/v1/accounts/{psu.account['id']}/transactions/{transaction_id}")


def test_account_gone_404(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu, consent_id, _ = consented_psu(w)
        w.browser.delete(f"/_control/accounts/{psu.account['id']}")
        return w.client.get("/v1/accounts", headers={"Consent-ID": consent_id}).status_code

    assert compare(world, faulty, "account-gone-404", scenario) == (200, 404)


def test_no_daily_limit(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu, _, (item,) = consented_psu(w)
        for _ in range(4):
            details(w, psu, item["id"])
        return details(w, psu, item["id"]).status_code

    assert compare(world, faulty, "no-daily-limit", scenario) == (429, 200)


def test_no_consent_age_check(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu, _, (item,) = consented_psu(w)
        w.advance("P91D")
        return details(w, psu, item["id"]).status_code

    assert compare(world, faulty, "no-consent-age-check", scenario) == (401, 200)


def test_page_size_100(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu, consent_id, _ = consented_psu(w, transactions=201)
        answer = w.client.get(
            f"/v1/accounts/{psu.account['id']}/transactions",
            params={"bookingStatus": "booked"},
            headers={"Consent-ID": consent_id},
        )
        return len(answer.json()["transactions"]["booked"])

    assert compare(world, faulty, "page-size-100", scenario) == (200, 100)


def test_paging_next_overlaps(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> str:
        psu, consent_id, _ = consented_psu(w, transactions=201)
        answer = w.client.get(
            f"/v1/accounts/{psu.account['id']}/transactions",
            params={"bookingStatus": "booked"},
            headers={"Consent-ID": consent_id},
        )
        return str(answer.json()["transactions"]["_links"]["next"]["href"]).split("offset=")[1]

    assert compare(world, faulty, "paging-next-overlaps", scenario) == (
        "200&limit=200",
        "199&limit=200",
    )


# -- faults in the pipeline (validation.check_body consults faults.payments) ---------------------


def test_no_basket_limit(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu = w.new_psu()
        return w.basket([w.payment(psu) for _ in range(11)], psu).status_code

    assert compare(world, faulty, "no-basket-limit", scenario) == (400, 201)


def test_kid_error_401(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu = w.new_psu()
        body = w.ndct_body(psu)
        del body["remittanceInformationUnstructured"]
        body["remittanceInformationStructuredArray"] = [
            {"reference": "12345678901", "referenceType": "KID"}
        ]
        return w.create("E16", body, psu).status_code

    assert compare(world, faulty, "kid-error-401", scenario) == (400, 401)


def test_duplicate_months_accepted(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu = w.new_psu()
        body = w.periodic_body(psu, frequency="MonthlyVariable", monthsOfExecution=[3, 3])
        return w.create("E17", body, psu).status_code

    assert compare(world, faulty, "duplicate-months-accepted", scenario) == (400, 201)


def test_no_regulatory_check(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu = w.new_psu()
        body = w.ncbct_body(psu, instructedAmount={"amount": "100000.00", "currency": "NOK"})
        del body["regulatoryReportingCode"], body["regulatoryReportingInformation"]
        return w.create("E18", body, psu).status_code

    assert compare(world, faulty, "no-regulatory-check", scenario) == (400, 201)


def test_ignore_minor_units(world: World, faulty: Callable[[str], World]) -> None:
    def scenario(w: World) -> int:
        psu = w.new_psu()
        body = w.ndct_body(psu, instructedAmount={"amount": "100.5", "currency": "NOK"})
        return w.create("E16", body, psu).status_code

    assert compare(world, faulty, "ignore-minor-units", scenario) == (400, 201)
