"""Robustness scenarios (spec 7): malformed, oversized, mistyped or misrouted requests, answered
with a 4xx and the spec 7 error body.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from conformance.contract import Operation
from conformance.contract.catalogue import body_case_id
from conformance.contract.facts import BODY_CASES, BODY_LIMIT_BYTES
from conformance.contract.requirements import (
    BODY_SCHEMA_ERROR,
    BODY_SCHEMA_RESPONSE,
    CHOSEN_STATUS,
    answer_due,
)
from conformance.generate._common import (
    Context,
    has_body,
    params,
    scenario_id,
)
from conformance.generate.variants import base_variant
from conformance.scenario import Scenario

__all__ = ["OVERSIZED_BODY_BYTES", "generate"]

#: Just over 1 MiB: the size at which a body counts as oversized.
OVERSIZED_BODY_BYTES = BODY_LIMIT_BYTES + 1
#: Methods tried, in order, for the wrong-method case.
_METHODS = ("PATCH", "PUT", "DELETE", "POST", "GET")
#: A segment no operation has.
UNKNOWN_SEGMENT = "conformance-unknown-segment"
#: A resource id nothing was created with.
UNKNOWN_ID = "conformance-unknown-id"
#: Operations whose 404 answer spec 7 shows, with its code: there the unknown-id case is a must.
DOCUMENTED_NOT_FOUND = {"E2": "RESOURCE_UNKNOWN"}


_UNKNOWN_PATH_READING = "a path no operation has is answered 404 with the spec 7 error body"
_UNKNOWN_ID_READING = (
    "an unknown resource id in the path is answered 404 with the spec 7 error body; the spec "
    "shows that answer for E2 only (spec 7: 404 RESOURCE_UNKNOWN)"
)
_METHOD_READING = (
    "a method the path does not take is answered 405 with Allow (RFC 9110); the spec shows no "
    "such answer"
)


def _scenario(
    op: Operation,
    context: Context,
    slug: str,
    rule: str,
    title: str,
    statuses: tuple[int, ...],
    *,
    quotes: tuple[str, ...] = (),
    reading: str = "",
    **extra: object,
) -> Scenario:
    return Scenario(
        id=scenario_id(op.id, slug),
        operation=op.id,
        rule=f"ROB-{rule}",
        spec="spec 7",
        level="must" if quotes else "should",
        kind="robustness",
        title=f"{op.id} {op.name}: {title}",
        expect=answer_due(statuses, None, BODY_SCHEMA_ERROR, CHOSEN_STATUS if quotes else ""),
        variant=base_variant(op, context),
        params=params(case=rule, **extra),
        quotes=quotes,
        reading="" if quotes else reading,
    )


def _body_cases(op: Operation, context: Context) -> Iterator[Scenario]:
    if not has_body(op):
        return
    for case in BODY_CASES:
        extra = {"bytes": OVERSIZED_BODY_BYTES} if case.name == "oversized-body" else {}
        requirement = context.contract.requirement(body_case_id(case.name), op.id)
        yield replace(
            _scenario(
                op,
                context,
                f"{case.name}-rejected",
                case.name,
                f"{case.what} is answered {'/'.join(map(str, case.statuses))} "
                "with the spec 7 error body",
                case.statuses,
                quotes=requirement.quotes,
                reading=requirement.reading,
                **extra,
            ),
            level=requirement.level,
            expect=requirement.expected,
            reading=requirement.reading,
        )


def _sample_path(op: Operation) -> str:
    values = {}
    for parameter in op.path_parameters:
        if parameter.name in op.fixed_path_values:
            continue
        enum = parameter.schema.get("enum")
        values[parameter.name] = str(enum[0]) if isinstance(enum, list) and enum else "x"
    return op.render_path(**values)


def _wrong_method(
    op: Operation, context: Context, seen: set[tuple[str, str]]
) -> Iterator[Scenario]:
    path = _sample_path(op)
    allowed = context.contract.allowed_methods(path)
    if not allowed:
        return
    method = next((m for m in _METHODS if m not in allowed), None)
    if method is None:
        return
    if (path, method) in seen:
        return  # another operation on the same path (E3 and E7) already sends this request
    seen.add((path, method))
    yield _scenario(
        op,
        context,
        f"method-{method}-not-allowed",
        "wrong-method",
        f"{method} on this path is answered 405",
        (405,),
        reading=_METHOD_READING,
        method=method,
    )
    yield _scenario(
        op,
        context,
        f"method-{method}-allow-header-listed",
        "allow-header",
        f"the 405 answer to {method} lists the allowed methods in Allow ({', '.join(allowed)})",
        (405,),
        reading=_METHOD_READING,
        method=method,
        allowed=tuple(allowed),
    )
    yield _scenario(
        op,
        context,
        "method-TRACE-not-allowed",
        "trace-not-allowed",
        "TRACE, which no operation takes, is answered 405 listing the allowed methods in Allow "
        f"({', '.join(allowed)}), not 501 (RFC 9110 section 15.5.6)",
        (405,),
        reading="TRACE, which no operation takes, is answered 405 with Allow, not 501 (RFC 9110 "
        "section 15.5.6); the spec says nothing of TRACE",
        method="TRACE",
        allowed=tuple(allowed),
    )


def _unknown_path(op: Operation, context: Context) -> Iterator[Scenario]:
    yield _scenario(
        op,
        context,
        "unknown-subpath-not-found",
        "unknown-path",
        f"an unknown segment appended to the path (/{UNKNOWN_SEGMENT}) is answered 404",
        (404,),
        reading=_UNKNOWN_PATH_READING,
        segment=UNKNOWN_SEGMENT,
    )
    code = DOCUMENTED_NOT_FOUND.get(op.id)
    for parameter in op.path_parameters:
        pinned = "const" in parameter.schema or "enum" in parameter.schema
        if pinned:
            continue  # a wrong product is a constraint scenario
        scenario = _scenario(
            op,
            context,
            f"path.{parameter.name}-unknown-not-found",
            "unknown-id",
            f"an unknown {parameter.name} ({UNKNOWN_ID}) is answered 404"
            + (f" {code} (spec 7)" if code else ""),
            (404,),
            reading=_UNKNOWN_ID_READING,
            parameter=parameter.name,
            value=UNKNOWN_ID,
        )
        if code is not None:
            scenario = replace(
                scenario,
                level="must",
                spec="spec 7",
                expect=answer_due((404,), code, BODY_SCHEMA_RESPONSE),
                quotes=("7-E2", "4.3-E2"),
                reading="",
            )
        yield scenario


def generate(context: Context) -> Iterator[Scenario]:
    """Robustness scenarios of every operation."""
    seen: set[tuple[str, str]] = set()
    for op in context.operations():
        yield from _body_cases(op, context)
        yield from _unknown_path(op, context)
        yield from _wrong_method(op, context, seen)
