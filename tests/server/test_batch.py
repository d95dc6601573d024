"""The simulated batch (spec 3): one step per run, catching up with the clock, booking on the
sandbox debtor account (spec 4.3 E3), periodic payments left alone, PDNG for future dates."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest

from reference_server.model.payment_data import Payment, PaymentKind
from reference_server.model.payment_status import batch_step
from server import payment_support as support
from server.payment_support import World


def record(status: str, execution: str | None = None, kind: str = PaymentKind.SINGLE) -> Payment:
    request: dict[str, Any] = {"instructedAmount": {"amount": "1.00", "currency": "NOK"}}
    if execution is not None:
        request["requestedExecutionDate" if kind == PaymentKind.SINGLE else "startDate"] = execution
    return Payment(
        "p", "norwegian-domestic-credit-transfers", kind, request, status, None, None, "", ""
    )


@pytest.mark.parametrize(
    ("status", "execution", "expected"),
    [
        ("ACTC", None, "ACSP"),
        ("ACTC", "2026-03-02", "ACSP"),
        ("ACTC", "2026-03-03", "PDNG"),
        ("PDNG", "2026-03-03", None),
        ("PDNG", "2026-03-02", "ACSP"),
        ("ACSP", None, "ACSC"),
        ("RCVD", None, None),
        ("RJCT", None, None),
        ("ACSC", None, None),
        ("CANC", None, None),
    ],
)
def test_one_run_moves_one_step(status: str, execution: str | None, expected: str | None) -> None:
    assert batch_step(record(status, execution), date(2026, 3, 2)) == expected


def test_periodic_payments_never_move() -> None:
    assert batch_step(record("ACTC", kind=PaymentKind.PERIODIC), date(2026, 3, 2)) is None


def test_batch_control_moves_accepted_payments_to_settlement_then_booked(
    world: World, psu: support.Psu
) -> None:
    payment_id = world.payment(psu, instructedAmount={"amount": "1234.50", "currency": "NOK"})
    world.authorised(psu, payment_id)
    first = world.run_batch()
    assert first["moved"] == [{"paymentId": payment_id, "from": "ACTC", "to": "ACSP"}]
    assert world.status(payment_id) == "ACSP"
    world.run_batch()
    assert world.status(payment_id) == "ACSC"
    assert world.run_batch()["moved"] == []


def test_booked_payment_appears_in_the_sandbox_account_transactions(
    world: World, psu: support.Psu
) -> None:
    body = world.ndct_body(psu, instructedAmount={"amount": "1234.50", "currency": "NOK"})
    payment_id = world.create("E16", body, psu).json()["paymentId"]
    world.authorised(psu, payment_id)
    before = world.client.get(f"/v1/sandbox/accounts/{psu.account['id']}/transactions").json()
    world.run_batch()
    world.run_batch()
    after = world.client.get(f"/v1/sandbox/accounts/{psu.account['id']}/transactions").json()
    (booked,) = [item for item in after if item not in before]
    today = world.today().isoformat()
    assert booked["amount"] == 1235  # whole units, half up
    assert booked["currency"] == "NOK"
    assert booked["bookingDate"] == booked["valueDate"] == today
    assert booked["creditorName"] == body["creditorName"]
    assert booked["creditorAccount"]["bban"] == body["creditorAccount"]["bban"]
    assert booked["debtorAccount"] == {"iban": psu.iban, "bban": psu.bban}
    assert booked["debtorName"] == psu.name
    assert booked["remittanceInformationUnstructured"] == body["remittanceInformationUnstructured"]
    assert 4 <= len(booked["bankTransactionCode"]) <= 14


def test_rejected_and_received_payments_are_left_alone(world: World, psu: support.Psu) -> None:
    waiting = world.payment(psu)
    rejected = world.payment(psu)
    record_ = world.authorise_payment(rejected, psu).json()
    world.sca(record_["_links"]["scaRedirect"]["href"], None, action="cancel")
    world.run_batch()
    assert world.status(waiting) == "RCVD"
    assert world.status(rejected) == "RJCT"


def test_periodic_payment_stays_accepted(world: World, psu: support.Psu) -> None:
    periodic = world.payment(psu, "E17")
    record_ = world.authorise_payment(periodic, psu).json()
    world.approve(record_["_links"]["scaRedirect"]["href"], psu)
    assert world.status(periodic) == "ACTC"
    world.run_batch()
    world.advance("P3D")
    assert world.status(periodic) == "ACTC"


def test_future_execution_date_waits_in_pdng_until_its_day(world: World, psu: support.Psu) -> None:
    day = world.today() + timedelta(days=2)
    payment_id = world.payment(psu, requestedExecutionDate=day.isoformat())
    world.authorised(psu, payment_id)
    world.run_batch()
    assert world.status(payment_id) == "PDNG"
    world.run_batch()
    assert world.status(payment_id) == "PDNG"
    world.advance("P1D")  # five runs, all before the execution date
    assert world.status(payment_id) == "PDNG"
    world.advance("P1D")  # the execution date: one run to ACSP, the next books it
    assert world.status(payment_id) == "ACSC"


def test_moving_the_clock_runs_the_batches_that_fell_due(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu)
    world.authorised(psu, payment_id)
    world.advance("PT1H30M")  # 11:30: no run yet
    assert world.status(payment_id) == "ACTC"
    world.advance("PT1H")  # 12:30: the 12:00 run
    assert world.status(payment_id) == "ACSP"
    world.advance("PT3H")  # 15:30: the 15:00 run
    assert world.status(payment_id) == "ACSC"


def test_a_payment_from_a_non_sandbox_account_settles_without_booking(
    world: World, psu: support.Psu
) -> None:
    body = world.ndct_body(psu, debtorAccount={"bban": "12345678903", "currency": "NOK"})
    payment_id = world.create("E16", body, psu).json()["paymentId"]
    world.authorised(psu, payment_id)
    world.advance("P1D")
    assert world.status(payment_id) == "ACSC"
