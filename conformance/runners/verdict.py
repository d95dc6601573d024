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
    check_error_body,
    check_error_code,
    check_error_status,
    check_response_schema,
    check_status,
)
from conformance.scenario import BODY_SCHEMA_ERROR, BODY_SCHEMA_RESPONSE

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
    """The answer has one of ``expect.statuses``, then its body and code as ``expect`` says."""
    check_status(exchange, expect.statuses, spec=spec, why=why)
    payments = operation.family in PAYMENT_STYLE_FAMILIES
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
