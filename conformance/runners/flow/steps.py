"""What the flows share: a step sent and judged against its operation's documented success (and
its response headers, ``response_headers``), payment status reads, authorisation and SCA, the
batch control, and the failure of a flow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import OperationRequest
from conformance.bankside.sca import (
    ScaError,
    ScaOutcome,
    ScaRedirectBroken,
    require_sca_link,
    sca_blocked,
    sca_failure,
)
from conformance.bankside.setup_data.base import BATCH_SUPPLY
from conformance.bankside.setup_data.refusals import refused_title
from conformance.checks import (
    ConformanceFailure,
    NotApplicable,
    SetUpFailure,
    check_json_body,
    error_codes,
    json_document,
)
from conformance.contract.requirements import BODY_SCHEMA_RESPONSE, AnswerDue, answer_due
from conformance.operations.payments import payment_request
from conformance.profile.templates import setup_operations
from conformance.runners.judging import judge_expectation, success_of
from conformance.runners.promises import judge_step
from conformance.runners.response_headers import judge_response_headers

if TYPE_CHECKING:
    from conformance.bankside.request import Psu
    from conformance.bankside.setup_data import Payment
    from conformance.contract import Operation
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario


Flow = Callable[["Scenario", "RunContext", int], None]


def documented_success(ctx: RunContext, op_id: str) -> AnswerDue:
    return success_of(ctx.contract.operations[op_id])


def send_step(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    """Send one step and require its documented success (spec of the flow); on an operation the
    spec neither shows nor names, as the bank's promise (``runners.promises``)."""
    exchange = request.send(ctx)
    _judge_success_step(scenario, ctx, request.operation, exchange)
    return exchange


def unshown_refusal(ctx: RunContext, op: Operation, exchange: Exchange) -> None:
    """A step to an operation interface.md only names or implies (its request not shown: the
    sandbox creations SA, SCA, SCU and SAG, the payment and consent operations beside the
    numbered ones) that the target refuses with a 4xx: the bank wants another request than the
    one the contract assumes, which no sentence makes a failure of the bank. The scenario is
    blocked, the answer and what would unblock it (the header or field its error names, the
    profile key) its reason, as a refused set-up request is; never a must failure. An unnamed
    operation is judged as :func:`~conformance.runners.promises.judge_step` says, and so is an
    operation the profile promises."""
    if op.numbered or op.unnamed or not 400 <= exchange.status < 500:
        return
    if ctx.profile.operation_promises.promise(op):
        return
    raise SetUpFailure(
        refused_title(
            f"a {op.name} step",
            op.id,
            exchange,
            sandbox_creation=op.id in setup_operations(ctx.contract.operations),
        ),
        spec=op.spec,
        sent=exchange,
        expected=f"the request the contract assumes for {op.id} (interface.md does not show "
        "it) is accepted",
    )


def _judge_success_step(
    scenario: Scenario, ctx: RunContext, op: Operation, exchange: Exchange
) -> None:
    unshown_refusal(ctx, op, exchange)
    judge_step(
        ctx,
        op,
        lambda: judge_expectation(
            exchange, documented_success(ctx, op.id), op, ctx.contract, spec=scenario.spec
        ),
    )
    judge_response_headers(exchange, op, ctx)


def unstated_step(
    scenario: Scenario, ctx: RunContext, request: OperationRequest, *, what: str
) -> Exchange:
    """A step the flow needs that interface.md does not state (deleting a payment that is in a
    signing basket, ``what`` names it): a conformant bank may refuse it. Refused with a 4xx, the
    flow cannot go on and ends not applicable, the answer (its spec 7 code, when it has one) its
    reason: no sentence asks the bank to allow the step, nor shows the form of its refusal (the
    operation's error answers are "not shown"), so it is never a failure. Any other answer is
    judged as :func:`send_step` judges it."""
    exchange = request.send(ctx)
    if 400 <= exchange.status < 500:
        codes = error_codes(json_document(exchange))
        answer = f"HTTP {exchange.status} {codes[0]}" if codes else f"HTTP {exchange.status}"
        raise NotApplicable(
            f"the flow needs {what}, a step interface.md does not state, and the target "
            f"refused it: {answer}{_message_of(exchange)}"
        )
    _judge_success_step(scenario, ctx, request.operation, exchange)
    return exchange


def _message_of(exchange: Exchange) -> str:
    """``: <the error body's message>`` (its first 200 characters), or ""."""
    document = json_document(exchange)
    message = document.get("message") if isinstance(document, Mapping) else None
    if not isinstance(message, str) or not message.strip():
        messages = document.get("tppMessages") if isinstance(document, Mapping) else None
        first = messages[0] if isinstance(messages, list) and messages else None
        text = first.get("text") if isinstance(first, Mapping) else None
        message = text if isinstance(text, str) else ""
    message = " ".join(message.split())[:200]
    return f" ({message})" if message else ""


