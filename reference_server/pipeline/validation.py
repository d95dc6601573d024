"""Parameter and body validation of a contract operation, with the contract's own schemas.

Query strings are text; the contract types them (spec 4.3: ``limit`` int32, ``withAccounts``
boolean), so each value is converted to its schema's type first and then validated: ``limit=abc``
and ``limit=0`` are both 400 FORMAT_ERROR (spec 8: limit at least 1). The body is decoded strictly
(UTF-8, JSON), validated against the operation's request schema, then handed to the cross-field
checks of ``conformance.contract.crossfield`` (spec 2.7, spec 4.3 E5/E7). Every refusal answers
what the requirement it breaks makes due (``pipeline.due``): a query or body constraint
``SCH-request``, a broken body its ``ROB-<case>``, a cross-field violation its ``rules.json`` row;
payment operations list each problem in ``tppMessages``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from jsonschema.exceptions import ValidationError, best_match, relevance

from conformance.contract import bounded_json, load_contract
from conformance.contract.catalogue import REQUEST_SCHEMA, body_case_id
from conformance.contract.crossfield import CheckContext, Violation, checks_for
from reference_server.api import ApiError, Request, TppMessage
from reference_server.faults import payments as payment_faults
from reference_server.pipeline.due import due, refuse

if TYPE_CHECKING:
    from conformance.contract import Contract, Operation, Parameter
    from reference_server.api import ServerState

__all__ = [
    "BANK_ZONE",
    "check_body",
    "check_path",
    "error_path",
    "is_json_media_type",
    "parse_body",
    "parse_query",
    "rule_of_check",
]

#: The bank's time zone: "before now" and "today" in the sandbox date rules are the bank's.
BANK_ZONE = ZoneInfo("Europe/Oslo")

#: At most this many schema errors are listed in ``tppMessages``.
_MAX_MESSAGES = 20

_INTEGER = re.compile(r"^[+-]?[0-9]+$")

#: The ``rules.json`` row of a ``limit`` below its minimum on E3/E4 (spec 8: at least 1).
_LIMIT_MINIMUM = "LIM-limit-at-least-1"
#: The broken bodies of ``facts.BODY_CASES`` this module refuses (``catalogue.body_case_id``).
_MALFORMED_JSON = body_case_id("malformed-json")
_INVALID_UTF8 = body_case_id("invalid-utf8")
_EMPTY_BODY = body_case_id("empty-body")
_WRONG_CONTENT_TYPE = body_case_id("wrong-content-type")


def error_path(error: ValidationError) -> str | None:
    """The JSON-pointer-like location of a schema error (``creditorAccount/bban``, ``0/amount``)."""
    parts = [str(part).replace("~", "~0").replace("/", "~1") for part in error.absolute_path]
    return "/".join(parts) if parts else None


# -- query and path -----------------------------------------------------------------------------


def parse_query(
    app: ServerState, operation: Operation, raw: Mapping[str, tuple[str, ...]]
) -> dict[str, Any]:
    """The operation's query parameters, converted and validated; unknown ones are ignored. A
    bank style (``--profile`` ``[query]``) may give a parameter another name in the URL; the
    values are keyed by the contract's names either way."""
    values: dict[str, Any] = {}
    renamed = app.bank.query_names.get(operation.id, {})
    lenient = operation.id in _LENIENT_QUERIES and app.reads("lenient-list-parameters")
    for parameter in operation.query_parameters:
        given = raw.get(renamed.get(parameter.name, parameter.name))
        if lenient and operation.id == "AT":
            value = _taken_if_sensible(app, operation, parameter, given)
            if value is not None:
                values[parameter.name] = value
            continue
        if not given:
            if parameter.required:
                raise refuse(
                    due(app.contract, REQUEST_SCHEMA, operation),
                    f"query parameter {parameter.name} is required for {operation.id}",
                    code="QUERY_PARAMETER_REQUIRED",
                    status=400,
                    path=parameter.name,
                )
            continue
        if len(given) > 1:
            raise refuse(
                due(app.contract, REQUEST_SCHEMA, operation),
                f"query parameter {parameter.name} is given {len(given)} times",
                code="FORMAT_ERROR",
                status=400,
                path=parameter.name,
            )
        value = _convert(app, operation, parameter, given[0])
        if lenient and parameter.name == "offset" and isinstance(value, int) and value < 0:
            value = 0  # "number of transactions skipped": fewer than none is none
        _validate_parameter(app, operation, parameter, value)
        values[parameter.name] = value
    return values


#: The list operations whose parameters the permissive reading ``lenient-list-parameters``
#: takes leniently: E3/E4 (a negative ``offset``: spec 4.3 shows no minimum) and AT (spec 4.1
#: names it only: its parameters and their bounds are not shown).
_LENIENT_QUERIES = frozenset({"E3", "E4", "AT"})


