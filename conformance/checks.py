"""Checks: plain functions that judge one recorded exchange against one requirement, and the two
ways a scenario ends without passing (:class:`ConformanceFailure`, :class:`NotApplicable`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jsonschema import ValidationError

from conformance.contract import bounded_json
from conformance.contract.annotations import reading_at
from conformance.contract.fixes import schema_for_fixes
from conformance.contract.json_paths import dotted_path, values_at, walk_values
from conformance.contract.requirements import (
    BASKET_CODES_READING,
    ERROR_BODY_READING,
    ERROR_FIELDS_READING,
)
from conformance.problems import (
    ACCEPTED,
    ACCEPTED_KIND,
    Breach,
    Problem,
    listed_details,
    schema_problems,
    unique_problems,
)

if TYPE_CHECKING:
    from conformance.contract import Contract, Operation
    from conformance.exchange import Exchange
    from conformance.scenario import Scenario

__all__ = [
    "ERROR_BODY_SCHEMA",
    "ERROR_STATUS_CHECK",
    "JSON_QUOTE",
    "PAYMENT_ERROR_BODY_SCHEMA",
    "PROMISE_GROUND",
    "ConformanceFailure",
    "NotApplicable",
    "Problem",
    "ReadingFailure",
    "ScenarioLabel",
    "SetUpFailure",
    "accept_fixes",
    "breaking",
    "check_all",
    "check_basket_codes",
    "check_client_error",
    "check_equal",
    "check_error_body",
    "check_error_code",
    "check_error_status",
    "check_headers",
    "check_json_body",
    "check_json_content_type",
    "check_max_length",
    "check_not_server_error",
    "check_response_schema",
    "check_sca_redirect",
    "check_schema",
    "check_status",
    "check_success",
    "check_tpp_message_path",
    "error_codes",
    "json_document",
    "quote_lines",
    "values_at",
]

#: The spec 7 error body, and its payment variant with ``tppMessages`` (types/errors.json).
ERROR_BODY_SCHEMA = {
    "$ref": "https://psd2-conformance.invalid/schemas/types/errors.json#/$defs/ErrorResponse"
}
PAYMENT_ERROR_BODY_SCHEMA = {
    "$ref": "https://psd2-conformance.invalid/schemas/types/errors.json#/$defs/PaymentErrorResponse"
}

#: How a failure message names the ground of a must failure that rests on the bank's own
#: promise (its profile), not on a sentence of the spec.
PROMISE_GROUND = "Promised by the bank (its profile; not a sentence of the spec): "
#: The quote of the spec's introduction: "Request and response bodies are JSON."
JSON_QUOTE = "intro-json"
#: The check name of a problem with the error body's ``status`` (:func:`check_error_status`).
ERROR_STATUS_CHECK = "error-status"
#: How many schema errors a message lists before saying "and N more".
_SHOWN_ERRORS = 5
#: The place of a problem with the answer's status.
_STATUS_PLACE = "HTTP status"
#: How much of a response body the one-line "received" summary quotes.
_BODY_EXCERPT = 300


@dataclass(frozen=True)
class ScenarioLabel:
    """The requirement a failure is reported under (attached by the runner, not the check)."""

    scenario_id: str
    rule: str
    spec: str
    level: str
    title: str
    reading: str = ""


class ConformanceFailure(AssertionError):
    """The target broke a requirement: what was sent, what came back, what the spec says.

    ``title`` is one line naming what is wrong; ``spec`` the spec part the check reads
    ("spec 7"); ``sent`` the exchange judged (None when the failure is about several, such as a
    read-back that differs); ``received`` what came back, in words; ``expected`` what the spec
    says should have. ``scenario`` is filled in by the runner. ``always_must``: a failure no
    grading softens (a 5xx to a request sent on purpose) within a must-level scenario.
    ``problems``: what exactly broke, each with its place and value (:mod:`conformance.problems`);
    a failure raised without them is one problem of its scenario's requirement, its title.
    ``quotes``: labels of the spec's sentences (``quotes.json``) that state what failed; a check
    that knows its sentence names it, else the runner gives the scenario's quotes. ``reading``:
    for a should finding, the reading of the spec it rests on ("our reading: ..."). ``promise``:
    for what the spec does not state but the bank promises in its profile (a response header,
    ``[response_headers] promised``), what it promised: the failure counts as a must one for
    that bank, and its reports say it is the bank's promise, never a quote of the spec.
    ``breach``: what the request broke on purpose, when the check that sent it knows
    (:func:`breaking`); an acceptance is then one cause with every other acceptance of that break.
    """

    def __init__(
        self,
        title: str,
        *,
        spec: str,
        sent: Exchange | None,
        received: str | None = None,
        expected: str,
        scenario: ScenarioLabel | None = None,
        related: Sequence[Exchange] = (),
        always_must: bool = False,
        problems: Sequence[Problem] = (),
        quotes: Sequence[str] = (),
        promise: str = "",
    ) -> None:
        self.always_must = always_must
        self.promise = promise
        self.breach: Breach | None = None
        self.problems = tuple(problems) or (
            Problem("requirement", "", "", title, per_requirement=True),
        )
        self.quotes: tuple[str, ...] = tuple(quotes)
        #: The reading a should finding rests on (``conformance.findings.at_should``); empty for
        #: a must failure.
        self.reading = ""
        #: The should findings the scenario had recorded before this failure ended it.
        self.should_findings: tuple[ConformanceFailure, ...] = ()
        self.title = title
        self.spec = spec
        self.sent = sent
        self.received = received if received is not None else _summary(sent)
        self.expected = expected
        self.scenario = scenario
        self.related = tuple(related)
        super().__init__(title)

    def for_scenario(self, scenario: Scenario) -> ConformanceFailure:
        """This failure reported under ``scenario``'s requirement (rule id, spec part, level)."""
        if self.scenario is not None:
            return self
        self.scenario = ScenarioLabel(
            scenario.id,
            scenario.rule,
            scenario.spec,
            scenario.level,
            scenario.title,
            scenario.reading,
        )
        if self.promise:
            return self  # the bank's promise, not a sentence of the spec nor our reading
        if not self.quotes:
            self.quotes = tuple(scenario.quotes)
        if scenario.level == "should" and not self.reading:
            self.reading = scenario.reading
        return self

    def __str__(self) -> str:
        lines = [self.title, ""]
        if self.scenario is not None:
            label = self.scenario
            lines.append(f"Requirement: {label.rule} ({label.spec}, {label.level}): {label.title}")
        # Our words for what is due; the spec's own words are the quotes below.
        lines.append(f"Expected (our reading of {self.spec}): {self.expected}")
        if self.promise:
            lines.append(f"{PROMISE_GROUND}{self.promise}")
        elif self.reading:
            lines.append(f"Our reading (should): {self.reading}")
        else:
            lines += quote_lines(self.quotes)
        lines.append(f"The target answered: {self.received}")
        for exchange in (*self.related, *((self.sent,) if self.sent is not None else ())):
            lines += ["", "Exchange:", _indent(exchange.render()), "", "Reproduce with:"]
            lines.append("    " + _reproduce(exchange))
        return "\n".join(lines)