def response_document(exchange: Exchange) -> Any:
    return check_json_body(exchange)


def payment_status(scenario: Scenario, ctx: RunContext, payment: Payment) -> tuple[str, Exchange]:
    """PS: the payment's transactionStatus (and the exchange it was read in)."""
    exchange = send_step(scenario, ctx, payment_request(ctx, "PS", payment))
    return str(response_document(exchange).get("transactionStatus")), exchange


def start_authorisation(
    scenario: Scenario, ctx: RunContext, request: OperationRequest
) -> tuple[Exchange, str]:
    """Start an authorisation (E2, PA): 201 with the SCA status record, or 401 with
    ``_links.scaRedirect`` (spec 4.3 E2); the SCA link (with decoupled SCA, ``scaStatus``)."""
    exchange = request.send(ctx)
    op = request.operation
    if exchange.status != 401:  # 401 with the SCA link is one of its answers (spec 4.3 E2)
        unshown_refusal(ctx, op, exchange)
    judge_step(
        ctx,
        op,
        lambda: judge_expectation(
            exchange,
            answer_due((201, 401), None, BODY_SCHEMA_RESPONSE),
            op,
            ctx.contract,
            spec=scenario.spec,
        ),
    )
    judge_response_headers(exchange, op, ctx)
    return exchange, require_sca_link(exchange, ctx.profile.sca, spec="spec 5 item 6")


def complete_sca(ctx: RunContext, link: str, psu: Psu, *, approve: bool) -> ScaOutcome:
    """The PSU goes through the redirect; one that does not bring it back is a failure. The
    outcome says where the PSU landed, where the step learns it."""
    try:
        return ctx.sca.complete(link, customer_number=psu.customer_number, approve=approve)
    except ScaRedirectBroken as broken:
        raise sca_failure(broken, ctx.client.exchanges) from None
    except ScaError as error:
        raise sca_blocked(error, ctx.client.exchanges) from None


def authorise(scenario: Scenario, ctx: RunContext, payment: Payment, *, approve: bool) -> Exchange:
    """PA, then the PSU approves or cancels at the redirect; the PA exchange. At a bank that
    starts SCA at payment creation (``[sca] start``) the creation's link and answer instead."""
    if ctx.profile.sca.starts_at_creation and payment.sca_link and payment.created:
        complete_sca(ctx, payment.sca_link, payment.psu, approve=approve)
        return payment.created
    reason = ctx.unsupported_reason("PA")
    if reason is not None:
        raise NotApplicable(f"the scenario authorises a payment with PA: {reason}")
    exchange, link = start_authorisation(scenario, ctx, payment_request(ctx, "PA", payment))
    complete_sca(ctx, link, payment.psu, approve=approve)
    return exchange


def read_sca_status(ctx: RunContext, started: Exchange) -> str | None:
    """The authorisation's scaStatus read from the record's ``self`` link, when readable."""
    links = (json_document(started) or {}).get("_links") or {}
    href = (links.get("self") or links.get("scaStatus") or {}).get("href")
    if not href:
        return None
    answer = ctx.client.request("GET", str(href))
    document = json_document(answer)
    if answer.status != 200 or not isinstance(document, Mapping):
        return None
    status = document.get("scaStatus")
    return str(status) if status is not None else None


def require_batch(ctx: RunContext) -> None:
    """The flow needs batch runs: the reference server's control, or the profile's hook."""
    if not ctx.data.can_run_batch:
        raise NotApplicable(
            "the flow needs to trigger the sandbox's simulated batch run (spec 3), which only "
            "the reference server's /_control/batch or the profile's batch hook offers "
            "(reference_server = false, no [hooks] batch)",
            supply=BATCH_SUPPLY,
        )


def run_batch(ctx: RunContext) -> None:
    ctx.data.run_batch("run the simulated batch processing")


def fail(
    title: str, spec: str, exchange: Exchange | None, expected: str, *related: Exchange
) -> ConformanceFailure:
    return ConformanceFailure(title, spec=spec, sent=exchange, expected=expected, related=related)


def expect_status(
    scenario: Scenario,
    exchange: Exchange,
    found: str,
    wanted: Iterable[str],
    what: str,
    *related: Exchange,
) -> None:
    allowed = sorted(set(wanted))
    if found not in allowed:
        raise fail(
            f"{what}: the payment reads {found}, expected {' or '.join(allowed)}",
            scenario.spec,
            exchange,
            f"{what}, the payment status is {' or '.join(allowed)}",
            *related,
        )
