"""Cancelling a payment that was already authorised (spec 7 rule 6 names the deletion; the
platform's banks ask for its own authorisation): DELETE answers 202 with a link, the
cancellation authorisation (PCA) starts its SCA, and only an approved SCA cancels the payment;
a cancelled SCA leaves it as it was. Where the profile says a cancellation needs no SCA
(``[cancellation] sca = "never"``), DELETE cancels at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from conformance.checks import NotApplicable, json_document
from conformance.operations.payments import payment_request
from conformance.runners.flow.steps import (
    authorise,
    complete_sca,
    documented_success,
    expect_status,
    fail,
    payment_status,
    read_sca_status,
    start_authorisation,
)
from conformance.runners.judging import judge_expectation

if TYPE_CHECKING:
    from conformance.bankside.setup_data import Payment
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["payment_cancellation_sca", "payment_cancellation_sca_cancelled"]

#: Statuses of an authorised payment not yet executed, which a cancellation can still reach
#: (PDNG refuses deletion, spec 7 rule 6; ACSP and ACSC are executing or booked).
CANCELLABLE_AUTHORISED = frozenset({"ACTC", "ACCP", "ACWC", "ACWP"})
#: How many fresh payments a flow tries when a batch run carries the authorised payment past
#: cancelling before the cancellation reaches it.
_ATTEMPTS = 3


def _product(scenario: Scenario) -> str:
    return scenario.operation if scenario.operation in ("E16", "E17", "E18") else "E16"


def _cancelled_while_authorised(
    scenario: Scenario, ctx: RunContext, seed: int
) -> tuple[Payment, str, Exchange]:
    """A fresh payment of the scenario's product, authorised (SCA approved), then cancelled with
    PC: the payment, the status it read before the cancellation, and PC's exchange. A payment a
    batch run moved past cancelling first (PDNG, ACSP, ...) is replaced by a fresh one."""
    moved: list[str] = []
    for attempt in range(_ATTEMPTS):
        payment = ctx.data.payment(seed + 97 * attempt, _product(scenario))
        authorise(scenario, ctx, payment, approve=True)
        before, read = payment_status(scenario, ctx, payment)
        if before not in CANCELLABLE_AUTHORISED:
            expect_status(
                scenario,
                read,
                before,
                CANCELLABLE_AUTHORISED | {"PDNG", "ACSP", "ACSC", "PART"},
                "after a completed SCA",
            )
            moved.append(before)
            continue
        cancelled = payment_request(ctx, "PC", payment).send(ctx)
        if 400 <= cancelled.status < 500:
            now, _ = payment_status(scenario, ctx, payment)
            if now not in CANCELLABLE_AUTHORISED:  # the batch came first
                moved.append(now)
                continue
        return payment, before, cancelled
    raise NotApplicable(
        f"the authorised payments moved on ({', '.join(moved)}) before the cancellation reached "
        f"them, {_ATTEMPTS} times: the target executes an authorised payment at once, and no "
        "authorised payment was left to cancel"
    )


def _judge_cancellation(scenario: Scenario, ctx: RunContext, cancelled: Exchange) -> None:
    """PC's answer against its documented success (202 or 204, the body PC.json assumes)."""
    operation = ctx.contract.operations["PC"]
    judge_expectation(
        cancelled, documented_success(ctx, "PC"), operation, ctx.contract, spec=scenario.spec
    )


def _require_authorisation_asked(
    scenario: Scenario, ctx: RunContext, payment: Payment, before: str, cancelled: Exchange
) -> None:
    """PC answered 202 with a link to start the cancellation's authorisation, and the payment
    still reads as it did (nothing is cancelled before the SCA)."""
    if cancelled.status != 202:
        raise fail(
            f"cancelling an authorised payment ({before}) was answered HTTP {cancelled.status}, "
            "not 202 with a link to authorise the cancellation",
            scenario.spec,
            cancelled,
            "the profile says a cancellation of an authorised payment needs its own SCA "
            '([cancellation] sca = "authorised"): 202 with _links.startAuthorisation',
        )
    _judge_cancellation(scenario, ctx, cancelled)
    links = (json_document(cancelled) or {}).get("_links")
    starts = [
        name
        for name, link in (links.items() if isinstance(links, Mapping) else ())
        if name.startswith("startAuthorisation") and isinstance(link, Mapping)
    ]  # NextGenPSD2 also names startAuthorisationWithPsuAuthentication and its kin
    if not starts:
        raise fail(
            "the 202 answer to the cancellation carries no _links.startAuthorisation",
            scenario.spec,
            cancelled,
            "the 202 answer links to the cancellation authorisation (startAuthorisation)",
        )
    status, read = payment_status(scenario, ctx, payment)
    expect_status(scenario, read, status, {before}, "before the cancellation is authorised")


def payment_cancellation_sca(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Cancelling an authorised payment: as the profile says, 202 with a link, the
    cancellation's authorisation (PCA) and its SCA, then CANC; or at once (``never``)."""
    payment, before, cancelled = _cancelled_while_authorised(scenario, ctx, seed)
    if not ctx.profile.lifecycle.cancellation_needs_sca:
        if cancelled.status == 202:
            raise fail(
                "cancelling an authorised payment was answered 202 (its authorisation needed)",
                scenario.spec,
                cancelled,
                'the profile says a cancellation needs no SCA ([cancellation] sca = "never"): '
                "the payment is cancelled at once",
            )
        _judge_cancellation(scenario, ctx, cancelled)
        status, read = payment_status(scenario, ctx, payment)
        expect_status(scenario, read, status, {"CANC"}, "after the cancellation", cancelled)
        return
    _require_authorisation_asked(scenario, ctx, payment, before, cancelled)
    started, link = start_authorisation(scenario, ctx, payment_request(ctx, "PCA", payment))
    complete_sca(ctx, link, payment.psu, approve=True)
    status, read = payment_status(scenario, ctx, payment)
    expect_status(
        scenario, read, status, {"CANC"}, "after the cancellation's SCA was approved", started
    )


def payment_cancellation_sca_cancelled(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A cancellation whose SCA the PSU cancels leaves the payment as it was, and the
    cancellation's authorisation FAILED."""
    payment, before, cancelled = _cancelled_while_authorised(scenario, ctx, seed)
    _require_authorisation_asked(scenario, ctx, payment, before, cancelled)
    started, link = start_authorisation(scenario, ctx, payment_request(ctx, "PCA", payment))
    complete_sca(ctx, link, payment.psu, approve=False)
    status, read = payment_status(scenario, ctx, payment)
    expect_status(
        scenario, read, status, {before}, "after the cancellation's SCA was cancelled", started
    )
    sca_status = read_sca_status(ctx, started)
    if sca_status is not None and sca_status != "FAILED":
        raise fail(
            f"after its SCA was cancelled the cancellation's authorisation reads {sca_status}",
            scenario.spec,
            started,
            "a cancelled authorisation is FAILED",
        )
