"""Judging one answer against a scenario's :class:`~conformance.contract.requirements.AnswerDue`.

A success: a 2xx (the exact status where the spec shows it; where it shows only the body, the
exact status is a should finding), or the SCA redirect form of payment creation and basket
authorisation (spec 5 item 6: 401 with ``_links.scaRedirect``); then the body against the
documented response. A refusal: the status (a 4xx where the suite chose the status), then,
collected together (schemathesis model), the error body (``checks.check_error_body``: JSON is
must; the spec 7 body is must only where the spec shows one) and the error code, which is looked
for in ``code`` and in ``tppMessages[].code``. Whatever rests on our reading of the spec (an
``x-assumed`` part of a schema, a body the spec does not show) is recorded as a should finding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from conformance.checks import (
    ConformanceFailure,
    ReadingFailure,
    check_all,
    check_basket_codes,
    check_client_error,
    check_error_body,
    check_error_code,
    check_response_schema,
    check_sca_redirect,
    check_status,
    check_success,
    error_codes,
    json_document,
)
from conformance.contract.facts import ERRORS_SHOWN, PAYMENT_STYLE_FAMILIES
from conformance.contract.requirements import (
    BODY_SCHEMA_RESPONSE,
    CHOSEN_CODE_READING,
    CHOSEN_STATUS,
    CHOSEN_STATUS_READING,
    CODE,
    REFUSED,
    STATUS,
    AnswerDue,
    answer_due,
)
from conformance.findings import at_should, collecting_findings, record_should

if TYPE_CHECKING:
    from conformance.contract import Contract, Operation
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = [
    "judge",
    "judge_again",
    "judge_expectation",
    "softened",
    "success_of",
]


def success_of(operation: Operation) -> AnswerDue:
    """The documented success of ``operation``: its 2xx statuses (chosen where the spec shows only
    the body: a 2xx is then must, the exact status should) and the body when one is documented."""
    responses = operation.success_responses
    statuses = tuple(response.status for response in responses)
    with_body = any(response.schema is not None for response in responses)
    chosen = CHOSEN_STATUS if operation.status_reading else ""
    return answer_due(statuses, None, BODY_SCHEMA_RESPONSE if with_body else None, chosen)


def softened(check: Callable[[], object]) -> None:
    """Run ``check``; a failure that rests on our reading is recorded as a should finding."""
    try:
        check()
    except ReadingFailure as failure:
        record_should(failure, failure.reading)


def judge(exchange: Exchange, scenario: Scenario, ctx: RunContext) -> None:
    """The answer meets ``scenario.expect`` for ``scenario.operation``."""
    judge_expectation(
        exchange,
        scenario.expect,
        ctx.contract.operations[scenario.operation],
        ctx.contract,
        spec=scenario.spec,
    )


def judge_again(
    exchange: Exchange, scenario: Scenario, contract: Contract
) -> tuple[str, list[ConformanceFailure]]:
    """What of ``exchange``, a replay of ``scenario``'s request, still breaks its requirement
    as the runners judge one answer (``conformance call --scenario``), with its level: the
    failure (``must``, or ``should`` for a should scenario), else the should findings; no
    failure when the answer meets what is due."""
    with collecting_findings() as findings:
        try:
            judge_expectation(
                exchange,
                scenario.expect,
                contract.operations[scenario.operation],
                contract,
                spec=scenario.spec,
            )
        except ConformanceFailure as failure:
            level = "should" if isinstance(failure, ReadingFailure) else scenario.level
            return level, [failure.for_scenario(scenario)]
    return "should", [finding.for_scenario(scenario) for finding in findings]


def judge_expectation(
    exchange: Exchange,
    expect: AnswerDue,
    operation: Operation,
    contract: Contract,
    *,
    spec: str,
    why: str = "",
) -> None:
    """The answer has one of ``expect.statuses`` (or the success's SCA redirect form), then its
    body and code as ``expect`` says; readings are should findings."""
    if expect.rejects:
        _judge_refusal(exchange, expect, operation, contract, spec=spec, why=why)
    else:
        _judge_success(exchange, expect, operation, contract, spec=spec, why=why)


def _judge_success(
    exchange: Exchange,
    expect: AnswerDue,
    operation: Operation,
    contract: Contract,
    *,
    spec: str,
    why: str,
) -> None:
    if exchange.status == operation.sca_redirect_status:
        check_sca_redirect(exchange)  # spec 5 item 6: the 401 form of the success
        return
    if not expect.status_stated:
        check_success(exchange, spec=spec, why=why)
        at_should(
            lambda: check_status(exchange, expect.statuses, spec=spec, why=why),
            reading=operation.status_reading or CHOSEN_STATUS_READING,
        )
    else:
        check_status(exchange, expect.statuses, spec=spec, why=why)
    checks: list[Callable[[], object]] = []
    if expect.body == BODY_SCHEMA_RESPONSE:
        checks.append(
            lambda: softened(
                lambda: check_response_schema(exchange, operation, contract, any_success=True)
            )
        )
    if expect.code is not None:
        code = expect.code
        checks.append(lambda: check_error_code(exchange, code, spec=spec))
    check_all(*checks)


def _judge_refusal(
    exchange: Exchange,
    expect: AnswerDue,
    operation: Operation,
    contract: Contract,
    *,
    spec: str,
    why: str,
) -> None:
    """Must: the stated part (a 4xx, or the stated status) and a JSON body (the spec 7 body
    where the spec shows one). Should: what the suite chose (the status, the code) and what rests
    on our reading of the error body."""
    misses = {
        miss.part: miss
        for miss in expect.misses(exchange.status, error_codes(json_document(exchange)))
    }
    if REFUSED in misses and not expect.status_stated:
        check_client_error(exchange, spec=spec)  # must: a 4xx, whatever status the suite chose
    status = misses.get(STATUS)
    if status is not None and status.stated:
        check_status(exchange, expect.statuses, spec=spec, why=why)
    elif status is not None:
        at_should(
            lambda: check_status(exchange, expect.statuses, spec=spec, why=why),
            reading=CHOSEN_STATUS_READING,
        )
    payments = operation.family == "payments"
    shown = operation.id in ERRORS_SHOWN
    checks: list[Callable[[], object]] = []
    if expect.body is not None:  # None: the answer's body is not judged (a bare 404)
        checks.append(
            lambda: softened(
                lambda: check_error_body(exchange, contract, payments=payments, shown=shown)
            )
        )
        if operation.family in PAYMENT_STYLE_FAMILIES and not payments:
            checks.append(lambda: softened(lambda: check_basket_codes(exchange, contract)))
    code = misses.get(CODE)
    if code is not None and expect.code is not None:
        due_code = expect.code
        if code.stated:
            checks.append(lambda: check_error_code(exchange, due_code, spec=spec))
        else:
            checks.append(
                lambda: at_should(
                    lambda: check_error_code(exchange, due_code, spec=spec),
                    reading=CHOSEN_CODE_READING,
                )
            )
    check_all(*checks)