def _taken_if_sensible(
    app: ServerState, operation: Operation, parameter: Parameter, given: tuple[str, ...] | None
) -> Any:
    """AT's parameter under ``lenient-list-parameters``: its value when it is one the schema
    takes, else None (ignored, as an unknown parameter is; an absent bookingStatus is both)."""
    if not given or len(given) > 1:
        return None
    try:
        value = _convert(app, operation, parameter, given[0])
        _validate_parameter(app, operation, parameter, value)
    except ApiError:
        return None
    return value


def _schema_type(app: ServerState, parameter: Parameter) -> str | None:
    schema = app.contract.resolve(parameter.schema)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((item for item in kind if item != "null"), None)
    return kind if isinstance(kind, str) else None


def _convert(app: ServerState, operation: Operation, parameter: Parameter, text: str) -> Any:
    kind = _schema_type(app, parameter)
    if kind == "boolean":
        if text in ("true", "false"):
            return text == "true"
        raise refuse(
            due(app.contract, REQUEST_SCHEMA, operation),
            f"query parameter {parameter.name} must be true or false, not {text!r}",
            code="FORMAT_ERROR",
            status=400,
            path=parameter.name,
        )
    if kind == "integer":
        if _INTEGER.match(text):
            return int(text)
        raise refuse(
            due(app.contract, REQUEST_SCHEMA, operation),
            f"query parameter {parameter.name} must be an integer, not {text!r}",
            code="FORMAT_ERROR",
            status=400,
            path=parameter.name,
        )
    return text


def _validate_parameter(
    app: ServerState, operation: Operation, parameter: Parameter, value: Any
) -> None:
    if (
        parameter.name == "limit"
        and value == 0
        and operation.id in ("E3", "E4")
        and app.faulty("no-limit-minimum")
    ):
        return
    if app.contract.checker(parameter.schema)(value):
        return  # valid: the compiled check's verdict is the validator's (contract.checker)
    error = best_match(app.contract.validator(parameter.schema).iter_errors(value))
    if error is not None:
        where = "query" if parameter.location == "query" else "path"
        requirement = REQUEST_SCHEMA
        if (
            parameter.name == "limit"
            and error.validator == "minimum"
            and operation.id in app.contract.rule(_LIMIT_MINIMUM).operations
        ):
            requirement = _LIMIT_MINIMUM
        raise refuse(
            due(app.contract, requirement, operation),
            f"{where} parameter {parameter.name}={value!r}: {error.message} ({parameter.spec})",
            code="FORMAT_ERROR",
            status=400,
            path=parameter.name,
        )


def check_path(app: ServerState, operation: Operation, values: Mapping[str, str]) -> None:
    """Path values against their schemas (the router already enforced ``const``/``enum``)."""
    for parameter in operation.path_parameters:
        if parameter.name in values:
            _validate_parameter(app, operation, parameter, values[parameter.name])


# -- body ---------------------------------------------------------------------------------------


def is_json_media_type(content_type: str) -> bool:
    """``application/json`` (with parameters) or any ``+json`` type; charset must be UTF-8."""
    media, _, parameters = content_type.partition(";")
    media = media.strip().lower()
    if not (
        media == "application/json"
        or (media.startswith("application/") and media.endswith("+json"))
    ):
        return False
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            return False
    return True


def parse_body(
    request: Request, app: ServerState | None = None, operation: Operation | None = None
) -> Any:
    """The JSON body: 415 for a non-JSON Content-Type, 400 for bad UTF-8 or malformed JSON, as
    each broken body's requirement on ``operation`` makes due (``ROB-<case>``; None: a route
    outside the contract, the requirement on every operation), 500 under the faults
    ``server-error-on-*`` of ``app``.

    An absent Content-Type is read as JSON (spec 4.2 makes Content-Type optional; every body of
    the interface is JSON). An empty body gives None.
    """
    if not request.body:
        return None
    contract = app.contract if app is not None else load_contract()
    content_type = request.headers.get("Content-Type")
    if content_type is not None and not is_json_media_type(content_type):
        if app is not None and app.faulty("server-error-on-wrong-content-type"):
            raise ApiError(500, "SYSTEM_ERROR")
        raise refuse(
            due(contract, _WRONG_CONTENT_TYPE, operation),
            f"Content-Type {content_type!r} is not JSON; the interface takes application/json",
            code="UNSUPPORTED_MEDIA_TYPE",
            status=415,
            path="Content-Type",
            tpp_code="FORMAT_ERROR",  # spec 7 lists no media-type code for tppMessages
        )
    try:
        text = request.body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _unreadable(
            app,
            contract,
            operation,
            _INVALID_UTF8,
            f"the body is not valid UTF-8 (byte {error.start})",
            "server-error-on-invalid-utf8",
        ) from None
    try:
        if text.startswith("\ufeff"):  # as json.loads refuses it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        return bounded_json.loads(text, decoder=_STRICT_JSON)
    except ValueError as error:
        raise _unreadable(
            app,
            contract,
            operation,
            _MALFORMED_JSON,
            f"the body is not valid JSON: {error}",
            "server-error-on-malformed-json",
        ) from None


