"""Payment and signing-basket flows (spec 3, spec 2.4, spec 5 item 6): statuses after creation, SCA
completed and cancelled, batch runs, cancellation, the basket's worst case (read with BS after a
payment changed) and the basket read (BR).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import OperationRequest
from conformance.bankside.setup_data import prepared
from conformance.checks import (
    NotApplicable,
    check_equal,
    check_sca_redirect,
)
from conformance.contract.facts import (
    NOT_ACCEPTED,
    PAYMENT_STATUSES,
    REJECTED,
    basket_worst_status,
)
from conformance.contract.releases import change
from conformance.findings import at_should
from conformance.operations.payments import (
    basket_authorisation_request,
    basket_read_request,
    basket_request,
    payment_request,
)
from conformance.runners.flow.steps import (
    authorise,
    complete_sca,
    documented_success,
    expect_status,
    fail,
    payment_status,
    read_sca_status,
    response_document,
    run_batch,
    send_step,
    start_authorisation,
    unstated_step,
)
from conformance.runners.judging import judge_expectation

if TYPE_CHECKING:
    from conformance.bankside.setup_data import Payment
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario


def _product(scenario: Scenario) -> str:
    return scenario.operation if scenario.operation in ("E16", "E17", "E18") else "E16"


def _new_payment(scenario: Scenario, ctx: RunContext, seed: int, **options: Any) -> Payment:
    return ctx.data.payment(seed, _product(scenario), **options)


def payment_status_after_creation(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A new payment's status (PS) is one of the spec 3 payment statuses."""
    payment = _new_payment(scenario, ctx, seed)
    status, exchange = payment_status(scenario, ctx, payment)
    if status == "None":
        # PS's answer is not shown (spec 2.9): where it has no transactionStatus the status
        # cannot be read, which rests on our reading of that answer
        at_should(
            lambda: expect_status(scenario, exchange, status, PAYMENT_STATUSES, "after creation"),
            reading=PS_BODY_READING,
        )
        return
    expect_status(scenario, exchange, status, PAYMENT_STATUSES, "after creation")


