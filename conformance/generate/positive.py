"""Positive scenarios (spec 4.3): each base request of each operation, and each value of a short
enum, answered with the operation's success.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from conformance.contract import Operation
from conformance.contract.catalogue import positive_id, success
from conformance.generate._common import (
    Context,
    op_assumptions,
    pointer_label,
    scenario_id,
)
from conformance.generate.breaking_values import id_safe
from conformance.generate.mutations import DEFAULT_SPEC
from conformance.generate.variants import (
    ENUM_VARIANTS,
    VARIANT_READINGS,
    base_variant,
    variants,
)
from conformance.scenario import Mutation, Scenario

__all__ = ["MAX_SWEEP_VALUES", "generate"]

#: Enums with more values than this are not swept value by value.
MAX_SWEEP_VALUES = 32

_TOPICS = ("path", "product", "request", "response", "parameter", "status")
#: The quotes of the optional headers a positive scenario sends (spec 4.2).
_HEADER_QUOTES = {
    "TPP-Redirect-Preferred": ("4.2-tpp-redirect-preferred", "4.2-row-E16"),
    "TPP-Brand-Logging-Information": ("4.2-row-E16",),
}


def _graded(context: Context, op: Operation, *extra: str, reading: str = "") -> dict[str, Any]:
    """``level``, ``quotes``, ``reading`` and ``requirement`` of a positive scenario: the
    contract's grade of the operation's success (``catalogue.positive_id``), a must quoting
    the member swept too; should with ``reading`` where the request rests on it (a variant of
    ``variants.VARIANT_READINGS``)."""
    requirement = context.contract.requirement(positive_id(op.id), op.id)
    grade_ = requirement.at(reading=reading) if reading else requirement.grade
    quotes = grade_.quotes
    if grade_.level == "must":
        quotes = tuple(dict.fromkeys((*quotes, *extra)))
    return {
        "level": grade_.level,
        "quotes": quotes,
        "reading": grade_.reading,
        "requirement": requirement.id,
    }


def _variant_slug(variant: str) -> str:
    return {"": "valid-request", "minimal": "minimal-request", "complete": "complete-request"}.get(
        variant, id_safe(variant, None)
    )


def _base_requests(op: Operation, context: Context) -> Iterator[Scenario]:
    expect = success(op)
    for variant in variants(op, context):
        described = f"the {variant} request" if variant else "a valid request"
        yield Scenario(
            id=scenario_id(op.id, _variant_slug(variant), "accepted"),
            operation=op.id,
            rule=f"POS-{op.id}",
            spec=op.spec,
            kind="positive",
            title=(
                f"{op.id} {op.name}: {described} is answered {'/'.join(map(str, expect.statuses))} "
                "with a body valid against the documented response"
            ),
            expect=expect,
            variant=variant,
            assumptions=op_assumptions(op, *_TOPICS),
            **_graded(context, op, reading=VARIANT_READINGS.get(variant, "")),
        )


def _enum_members(
    schema: Mapping[str, Any],
    context: Context,
    pointer: tuple[str | int, ...],
    spec: str,
    depth: int,
) -> Iterator[tuple[tuple[str | int, ...], tuple[Any, ...], str, bool, tuple[str, ...]]]:
    """``(pointer, values, spec, is_array_of_values, quotes)`` for each short enum of a body
    schema (``quotes``: the member's own ``x-quotes``)."""
    if depth > 12:
        return
    effective = context.resolver(schema)
    spec = str(effective.get("x-spec") or spec)
    values = effective.get("enum")
    if isinstance(values, list) and 1 < len(values) <= MAX_SWEEP_VALUES:
        yield pointer, tuple(values), spec, False, tuple(effective.get("x-quotes", ()))
    for name, child in effective.get("properties", {}).items():
        if isinstance(child, Mapping):
            yield from _enum_members(child, context, (*pointer, name), spec, depth + 1)
    items = effective.get("items")
    if isinstance(items, Mapping):
        item_schema = context.resolver(items)
        item_values = item_schema.get("enum")
        if isinstance(item_values, list) and 1 < len(item_values) <= MAX_SWEEP_VALUES:
            quotes = (*effective.get("x-quotes", ()), *item_schema.get("x-quotes", ()))
            yield (
                pointer,
                tuple(item_values),
                str(item_schema.get("x-spec") or spec),
                True,
                tuple(quotes),
            )
        else:
            yield from _enum_members(items, context, (*pointer, 0), spec, depth + 1)


def _through_array(pointer: tuple[str | int, ...]) -> bool:
    """Whether ``pointer`` goes through an array's item (an index on its way)."""
    return any(isinstance(part, int) for part in pointer)


def _body_sweeps(op: Operation, context: Context) -> Iterator[Scenario]:
    if op.request_schema is None:
        return
    expect = success(op)
    skipped = ENUM_VARIANTS.get(op.id, (None,))[0]
    members = _enum_members(op.request_schema, context, (), op.request_spec or DEFAULT_SPEC, 0)
    for pointer, values, spec, as_list, quotes in members:
        if pointer == (skipped,):
            continue  # its values are base requests of their own (variants)
        field = pointer_label("body", pointer)
        for value in values:
            sent = (value,) if as_list else value
            yield Scenario(
                id=scenario_id(op.id, field, id_safe(value), "accepted"),
                operation=op.id,
                rule=f"POS-{op.id}",
                spec=spec,
                kind="positive",
                title=(
                    f"{op.id} {op.name}: {field} = {value!r}, one of the values the spec lists, "
                    f"is accepted"
                ),
                expect=expect,
                mutation=Mutation(
                    target="body",
                    pointer=pointer,
                    # a value swept in an array's item is sent in that item alone, so that no
                    # two items share it (two balances of one balanceType, say)
                    action="set-alone" if _through_array(pointer) else "set",
                    value=sent,
                    keyword="enum",
                ),
                variant=base_variant(op, context, pointer),
                assumptions=op_assumptions(op, *_TOPICS),
                **_graded(context, op, *quotes),
            )


def _query_values(schema: Mapping[str, Any]) -> tuple[str, ...]:
    if isinstance(schema.get("enum"), list):
        return tuple(str(value) for value in schema["enum"])
    if schema.get("type") == "boolean":
        return ("true", "false")
    return ()


def _query_sweeps(op: Operation, context: Context) -> Iterator[Scenario]:
    expect = success(op)
    for parameter in op.query_parameters:
        values = _query_values(context.resolver(parameter.schema))
        if len(values) > MAX_SWEEP_VALUES:
            continue
        field = pointer_label("query", (parameter.name,))
        for value in values:
            yield Scenario(
                id=scenario_id(op.id, field, id_safe(value), "accepted"),
                operation=op.id,
                rule=f"POS-{op.id}",
                spec=parameter.spec,
                kind="positive",
                title=f"{op.id} {op.name}: query parameter {parameter.name}={value} is accepted",
                expect=expect,
                mutation=Mutation(
                    target="query",
                    pointer=(parameter.name,),
                    action="set",
                    value=value,
                    keyword="enum",
                ),
                variant=base_variant(op, context),
                assumptions=op_assumptions(op, *_TOPICS),
                **_graded(context, op, *parameter.schema.get("x-quotes", ())),
            )


def _header_values(schema: Mapping[str, Any]) -> tuple[str, ...]:
    """The valid values a positive scenario sends for an optional header: each value of an
    enum, else the schema's first example (none: the header is not swept)."""
    if isinstance(schema.get("enum"), list):
        return tuple(str(value) for value in schema["enum"])
    examples = schema.get("examples")
    return (str(examples[0]),) if isinstance(examples, list) and examples else ()


def _header_sweeps(op: Operation, context: Context) -> Iterator[Scenario]:
    """An optional TPP-* header the operation takes, sent with a valid value, is accepted (spec
    4.2: TPP-Redirect-Preferred, TPP-Brand-Logging-Information). The PSU-* headers are left out:
    their values change whom the request is for (PSU-Context CORPORATE needs a corporate PSU)."""
    expect = success(op)
    for name in op.optional_headers:
        if not name.upper().startswith("TPP-"):
            continue
        schema = context.contract.header_schema(name)
        values = _header_values(schema)
        if len(values) > MAX_SWEEP_VALUES:
            continue
        for value in values:
            yield Scenario(
                id=scenario_id(op.id, "header", name, id_safe(value), "accepted"),
                operation=op.id,
                rule=f"POS-{op.id}",
                spec=str(schema.get("x-spec") or op.headers_spec),
                kind="positive",
                title=f"{op.id} {op.name}: the optional header {name}: {value} is accepted",
                expect=expect,
                mutation=Mutation(
                    target="header",
                    pointer=(name,),
                    action="set",
                    value=value,
                    keyword="enum" if "enum" in schema else "examples",
                ),
                variant=base_variant(op, context),
                assumptions=op_assumptions(op, *_TOPICS, "headers", "required-headers"),
                **_graded(context, op, *_HEADER_QUOTES.get(name, ())),
            )


def generate(context: Context) -> Iterator[Scenario]:
    """Positive scenarios of every operation of the contract."""
    for op in context.operations():
        yield from _base_requests(op, context)
        yield from _body_sweeps(op, context)
        yield from _query_sweeps(op, context)
        yield from _header_sweeps(op, context)
