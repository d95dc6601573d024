"""Flow scenarios (spec 3, spec 2.4, spec 2.9 / 4.3 round trips, spec 8 consents): the runner
and the table of flows, each a module of its topic (payments, cancellations, redirects, sandbox,
transactions, paging, consents)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from conformance.runners.flow.cancellations import (
    payment_cancellation_sca,
    payment_cancellation_sca_cancelled,
)
from conformance.runners.flow.consents import (
    consent_accounts,
    consent_needs_register_and_view,
    consent_read,
    consent_terminated,
    consent_transaction_details,
    consent_transactions,
)
from conformance.runners.flow.paging import (
    page_account_transactions,
    page_consented_transactions,
)
from conformance.runners.flow.payments import (
    basket_authorisation_started,
    basket_read,
    basket_sca_cancelled,
    basket_sca_completed,
    basket_worst_case,
    batch_run_advances,
    batch_run_skips_periodic,
    payment_authorisation_started,
    payment_cancelled,
    payment_sca_cancelled,
    payment_sca_completed,
    payment_status_after_creation,
)
from conformance.runners.flow.redirects import sca_failure_return
from conformance.runners.flow.sandbox import (
    data_fill,
    roundtrip_account,
    roundtrip_agreement,
    roundtrip_balances,
    roundtrip_card_account,
    roundtrip_customer,
    roundtrip_engagement,
    sandbox_reset,
)
from conformance.runners.flow.steps import Flow, require_batch
from conformance.runners.flow.transactions import (
    filter_booking_status,
    filter_dates,
    filter_pagination,
    list_account_transactions,
    list_card_transactions,
    payment_in_transactions,
    roundtrip_account_transaction,
)
from conformance.scenario import scenario_seed

if TYPE_CHECKING:
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["FLOWS", "run"]


def run(scenario: Scenario, ctx: RunContext) -> None:
    name = str(scenario.param("flow", ""))
    try:
        flow = FLOWS[name]
    except KeyError:
        raise ValueError(f"flow scenario {scenario.id} names an unknown flow {name!r}") from None
    if scenario.param("needs_control"):
        require_batch(ctx)
    flow(scenario, ctx, scenario_seed(ctx.seed, scenario.id))


#: Flow by the name the scenario's ``params["flow"]`` carries (immutable).
FLOWS: Mapping[str, Flow] = MappingProxyType(
    {
        "payment-status-after-creation": payment_status_after_creation,
        "payment-sca-completed": payment_sca_completed,
        "payment-sca-cancelled": payment_sca_cancelled,
        "batch-run-advances": batch_run_advances,
        "batch-run-skips-periodic": batch_run_skips_periodic,
        "basket-worst-case": basket_worst_case,
        "basket-authorisation-started": basket_authorisation_started,
        "basket-sca-completed": basket_sca_completed,
        "basket-sca-cancelled": basket_sca_cancelled,
        "payment-authorisation-started": payment_authorisation_started,
        "payment-cancelled": payment_cancelled,
        "roundtrip-customer": roundtrip_customer,
        "roundtrip-account": roundtrip_account,
        "roundtrip-card-account": roundtrip_card_account,
        "roundtrip-agreement": roundtrip_agreement,
        "roundtrip-engagement": roundtrip_engagement,
        "roundtrip-account-transaction": roundtrip_account_transaction,
        "list-account-transactions": list_account_transactions,
        "filter-dates": filter_dates,
        "filter-pagination": filter_pagination,
        "list-card-transactions": list_card_transactions,
        "filter-booking-status": filter_booking_status,
        "roundtrip-balances": roundtrip_balances,
        "payment-in-transactions": payment_in_transactions,
        "consent-accounts": consent_accounts,
        "consent-transactions": consent_transactions,
        "consent-transaction-details": consent_transaction_details,
        "consent-needs-register-and-view": consent_needs_register_and_view,
        "data-fill": data_fill,
        "basket-read": basket_read,
        "payment-cancellation-sca": payment_cancellation_sca,
        "payment-cancellation-sca-cancelled": payment_cancellation_sca_cancelled,
        "sca-failure-return": sca_failure_return,
        "paging-to-the-end": page_account_transactions,
        "paging-links-to-the-end": page_consented_transactions,
        "sandbox-reset": sandbox_reset,
        "consent-terminated": consent_terminated,
        "consent-read": consent_read,
    }
)
