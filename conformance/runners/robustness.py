"""Robustness scenarios (spec 7): broken input gets a 4xx with the spec 7 error body, never a 5xx.

``params["case"]`` says what is broken. Body cases send raw bytes through the worker's client, so
the Digest and Signature cover exactly those bytes (spec 5 item 4): the only thing wrong with the
request is the body itself. Path cases change the path of an otherwise valid request; the method
case sends a method the path does not allow (405 with ``Allow``, RFC 9110 section 15.5.6).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from conformance.bankside.request import NO_BODY
from conformance.checks import ConformanceFailure, NotApplicable, check_not_server_error
from conformance.contract.facts import BODY_LIMIT_BYTES
from conformance.operations import base_request
from conformance.runners.judging import judge
from conformance.scenario import scenario_seed

if TYPE_CHECKING:
    from conformance.bankside.request import OperationRequest
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["CASES", "run"]

_JSON = "application/json"
#: Bytes that are never UTF-8 (a lone continuation byte and an invalid lead byte).
_NOT_UTF8 = b"\xff\xfe\x80"
#: The segment appended for an unknown path when the scenario names none.
_SEGMENT = "conformance-unknown-segment"
#: A placeholder of a path template (``{payment-id}``).
_PLACEHOLDER = re.compile(r"\{[^{}]+\}")


def run(scenario: Scenario, ctx: RunContext) -> None:
    case = str(scenario.param("case", ""))
    try:
        send = CASES[case]
    except KeyError:
        raise ValueError(
            f"robustness scenario {scenario.id} has an unknown case {case!r}"
        ) from None
    seed = scenario_seed(ctx.seed, scenario.id)
    request = base_request(ctx, scenario.operation, scenario.variant, seed)
    exchange = send(scenario, ctx, request)
    check_not_server_error(exchange, spec=scenario.spec)
    judge(exchange, scenario, ctx)
    if case in ("allow-header", "trace-not-allowed"):
        _check_allow(exchange, scenario)


Case = Callable[["Scenario", "RunContext", "OperationRequest"], "Exchange"]


def _body_bytes(request: OperationRequest) -> bytes:
    body = request.body if request.body is not NO_BODY else {}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _malformed_json(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    """The valid body cut short: an unterminated JSON text."""
    raw = _body_bytes(request)
    return request.with_content(raw[: max(1, len(raw) - 1)] + b",", _JSON).send(ctx)


def _empty_body(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    return request.with_content(b"", _JSON).send(ctx)


def _wrong_content_type(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    return request.with_content(_body_bytes(request), "text/plain").send(ctx)


def _invalid_utf8(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    """The valid body with bytes that are not UTF-8 inside its first string value."""
    raw = _body_bytes(request)
    quote = raw.find(b'":"')
    spliced = raw[: quote + 3] + _NOT_UTF8 + raw[quote + 3 :] if quote >= 0 else _NOT_UTF8 + raw
    return request.with_content(spliced, "application/json; charset=utf-8").send(ctx)


def _oversized(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    """A syntactically valid JSON body of ``params["bytes"]`` bytes (padding in one string)."""
    size = int(scenario.param("bytes", BODY_LIMIT_BYTES + 1))
    head, tail = b'{"padding":"', b'"}'
    filler = b"x" * max(0, size - len(head) - len(tail))
    return request.with_content(head + filler + tail, _JSON).send(ctx)


def _bank_path(ctx: RunContext, path: str) -> bool:
    """Whether ``path`` is one of the bank's own paths (the profile's ``[paths]``, periodic ones
    included), which name an operation there as the contract's do."""
    templates = {*ctx.profile.paths.values(), *ctx.profile.periodic_paths.values()}
    return any(
        re.fullmatch("[^/]+".join(map(re.escape, _PLACEHOLDER.split(template))), path)
        for template in templates
    )


def _unknown_path(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    """An unknown segment appended to the path; appended again while the path still names an
    operation of the contract or of the bank's own paths (a payment id slot would turn it into
    a cancellation path)."""
    segment = str(scenario.param("segment", _SEGMENT))
    path = request.target_path(ctx.profile)
    for _ in range(3):
        path = f"{path.rstrip('/')}/{segment}"
        if not ctx.contract.allowed_methods(path) and not _bank_path(ctx, path):
            break
    return _with_path(request, path).send(ctx)


def _unknown_id(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    name = str(scenario.param("parameter", ""))
    value = str(scenario.param("value", "conformance-unknown-id"))
    return request.with_path_value(name, value).send(ctx)


def _wrong_method(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    method = str(scenario.param("method", "PATCH"))
    if request.operation.id in ctx.profile.methods:
        raise NotApplicable(
            f"the profile gives {request.operation.id} the bank's own method ([paths]), so the "
            "methods its path allows are not the contract's"
        )
    changed = _with_path(request, request.target_path(ctx.profile))
    return _with_method(changed, method).send(ctx)


def _with_path(request: OperationRequest, path: str) -> OperationRequest:
    return replace(request, path=path)


def _with_method(request: OperationRequest, method: str) -> OperationRequest:
    return replace(request, method=method, body=NO_BODY, content=None)


def _check_allow(exchange: Exchange, scenario: Scenario) -> None:
    """The 405 lists the allowed methods in ``Allow`` (RFC 9110 section 15.5.6)."""
    listed = {
        item.strip().upper()
        for item in (exchange.response_header("allow") or "").split(",")
        if item.strip()
    }
    wanted = {str(method).upper() for method in scenario.param("allowed", ())}
    missing = sorted(wanted - listed)
    if missing:
        raise ConformanceFailure(
            f"the 405 answer's Allow header does not list {', '.join(missing)}",
            spec="spec 7 (RFC 9110 section 15.5.6)",
            sent=exchange,
            expected=f"a 405 answer carries Allow: {', '.join(sorted(wanted))}",
        )


#: Every case: name → how the broken request is sent (immutable).
CASES: Mapping[str, Case] = MappingProxyType(
    {
        "malformed-json": _malformed_json,
        "empty-body": _empty_body,
        "wrong-content-type": _wrong_content_type,
        "invalid-utf8": _invalid_utf8,
        "oversized-body": _oversized,
        "unknown-path": _unknown_path,
        "unknown-id": _unknown_id,
        "wrong-method": _wrong_method,
        "allow-header": _wrong_method,
        "trace-not-allowed": _wrong_method,
    }
)
