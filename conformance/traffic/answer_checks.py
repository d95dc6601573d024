"""The bank's side of one exchange: the answer judged against its operation and against what the
request deserved.

- a request that broke a rule is refused: a 4xx with the spec 7 body (must where the rule is
  stated), with the status and code the rule names (each must only where the spec states it);
- never a 5xx (spec 7 keeps 500 for system errors; the suite's grading: always must), except a
  throttled answer with Retry-After;
- the status is one the operation documents, or one any request can meet (``transport_statuses``);
- the body is JSON with a JSON Content-Type (spec 4.2), valid against the documented schema of
  its status, an error body the spec 7 body whose ``status`` is the HTTP status;
- starting an authorisation answers scaStatus STARTED (spec 3).

The checks of ``conformance.checks`` judge; their failures become findings here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from conformance.checks import (
    ConformanceFailure,
    check_error_body,
    check_error_status,
    check_json_content_type,
    check_response_schema,
    json_document,
)
from conformance.contract.openapi import transport_statuses
from conformance.traffic.grading import QUOTES, Grade, grade, grade_operation, is_spec_operation
from conformance.traffic.model import BANK, TrafficFinding, Violation
from conformance.traffic.request_checks import PAYMENT_FAMILIES

if TYPE_CHECKING:
    from conformance.contract import Contract, Operation
    from conformance.exchange import Exchange

__all__ = ["THROTTLED", "judge_answer"]

#: A gateway's rate limit: answered with Retry-After, retried by a client, never a finding.
THROTTLED = frozenset({429, 503})


def _finding(grade_: Grade, rule: str, title: str, spec: str, place: str = "") -> TrafficFinding:
    return TrafficFinding(
        side=BANK,
        rule=rule,
        level=grade_.level,
        title=title,
        spec=spec,
        place=place,
        quote=grade_.quote,
        basis=grade_.basis,
    )


def throttled(exchange: Exchange) -> bool:
    return exchange.status in THROTTLED and bool(exchange.response_header("Retry-After"))


def judge_answer(
    exchange: Exchange,
    operation: Operation | None,
    contract: Contract,
    violations: Sequence[Violation],
) -> list[TrafficFinding]:
    """The bank's findings on one answer (none for a throttled one)."""
    if throttled(exchange):
        return []
    findings = list(_refusal(exchange, violations))
    if exchange.status >= 500:
        if not findings:
            findings.append(
                _finding(
                    grade(stated=True),
                    "BANK-server-error",
                    f"answered HTTP {exchange.status}, a server error",
                    "spec 7",
                    place="status",
                )
            )
        return findings + list(_error_body(exchange, operation, contract))
    if operation is None:
        if exchange.status >= 400:
            findings += _error_body(exchange, None, contract)
        return findings
    findings += _documented(exchange, operation, contract)
    findings += _content_type(exchange)
    findings += _started(exchange, operation)
    return findings


# --- what the request deserved ------------------------------------------------------------------


def _refusal(exchange: Exchange, violations: Sequence[Violation]) -> Iterator[TrafficFinding]:
    """A request that broke a rule is refused as the rule says (the first broken rule of the
    strictest level is named; the answer may refuse it for any of the broken rules)."""
    if not violations:
        return
    ordered = sorted(violations, key=lambda v: v.refusal.level != "must")
    first = ordered[0]
    status = exchange.status
    what = f"{first.finding.rule} ({first.finding.title})"
    if status < 400 or status >= 500:
        level = "must" if status >= 500 else first.refusal.level
        accepted = "answered with a server error" if status >= 500 else "accepted"
        yield _finding(
            Grade(level, quote=first.finding.quote, basis=first.finding.basis),
            "BANK-refusal",
            f"{accepted} (HTTP {status}) a request that breaks {what}; a 4xx with the spec 7 "
            "error body is due",
            first.finding.spec,
            place="status",
        )
        return
    fitting = [v for v in ordered if not v.refusal.statuses or status in v.refusal.statuses]
    if not fitting:
        stated = [v for v in ordered if v.refusal.status_stated]
        grade_ = (
            Grade("must", quote=stated[0].finding.quote)
            if stated
            else grade(
                stated=False,
                reading="the spec says the request is refused but shows no status; the suite "
                "chose these",
            )
        )
        named = stated[0] if stated else first
        yield _finding(
            grade_,
            "BANK-refusal-status",
            f"refused a request that breaks {named.finding.rule} with HTTP {status}, not "
            + " or ".join(str(s) for s in named.refusal.statuses),
            named.finding.spec,
            place="status",
        )
        return
    coded = [v for v in fitting if v.refusal.code]
    if not coded or any(_has_code(exchange, str(v.refusal.code)) for v in coded):
        return
    named = next((v for v in coded if v.refusal.code_stated), coded[0])
    grade_ = (
        Grade("must", quote=named.finding.quote)
        if named.refusal.code_stated
        else grade(
            stated=False, reading="the spec shows no code for this refusal; the suite chose it"
        )
    )
    yield _finding(
        grade_,
        "BANK-refusal-code",
        f"refused a request that breaks {named.finding.rule} without the code {named.refusal.code}",
        named.finding.spec,
        place="code",
    )