class SetUpFailure(ConformanceFailure):
    """The data a scenario needs could not be created on the target (a valid set-up request was
    refused). Reported as the verdict ``blocked`` with the refused exchange, not as a failure of
    the rule the scenario tests."""


class ReadingFailure(ConformanceFailure):
    """What failed rests on our reading of the spec, not on a sentence of it (an ``x-assumed``
    or ``x-readings`` part of a schema, a body the spec does not show): the runner records it
    as a should finding with its ``reading`` (``conformance.findings``)."""

    def __init__(self, title: str, *, reading: str, **details: Any) -> None:
        super().__init__(title, **details)
        self.reading = reading


class NotApplicable(Exception):
    """The scenario cannot judge this target; ``reason`` is the one sentence the report shows.

    Raised when the profile declares the operation or product unsupported, when the scenario
    needs a control the target lacks (the reference server's clock or batch), a trust anchor
    the profile does not name, or data the target cannot be asked to create (no sandbox).
    ``supply``: for a control the target lacks, what the profile could supply so that the rule
    is judged here too (``[prepared] pending_payment_id``); the reports list such a scenario as
    not judged here, right under the verdict.
    """

    def __init__(self, reason: str, *, supply: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.supply = supply


def quote_lines(labels: Sequence[str]) -> list[str]:
    """``Quoted: spec 7 rule 1: "When ..."``, one line per quote the labels name (as plain
    text: no table pipes or backticks)."""
    from conformance.contract import quoted  # the default contract, loaded once per process

    return [f'Quoted: {quote.spec}: "{quote.plain}"' for quote in quoted(labels)]


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.split("\n"))