def payment_sca_completed(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """After SCA is completed the payment has moved on from RCVD (and is not rejected)."""
    payment = _new_payment(scenario, ctx, seed)
    authorise(scenario, ctx, payment, approve=True)
    status, exchange = payment_status(scenario, ctx, payment)
    expect_status(
        scenario, exchange, status, PAYMENT_STATUSES - NOT_ACCEPTED, "after a completed SCA"
    )


def payment_sca_cancelled(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """After the PSU cancels SCA, the authorisation is FAILED and the payment RJCT."""
    payment = _new_payment(scenario, ctx, seed)
    started = authorise(scenario, ctx, payment, approve=False)
    status, exchange = payment_status(scenario, ctx, payment)
    expect_status(scenario, exchange, status, {"RJCT"}, "after a cancelled SCA", started)
    sca_status = read_sca_status(ctx, started)
    if sca_status is not None and sca_status != "FAILED":
        raise fail(
            f"after a cancelled SCA the authorisation reads {sca_status}",
            scenario.spec,
            started,
            "a cancelled authorisation is FAILED",
        )


def batch_run_advances(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An authorised payment is moved on by a simulated batch run (spec 3)."""
    payment = _new_payment(scenario, ctx, seed)
    authorise(scenario, ctx, payment, approve=True)
    before, first = payment_status(scenario, ctx, payment)
    run_batch(ctx)
    after, exchange = payment_status(scenario, ctx, payment)
    if after == before or after in REJECTED:
        raise fail(
            f"a batch run left the authorised payment at {after} (it was {before})",
            scenario.spec,
            exchange,
            "the sandbox advances payments through its simulated batch run (spec 3)",
            first,
        )


def batch_run_skips_periodic(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A simulated batch run does not advance a periodic payment (spec 3)."""
    payment = ctx.data.payment(seed, "E17", authorise=True)
    before, first = payment_status(scenario, ctx, payment)
    run_batch(ctx)
    after, exchange = payment_status(scenario, ctx, payment)
    expect_status(scenario, exchange, after, {before}, "after a batch run", first)


def payment_cancelled(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A new payment cancelled with PC reads CANC (spec 3)."""
    payment = ctx.data.payment(seed, "E16")
    cancelled = send_step(scenario, ctx, payment_request(ctx, "PC", payment))
    status, exchange = payment_status(scenario, ctx, payment)
    expect_status(scenario, exchange, status, {"CANC"}, "after cancellation", cancelled)


def payment_authorisation_started(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """PA answers like E2: scaStatus STARTED with a scaRedirect link (spec 4.3 E2). At a bank
    that starts a payment's SCA at its creation (``[sca] start``) there is no PA to judge."""
    settings = ctx.profile.sca
    if settings.starts_at_creation:
        raise NotApplicable(
            f"the profile says a payment's SCA starts at its creation ([sca] start = "
            f'"{settings.start}"): PA would start an authorisation already started'
        )
    payment = ctx.data.payment(seed, "E16")
    _authorisation_started(scenario, ctx, payment_request(ctx, "PA", payment))


#: The reading behind a scaRedirect link inside the 201 SCA status record (PD10).
REDIRECT_IN_RECORD_READING = (
    "a started authorisation offers the redirect in its 201 SCA status record; the spec puts "
    "_links.scaRedirect in the 401 answer (spec 5 item 6, spec 7 E2 row)"
)
#: The reading behind reading a payment's status from PS's answer.
PS_BODY_READING = (
    "PS answers with the payment's transactionStatus; spec 2.9 says 'Payment status response "
    "... not shown'"
)


def _authorisation_started(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> None:
    """Either stated form: 201 with the SCA status record whose scaStatus is STARTED (spec 3),
    or 401 with ``_links.scaRedirect`` (spec 5 item 6; ``send_step`` judged it)."""
    exchange = send_step(scenario, ctx, request)
    if exchange.status == 401:
        return
    at_should(
        lambda: check_sca_redirect(exchange, spec=scenario.spec),
        reading=REDIRECT_IN_RECORD_READING,
    )
    check_equal(
        exchange,
        "scaStatus of the started authorisation",
        "STARTED",
        response_document(exchange).get("scaStatus"),
        spec="spec 3",
    )


def _basket_request(ctx: RunContext, payments: Sequence[Payment]) -> OperationRequest:
    return basket_request(ctx, payments[0].psu, (payment.payment_id for payment in payments))


def basket_worst_case(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The basket's status is the worst case of its payments' (spec 2.4): new payments; one
    whose SCA was cancelled (RJCT); one cancelled with PC (CANC)."""
    after = str(scenario.param("after", "creation"))
    first = ctx.data.payment(seed, "E16", single_sca=False)
    second = ctx.data.payment(seed + 1, "E16", single_sca=False)
    if after == "payment-rejected":
        authorise(scenario, ctx, first, approve=False)
    elif after == "payment-cancelled":
        send_step(scenario, ctx, payment_request(ctx, "PC", first))
    statuses = [payment_status(scenario, ctx, payment)[0] for payment in (first, second)]
    created = _basket_request(ctx, [first, second]).send(ctx)
    if after != "creation" and 400 <= created.status < 500:
        _basket_after_change(scenario, ctx, seed, after, created)
        return
    judge_expectation(
        created,
        documented_success(ctx, "E1"),
        ctx.contract.operations["E1"],
        ctx.contract,
        spec=scenario.spec,
    )
    check_equal(
        created,
        f"basket transactionStatus for payments in {', '.join(statuses)}",
        basket_worst_status(statuses),
        response_document(created).get("transactionStatus"),
        spec="spec 2.4",
    )


def _basket_after_change(
    scenario: Scenario, ctx: RunContext, seed: int, after: str, refused: Exchange
) -> None:
    """The target refuses a rejected or cancelled payment in a new basket. The basket is then
    one built first whose payment is then changed inside it, or the one the bank prepared whose
    payment changed that way (``[prepared] changed_basket_id``: where the run cannot change one
    itself); its status is read with the basket status operation (BS, routable by ``[paths]``)."""
    reason = ctx.unsupported_reason("BS")
    if reason is not None:
        raise NotApplicable(
            f"the target refuses a basket holding a {after.split('-')[1]} payment "
            f"(HTTP {refused.status}), and the basket status read that would show the status "
            f"change afterwards is not offered: {reason}",
            supply=prepared.CHANGED_BASKET_SUPPLY,
        )
    changed = "CANC" if after == "payment-cancelled" else "RJCT"
    found = prepared.changed_basket(ctx.data)
    statuses: list[str] = []
    if found is not None:
        basket_id, payments = found
        statuses = [payment_status(scenario, ctx, payment)[0] for payment in payments]
    if found is None or changed not in statuses:  # none prepared, or changed the other way
        payments = [
            ctx.data.payment(seed + 2, "E16", single_sca=False),
            ctx.data.payment(seed + 3, "E16", single_sca=False),
        ]
        created = send_step(scenario, ctx, _basket_request(ctx, payments))
        basket_id = str(response_document(created).get("basketId"))
        if after == "payment-cancelled":
            unstated_step(
                scenario,
                ctx,
                payment_request(ctx, "PC", payments[0]),
                what="a payment that is in a signing basket cancelled (PC)",
            )
        else:
            request = basket_authorisation_request(ctx, payments[0].psu, basket_id)
            _, link = start_authorisation(scenario, ctx, request)
            complete_sca(ctx, link, payments[0].psu, approve=False)
        statuses = [payment_status(scenario, ctx, payment)[0] for payment in payments]
    read = send_step(scenario, ctx, basket_read_request(ctx, "BS", payments[0].psu, basket_id))
    check_equal(
        read,
        f"basket transactionStatus for payments in {', '.join(statuses)}",
        basket_worst_status(statuses),
        response_document(read).get("transactionStatus"),
        spec="spec 2.4",
        related=(refused,),
    )


def basket_read(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """BR reads the basket E1 made: its id, its payments and the status BS reads too, the
    worst case of its payments' statuses (spec 2.4; the read is the platform's, not shown)."""
    payments = [
        ctx.data.payment(seed, "E16", single_sca=False),
        ctx.data.payment(seed + 1, "E16", single_sca=False),
    ]
    created = send_step(scenario, ctx, _basket_request(ctx, payments))
    basket_id = str(response_document(created).get("basketId"))
    psu = payments[0].psu
    read = send_step(scenario, ctx, basket_read_request(ctx, "BR", psu, basket_id))
    document = response_document(read)
    check_equal(
        read,
        "basketId of the basket read",
        basket_id,
        document.get("basketId"),
        spec="spec 2.4",
        related=(created,),
    )
    listed = document.get("payments")
    if listed is not None:
        check_equal(
            read,
            "payments of the basket read",
            sorted(payment.payment_id for payment in payments),
            sorted(str(item) for item in listed) if isinstance(listed, list) else listed,
            spec="spec 4.3 E1",
            related=(created,),
        )
    statuses = [payment_status(scenario, ctx, payment)[0] for payment in payments]
    check_equal(
        read,
        f"basket transactionStatus for payments in {', '.join(statuses)}",
        basket_worst_status(statuses),
        document.get("transactionStatus"),
        spec="spec 2.4",
        related=(created,),
    )
    if ctx.unsupported_reason("BS") is None:
        status = send_step(scenario, ctx, basket_read_request(ctx, "BS", psu, basket_id))
        check_equal(
            status,
            "transactionStatus read with BS",
            document.get("transactionStatus"),
            response_document(status).get("transactionStatus"),
            spec="spec 2.4",
            related=(read,),
        )


def basket_authorisation_started(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Starting the basket authorisation answers scaStatus STARTED and a scaRedirect (spec 3)."""
    basket = ctx.data.basket(seed, [ctx.data.payment(seed, "E16", single_sca=False)])
    request = basket_authorisation_request(ctx, basket.psu, basket.basket_id)
    _authorisation_started(scenario, ctx, request)


def _basket_sca(scenario: Scenario, ctx: RunContext, seed: int, *, approve: bool) -> None:
    # an NCBCT payment beside the NDCT one, where the bank's release has NCBCT in baskets
    gated = ctx.profile.lifecycle.released_after(change(ctx.contract, "ncbct-baskets").release)
    payments = [
        ctx.data.payment(seed, "E16", single_sca=False),
        ctx.data.payment(seed + 1, "E16" if gated else "E18", single_sca=False),
    ]
    basket = ctx.data.basket(seed, payments)
    request = basket_authorisation_request(ctx, basket.psu, basket.basket_id)
    started, link = start_authorisation(scenario, ctx, request)
    complete_sca(ctx, link, basket.psu, approve=approve)
    wanted = PAYMENT_STATUSES - NOT_ACCEPTED if approve else {"RJCT"}
    what = "after the basket's SCA was " + ("completed" if approve else "cancelled")
    for payment in payments:
        status, exchange = payment_status(scenario, ctx, payment)
        expect_status(scenario, exchange, status, wanted, what, started)
    sca_status = read_sca_status(ctx, started)
    expected = "FINALISED" if approve else "FAILED"
    if sca_status is not None and sca_status != expected:
        raise fail(
            f"{what}, the authorisation reads {sca_status}",
            scenario.spec,
            started,
            f"the authorisation is {expected}",
        )


def basket_sca_completed(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    _basket_sca(scenario, ctx, seed, approve=True)


def basket_sca_cancelled(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    _basket_sca(scenario, ctx, seed, approve=False)
