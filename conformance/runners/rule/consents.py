"""Rule checks of the consent lifecycle (rules.json ``CNS-*``; spec 8 presupposes the consent and
shows no consent operation, so these rest on NextGenPSD2's lifecycle and are graded should): a
consent the TPP deleted (CD, terminatedByTpp) gives access to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.checks import NotApplicable
from conformance.operations.accounts import (
    account_list_request,
    consent_delete_request,
    consented_transactions_request,
    transaction_details_request,
)
from conformance.runners.judging import judge_expectation, success_of
from conformance.runners.rule.common import send_and_judge, send_expecting_success

if TYPE_CHECKING:
    from conformance.bankside.request import OperationRequest
    from conformance.bankside.setup_data import Consent
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["check_terminated_consent_refused"]


def _authorised_consent(ctx: RunContext, seed: int) -> Consent:
    """A consent the PSU authorised, on an account of its own where the sandbox makes one (so
    that a bank finding E8's consent by the PSU finds this one), with a booked transaction."""
    account = ctx.data.new_account(seed, transactions=1) if ctx.profile.sandbox else None
    consent = ctx.data.new_consent(seed, account or ctx.data.account())
    if consent.account_id is None or consent.transaction_id is None:
        raise NotApplicable("the consented account shows no booked transaction (AT) to read")
    return consent


def _use(ctx: RunContext, operation: str, consent: Consent) -> OperationRequest:
    """The request of ``operation`` (AL, AT or E8) made with ``consent`` (its Consent-ID)."""
    if operation == "AL":
        return account_list_request(ctx, consent)
    if operation == "AT":
        return consented_transactions_request(ctx, consent)
    request = transaction_details_request(ctx, consent)
    if consent.bound_to_session:  # named by its session already
        return request
    return request.with_header("Consent-ID", consent.consent_id)


def check_terminated_consent_refused(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A consent the TPP deleted (CD) is refused on AL, AT and E8 (401 CONSENT_INVALID); the same
    request with it was served before the deletion."""
    reason = ctx.unsupported_reason("CD")
    if reason is not None:
        raise NotApplicable(f"the scenario deletes a consent (CD): {reason}")
    consent = _authorised_consent(ctx, seed)
    request = _use(ctx, scenario.operation, consent)
    send_expecting_success(scenario, ctx, request)
    delete = consent_delete_request(ctx, consent.psu, consent.consent_id)
    deleted = delete.send(ctx)
    judge_expectation(
        deleted, success_of(delete.operation), delete.operation, ctx.contract, spec=scenario.spec
    )
    send_and_judge(scenario, ctx, request)