def _has_code(exchange: Exchange, code: str) -> bool:
    document = json_document(exchange)
    if not isinstance(document, dict):
        return False
    if document.get("code") == code:
        return True
    messages = document.get("tppMessages")
    return isinstance(messages, list) and any(
        isinstance(item, dict) and item.get("code") == code for item in messages
    )


# --- the answer against its operation -----------------------------------------------------------


def _failures(check: Callable[[], object]) -> ConformanceFailure | None:
    try:
        check()
    except ConformanceFailure as failure:
        return failure
    return None


def _detail(failure: ConformanceFailure) -> str:
    lines = failure.received.split("\n")[1:]  # the first line repeats the answer
    return "; ".join(line.strip() for line in lines[:4]) or failure.title


def _documented(
    exchange: Exchange, operation: Operation, contract: Contract
) -> Iterator[TrafficFinding]:
    """The status is documented (or one any request can meet), and the body fits its schema."""
    status = exchange.status
    if status not in operation.responses:
        if status in transport_statuses(operation):
            if status >= 400:
                yield from _error_body(exchange, operation, contract)
            return
        quote = QUOTES.get(f"statuses-{operation.id}", "")
        grade_ = grade_operation(operation, "status", quote=quote)
        yield _finding(
            grade_,
            "BANK-status",
            f"{operation.id} answered HTTP {status}, which its operation does not document "
            f"(documented: {', '.join(str(s) for s in sorted(operation.responses))})",
            operation.spec,
            place="status",
        )
        return
    failure = _failures(lambda: check_response_schema(exchange, operation, contract))
    if failure is not None:
        grade_ = _body_grade(operation, status)
        yield _finding(
            grade_,
            "BANK-error-body" if status >= 400 else "BANK-body-schema",
            f"the HTTP {status} body breaks its schema: {_detail(failure)}",
            failure.spec,
            place="body",
        )
    elif status >= 400:
        failure = _failures(lambda: check_error_status(exchange))
        if failure is not None:
            yield _finding(
                _error_grade(operation),
                "BANK-error-status",
                failure.title,
                "spec 7",
                place="body /status",
            )


def _body_grade(operation: Operation, status: int) -> Grade:
    """A success body: must where the spec defines the operation; an error body: must where the
    spec shows one (payments and baskets, spec 7's code list), else the contract's reading."""
    if status >= 400:
        return _error_grade(operation)
    if is_spec_operation(operation):
        return grade(stated=True)
    return grade_operation(operation, "response")


def _error_grade(operation: Operation | None) -> Grade:
    if operation is not None and operation.family in PAYMENT_FAMILIES:
        return grade(stated=True, quote=QUOTES["error-body"])
    return grade(
        stated=False,
        quote=QUOTES["error-body"],
        reading="spec 7: 'Error responses of the remaining operations: not shown'; the "
        "contract reads the spec 7 error body for them too",
    )


def _error_body(
    exchange: Exchange, operation: Operation | None, contract: Contract
) -> Iterator[TrafficFinding]:
    payments = operation is not None and operation.family in PAYMENT_FAMILIES
    failure = _failures(lambda: check_error_body(exchange, contract, payments=payments))
    if failure is not None:
        yield _finding(
            _error_grade(operation),
            "BANK-error-body",
            f"the HTTP {exchange.status} answer is not the spec 7 error body: "
            f"{_detail(failure) if failure.title.startswith('the error body') else failure.title}",
            "spec 7",
            place="body",
        )


def _content_type(exchange: Exchange) -> Iterator[TrafficFinding]:
    if not exchange.response_body or json_document(exchange) is None:
        return
    failure = _failures(lambda: check_json_content_type(exchange))
    if failure is not None:
        yield _finding(
            grade(stated=True, quote=QUOTES["content-type"]),
            "BANK-content-type",
            failure.title,
            "spec 4.2",
            place="Content-Type",
        )


def _started(exchange: Exchange, operation: Operation) -> Iterator[TrafficFinding]:
    """Spec 3: starting the basket authorisation returns status STARTED (E2; PA "works like"
    it, spec 4.3 E2: should)."""
    if operation.id not in ("E2", "PA") or exchange.status != 201:
        return
    document: Any = json_document(exchange)
    status = document.get("scaStatus") if isinstance(document, dict) else None
    if status == "STARTED" or status is None:
        return
    grade_ = (
        grade(stated=True, quote=QUOTES["sca-started"])
        if operation.id == "E2"
        else grade(
            stated=False,
            quote=QUOTES["sca-started"],
            reading="spec 4.3 E2: the basket authorisation 'works like the authorisation flow "
            "of a single payment'; the suite reads that PA answers the same",
        )
    )
    yield _finding(
        grade_,
        "BANK-sca-started",
        f"the started authorisation reads scaStatus {status}, not STARTED",
        "spec 3",
        place="body /scaStatus",
    )
