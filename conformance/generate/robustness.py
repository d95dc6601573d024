"""Robustness scenarios (spec 7): malformed, oversized, mistyped or misrouted requests, answered
with a 4xx and the spec 7 error body.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.contract import Operation
from conformance.contract.catalogue import (
    ALLOW_HEADER,
    DOCUMENTED_NOT_FOUND,
    TRACE_NOT_ALLOWED,
    UNKNOWN_ID,
    UNKNOWN_PATH,
    WRONG_METHOD,
    body_case_id,
)
from conformance.contract.facts import BODY_CASES, BODY_LIMIT_BYTES
from conformance.contract.requirements import Requirement
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
UNKNOWN_ID_VALUE = "conformance-unknown-id"


def _scenario(
    op: Operation,
    context: Context,
    slug: str,
    requirement: Requirement,
    title: str,
    **extra: object,
) -> Scenario:
    """A robustness scenario graded by its requirement (``conformance.contract.catalogue``)."""
    return Scenario(
        id=scenario_id(op.id, slug),
        operation=op.id,
        rule=requirement.id,
        spec=requirement.spec,
        level=requirement.level,
        kind="robustness",
        title=f"{op.id} {op.name}: {title}",
        expect=requirement.expected,
        variant=base_variant(op, context),
        params=params(case=requirement.id.removeprefix("ROB-"), **extra),
        quotes=requirement.quotes,
        reading=requirement.reading,
        requirement=requirement.id,
    )


def _body_cases(op: Operation, context: Context) -> Iterator[Scenario]:
    if not has_body(op):
        return
    for case in BODY_CASES:
        extra = {"bytes": OVERSIZED_BODY_BYTES} if case.name == "oversized-body" else {}
        yield _scenario(
            op,
            context,
            f"{case.name}-rejected",
            context.contract.requirement(body_case_id(case.name), op.id),
            f"{case.what} is answered {'/'.join(map(str, case.statuses))} "
            "with the spec 7 error body",
            **extra,
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
    requirement = context.contract.requirement
    yield _scenario(
        op,
        context,
        f"method-{method}-not-allowed",
        requirement(WRONG_METHOD),
        f"{method} on this path is answered 405",
        method=method,
    )
    yield _scenario(
        op,
        context,
        f"method-{method}-allow-header-listed",
        requirement(ALLOW_HEADER),
        f"the 405 answer to {method} lists the allowed methods in Allow ({', '.join(allowed)})",
        method=method,
        allowed=tuple(allowed),
    )
    yield _scenario(
        op,
        context,
        "method-TRACE-not-allowed",
        requirement(TRACE_NOT_ALLOWED),
        "TRACE, which no operation takes, is answered 405 listing the allowed methods in Allow "
        f"({', '.join(allowed)}), not 501 (RFC 9110 section 15.5.6)",
        method="TRACE",
        allowed=tuple(allowed),
    )


def _unknown_path(op: Operation, context: Context) -> Iterator[Scenario]:
    yield _scenario(
        op,
        context,
        "unknown-subpath-not-found",
        context.contract.requirement(UNKNOWN_PATH),
        f"an unknown segment appended to the path (/{UNKNOWN_SEGMENT}) is answered 404",
        segment=UNKNOWN_SEGMENT,
    )
    code = DOCUMENTED_NOT_FOUND.get(op.id)
    for parameter in op.path_parameters:
        pinned = "const" in parameter.schema or "enum" in parameter.schema
        if pinned:
            continue  # a wrong product is a constraint scenario
        yield _scenario(
            op,
            context,
            f"path.{parameter.name}-unknown-not-found",
            context.contract.requirement(UNKNOWN_ID, op.id),
            f"an unknown {parameter.name} ({UNKNOWN_ID_VALUE}) is answered 404"
            + (f" {code} (spec 7)" if code else ""),
            parameter=parameter.name,
            value=UNKNOWN_ID_VALUE,
        )


def generate(context: Context) -> Iterator[Scenario]:
    """Robustness scenarios of every operation."""
    seen: set[tuple[str, str]] = set()
    for op in context.operations():
        yield from _body_cases(op, context)
        yield from _unknown_path(op, context)
        yield from _wrong_method(op, context, seen)
