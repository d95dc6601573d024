"""The response headers a certifier checks, judged on an answer a scenario judges: the positive
scenarios, every step a flow judges, and the ``RH-*`` rows of ``schemas/rules.json``.

- ``X-Request-ID`` (``RH-request-id-echoed``): every answer carries the request's;
- ``Location`` (``RH-location-on-creation``): a 201 of the row's operations (a payment, basket,
  consent or authorisation created) carries it, naming the created resource's id when the body
  names one;
- ``ASPSP-SCA-Approach`` (``RH-sca-approach-named``): an answer of the row's operations that
  starts or leads to an authorisation (a 2xx, or spec 5 item 6's 401 with ``_links.scaRedirect``)
  carries it, naming the profile's ``[sca] approach``.

Spec 4.2 shows request headers only, so each rests on a reading (the row's ``reading``) and a
failure is a should finding. A header the bank promises (``[response_headers] promised``) is
judged the same way, but a failure then counts as a must one for that bank: raised as a
:class:`~conformance.checks.ConformanceFailure` whose ``promise`` says so, never with a quote.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from conformance.checks import ConformanceFailure, json_document
from conformance.findings import record_should
from conformance.problems import Problem

if TYPE_CHECKING:
    from conformance.contract import Operation
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext

__all__ = [
    "APPROACH_VALUES",
    "LOCATION_RULE",
    "REQUEST_ID_RULE",
    "SCA_APPROACH_RULE",
    "judge_response_headers",
    "location_problems",
    "request_id_problems",
    "sca_approach_problems",
]

REQUEST_ID_RULE = "RH-request-id-echoed"
LOCATION_RULE = "RH-location-on-creation"
SCA_APPROACH_RULE = "RH-sca-approach-named"
#: Each row's header.
_HEADER_OF = {
    REQUEST_ID_RULE: "X-Request-ID",
    LOCATION_RULE: "Location",
    SCA_APPROACH_RULE: "ASPSP-SCA-Approach",
}
#: The profile's ``[sca] approach`` → the ASPSP-SCA-Approach values that name it (Berlin Group:
#: EMBEDDED, DECOUPLED, REDIRECT; OAuth "subsumed" under REDIRECT, OAUTH accepted too).
APPROACH_VALUES: Mapping[str, tuple[str, ...]] = {
    "redirect": ("REDIRECT",),
    "decoupled": ("DECOUPLED",),
    "oauth": ("REDIRECT", "OAUTH"),
}
#: The members of a creation's body that name the created resource.
_CREATED_IDS = ("paymentId", "basketId", "consentId", "authorisationId")
#: The links that lead the PSU to an authorisation (a 401 carrying one is spec 5 item 6's form).
_SCA_LINKS = frozenset({"scaRedirect", "scaOAuth", "scaStatus", "startAuthorisation"})
_CHECK = "response-header"
_SCA_HEADER = "ASPSP-SCA-Approach"


def _problem(header: str, kind: str, detail: str) -> Problem:
    return Problem(_CHECK, header, kind, detail)


def request_id_problems(exchange: Exchange) -> list[Problem]:
    """The answer's X-Request-ID is the request's (none when the request sent none)."""
    sent = exchange.request_header("X-Request-ID")
    if not sent:
        return []
    answered = exchange.response_header("X-Request-ID")
    if answered is None:
        return [_problem("X-Request-ID", "missing", "the answer carries no X-Request-ID")]
    if answered.strip() != sent.strip():
        return [
            _problem(
                "X-Request-ID",
                "other",
                f"the answer's X-Request-ID is {answered!r}, not the request's {sent!r}",
            )
        ]
    return []


def location_problems(exchange: Exchange) -> list[Problem]:
    """A 201 carries Location, and it names the created resource's id where the body names one."""
    if exchange.status != 201:
        return []
    location = (exchange.response_header("Location") or "").strip()
    if not location:
        return [_problem("Location", "missing", "the 201 answer carries no Location")]
    document = json_document(exchange)
    if not isinstance(document, Mapping):
        return []
    ids = [str(document[key]) for key in _CREATED_IDS if isinstance(document.get(key), str)]
    if ids and not any(created in location for created in ids):
        return [
            _problem(
                "Location",
                "other",
                f"the 201 answer's Location {location!r} names none of the created ids "
                f"{', '.join(ids)}",
            )
        ]
    return []


