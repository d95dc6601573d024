"""The bank's side of one exchange: the answer judged against its operation and against what the
request deserved.

- a request that broke a rule is refused: a 4xx with the spec 7 body (must where the rule is
  stated), with the status and code the rule names (each must only where the spec states it);
- never a 5xx (spec 7 keeps 500 for system errors; the suite's grading: always must), except a
  throttled answer with Retry-After;
- the status is one the operation documents, or one any request can meet (``transport_statuses``);
- the body is JSON with a JSON Content-Type (spec 4.2), valid against the documented schema of
  its status; an error body the spec 7 body whose ``status`` is the HTTP status (must where
  spec 7 shows the error body, ``contract.facts.ERRORS_SHOWN``; our reading elsewhere, and for the
  ``tppMessages`` codes of a basket's answer);
- starting an authorisation answers scaStatus STARTED (spec 3).

The checks of ``conformance.checks`` judge, as in a suite run; their failures become findings
here, graded by what each failure states (``grading.grade_failure``: its quotes, or the reading
of a ``ReadingFailure``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from conformance.bankside.sca.links import require_sca_link
from conformance.checks import (
    ERROR_STATUS_CHECK,
    ConformanceFailure,
    check_basket_codes,
    check_error_body,
    check_json_content_type,
    check_response_schema,
    error_codes,
    json_document,
)
from conformance.contract.catalogue import creates_payment, sca_link_at_creation
from conformance.contract.facts import ERRORS_SHOWN, PAYMENT_STYLE_FAMILIES
from conformance.contract.openapi import transport_statuses
from conformance.contract.requirements import (
    CHOSEN_CODE_READING,
    CHOSEN_STATUS_READING,
    CODE,
    REFUSED,
    STATUS,
    Grade,
    grade,
    grade_flow,
    grade_operation,
)
from conformance.report.verdicts import Finding
from conformance.traffic.grading import grade_failure, graded_finding
from conformance.traffic.model import BANK, GradedViolation

if TYPE_CHECKING:
    from conformance.contract import Contract, Operation
    from conformance.exchange import Exchange
    from conformance.profile import ScaSettings

__all__ = ["THROTTLED", "judge_answer", "known_status"]

#: A gateway's rate limit: answered with Retry-After, retried by a client, never a finding.
THROTTLED = frozenset({429, 503})


def _finding(grade_: Grade, rule: str, title: str, spec: str, place: str = "") -> Finding:
    return graded_finding(BANK, grade_, rule, title, spec, place)


def throttled(exchange: Exchange) -> bool:
    return exchange.status in THROTTLED and bool(exchange.response_header("Retry-After"))


def judge_answer(
    exchange: Exchange,
    operation: Operation | None,
    contract: Contract,
    violations: Sequence[GradedViolation],
    sca_at_creation: ScaSettings | None = None,
) -> list[Finding]:
    """The bank's findings on one answer (none for a throttled one); ``sca_at_creation``: the
    profile's SCA settings where it starts every payment's SCA at its creation."""
    if throttled(exchange):
        return []
    findings = list(_refusal(exchange, violations))
    if not known_status(exchange.status):
        return [*findings, _unknown_status(exchange, operation, contract)]
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
    findings += _started(exchange, operation, contract)
    findings += _sca_link_at_creation(exchange, operation, contract, sca_at_creation)
    return findings


# --- what the request deserved ------------------------------------------------------------------


def _refusal(exchange: Exchange, violations: Sequence[GradedViolation]) -> Iterator[Finding]:
    """A request that broke a rule is refused as the rule says, each rule's answer due judged by
    :meth:`~conformance.contract.requirements.AnswerDue.misses` (the first broken rule of the
    strictest level is named; the answer may refuse it for any of the broken rules)."""
    if not violations:
        return
    ordered = sorted(violations, key=lambda v: v.refused_at != "must")
    status = exchange.status
    codes = error_codes(json_document(exchange))
    judged = [(v, {m.part: m for m in v.due.misses(status, codes)}) for v in ordered]
    first, first_misses = judged[0]
    what = f"{first.finding.rule} ({first.finding.title})"
    if REFUSED in first_misses:
        server_error = status >= 500 and known_status(status)
        level = "must" if server_error else first.refused_at
        accepted = _not_refused(status)
        yield _finding(
            Grade(level, first.finding.quotes, first.finding.reading),
            "BANK-refusal",
            f"{accepted} (HTTP {status}) a request that breaks {what}; a 4xx with the spec 7 "
            "error body is due",
            first.finding.spec,
            place="status",
        )
        return
    fitting = [(v, misses) for v, misses in judged if STATUS not in misses]
    if not fitting:
        # a status is stated only by a must: a should's own due is the suite's choice
        stated = [v for v, misses in judged if misses[STATUS].stated and _binds(v)]
        grade_ = (
            Grade("must", stated[0].finding.quotes)
            if stated
            else grade(stated=False, reading=CHOSEN_STATUS_READING)
        )
        named = stated[0] if stated else first
        yield _finding(
            grade_,
            "BANK-refusal-status",
            f"refused a request that breaks {named.finding.rule} with HTTP {status}, not "
            + " or ".join(str(s) for s in named.due.statuses),
            named.finding.spec,
            place="status",
        )
        return
    coded = [(v, misses) for v, misses in fitting if v.due.code]
    if not coded or any(CODE not in misses for _, misses in coded):
        return
    named, code = next(
        ((v, misses[CODE]) for v, misses in coded if misses[CODE].stated and _binds(v)),
        (coded[0][0], coded[0][1][CODE]),
    )
    grade_ = (
        Grade("must", named.finding.quotes)
        if code.stated and _binds(named)
        else grade(stated=False, reading=CHOSEN_CODE_READING)
    )
    yield _finding(
        grade_,
        "BANK-refusal-code",
        f"refused a request that breaks {named.finding.rule} without the code {named.due.code}",
        named.finding.spec,
        place="code",
    )


def _binds(violation: GradedViolation) -> bool:
    """Whether what ``violation``'s answer due states binds at must: only a must's does (a
    should rests on a reading, and so does the answer it makes due)."""
    return violation.finding.level == "must"


def known_status(status: int) -> bool:
    """Whether ``status`` is an HTTP status at all (RFC 9110: three digits, 100 to 599)."""
    return 100 <= status <= 599


def _not_refused(status: int) -> str:
    """How an answer that is no refusal is named: only a 2xx is an acceptance."""
    if not known_status(status):
        return "answered with an unknown status"
    if status >= 500:
        return "answered with a server error"
    return "accepted" if 200 <= status < 300 else "did not refuse"


def _unknown_status(exchange: Exchange, operation: Operation | None, contract: Contract) -> Finding:
    """An answer whose status is no HTTP status: reported as unknown, never as accepted."""
    documented = ""
    grade_ = grade(stated=False, reading="HTTP statuses are three digits, 100 to 599 (RFC 9110)")
    if operation is not None:
        row = f"7-{operation.id}"
        grade_ = grade_operation(
            operation, "status", quotes=(row,) if row in contract.quotes else ()
        )
        documented = f" (documented: {', '.join(str(s) for s in sorted(operation.responses))})"
    return _finding(
        grade_,
        "BANK-unknown-status",
        f"answered HTTP {exchange.status}, an unknown status: neither an acceptance nor a "
        f"refusal{documented}",
        operation.spec if operation is not None else "spec 7",
        place="status",
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


def _documented(exchange: Exchange, operation: Operation, contract: Contract) -> Iterator[Finding]:
    """The status is documented (or one any request can meet), and the body fits its schema;
    an error answer's body is judged by the checks of the suite's refusals (:func:`_error_body`)."""
    status = exchange.status
    response = operation.responses.get(status)
    if response is None:
        if status in transport_statuses(operation):
            if status >= 400:
                yield from _error_body(exchange, operation, contract)
            return
        row = f"7-{operation.id}"  # spec 7's row of the operation's statuses, where it has one
        grade_ = grade_operation(
            operation, "status", quotes=(row,) if row in contract.quotes else ()
        )
        yield _finding(
            grade_,
            "BANK-status",
            f"{operation.id} answered HTTP {status}, which its operation does not document "
            f"(documented: {', '.join(str(s) for s in sorted(operation.responses))})",
            operation.spec,
            place="status",
        )
        return
    if status >= 400 and not response.sca_redirect:
        yield from _error_body(exchange, operation, contract)
        return
    failure = _failures(lambda: check_response_schema(exchange, operation, contract))
    if failure is not None:
        yield _finding(
            grade_failure(failure),
            "BANK-body-schema",
            f"the HTTP {status} body breaks its schema: {_detail(failure)}",
            failure.spec,
            place="body",
        )


def _error_body(
    exchange: Exchange, operation: Operation | None, contract: Contract
) -> Iterator[Finding]:
    """The error body as a suite run judges a refusal's (``runners.judging``): JSON (must), the
    spec 7 body where spec 7 shows it (must; ``status`` and ``code`` present is our reading),
    our reading elsewhere; a basket's ``tppMessages`` codes from spec 7's list, our reading."""
    payments = operation is not None and operation.family == "payments"
    shown = operation is not None and operation.id in ERRORS_SHOWN
    failure = _failures(
        lambda: check_error_body(exchange, contract, payments=payments, shown=shown)
    )
    if failure is not None:
        status_only = all(p.check == ERROR_STATUS_CHECK for p in failure.problems)
        yield _finding(
            grade_failure(failure),
            "BANK-error-status" if status_only else "BANK-error-body",
            failure.title
            if status_only
            else f"the HTTP {exchange.status} answer is not the spec 7 error body: "
            f"{_detail(failure) if failure.title.startswith('the error body') else failure.title}",
            "spec 7",
            place="body /status" if status_only else "body",
        )
        return
    if operation is not None and operation.family in PAYMENT_STYLE_FAMILIES and not payments:
        failure = _failures(lambda: check_basket_codes(exchange, contract))
        if failure is not None:
            yield _finding(
                grade_failure(failure),
                "BANK-error-body",
                f"the HTTP {exchange.status} answer's tppMessages: {_detail(failure)}",
                "spec 7",
                place="body /tppMessages",
            )


def _content_type(exchange: Exchange) -> Iterator[Finding]:
    if not exchange.response_body or json_document(exchange) is None:
        return
    failure = _failures(lambda: check_json_content_type(exchange))
    if failure is not None:
        yield _finding(
            grade_failure(failure),
            "BANK-content-type",
            failure.title,
            "spec 4.2",
            place="Content-Type",
        )


def _sca_link_at_creation(
    exchange: Exchange, operation: Operation, contract: Contract, sca: ScaSettings | None
) -> Iterator[Finding]:
    """Where the profile starts every payment's SCA at its creation, a creation answered 2xx
    carries the SCA link, graded by the contract's requirement as the creation's positive
    scenario grades it (``catalogue.sca_link_at_creation``: spec 5 item 6's scaRedirect with a
    redirect, must; the approach's link otherwise, should)."""
    if sca is None or not creates_payment(operation) or not 200 <= exchange.status < 300:
        return
    failure = _failures(lambda: require_sca_link(exchange, sca))
    if failure is not None:
        yield _finding(
            sca_link_at_creation(contract, operation.id, sca.approach),
            "BANK-sca-link-at-creation",
            failure.title,
            "spec 5 item 6",
            place="_links",
        )


def _started(exchange: Exchange, operation: Operation, contract: Contract) -> Iterator[Finding]:
    """Spec 3: starting the basket authorisation returns status STARTED (E2; PA "works like"
    it, spec 4.3 E2), graded by the requirement of the flows that judge it (``flows.json``)."""
    if operation.id not in ("E2", "PA") or exchange.status != 201:
        return
    document: Any = json_document(exchange)
    status = document.get("scaStatus") if isinstance(document, dict) else None
    if status == "STARTED" or status is None:
        return
    flow = (
        "basket-authorisation-started" if operation.id == "E2" else "payment-authorisation-started"
    )
    yield _finding(
        grade_flow(contract, flow),
        "BANK-sca-started",
        f"the started authorisation reads scaStatus {status}, not STARTED",
        "spec 3",
        place="body /scaStatus",
    )
