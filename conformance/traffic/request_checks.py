"""The TPP's side of one exchange: the request judged against the contract, each broken rule a
:class:`~conformance.traffic.model.GradedViolation` naming the exact place (a header, a JSON pointer
into the body, a query parameter) and the refusal the bank then owes.

In order: the route (method, path and product, spec 4.1), the required headers (spec 4.2), the
Signature, Digest and certificate (spec 5), the certificate's trust and PSD2 role, the signed
Date's freshness, the header formats and PSU rules (spec 4.2, spec 5 item 5, spec 7 rule 3): the
request rules of ``conformance.contract.request_rules``, which the reference server enforces
too, each graded by the contract's requirement it breaks (``Contract.requirement``, which
grades the suite's scenarios too); then the query parameters,
the body against its schema and the cross-field rules of ``rules.json``
(``conformance.contract.crossfield``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from jsonschema import ValidationError

from conformance.contract import bounded_json
from conformance.contract.annotations import quotes_at, reading_at
from conformance.contract.catalogue import (
    CERTIFICATE_OTHER_CA,
    CORPORATE_ID,
    EXPIRED_CERTIFICATE,
    HEADER_REQUIRED,
    NO_DIGEST,
    REQUEST_SCHEMA,
    UNKNOWN_PATH,
    UNKNOWN_PRODUCT,
    WRONG_METHOD,
    body_case_id,
)
from conformance.contract.catalogue import broken as broken_requirement
from conformance.contract.crossfield import CheckContext, checks_for
from conformance.contract.facts import BODY_LIMIT_BYTES, STATUS_SHOWN
from conformance.contract.request_rules import (
    CORPORATE_RULE,
    Headers,
    RequestView,
    header_misfits,
    missing_headers,
    missing_role,
    psu_violations,
    signature_verification,
    signature_violation,
    stale_date,
    untrusted_certificate,
)
from conformance.contract.requirements import (
    BODY_SCHEMA_ERROR,
    MUST,
    AnswerDue,
    Grade,
    Requirement,
    grade,
    on_unnamed,
)
from conformance.report.verdicts import Finding
from conformance.signing import Verification, VerificationFailure, read_psd2_roles
from conformance.traffic.grading import graded_finding
from conformance.traffic.model import TPP, GradedViolation, chosen_refusal

if TYPE_CHECKING:
    from conformance.contract import Contract, Operation, Rule
    from conformance.contract.violation import Violation
    from conformance.exchange import Exchange
    from conformance.traffic.settings import TrafficSettings

__all__ = ["Routed", "judge_request", "request_view", "route"]

#: The interface's path prefix (spec 9: "The interface is under the path prefix /v1."): a request
#: outside it is not the interface's.
PREFIX = "/v1/"
#: How many schema errors of one body become findings (the rest are counted in the last).
_SHOWN_ERRORS = 8


@dataclass(frozen=True)
class Routed:
    """A request's operation and path values, or None with why it has none."""

    operation: Operation | None
    values: Mapping[str, str]
    #: A TPP violation when the request names no operation of the contract under ``/v1``.
    violation: GradedViolation | None = None
    #: Why the exchange is not judged at all (outside the interface), else "".
    outside: str = ""


def _finding(grade_: Grade, rule: str, title: str, spec: str, place: str = "") -> Finding:
    return graded_finding(TPP, grade_, rule, title, spec, place)


def split_target(exchange: Exchange) -> tuple[str, str]:
    """The request's path (percent-encoded as sent) and its query string."""
    parts = urlsplit(exchange.url)
    return parts.path or "/", parts.query


def request_view(exchange: Exchange) -> RequestView:
    """The request of ``exchange`` as the request rules read it: the target as sent (path and
    query), the headers and the body."""
    path, query = split_target(exchange)
    return RequestView(
        exchange.method,
        path + (f"?{query}" if query else ""),
        Headers(exchange.request_headers),
        exchange.request_body,
    )