def _leads_to_sca(exchange: Exchange) -> bool:
    if 200 <= exchange.status < 300:
        return True
    document = json_document(exchange)
    links = document.get("_links") if isinstance(document, Mapping) else None
    return exchange.status == 401 and isinstance(links, Mapping) and bool(_SCA_LINKS & set(links))


def sca_approach_problems(exchange: Exchange, approach: str) -> list[Problem]:
    """An answer that starts or leads to an authorisation names ``approach`` (the profile's) in
    ASPSP-SCA-Approach."""
    if not _leads_to_sca(exchange):
        return []
    values = APPROACH_VALUES.get(approach, (approach.upper(),))
    named = (exchange.response_header("ASPSP-SCA-Approach") or "").strip()
    if not named:
        return [_problem(_SCA_HEADER, "missing", f"the answer carries no {_SCA_HEADER}")]
    if named.upper() not in values:
        return [
            _problem(
                "ASPSP-SCA-Approach",
                "other",
                f"ASPSP-SCA-Approach is {named!r}, not {' or '.join(values)} (the profile's "
                f"[sca] approach is {approach})",
            )
        ]
    return []


def _found(
    exchange: Exchange, operation: Operation, ctx: RunContext, only: str | None
) -> Iterator[tuple[str, list[Problem]]]:
    """``(rule id, problems)`` of each row that applies to the answer."""
    rules = (only,) if only else tuple(_HEADER_OF)
    for rule_id in rules:
        if operation.id not in ctx.contract.rule(rule_id).operations:
            continue
        if rule_id == REQUEST_ID_RULE:
            yield rule_id, request_id_problems(exchange)
        elif rule_id == LOCATION_RULE:
            yield rule_id, location_problems(exchange)
        else:
            yield rule_id, sca_approach_problems(exchange, ctx.profile.sca.approach)


def judge_response_headers(
    exchange: Exchange, operation: Operation, ctx: RunContext, *, only: str | None = None
) -> None:
    """Judge the response headers of ``exchange`` (an answer to ``operation``); ``only``: the
    one row to judge (a row's own scenario), else every row naming the operation. A failure is
    a should finding with the row's reading; the headers the bank promised are raised together
    at the end, as the bank's promise."""
    promised: list[tuple[str, list[Problem]]] = []
    spec = ""
    for rule_id, problems in _found(exchange, operation, ctx, only):
        if not problems:
            continue
        rule = ctx.contract.rule(rule_id)
        header = _HEADER_OF[rule_id]
        if ctx.profile.response_headers.promises(header):
            promised.append((header, problems))
            spec = spec or rule.spec
            continue
        record_should(_failure(exchange, rule.spec, [header], problems, ""), rule.reading)
    if promised:
        headers = [header for header, _ in promised]
        raise _failure(
            exchange,
            spec,
            headers,
            [problem for _, problems in promised for problem in problems],
            ctx.profile.response_headers.promise(headers),
        )


#: What each header is to be, in words.
_EXPECTED = {
    "X-Request-ID": "the answer carries the X-Request-ID of its request",
    "Location": "a 201 names the created resource in Location",
    "ASPSP-SCA-Approach": "an answer that starts or leads to an authorisation names the bank's "
    "SCA approach (the profile's [sca] approach) in ASPSP-SCA-Approach",
}


def _failure(
    exchange: Exchange, spec: str, headers: list[str], problems: list[Problem], promise: str
) -> ConformanceFailure:
    return ConformanceFailure(
        f"{exchange.method} {exchange.path}: {problems[0].detail}"
        + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
        spec=spec,
        sent=exchange,
        expected="; ".join(_EXPECTED[header] for header in headers),
        problems=tuple(problems),
        promise=promise,
    )
