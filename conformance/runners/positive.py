"""Positive scenarios (spec 4.3): a valid request is answered with the documented success.

The base request of the scenario's variant is built (set-up data through the sandbox), the
scenario's mutation applied when it sweeps a value the spec lists (an enum value, a boolean query
parameter), sent once, and judged: status, JSON body, documented response schema, a JSON
Content-Type on a body (spec 4.2), a fee indicator that agrees with the fee shown (spec 2.6), and
the response headers a certifier checks (``response_headers``: our readings, should).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from conformance.bankside.request import apply_mutation
from conformance.bankside.sca import require_sca_link
from conformance.checks import (
    ConformanceFailure,
    check_json_content_type,
    check_sca_redirect,
    json_document,
)
from conformance.contract.catalogue import creates_payment, sca_link_at_creation
from conformance.contract.requirements import MUST
from conformance.findings import at_should
from conformance.operations import base_request
from conformance.runners.judging import judge
from conformance.runners.response_headers import judge_response_headers
from conformance.scenario import scenario_seed

if TYPE_CHECKING:
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["run"]


def run(scenario: Scenario, ctx: RunContext) -> None:
    seed = scenario_seed(ctx.seed, scenario.id)
    request = base_request(ctx, scenario.operation, scenario.variant, seed)
    if scenario.mutation is not None:
        request = apply_mutation(request, scenario.mutation)
    exchange = request.send(ctx)
    judge(exchange, scenario, ctx)
    check_json_content_type(exchange)
    check_fee_indicator(exchange)
    check_sca_link_at_creation(exchange, scenario.operation, ctx)
    judge_response_headers(exchange, request.operation, ctx)


def check_sca_link_at_creation(exchange: Exchange, operation_id: str, ctx: RunContext) -> None:
    """Where the profile says every payment creation starts its SCA (``[sca] start =
    "creation"``), a creation accepted with a 2xx carries the SCA link, graded by the contract's
    requirement (``catalogue.sca_link_at_creation``: with a redirect spec 5 item 6's
    ``_links.scaRedirect``, a must; with the decoupled or OAuth approach the link the approach
    names, a should). So a bank that drops the link fails here, at the creation, rather than
    blocking every scenario whose set-up needs an authorised payment. A 401 is judged as spec 5
    item 6's form already."""
    settings = ctx.profile.sca
    operation = ctx.contract.operations.get(operation_id)
    if (
        settings.start != "creation"
        or operation is None
        or not creates_payment(operation)
        or not 200 <= exchange.status < 300
    ):
        return
    grade = sca_link_at_creation(ctx.contract, operation_id, settings.approach)
    if grade.level == MUST:
        check_sca_redirect(exchange)
        return
    at_should(lambda: require_sca_link(exchange, settings), reading=grade.reading)


def check_fee_indicator(exchange: Exchange) -> None:
    """A payment answer that shows a fee says so in ``transactionFeeIndicator`` (spec 2.6: "true
    when the payment incurs a fee"); either field may be absent."""
    document = json_document(exchange)
    if not isinstance(document, dict) or document.get("transactionFeeIndicator") is not False:
        return
    fees = document.get("transactionFees")
    amount = fees.get("amount") if isinstance(fees, dict) else None
    try:
        charged = amount is not None and Decimal(str(amount)) > 0
    except InvalidOperation:
        return  # the response schema judges the amount's form
    if charged:
        raise ConformanceFailure(
            f"the payment shows a fee of {amount} but transactionFeeIndicator false",
            spec="spec 2.6",
            sent=exchange,
            expected="transactionFeeIndicator is true when the payment incurs a fee",
            quotes=("2.6-fee-indicator", "2.6-fees"),
        )
