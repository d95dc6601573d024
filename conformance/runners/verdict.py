"""Judging one answer against a scenario's :class:`~conformance.scenario.Expectation`.

The status first (a wrong status makes every other check beside the point), then, collected
together (schemathesis model), the body the expectation names and the error code it requires:
``response`` validates against the operation's documented schema for the status received (for an
error status also the spec 7 rule that ``status`` repeats the HTTP status), ``error`` against the
spec 7 error body, and ``error_code`` is looked for in ``code`` and in ``tppMessages[].code``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.checks import (
    check_all,
    check_client_error,
    check_error_body,
    check_error_code,
    check_error_status,
    check_response_schema,
    check_status,
)
from conformance.findings import at_should
from conformance.scenario import BODY_SCHEMA_ERROR, BODY_SCHEMA_RESPONSE, CHOSEN_STATUS

if TYPE_CHECKING:
    from conformance.contract import Contract, Operation
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Expectation, Scenario

__all__ = ["PAYMENT_STYLE_FAMILIES", "judge", "judge_expectation"]

#: Families whose error bodies may carry ``tppMessages`` (spec 2.6, spec 7 code list).
PAYMENT_STYLE_FAMILIES = frozenset({"payments", "baskets"})


def judge(exchange: Exchange, scenario: Scenario, ctx: RunContext) -> None:
    """The answer meets ``scenario.expect`` for ``scenario.operation``."""
    judge_expectation(
        exchange,
        scenario.expect,
        ctx.contract.operations[scenario.operation],
        ctx.contract,
        spec=scenario.spec,
    )


def judge_expectation(
    exchange: Exchange,
    expect: Expectation,
    operation: Operation,
    contract: Contract,
    *,
    spec: str,
    why: str = "",
) -> None:
    """The answer has one of ``expect.statuses``, then its body and code as ``expect`` says.

    For a refusal whose status the suite chose (``expect.chosen``) the must part is a 4xx with
    the error body, and the chosen statuses and code are should findings.
    """
    payments = operation.family in PAYMENT_STYLE_FAMILIES
    if expect.chosen and expect.rejects:
        _judge_chosen_refusal(exchange, expect, contract, spec=spec, why=why, payments=payments)
        return
    check_status(exchange, expect.statuses, spec=spec, why=why)
    checks = []
    if expect.body_schema == BODY_SCHEMA_RESPONSE:
        checks.append(lambda: check_response_schema(exchange, operation, contract))
        if exchange.status >= 400:
            checks.append(lambda: check_error_status(exchange))
    elif expect.body_schema == BODY_SCHEMA_ERROR:
        checks.append(lambda: check_error_body(exchange, contract, payments=payments))
    if expect.error_code is not None:
        code = expect.error_code
        checks.append(lambda: check_error_code(exchange, code, spec=spec))
    check_all(*checks)


#: Why a chosen status or code is only a should finding.
CHOSEN_STATUS_BASIS = (
    "the spec states that the request is refused but shows no status; the suite chose this one"
)
CHOSEN_CODE_BASIS = "the spec shows no code for this refusal; the suite chose this one"


def _judge_chosen_refusal(
    exchange: Exchange,
    expect: Expectation,
    contract: Contract,
    *,
    spec: str,
    why: str,
    payments: bool,
) -> None:
    """Must: the stated part (a 4xx, or the stated status) with the spec 7 error body. Should:
    what the suite chose (the status, the code)."""
    if expect.chosen == CHOSEN_STATUS:
        check_client_error(exchange, spec=spec)
        at_should(
            lambda: check_status(exchange, expect.statuses, spec=spec, why=why),
            basis=CHOSEN_STATUS_BASIS,
        )
    else:
        check_status(exchange, expect.statuses, spec=spec, why=why)
    check_error_body(exchange, contract, payments=payments)
    code = expect.error_code
    if code is not None:
        at_should(lambda: check_error_code(exchange, code, spec=spec), basis=CHOSEN_CODE_BASIS)