def route(contract: Contract, settings: TrafficSettings, method: str, path: str) -> Routed:
    """The operation of a request: the profile's own paths first, then the contract's (with the
    bank's product ids read back as the contract's)."""
    for bank_path in settings.paths:
        values = bank_path.match(method, path)
        if values is not None:
            chosen = contract.operations[bank_path.operation]
            return Routed(chosen, {k: unquote(v) for k, v in values.items()})
    contract_path = _contract_products(settings, path)
    matched = contract.match(method, contract_path)
    if matched is not None:
        return Routed(matched[0], matched[1])
    if not path.startswith(PREFIX):
        return Routed(
            None, {}, outside="outside the interface: it is under the path prefix /v1 (spec 9)"
        )
    allowed = contract.allowed_methods(contract_path)
    templates = contract.templates_for(contract_path)
    operation: Operation | None
    if allowed and method.upper() not in allowed:
        what = f"{method} is not a method of {path} (the contract has {', '.join(allowed)} there)"
        rule, spec = "TPP-method", "spec 4.1"
        operation = templates[0] if templates else None
    elif templates:
        what = f"{path} names a payment product none of the contract's operations takes"
        rule, spec, operation = "TPP-product", "spec 4.1", templates[0]
    else:
        what = f"no operation of the contract has the path {path}"
        rule, spec, operation = "TPP-path", "spec 4.1", None
    # the requirement of the suite's scenarios that send the same request (``catalogue``)
    misrouted = {"TPP-method": WRONG_METHOD, "TPP-path": UNKNOWN_PATH}
    grade_ = (
        contract.requirement(UNKNOWN_PRODUCT, operation.id).grade
        if operation is not None and rule == "TPP-product"
        else contract.requirement(misrouted.get(rule, UNKNOWN_PATH)).grade
    )
    violation = GradedViolation(
        _finding(grade_, rule, what, spec, place="path"),
        chosen_refusal((400, 403, 404, 405)),
    )
    return Routed(None, {}, violation=violation)


def _contract_products(settings: TrafficSettings, path: str) -> str:
    if not settings.product_ids:
        return path
    contract_of = {bank: contract for contract, bank in settings.product_ids.items()}
    return "/".join(contract_of.get(segment, segment) for segment in path.split("/"))


# --- the request --------------------------------------------------------------------------------


@dataclass
class RequestVerdict:
    """What the request checks found, and what they learnt on the way."""

    violations: list[GradedViolation]
    verification: Verification | None = None
    #: The request body as JSON, when it is JSON.
    body: Any = None


def judge_request(
    exchange: Exchange,
    operation: Operation,
    contract: Contract,
    settings: TrafficSettings,
    *,
    at: datetime,
    bank_now: datetime,
) -> RequestVerdict:
    """Every check of the request side; ``at`` is when it was sent (certificate validity, Date
    freshness), ``bank_now`` the bank's moment in its own zone (the sandbox date rules). The
    header, signature, Date and PSU rules are ``conformance.contract.request_rules``'s, the
    reference server's own; each violation is graded by the contract's requirement it breaks
    (``Contract.requirement``), which grades the suite's scenarios too."""
    view = request_view(exchange)
    verdict = RequestVerdict([])
    found = verdict.violations
    found += _required_headers(view, operation, settings, contract)
    verification, signature_violations = _signature(view, operation, settings, contract, at)
    verdict.verification = verification
    found += signature_violations
    found += _date_fresh(view, operation, settings, contract, at)
    found += _header_formats(view, operation, contract)
    found += _psu_rules(view, operation, contract)
    found += _query(exchange, operation, contract, settings)
    body_violations, verdict.body = _body(exchange, operation, contract, bank_now, settings)
    found += body_violations
    return verdict