def _reproduce(exchange: Exchange) -> str:
    try:
        return exchange.reproduce_command()
    except ValueError:
        return (
            exchange.reproduce_command(data_file="body.bin")
            + "   # body.bin: the request body above, byte for byte"
        )


def _summary(exchange: Exchange | None) -> str:
    """``HTTP 400 with {...}`` in one line (the full body is in the rendered exchange)."""
    if exchange is None:
        return "(no exchange)"
    body = exchange.response_body
    if not body:
        return f"HTTP {exchange.status} with an empty body"
    try:
        text = json.dumps(bounded_json.loads(body), ensure_ascii=False, separators=(",", ":"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        content_type = exchange.response_header("content-type") or "no Content-Type"
        text = f"a non-JSON body ({content_type}): " + body[:80].decode("utf-8", "replace")
    if len(text) > _BODY_EXCERPT:
        text = text[:_BODY_EXCERPT] + "…"
    return f"HTTP {exchange.status} with {text}"


def _statuses(statuses: Iterable[int]) -> str:
    if isinstance(statuses, range) and statuses == range(200, 300):
        return "a 2xx answer"
    listed = sorted(set(statuses))
    if len(listed) == 1:
        return f"HTTP {listed[0]}"
    return "HTTP " + ", ".join(str(status) for status in listed[:-1]) + f" or {listed[-1]}"


# --- status -------------------------------------------------------------------------------------


def check_status(
    exchange: Exchange, statuses: Collection[int], *, spec: str = "spec 4.3", why: str = ""
) -> None:
    """The answer has one of ``statuses``; ``why`` says what the spec says the request is.

    A 5xx that was not expected is marked ``always_must``: inside a must scenario no should
    grading of the scenario's chosen parts softens it (spec 7 keeps 500 for system errors). A
    should-level scenario stays should (no sentence of the spec forbids a 5xx).
    """
    if exchange.status in statuses:
        return
    expected = _statuses(statuses)
    server_error = exchange.status >= 500
    accepted = 200 <= exchange.status < 300 and all(status >= 400 for status in statuses)
    title = (
        f"{exchange.method} {exchange.path} answered HTTP {exchange.status}"
        f"{' (a server error)' if server_error else ''}, expected {expected}"
    )
    raise ConformanceFailure(
        title,
        spec=spec,
        sent=exchange,
        expected=f"{expected}{': ' + why if why else ''}"
        + ("; never a 5xx to a request sent on purpose (spec 7)" if server_error else ""),
        always_must=server_error,
        problems=(
            _accepted(exchange, f"refused with {expected}")
            if accepted
            else Problem(
                "status",
                _STATUS_PLACE,
                f"HTTP {exchange.status} for {expected}",
                f"the answer is HTTP {exchange.status}, not {expected}",
                per_requirement=True,
            ),
        ),
    )


def _accepted(exchange: Exchange, due: str) -> Problem:
    """A request due a refusal answered 2xx: one cause per break (``problems.Breach``)."""
    return Problem(
        ACCEPTED,
        _STATUS_PLACE,
        ACCEPTED_KIND,
        f"the request was accepted (HTTP {exchange.status}), not {due}",
        per_requirement=True,
    )


def check_not_server_error(exchange: Exchange, *, spec: str = "spec 7") -> None:
    """No 5xx: a request the target cannot accept is the client's error, never the server's."""
    if exchange.status < 500:
        return
    raise ConformanceFailure(
        f"{exchange.method} {exchange.path} answered HTTP {exchange.status} (a server error)",
        spec=spec,
        sent=exchange,
        expected="no 5xx to a request sent on purpose: spec 7 keeps 500 for system errors, and "
        "a request the target cannot accept is the client's error, answered 4xx",
        always_must=True,
        problems=(
            Problem(
                "server-error",
                _STATUS_PLACE,
                f"HTTP {exchange.status}",
                f"the answer is HTTP {exchange.status}, a server error",
                per_requirement=True,
            ),
        ),
    )


def check_success(exchange: Exchange, *, spec: str = "spec 4.3", why: str = "") -> None:
    """A 2xx answer: the request was accepted (its exact status is judged apart)."""
    if 200 <= exchange.status < 300:
        return
    check_status(exchange, range(200, 300), spec=spec, why=why or "the request is accepted")


def check_client_error(exchange: Exchange, *, spec: str = "spec 7") -> None:
    """A 4xx answer (rejected as the client's fault), never 2xx/3xx and never a 5xx."""
    check_not_server_error(exchange, spec=spec)
    if 400 <= exchange.status < 500:
        return
    raise ConformanceFailure(
        f"{exchange.method} {exchange.path} was accepted (HTTP {exchange.status}) "
        "but must be rejected",
        spec=spec,
        sent=exchange,
        expected="a 4xx answer with the spec 7 error body",
        problems=(_accepted(exchange, "refused with a 4xx"),),
    )


@contextmanager
def breaking(breach: Breach | None) -> Iterator[None]:
    """Inside it, a failure is about a request that broke ``breach`` (the check that sent the
    request knows what it broke; a scenario's mutation says it otherwise; None: nothing known)."""
    try:
        yield
    except ConformanceFailure as failure:
        if failure.breach is None and breach is not None:
            failure.breach = breach
        raise


# --- bodies -------------------------------------------------------------------------------------


def json_document(exchange: Exchange) -> Any:
    """The response body as JSON, or None when it is not JSON (for runners that only read)."""
    try:
        return bounded_json.loads(exchange.response_body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def check_json_body(exchange: Exchange, *, spec: str = "spec 1") -> Any:
    """The body is JSON (spec introduction: "Request and response bodies are JSON"); returns it."""
    try:
        return bounded_json.loads(exchange.response_body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        content_type = exchange.response_header("content-type") or "no Content-Type"
        what = "an empty body" if not exchange.response_body else f"a body in {content_type}"
        if isinstance(error, bounded_json.JsonTooLarge):
            what = f"a body in {content_type} that is refused unread ({error.msg})"
        media = content_type.partition(";")[0].strip().lower()
        raise ConformanceFailure(
            f"{exchange.method} {exchange.path} answered HTTP {exchange.status} with {what}, "
            "not JSON",
            spec=spec,
            sent=exchange,
            expected="request and response bodies are JSON",
            problems=(
                Problem(
                    "json-body",
                    "(the body)",
                    "empty" if not exchange.response_body else media,
                    "the body is empty, not JSON"
                    if not exchange.response_body
                    else f"the body is {content_type}, not JSON",
                ),
            ),
            quotes=(JSON_QUOTE,),
        ) from None


def _error_lines(errors: Iterable[ValidationError]) -> list[str]:
    ordered = sorted(errors, key=lambda error: (list(error.absolute_path), error.message))
    lines = [f"  at {error.json_path}: {error.message}" for error in ordered[:_SHOWN_ERRORS]]
    if len(ordered) > _SHOWN_ERRORS:
        lines.append(f"  … and {len(ordered) - _SHOWN_ERRORS} more")
    return lines


def check_schema(
    exchange: Exchange,
    document: Any,
    schema: Mapping[str, Any],
    contract: Contract,
    *,
    what: str,
    spec: str,
    reading: str = "",
    quotes: Sequence[str] = (),
) -> None:
    """``document`` (read from ``exchange``) is valid against ``schema``; every error is listed.

    The verdict is the contract's compiled check (:meth:`Contract.checker`, held equal to
    ``jsonschema``); only a document it refuses goes through the cached ``jsonschema`` validator
    (format checker on, shared types resolvable), which lists the errors.

    An error at a part of the schema that rests on our reading (an ``x-assumed`` schema at or
    above it, or its keyword in an ``x-readings`` there) is a :class:`ReadingFailure`, raised
    only when no stated part broke; with ``reading`` the whole schema is our reading.
    """
    if contract.checker(schema)(document):
        return
    validator = contract.validator(schema)
    errors = list(validator.iter_errors(document))
    if not errors:
        return
    stated: list[ValidationError] = []
    readings: dict[str, None] = {}
    for error in errors:
        found = reading or reading_at(validator.schema, error)
        if found:
            readings[found] = None
        else:
            stated.append(error)
    broken = stated or errors
    problems = schema_problems(broken)
    count = len(problems)
    details: dict[str, Any] = {
        "spec": spec,
        "sent": exchange,
        "received": "\n".join([_summary(exchange), *_error_lines(broken)]),
        "expected": f"{what} follows the schema of {spec}",
        "problems": unique_problems(problems),
    }
    title = (
        f"{what} of {exchange.method} {exchange.path} (HTTP {exchange.status}) breaks its schema "
        f"in {count} place{'s' if count != 1 else ''}: {listed_details(problems)}"
    )
    if stated:
        raise ConformanceFailure(title, quotes=quotes, **details)
    raise ReadingFailure(title, reading="; ".join(readings), **details)


def check_response_schema(
    exchange: Exchange, operation: Operation, contract: Contract, *, any_success: bool = False
) -> None:
    """The body is valid against the operation's documented response for its status.

    A status the operation does not document fails (the contract lists every answer the spec
    shows or the contract assumes); a documented status without a body schema (204, E7's 201)
    passes without reading the body. With ``any_success`` (the spec shows the body but not the
    exact status) a 2xx the contract does not document is judged by the documented success. A
    response whose body the spec does not show (its ``reading``) fails as a
    :class:`ReadingFailure`.
    """
    response = operation.responses.get(exchange.status)
    if response is None and any_success and 200 <= exchange.status < 300:
        response = operation.responses.get(operation.success_status)
    if response is None:
        documented = _statuses(operation.responses)
        raise ConformanceFailure(
            f"{operation.id} answered HTTP {exchange.status}, which the contract does not "
            "document for it",
            spec=operation.spec,
            sent=exchange,
            expected=f"one of the documented answers: {documented}",
            problems=(
                Problem(
                    "documented-status",
                    _STATUS_PLACE,
                    f"HTTP {exchange.status}",
                    f"the answer is HTTP {exchange.status}, not one of {documented}",
                ),
            ),
        )
    if response.schema is None:
        return
    document = check_json_body(exchange, spec=response.spec)
    check_schema(
        exchange,
        document,
        schema_for_fixes(response.schema, accept_fixes(exchange)),
        contract,
        what=f"the HTTP {exchange.status} body",
        spec=response.spec,
        reading=response.reading,
        quotes=response.quotes,
    )


def accept_fixes(exchange: Exchange) -> frozenset[str]:
    """The x-accept-fix values the request opted in to (comma-separated, any case; spec 9)."""
    value = exchange.request_header("x-accept-fix") or ""
    return frozenset(part.strip().lower() for part in value.split(",") if part.strip())


def check_error_body(
    exchange: Exchange, contract: Contract, *, payments: bool, shown: bool = True
) -> None:
    """The error answer's body. Must: a body, when there is one, is JSON (spec introduction).
    Where the spec shows the error body (``shown``: ``contract.facts.ERRORS_SHOWN``), the spec 7
    members have their types when present and ``status`` is the HTTP status; that ``status`` and
    ``code`` are present is our reading (:data:`ERROR_FIELDS_READING`). Payment operations'
    bodies may carry ``tppMessages`` (spec 2.6) whose codes are spec 7's list. Where the spec
    shows no error body, the whole spec 7 body is our reading (:data:`ERROR_BODY_READING`):
    its failures are :class:`ReadingFailure`\\ s."""
    if not exchange.response_body.strip():
        raise ReadingFailure(
            f"the HTTP {exchange.status} error answer has no body",
            reading=ERROR_BODY_READING if not shown else ERROR_FIELDS_READING,
            spec="spec 7",
            sent=exchange,
            expected="the spec 7 error body",
        )
    document = check_json_body(exchange, spec="spec 7")
    schema = PAYMENT_ERROR_BODY_SCHEMA if payments else ERROR_BODY_SCHEMA
    check_schema(
        exchange,
        document,
        schema,
        contract,
        what="the error body",
        spec="spec 7",
        reading="" if shown else ERROR_BODY_READING,
        quotes=("7-body-intro", "7-codes") if payments else ("7-body-intro",),
    )
    check_error_status(exchange, reading="" if shown else ERROR_BODY_READING)


def check_basket_codes(exchange: Exchange, contract: Contract) -> None:
    """A basket's error body with payment-style ``tppMessages`` (our reading: PD9): its failures
    are :class:`ReadingFailure`\\ s (:data:`BASKET_CODES_READING`)."""
    document = json_document(exchange)
    if document is None:
        return  # no JSON body: check_error_body judged that
    check_schema(
        exchange,
        document,
        PAYMENT_ERROR_BODY_SCHEMA,
        contract,
        what="the error body",
        spec="spec 7",
        reading=BASKET_CODES_READING,
    )


def check_error_status(exchange: Exchange, *, reading: str = "") -> None:
    """The error body's ``status`` is the HTTP status of the answer (spec 7: "HTTP status
    code"); a body without ``status`` is the schema's business. With ``reading`` (the spec shows
    no error body for the operation) a mismatch is a :class:`ReadingFailure`."""
    document = json_document(exchange)
    if not isinstance(document, Mapping) or "status" not in document:
        return
    if document.get("status") == exchange.status:
        return
    title = (
        f"the error body says status {document.get('status')!r} but the answer is "
        f"HTTP {exchange.status}"
    )
    details: dict[str, Any] = {
        "spec": "spec 7",
        "sent": exchange,
        "expected": "the error body's status is the HTTP status code",
        "problems": (
            Problem(
                ERROR_STATUS_CHECK,
                "status",
                "not the HTTP status",
                f"`status` is {document.get('status')!r}, not the answer's HTTP {exchange.status}",
            ),
        ),
    }
    if reading:
        raise ReadingFailure(title, reading=reading, **details)
    raise ConformanceFailure(title, quotes=("7-body-status",), **details)


def error_codes(document: Any) -> list[str]:
    """The codes of an error body: its ``code`` and each ``tppMessages[].code`` (spec 7)."""
    if not isinstance(document, Mapping):
        return []
    codes = [document["code"]] if isinstance(document.get("code"), str) else []
    messages = document.get("tppMessages")
    if isinstance(messages, list):
        codes += [item["code"] for item in messages if isinstance(item, Mapping) and "code" in item]
    return codes


def check_error_code(exchange: Exchange, code: str, *, spec: str = "spec 7") -> None:
    """The error body's ``code``, or the code of one of its ``tppMessages``, is ``code``."""
    document = check_json_body(exchange, spec=spec)
    found = error_codes(document)
    if code in found:
        return
    shown = ", ".join(found) if found else "no code at all"
    raise ConformanceFailure(
        f"the error answer carries {shown}, not {code}",
        spec=spec,
        sent=exchange,
        expected=f"code {code} (in the error body's code or in tppMessages[].code)",
        problems=(
            Problem(
                "error-code",
                "code",
                f"not {code}",
                f"`code` and `tppMessages[].code` carry {shown}, not {code}",
                per_requirement=True,
            ),
        ),
    )


def check_tpp_message_path(exchange: Exchange, field: str, *, spec: str = "spec 2.6") -> None:
    """A ``tppMessages`` entry points at ``field`` (its ``path`` names it, or its text does)."""
    document = check_json_body(exchange, spec=spec)
    messages = document.get("tppMessages") if isinstance(document, Mapping) else None
    if isinstance(messages, list):
        for item in messages:
            if not isinstance(item, Mapping):
                continue
            path = str(item.get("path", ""))
            if field in path.replace(".", "/").split("/") or path == field:
                return
            if field in str(item.get("text", "")):
                return
    raise ConformanceFailure(
        f"no tppMessages entry names {field}",
        spec=spec,
        sent=exchange,
        expected=f"a tppMessages entry whose path is {field} (the field the TPP must fix)",
        problems=(
            Problem(
                "tpp-message-path",
                "tppMessages[*].path",
                "missing",
                f"no `tppMessages[].path` names {field}",
                per_requirement=True,
            ),
        ),
    )


# --- headers and links --------------------------------------------------------------------------


def check_headers(exchange: Exchange, names: Iterable[str], *, spec: str = "spec 4.2") -> None:
    """Every response header of ``names`` is present and non-empty (all missing ones listed)."""
    missing = [name for name in names if not (exchange.response_header(name) or "").strip()]
    if not missing:
        return
    raise ConformanceFailure(
        f"the answer lacks the header{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
        spec=spec,
        sent=exchange,
        expected=f"the answer carries {', '.join(missing)}",
        problems=tuple(
            Problem("header", name, "missing", f"the header {name} is missing") for name in missing
        ),
    )


def check_json_content_type(exchange: Exchange, *, spec: str = "spec 4.2") -> None:
    """An answer with a JSON body says so in Content-Type (spec 4.2: the server answers with
    Content-Type)."""
    if not exchange.response_body:
        return
    media = (exchange.response_header("content-type") or "").partition(";")[0].strip().lower()
    if media == "application/json" or media.endswith("+json"):
        return
    raise ConformanceFailure(
        f"the answer's body comes with Content-Type {media or '(none)'}, not JSON",
        spec=spec,
        sent=exchange,
        expected="the server answers with Content-Type: application/json for a JSON body",
        problems=(
            Problem(
                "content-type",
                "Content-Type",
                media or "(none)",
                f"the header Content-Type is {media or 'absent'}, not application/json",
            ),
        ),
        quotes=("4.2-negotiation", JSON_QUOTE),
    )


def check_sca_redirect(exchange: Exchange, *, spec: str = "spec 5 item 6") -> str:
    """The answer carries ``_links.scaRedirect.href`` (spec 5 item 6); returns the link."""
    document = check_json_body(exchange, spec=spec)
    links = document.get("_links") if isinstance(document, Mapping) else None
    redirect = links.get("scaRedirect") if isinstance(links, Mapping) else None
    href = redirect.get("href") if isinstance(redirect, Mapping) else None
    if isinstance(href, str) and href:
        return href
    raise ConformanceFailure(
        "the answer has no _links.scaRedirect link",
        spec=spec,
        sent=exchange,
        expected="SCA by redirect: the answer carries _links.scaRedirect (a Link with GET) "
        "to which the PSU is sent",
        problems=(
            Problem(
                "sca-redirect",
                "_links.scaRedirect.href",
                "missing",
                "`_links.scaRedirect.href` is missing",
            ),
        ),
        quotes=("5-6",),
    )


# --- values -------------------------------------------------------------------------------------


def check_max_length(
    exchange: Exchange, document: Any, pointer: str, limit: int, *, spec: str
) -> None:
    """Every string found at ``pointer`` (``a/*/b``: ``*`` walks arrays) has at most ``limit``
    characters; all too-long values are listed."""
    too_long = [
        (path, value)
        for path, value in walk_values(document, pointer.split("/"), ())
        if isinstance(value, str) and len(value) > limit
    ]
    if not too_long:
        return
    problems = tuple(
        Problem(
            "max-length",
            dotted_path(path),
            f"more than {limit} characters",
            f"`{dotted_path(path)}` has {len(value)} characters, more than {limit}",
        )
        for path, value in too_long
    )
    raise ConformanceFailure(
        f"{pointer} is longer than {limit} characters: {listed_details(problems)}",
        spec=spec,
        sent=exchange,
        received=f"{_summary(exchange)}\n  {listed_details(problems)}",
        expected=f"{pointer} has at most {limit} characters",
        problems=problems,
    )


def check_equal(
    exchange: Exchange,
    what: str,
    expected: Any,
    actual: Any,
    *,
    spec: str,
    related: Sequence[Exchange] = (),
) -> None:
    """``actual`` (read from ``exchange``) equals ``expected`` (what was sent or read before)."""
    if actual == expected:
        return
    title = f"{what}: the target answered {_short(actual)}, expected {_short(expected)}"
    raise ConformanceFailure(
        title,
        spec=spec,
        sent=exchange,
        expected=f"{what} is {_short(expected)}",
        related=related,
        problems=(Problem("equal", "", "", title, per_requirement=True),),
    )


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:200] + "…"


# --- several at once ----------------------------------------------------------------------------


def check_all(*checks: Callable[[], object]) -> None:
    """Run every check, then fail once with all failures (the first one's title leads).

    For independent requirements on one answer (schemathesis: all checks run, failures are
    collected); a check that only makes sense after another passed belongs after it instead.
    """
    failures: list[ConformanceFailure] = []
    for check in checks:
        try:
            check()
        except ConformanceFailure as failure:
            failures.append(failure)
    if not failures:
        return
    if len(failures) == 1:
        raise failures[0]
    first = failures[0]
    raise ConformanceFailure(
        f"{first.title} (and {len(failures) - 1} more problem{'s' if len(failures) > 2 else ''})",
        spec=first.spec,
        sent=first.sent,
        received="\n".join([_summary(first.sent), *(_detail(failure) for failure in failures)]),
        expected="\n".join(
            [f"{len(failures)} requirements:"]
            + [f"  - ({failure.spec}) {failure.expected}" for failure in failures]
        ),
        always_must=any(failure.always_must for failure in failures),
        problems=[problem for failure in failures for problem in failure.problems],
        quotes=tuple(dict.fromkeys(label for failure in failures for label in failure.quotes)),
    )


def _detail(failure: ConformanceFailure) -> str:
    """One failure inside a combined one: its title and what it found beyond the answer line."""
    lines = failure.received.split("\n")
    if lines and lines[0] == _summary(failure.sent):
        lines = lines[1:]
    return "\n".join([f"  - {failure.title}", *(f"  {line}" for line in lines)])
