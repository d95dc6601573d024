"""Rule scenarios: one per row of the rule table and operation it lists (``schemas/rules.json``).

``params["check"]`` is the row's ``check`` name; :data:`RULE_CHECKS` maps it to the function that
builds the row's situation and judges the answer. The checks live by topic: ``payments`` (payment
and basket rules), ``limits`` (limits, ages, pages and windows of spec 8), ``lengths`` (field
lengths), ``requests`` (header, customer-type and sandbox rules), ``consents`` (the consent
lifecycle), ``responses`` (the response headers a certifier checks); ``common`` holds what they
share.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from conformance.runners.rule.common import RuleCheck
from conformance.runners.rule.consents import check_terminated_consent_refused
from conformance.runners.rule.lengths import (
    check_account_name_length,
    check_length_bounds_enforced,
    check_max_length_enforced,
    check_min_length_enforced,
    check_response_field_length,
)
from conformance.runners.rule.limits import (
    check_account_list_empty_when_account_gone,
    check_consent_age_limit,
    check_daily_call_limit,
    check_default_page_size,
    check_history_window_without_sca,
    check_pagination_links_page_size,
    check_query_minimum_enforced,
    check_sca_renewal_required,
)
from conformance.runners.rule.payments import (
    check_amount_fraction_digits,
    check_amount_positive,
    check_amount_precision,
    check_basket_authorised_again_blocked,
    check_basket_rejects_payment_kind,
    check_basket_size_limit,
    check_corporate_request_requires_corporate_id,
    check_creditor_agent_required_for_bban,
    check_day_of_execution_in_month,
    check_debtor_account_exactly_one,
    check_duplicate_months_rejected,
    check_execution_date_not_past,
    check_kid_check_digit,
    check_logical_duplicate_refused,
    check_pending_payment_cancellation_refused,
    check_periodic_end_after_start,
    check_regulatory_reporting_threshold,
    check_remittance_forms_exclusive,
)
from conformance.runners.rule.requests import (
    check_customers_list_accounts,
    check_customers_list_agreements,
    check_engagement_account_owner,
    check_foreign_debtor_transaction_rejected,
    check_invalid_customer_type_rejected,
    check_malformed_header_rejected,
    check_sandbox_dates_rejected,
    check_transaction_ids_stable,
)
from conformance.runners.rule.responses import (
    check_location_on_creation,
    check_request_id_echoed,
    check_sca_approach_named,
)
from conformance.scenario import scenario_seed

if TYPE_CHECKING:
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["RULE_CHECKS", "run"]


#: Rule-check function by the ``check`` name of the rule table (immutable).
RULE_CHECKS: Mapping[str, RuleCheck] = MappingProxyType(
    {
        check.__name__: check
        for check in (
            check_basket_rejects_payment_kind,
            check_basket_size_limit,
            check_logical_duplicate_refused,
            check_kid_check_digit,
            check_corporate_request_requires_corporate_id,
            check_duplicate_months_rejected,
            check_foreign_debtor_transaction_rejected,
            check_pending_payment_cancellation_refused,
            check_malformed_header_rejected,
            check_invalid_customer_type_rejected,
            check_account_list_empty_when_account_gone,
            check_daily_call_limit,
            check_consent_age_limit,
            check_sca_renewal_required,
            check_history_window_without_sca,
            check_default_page_size,
            check_pagination_links_page_size,
            check_query_minimum_enforced,
            check_max_length_enforced,
            check_min_length_enforced,
            check_length_bounds_enforced,
            check_response_field_length,
            check_regulatory_reporting_threshold,
            check_creditor_agent_required_for_bban,
            check_remittance_forms_exclusive,
            check_debtor_account_exactly_one,
            check_amount_fraction_digits,
            check_sandbox_dates_rejected,
            check_engagement_account_owner,
            check_account_name_length,
            check_basket_authorised_again_blocked,
            check_execution_date_not_past,
            check_periodic_end_after_start,
            check_customers_list_accounts,
            check_customers_list_agreements,
            check_transaction_ids_stable,
            check_amount_precision,
            check_day_of_execution_in_month,
            check_amount_positive,
            check_terminated_consent_refused,
            check_request_id_echoed,
            check_location_on_creation,
            check_sca_approach_named,
        )
    }
)


def run(scenario: Scenario, ctx: RunContext) -> None:
    name = str(scenario.param("check", ""))
    try:
        check = RULE_CHECKS[name]
    except KeyError:
        raise ValueError(
            f"rule scenario {scenario.id} names the check {name!r}, which no rule check implements"
        ) from None
    check(scenario, ctx, scenario_seed(ctx.seed, scenario.id))