def _graded(
    violation: Violation, grade_: Grade, due: AnswerDue, refusal_level: str = ""
) -> GradedViolation:
    """A request rule's violation as a TPP finding with the refusal then due (at
    ``refusal_level``, the finding's own level unless given)."""
    finding = _finding(grade_, violation.rule, violation.text, violation.spec, place=violation.path)
    return GradedViolation(finding, due, refusal_level)


def _required_headers(
    view: RequestView, operation: Operation, settings: TrafficSettings, contract: Contract
) -> Iterator[GradedViolation]:
    """Spec 4.2: each required header present and not empty (X-PSU-IDENTITY stands in for
    PSU-ID where the operation takes it, spec 5 item 5)."""
    if operation.id in settings.required_headers:
        grade_ = grade(
            stated=False, reading=f"the profile's required header set for {operation.id}"
        )
    else:
        grade_ = contract.requirement(HEADER_REQUIRED, operation.id).grade
    for violation in missing_headers(view, operation, settings.required_for(operation)):
        yield _graded(
            violation, grade_, broken_requirement(contract, violation, operation).expected
        )


def _stated(violation: Violation, operation: Operation | None = None) -> Grade:
    """A request rule's own grade on ``operation``: should with the reading it rests on, else
    must with its quotes; on an operation interface.md does not name, should
    (``requirements.on_unnamed``, as the scenarios of the same break)."""
    if violation.reading:
        return grade(stated=False, reading=violation.reading)
    stated = grade(stated=True, quotes=violation.quotes)
    return stated if operation is None else on_unnamed(stated, operation)


def _signature(
    view: RequestView,
    operation: Operation,
    settings: TrafficSettings,
    contract: Contract,
    at: datetime,
) -> tuple[Verification, list[GradedViolation]]:
    """Spec 5 items 1–4 (``verify_request``: the first failure), then the certificate's trust
    (``--trust``) and its PSD2 role (should: the spec states no role). A refusal is due at
    must either way."""
    verification = signature_verification(view, now=at)
    violations: list[GradedViolation] = []
    broken = signature_violation(verification)
    if broken is not None:
        grade_ = _signature_grade(broken, verification, operation, contract)
        refusal = broken_requirement(contract, broken, operation).expected
        violations.append(_graded(broken, grade_, refusal, MUST))
        return verification, violations
    certificate = verification.certificate
    if certificate is None:
        return verification, violations
    if settings.trust:
        untrusted = untrusted_certificate(certificate, settings.trust, at)
        if untrusted is not None:
            refusal = broken_requirement(contract, untrusted, operation).expected
            grade_ = contract.requirement(CERTIFICATE_OTHER_CA).grade
            violations.append(_graded(untrusted, grade_, refusal, MUST))
    role = missing_role(operation, read_psd2_roles(certificate))
    if role is not None:
        grade_ = _stated(role, operation)
        refusal = broken_requirement(contract, role, operation).expected
        violations.append(_graded(role, grade_, refusal))
    return verification, violations


def _signature_grade(
    broken: Violation, verification: Verification, operation: Operation, contract: Contract
) -> Grade:
    """A failed verification's grade: the rule's own (spec 5 states it), but a missing Digest
    where spec 4.2 does not require one, and a certificate outside its validity period, are
    graded by their requirements (``AUTH-no-digest``, ``AUTH-expired-certificate``)."""
    missing = verification.failure is VerificationFailure.MISSING_HEADER
    if missing and broken.path.lower() == "digest":
        key = (NO_DIGEST, operation.id, "")
        if key in contract.requirements:  # an operation that takes a body
            return contract.requirements[key].grade
    if (
        verification.failure is VerificationFailure.BAD_CERTIFICATE
        and verification.certificate is not None  # it parsed: its validity failed
    ):
        return contract.requirement(EXPIRED_CERTIFICATE).grade
    return _stated(broken, operation)


