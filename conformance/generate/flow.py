"""Flow scenarios (spec 3, and the sandbox round trips of spec 2.9 / 4.3): several requests each,
named by ``params["flow"]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from conformance.contract import Operation
from conformance.generate._common import Context, params, scenario_id, success
from conformance.generate.breaking_values import id_safe
from conformance.generate.variants import base_variant
from conformance.scenario import Scenario

__all__ = ["FLOWS", "PERIODIC_PRODUCTS", "Flow", "generate"]

#: Payment creation operations whose payments the batch run leaves alone (spec 3).
PERIODIC_PRODUCTS = frozenset({"E17"})


@dataclass(frozen=True)
class Flow:
    """One flow: ``<operation>-<slug>`` is its id, ``STATE-<name>`` its rule; ``requires`` lists
    every operation it calls (it is generated only when the contract has them all)."""

    operation: str
    slug: str
    name: str
    spec: str
    level: str
    title: str
    requires: tuple[str, ...]
    extra: tuple[tuple[str, Any], ...] = field(default=())
    needs_sca: bool = False
    needs_control: bool = False


def _product_flows(op: Operation) -> tuple[Flow, ...]:
    """The flows of one payment product (E16, E17, E18)."""
    flows = [
        Flow(
            op.id,
            "status-after-creation-is-allowed",
            "payment-status-after-creation",
            "spec 3",
            "must",
            "the status read after creation (PS) is one of the spec 3 payment statuses",
            (op.id, "PS"),
        ),
        Flow(
            op.id,
            "sca-completed-status-advances",
            "payment-sca-completed",
            "spec 3, spec 5 item 6",
            "should",
            "completing the SCA redirect moves the payment on from RCVD (PS)",
            (op.id, "PA", "PS"),
            needs_sca=True,
        ),
        Flow(
            op.id,
            "sca-cancelled-payment-rejected",
            "payment-sca-cancelled",
            "spec 3, spec 5 item 6",
            "should",
            "cancelling the SCA redirect leaves the authorisation FAILED and the payment RJCT",
            (op.id, "PA", "PS"),
            needs_sca=True,
        ),
    ]
    if op.id in PERIODIC_PRODUCTS:
        flows.append(
            Flow(
                op.id,
                "batch-run-leaves-periodic-unchanged",
                "batch-run-skips-periodic",
                "spec 3",
                "should",
                "a simulated batch run does not advance a periodic payment (PS unchanged)",
                (op.id, "PS"),
                needs_control=True,
            )
        )
    else:
        flows.append(
            Flow(
                op.id,
                "batch-run-advances-status",
                "batch-run-advances",
                "spec 3",
                "should",
                "a simulated batch run advances an authorised payment's status (PS)",
                (op.id, "PA", "PS"),
                needs_sca=True,
                needs_control=True,
            )
        )
    return tuple(flows)


#: Flows of the baskets, cancellations and sandbox data (spec 2.4, 3, 2.9, 4.3, 8, 9).
FLOWS: tuple[Flow, ...] = (
    Flow(
        "E1",
        "basket-status-is-worst-case",
        "basket-worst-case",
        "spec 2.4, spec 3",
        "must",
        "the status of a new basket is the worst case of its payments' statuses (PS)",
        ("E16", "E1", "PS"),
        (("after", "creation"),),
    ),
    Flow(
        "E1",
        "basket-with-rejected-payment-is-worst-case",
        "basket-worst-case",
        "spec 2.4, spec 3",
        "must",
        "a basket holding a payment whose SCA was cancelled (RJCT) has the worst-case status",
        ("E16", "PA", "E1", "PS"),
        (("after", "payment-rejected"),),
        needs_sca=True,
    ),
    Flow(
        "E1",
        "basket-with-cancelled-payment-is-worst-case",
        "basket-worst-case",
        "spec 2.4, spec 3",
        "must",
        "a basket holding a cancelled payment (PC) has the worst-case status",
        ("E16", "PC", "E1", "PS"),
        (("after", "payment-cancelled"),),
    ),
    Flow(
        "E2",
        "basket-authorisation-is-started",
        "basket-authorisation-started",
        "spec 3, spec 4.3 E2",
        "must",
        "starting the basket authorisation answers scaStatus STARTED with a scaRedirect link",
        ("E16", "E1", "E2"),
    ),
    Flow(
        "E2",
        "basket-sca-completed-statuses-advance",
        "basket-sca-completed",
        "spec 3, spec 5 item 6",
        "should",
        "completing the basket's SCA redirect finalises it and moves every payment on (PS)",
        ("E16", "E1", "E2", "PS"),
        needs_sca=True,
    ),
    Flow(
        "E2",
        "basket-sca-cancelled-payments-rejected",
        "basket-sca-cancelled",
        "spec 3, spec 5 item 6",
        "should",
        "cancelling the basket's SCA redirect leaves it FAILED and its payments RJCT (PS)",
        ("E16", "E1", "E2", "PS"),
        needs_sca=True,
    ),
    Flow(
        "PA",
        "payment-authorisation-is-started",
        "payment-authorisation-started",
        "spec 4.3 E2",
        "should",
        "starting a single payment's authorisation answers like E2 (STARTED, scaRedirect)",
        ("E16", "PA"),
    ),
    Flow(
        "PC",
        "cancelled-payment-status-is-canc",
        "payment-cancelled",
        "spec 3, spec 7 rule 6",
        "should",
        "a new payment cancelled with PC then reads CANC (PS)",
        ("E16", "PC", "PS"),
    ),
    # sandbox round trips: what was created reads back identically
    Flow(
        "E9",
        "created-customer-reads-back",
        "roundtrip-customer",
        "spec 2.9, spec 4.3 E9",
        "should",
        "a customer created with SCU is listed by E9 with the same data",
        ("SCU", "E9"),
    ),
    Flow(
        "E12",
        "created-account-reads-back",
        "roundtrip-account",
        "spec 2.9, spec 4.3 E12",
        "should",
        "an account created with SA reads back from E12 with the same data",
        ("SCU", "SA", "E12"),
    ),
    Flow(
        "E10",
        "created-card-account-reads-back",
        "roundtrip-card-account",
        "spec 2.9, spec 4.3 E10",
        "should",
        "a card account created with SCA reads back from E10 with the same data",
        ("SCU", "SCA", "E10"),
    ),
    Flow(
        "E14",
        "private-agreement-reads-back",
        "roundtrip-agreement",
        "spec 4.3 E14",
        "must",
        "a private agreement created with SAG reads back from E14",
        ("SCU", "SAG", "E14"),
        (("agreement", "private"),),
    ),
    Flow(
        "E14",
        "corporate-agreement-reads-back",
        "roundtrip-agreement",
        "spec 4.3 E14",
        "must",
        "a corporate agreement (owner set) created with SAG reads back from E14",
        ("SCU", "SAG", "E14"),
        (("agreement", "corporate"),),
    ),
    Flow(
        "E13",
        "created-engagement-reads-back",
        "roundtrip-engagement",
        "spec 4.3 E6, spec 4.3 E13",
        "must",
        "an engagement created with E6 reads back from E13 with the same data",
        ("SCU", "SA", "SAG", "E6", "E13"),
    ),
    Flow(
        "E11",
        "created-transaction-reads-back",
        "roundtrip-account-transaction",
        "spec 4.3 E7, spec 4.3 E11",
        "must",
        "a transaction created with E7 reads back from E11 with the same data",
        ("SCU", "SA", "E7", "E11"),
    ),
    Flow(
        "E3",
        "created-transactions-are-listed",
        "list-account-transactions",
        "spec 4.3 E3",
        "must",
        "transactions created with E7 are listed by E3",
        ("SCU", "SA", "E7", "E3"),
    ),
    Flow(
        "E3",
        "date-filter-limits-range",
        "filter-dates",
        "spec 4.3 E3",
        "should",
        "fromDate and toDate restrict E3's list to that range",
        ("SCU", "SA", "E7", "E3"),
    ),
    Flow(
        "E3",
        "offset-and-limit-page-the-list",
        "filter-pagination",
        "spec 4.3 E3",
        "should",
        "offset skips and limit caps E3's list",
        ("SCU", "SA", "E7", "E3"),
    ),
    Flow(
        "E4",
        "created-card-transactions-are-listed",
        "list-card-transactions",
        "spec 4.3 E4",
        "must",
        "card transactions created with E5 (and only those) are listed by E4",
        ("SCU", "SCA", "E5", "E4"),
    ),
    Flow(
        "E4",
        "date-filter-limits-range",
        "filter-dates",
        "spec 4.3 E4",
        "should",
        "fromDate and toDate restrict E4's list to that range",
        ("SCU", "SCA", "E5", "E4"),
    ),
    Flow(
        "E4",
        "offset-and-limit-page-the-list",
        "filter-pagination",
        "spec 4.3 E4",
        "should",
        "offset skips and limit caps E4's list",
        ("SCU", "SCA", "E5", "E4"),
    ),
    Flow(
        "E12",
        "balance-change-reads-back",
        "roundtrip-balances",
        "spec 4.3 E15, spec 4.3 E12",
        "must",
        "balances changed with E15 read back from E12",
        ("SCU", "SA", "E15", "E12"),
    ),
    Flow(
        "E3",
        "sandbox-payment-is-listed",
        "payment-in-transactions",
        "spec 4.3 E3",
        "must",
        "a sandbox payment (E16) from the account appears in E3's list",
        ("SCU", "SA", "E16", "PA", "E3"),
        needs_sca=True,
        needs_control=True,
    ),
    Flow(
        "AL",
        "consent-flow-lists-accounts",
        "consent-accounts",
        "spec 8, spec 4.3 E6",
        "should",
        "after a consent (CC, CA, SCA) the account list (AL) shows the consented account",
        ("SCU", "SA", "SAG", "E6", "CC", "CA", "AL"),
        needs_sca=True,
    ),
    Flow(
        "AT",
        "consent-flow-lists-transactions",
        "consent-transactions",
        "spec 8, spec 4.1",
        "should",
        "after a consent the account's transactions (AT) are listed",
        ("SCU", "SA", "SAG", "E6", "E7", "CC", "CA", "AL", "AT"),
        needs_sca=True,
    ),
    Flow(
        "E8",
        "consent-flow-returns-transaction-details",
        "consent-transaction-details",
        "spec 4.3 E8",
        "must",
        "after a consent, E8 returns the details of a transaction taken from AT's list",
        ("SCU", "SA", "SAG", "E6", "E7", "CC", "CA", "AL", "AT", "E8"),
        needs_sca=True,
    ),
    Flow(
        "E6",
        "engagement-without-register-not-offered",
        "consent-needs-register-and-view",
        "spec 4.3 E6",
        "should",
        "an account engaged without the REGISTER role is not offered for consent (AL)",
        ("SCU", "SA", "SAG", "E6", "CC", "CA", "AL"),
        needs_sca=True,
    ),
    Flow(
        "SDF",
        "filled-data-is-readable",
        "data-fill",
        "spec 9",
        "should",
        "the ids the data fill returns can be read (E9, E12, E10)",
        ("SDF", "E9", "E12", "E10"),
    ),
)


def _booking_status_flows(context: Context) -> Iterator[Flow]:
    """One E4 filter flow per bookingStatus value (spec 4.3 E4)."""
    op = context.contract.operations.get("E4")
    if op is None:
        return
    for parameter in op.query_parameters:
        if parameter.name != "bookingStatus":
            continue
        for value in context.resolver(parameter.schema).get("enum", []):
            yield Flow(
                "E4",
                f"booking-status-{id_safe(value, None)}-filters-list",
                "filter-booking-status",
                "spec 4.3 E4",
                "should",
                f"bookingStatus={value} returns the matching part of E5's card transactions",
                ("SCU", "SCA", "E5", "E4"),
                (("booking_status", str(value)),),
            )


def _scenario(context: Context, flow: Flow) -> Scenario:
    op = context.contract.operations[flow.operation]
    return Scenario(
        id=scenario_id(op.id, flow.slug),
        operation=op.id,
        rule=f"STATE-{flow.name}",
        spec=flow.spec,
        level=flow.level,
        kind="flow",
        title=f"{op.id} {op.name}: {flow.title}",
        expect=success(op),
        variant=base_variant(op, context),
        params=params(
            flow=flow.name,
            needs_sca=flow.needs_sca,
            needs_control=flow.needs_control,
            steps=flow.requires,
            **dict(flow.extra),
        ),
    )


def generate(context: Context) -> Iterator[Scenario]:
    """Every flow whose operations the contract has."""
    operations = context.contract.operations
    products = [
        op
        for op in context.operations()
        if op.family == "payments" and op.method == "POST" and op.fixed_path_values
    ]
    flows = [flow for op in products for flow in _product_flows(op)]
    flows += [*FLOWS, *_booking_status_flows(context)]
    for flow in flows:
        if flow.operation in operations and all(step in operations for step in flow.requires):
            yield _scenario(context, flow)