def _unreadable(
    app: ServerState | None,
    contract: Contract,
    operation: Operation | None,
    case: str,
    message: str,
    fault: str,
) -> ApiError:
    """The answer to a body that cannot be read (``case``: a broken body of
    ``facts.BODY_CASES``): 400 ``FORMAT_ERROR`` as its requirement makes due, or the 500 the
    ``fault`` plays."""
    if app is not None and app.faulty(fault):
        return ApiError(500, "SYSTEM_ERROR")
    return refuse(due(contract, case, operation), message, code="FORMAT_ERROR", status=400)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or exponent, refused when it does not fit a double: Python
    would read ``1e400`` as infinity, which passes ``"type": "number"`` and then comes back out
    of the store as ``Infinity``, which is not JSON (RFC 8259 section 6 lets an implementation
    limit the range; interoperable numbers are IEEE 754 doubles)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is out of range (larger than a double)")
    return value


#: ``json.loads(text, parse_constant=..., parse_float=...)`` without building a decoder per call
#: (``json.loads`` does for any option); a decoder keeps no state between calls.
_STRICT_JSON = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def check_body(app: ServerState, operation: Operation, body: Any) -> None:
    """Schema validation of the body, then the cross-field checks for the operation."""
    assert operation.request_schema is not None
    if body is None:
        raise refuse(
            due(app.contract, _EMPTY_BODY, operation),
            f"{operation.id} needs a JSON body",
            code="FORMAT_ERROR",
            status=400,
        )
    context = CheckContext.at(
        app.clock.now().astimezone(BANK_ZONE),
        app.contract.minor_units,
        app.bank.kid_reference_types,
    )
    # The compiled check says "valid" cheaply; only a refused body pays for the validator,
    # which says why (messages, paths, the faults' tolerated errors).
    if not app.contract.checker(operation.request_schema)(body):
        _refuse_missing_kid(app, operation, body, context)
        _refuse_schema_errors(app, operation, body)
    violations: list[tuple[str, Violation]] = []
    for check in checks_for(operation.id, app.contract):
        if check.__name__ == "check_kid_check_digit" and app.reads("kid-unchecked"):
            continue  # spec 7 rule 2 names KID_MISSING/KID_INVALID, not a check digit method
        found = list(check(_as_checked(app, operation, check.__name__, body), context))
        # a fault that switches a check off is asked only where the check found something
        # (the self-check's switch trace, ``faults/trace.py``): the checks are pure
        if not found or _switched_off(app, check.__name__):
            continue
        violations.extend((check.__name__, violation) for violation in found)
    if violations:
        raise _crossfield_refusal(app, operation, violations)


def _refuse_missing_kid(
    app: ServerState, operation: Operation, body: Any, context: CheckContext
) -> None:
    """A KID item with an empty reference is KID_MISSING (spec 7 rule 2: 400, not 401), not the
    schema's FORMAT_ERROR for the empty string: the rule names the case."""
    for check in checks_for(operation.id, app.contract):
        if check.__name__ != "check_kid_check_digit":
            continue
        missing = [v for v in check(body, context) if v.code == "KID_MISSING"]
        if missing:
            raise _crossfield_refusal(app, operation, [(check.__name__, v) for v in missing])


def _crossfield_refusal(
    app: ServerState, operation: Operation, found: list[tuple[str, Violation]]
) -> ApiError:
    """The refusal of the cross-field violations ``found`` (each with its check's name): what
    the first one's ``rules.json`` row makes due (:func:`rule_of_check`), 400; a fault that
    answers its code otherwise (``payment_faults.violation_status``) plays its status."""
    name, first = found[0]
    status = payment_faults.violation_status(app, first.code, 0)
    return refuse(
        due(app.contract, rule_of_check(app.contract, name, operation.id, first.code), operation),
        first.text,
        code=first.code,
        status=400,
        path=first.path,
        messages=[TppMessage(v.code, v.text, v.path) for _, v in found[:_MAX_MESSAGES]],
        fault_status=status or None,
    )


def rule_of_check(contract: Contract, check_name: str, operation_id: str, code: str) -> str:
    """The id of the ``rules.json`` row a violation of the cross-field check ``check_name``
    with ``code`` on ``operation_id`` breaks: the first row naming the check on the operation
    whose ``expectedCode`` is ``code``, else the first that names no code (several rows share
    a check: the KID rows, the sandbox date rows)."""
    rows = [
        rule
        for rule in contract.rules
        if rule.check == check_name and operation_id in rule.operations
    ]
    for rule in rows:
        if rule.expected_code == code:
            return rule.id
    for rule in rows:
        if rule.expected_code is None:
            return rule.id
    raise LookupError(f"no rules.json row names {check_name} with {code} on {operation_id}")