def _date_fresh(
    view: RequestView,
    operation: Operation,
    settings: TrafficSettings,
    contract: Contract,
    at: datetime,
) -> Iterator[GradedViolation]:
    """A signed Date within the bank's clock skew of when the request was sent (security,
    should: spec 5 signs Date but states no freshness window)."""
    violation = stale_date(
        view, now=at.timestamp(), skew=settings.date_skew, clock="when the request was sent"
    )
    if violation is not None:
        grade_ = _stated(violation)
        yield _graded(
            violation, grade_, broken_requirement(contract, violation, operation).expected
        )


def _header_formats(
    view: RequestView, operation: Operation, contract: Contract
) -> Iterator[GradedViolation]:
    """Each header the operation lists, when present, fits its schema (``types/headers.json``),
    RFC 2047 encoded words decoded."""
    for violation in header_misfits(view, operation, contract):
        requirement = broken_requirement(contract, violation, operation)
        grade_ = requirement.at(reading=violation.reading, quotes=violation.quotes)
        yield _graded(violation, grade_, requirement.expected)


def _psu_rules(
    view: RequestView, operation: Operation, contract: Contract
) -> Iterator[GradedViolation]:
    """Spec 5 item 5: X-PSU-IDENTITY a national identity or D-number; spec 7 rule 3: a corporate
    PSU (PSU-Context CORPORATE) names its PSU-Corporate-ID (graded by its row of
    ``rules.json``)."""
    for violation in psu_violations(view, operation):
        if violation.rule == CORPORATE_RULE:
            yield _rule_violation(
                contract,
                contract.rule(violation.rule),
                operation,
                "a corporate PSU (PSU-Context: CORPORATE) without PSU-Corporate-ID",
                violation.path,
            )
        else:
            grade_ = _stated(violation, operation)
            yield _graded(
                violation, grade_, broken_requirement(contract, violation, operation).expected
            )


def _rule_violation(
    contract: Contract, rule: Rule, operation: Operation, what: str, place: str
) -> GradedViolation:
    """A broken row of ``rules.json`` on ``operation``: graded by its requirement there (spec 7
    rule 3's on an operation the row does not list), the refusal as the row says."""
    requirement = (
        contract.requirement(rule.id, operation.id)
        if operation.id in rule.operations
        else contract.requirement(CORPORATE_ID, operation.id)
    )
    grade_ = requirement.grade
    refusal = AnswerDue(
        rule.expected_status,
        rule.expected_code,
        status_stated=grade_.level == MUST and rule.chosen not in ("status",),
        code_stated=grade_.level == MUST and rule.chosen == "",
        body=BODY_SCHEMA_ERROR,
    )
    return GradedViolation(_finding(grade_, rule.id, what, rule.spec, place=place), refusal)


def _query(
    exchange: Exchange, operation: Operation, contract: Contract, settings: TrafficSettings
) -> Iterator[GradedViolation]:
    """Each query parameter of the operation that is required is there, and each that is given
    fits its schema (spec 4.3)."""
    _, query = split_target(exchange)
    given = parse_qs(query, keep_blank_values=True)
    for parameter in operation.query_parameters:
        name = settings.bank_query_name(operation.id, parameter.name)
        values = given.get(name)
        stated = contract.requirement(REQUEST_SCHEMA, operation.id)
        if not values:
            if parameter.required:
                missing = stated.at(quotes=parameter.schema.get("x-quotes", ()))
                yield GradedViolation(
                    _finding(
                        missing,
                        "TPP-query-required",
                        f"the required query parameter {name} is missing",
                        parameter.spec,
                        place=f"query {name}",
                    ),
                    chosen_refusal((400,)),
                )
            continue
        value = _converted(values[0], parameter.schema)
        if contract.checker(parameter.schema)(value):
            continue
        validator = contract.validator(parameter.schema)
        error = next(iter(validator.iter_errors(value)), None)
        if error is None:
            continue
        grade_ = _schema_grade(stated, validator.schema, error)
        yield GradedViolation(
            _finding(
                grade_,
                "TPP-query-format",
                f"query parameter {name}={values[0]!r}: {error.message}",
                parameter.spec,
                place=f"query {name}",
            ),
            chosen_refusal((400,)),
        )


def _converted(raw: str, schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "boolean":
        return {"true": True, "false": False}.get(raw, raw)
    if kind == "integer":
        try:
            return int(raw)
        except ValueError:
            return raw
    return raw


def _body(
    exchange: Exchange,
    operation: Operation,
    contract: Contract,
    bank_now: datetime,
    settings: TrafficSettings,
) -> tuple[list[GradedViolation], Any]:
    """The body is JSON (spec 1), valid against its schema (spec 2.7, 2.9) and the cross-field
    rules of ``rules.json``; every error named by its JSON pointer."""
    schema = operation.request_schema
    if schema is None or not exchange.request_body:
        if schema is not None and operation.method in ("POST", "PUT", "PATCH"):
            grade_, statuses = _body_grade(contract, operation, "empty-body")
            return [
                GradedViolation(
                    _finding(
                        grade_,
                        "TPP-body-missing",
                        f"{operation.id} takes a body and the request has none",
                        operation.request_spec or operation.spec,
                        place="body",
                    ),
                    chosen_refusal(statuses),
                )
            ], None
        return [], None
    media = (exchange.request_header("Content-Type") or "").partition(";")[0].strip().lower()
    violations: list[GradedViolation] = []
    if media and media != "application/json" and not media.endswith("+json"):
        grade_, statuses = _body_grade(contract, operation, "wrong-content-type")
        violations.append(
            GradedViolation(
                _finding(
                    grade_,
                    "TPP-body-content-type",
                    f"the body is sent as {media}, not application/json",
                    "spec 1",
                    place="Content-Type",
                ),
                chosen_refusal(statuses),
            )
        )
    if len(exchange.request_body) > BODY_LIMIT_BYTES:
        grade_, statuses = _body_grade(contract, operation, "oversized-body")
        size = len(exchange.request_body)
        violations.append(
            GradedViolation(
                _finding(
                    grade_,
                    "TPP-body-oversized",
                    f"the body is {size} bytes, more than 1 MiB",
                    "spec 7",
                    place="body",
                ),
                chosen_refusal(statuses),
            )
        )
        return violations, None
    try:
        document = bounded_json.loads(exchange.request_body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        grade_, statuses = _body_grade(contract, operation, "malformed-json")
        violations.append(
            GradedViolation(
                _finding(
                    grade_,
                    "TPP-body-json",
                    f"the body is not JSON ({error})",
                    "spec 1",
                    place="body",
                ),
                chosen_refusal(statuses),
            )
        )
        return violations, None
    violations += _schema_violations(document, operation, contract)
    violations += _crossfield_violations(document, operation, contract, bank_now, settings)
    return violations, document


def _body_grade(
    contract: Contract, operation: Operation, name: str
) -> tuple[Grade, tuple[int, ...]]:
    """The grade and statuses of a broken body of ``facts.BODY_CASES``: its requirement on the
    operation (``ROB-<case>``)."""
    requirement = contract.requirement(body_case_id(name), operation.id)
    return requirement.grade, requirement.expected.statuses


def _body_refusal(operation: Operation, grade_: Grade) -> AnswerDue:
    """A body error, refused at the finding's level: 400 stated where spec 7 shows it (E17's
    row) and the finding is must, chosen elsewhere; FORMAT_ERROR for a payment, always chosen
    (spec 7 gives it "for example")."""
    stated = grade_.level == "must" and operation.id in STATUS_SHOWN
    code = "FORMAT_ERROR" if operation.family == "payments" else None
    return AnswerDue((400,), code, status_stated=stated, code_stated=False, body=BODY_SCHEMA_ERROR)


def _schema_violations(
    document: Any, operation: Operation, contract: Contract
) -> Iterator[GradedViolation]:
    schema = operation.request_schema
    assert schema is not None
    if contract.checker(schema)(document):
        return
    validator = contract.validator(schema)
    errors = sorted(
        validator.iter_errors(document),
        key=lambda error: (list(error.absolute_path), error.message),
    )
    base = contract.requirement(REQUEST_SCHEMA, operation.id)
    for index, error in enumerate(errors[:_SHOWN_ERRORS]):
        grade_ = _schema_grade(base, validator.schema, error)
        pointer = "/" + "/".join(str(part) for part in error.absolute_path)
        more = len(errors) - _SHOWN_ERRORS
        tail = f" (and {more} more)" if index == _SHOWN_ERRORS - 1 and more > 0 else ""
        yield GradedViolation(
            _finding(
                grade_,
                f"TPP-body-{error.validator}",
                f"body {pointer}: {error.message}{tail}",
                operation.request_spec or operation.spec,
                place=f"body {pointer}",
            ),
            _body_refusal(operation, grade_),
        )


def _schema_grade(base: Requirement, schema: Any, error: ValidationError) -> Grade:
    """A schema error of a request: its requirement (``SCH-request``) at the error's place, with
    the reading or quotes the schema records there."""
    return base.at(reading=reading_at(schema, error), quotes=quotes_at(schema, error))


def _crossfield_violations(
    document: Any,
    operation: Operation,
    contract: Contract,
    bank_now: datetime,
    settings: TrafficSettings,
) -> Iterator[GradedViolation]:
    checks = checks_for(operation.id, contract)
    if not checks:
        return
    context = CheckContext.at(bank_now, contract.minor_units, settings.kid_reference_types)
    rules = {
        rule.check: rule
        for rule in reversed(contract.rules)
        if operation.id in rule.operations and rule.check
    }
    for check in checks:
        try:
            found = check(document, context)
        except (TypeError, AttributeError, KeyError, ValueError):
            continue  # a body the schema refused in a way the check cannot read
        rule = rules.get(check.__name__)
        if rule is None:
            continue
        for violation in found:
            specific = _specific_rule(contract, rule, violation, operation, document)
            yield _rule_violation(
                contract, specific, operation, violation.text, f"body /{violation.path}"
            )


#: The rows of spec 7 rule 2 for a missing KID, which the check reports with one code: an empty
#: or absent reference is missing in every reading (stated, must); a whitespace-only one is
#: missing only by our reading (should): the two rows' requirements.
KID_MISSING_STATED = "ERR-2-kid-missing-empty"
KID_MISSING_READING = "ERR-2-kid-missing"


def _specific_rule(
    contract: Contract, rule: Rule, violation: Violation, operation: Operation, body: Any
) -> Rule:
    """Of the rows sharing a check, the one the violation names (the sandbox date rows), else the
    one whose expected code is the violation's (the KID rows of spec 7 rule 2: KID_MISSING,
    KID_INVALID), else the first; of the two KID_MISSING rows,
    the one the reference's value is a case of."""
    named = [other for other in contract.rules if other.id == violation.rule]
    if named and named[0].check == rule.check and operation.id in named[0].operations:
        return named[0]
    rows = [
        other
        for other in contract.rules
        if other.check == rule.check
        and operation.id in other.operations
        and other.expected_code == violation.code
    ]
    ids = {row.id for row in rows}
    if {KID_MISSING_STATED, KID_MISSING_READING} <= ids:
        value = _at(body, violation.path)
        blank = isinstance(value, str) and value != "" and not value.strip()
        return contract.rule(KID_MISSING_READING if blank else KID_MISSING_STATED)
    return rows[0] if rows else rule


def _at(body: Any, path: str) -> Any:
    """The value at a cross-field violation's path (RFC 6901 escapes, no leading slash)."""
    node = body
    for raw in path.split("/") if path else ():
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node