def _switched_off(app: ServerState, check_name: str) -> bool:
    """Whether a fault switches the cross-field check ``check_name`` off."""
    if "sandbox_dates" in check_name and app.faulty("accept-future-sandbox-dates"):
        return True
    return payment_faults.skipped_check(app, check_name)


def _as_checked(app: ServerState, operation: Operation, check_name: str, body: Any) -> Any:
    """The body a cross-field check sees: E5's items without ``transactionDate`` for the date
    rule under ``lenient-sandbox-transactions`` (spec 4.3 E5 speaks of a booking and a value
    date; a card item has no value date), else the body itself."""
    if not (
        operation.id == "E5"
        and "sandbox_dates" in check_name
        and isinstance(body, list)
        and app.reads("lenient-sandbox-transactions")
    ):
        return body
    return [
        {key: value for key, value in item.items() if key != "transactionDate"}
        if isinstance(item, dict)
        else item
        for item in body
    ]


def _refuse_schema_errors(app: ServerState, operation: Operation, body: Any) -> None:
    """400 FORMAT_ERROR listing the body's schema errors, unless a fault tolerates them all."""
    assert operation.request_schema is not None
    errors = sorted(
        (
            error
            for error in app.contract.validator(operation.request_schema).iter_errors(body)
            if not _tolerated(app, operation, error)
        ),
        key=relevance,
    )
    if errors:
        best = best_match(errors)
        assert best is not None
        path = error_path(best)
        messages = [
            TppMessage("FORMAT_ERROR", _describe(error), error_path(error))
            for error in errors[:_MAX_MESSAGES]
        ]
        others = [message for message in messages if message.text != _describe(best)]
        also = "; ".join(str(message.text) for message in others)
        raise refuse(
            due(app.contract, REQUEST_SCHEMA, operation),
            _describe(best) + (f" (and {len(others)} more: {also})" if others else ""),
            code="FORMAT_ERROR",
            status=400,
            path=path,
            messages=[TppMessage("FORMAT_ERROR", _describe(best), path), *others],
        )


def _tolerated(app: ServerState, operation: Operation, error: ValidationError) -> bool:
    """Schema errors a fault lets through (the server then breaks the rule on purpose)."""
    if (
        operation.id == "SCU"
        and list(error.absolute_path) == ["customerType"]
        and app.faulty("accept-invalid-customer-type")
    ):
        return True
    if payment_faults.tolerated_amount_precision(app, str(error.validator), error.instance):
        return True
    if _permissively_valid(app, operation, error):
        return True
    return payment_faults.tolerated_schema_error(
        app, operation.id, error_path(error), str(error.validator)
    )


#: An amount of at most 18 digits, at most 5 of them after the point, not zero: spec 2.1's
#: "precision 18 and scale 5" read as a count of significant digits (``amount-18-digits``).
_PRECISION_18 = re.compile(r"(?!0+(?:\.0+)?$)([0-9]{1,18})(?:\.([0-9]{1,5}))?")

#: The E7 item fields the permissive reading ``lenient-sandbox-transactions`` takes as strings
#: (spec 2.9: "all strings unless noted"), and the keywords it lets them break.
_SANDBOX_STRINGS = frozenset({"currency", "bookingDate", "valueDate"})
_SANDBOX_KEYWORDS = frozenset({"enum", "format"})


def _permissively_valid(app: ServerState, operation: Operation, error: ValidationError) -> bool:
    """Whether a permissive reading (``model/readings.py``) lets this schema error through."""
    keyword = str(error.validator)
    field = error.absolute_path[-1] if error.absolute_path else None
    if keyword == "pattern" and field == "amount" and app.reads("amount-18-digits"):
        found = _PRECISION_18.fullmatch(error.instance) if isinstance(error.instance, str) else None
        return found is not None and len(found.group(1)) + len(found.group(2) or "") <= 18
    return (
        operation.id == "E7"
        and field in _SANDBOX_STRINGS
        and keyword in _SANDBOX_KEYWORDS
        and isinstance(error.instance, str)
        and app.reads("lenient-sandbox-transactions")
    )


def _describe(error: ValidationError) -> str:
    path = error_path(error)
    return f"{path}: {error.message}" if path else error.message


def now_at_bank(app: ServerState) -> datetime:
    """The server clock in the bank's time zone (sandbox date rules, spec 4.3 E5/E7)."""
    return app.clock.now().astimezone(BANK_ZONE)
