"""Flow scenarios (spec 3, and the sandbox round trips of spec 2.9 / 4.3): several requests each,
named by ``params["flow"]``. The flows are data: the rows of ``schemas/flows.json``
(``Contract.flows``), expanded here per payment product or enum value.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from conformance.contract import FlowRow, Operation
from conformance.contract.catalogue import success
from conformance.generate._common import Context, params, scenario_id
from conformance.generate.breaking_values import id_safe
from conformance.generate.variants import base_variant
from conformance.scenario import Scenario

__all__ = ["PERIODIC_PRODUCTS", "expand", "generate"]

#: Payment creation operations whose payments the batch run leaves alone (spec 3).
PERIODIC_PRODUCTS = frozenset({"E17"})
_PRODUCT = "{product}"
_VALUE = "{value}"


def _products(context: Context) -> tuple[Operation, ...]:
    """The payment creations, one per product (E16, E17, E18)."""
    return tuple(
        op
        for op in context.operations()
        if op.family == "payments" and op.method == "POST" and op.fixed_path_values
    )


def _for_product(row: FlowRow, op: Operation) -> FlowRow:
    def named(text: str) -> str:
        return op.id if text == _PRODUCT else text

    return replace(row, operation=named(row.operation), steps=tuple(map(named, row.steps)))


def _for_value(row: FlowRow, value: str) -> FlowRow:
    def filled(text: str, slug: bool = False) -> str:
        return text.replace(_VALUE, id_safe(value, None) if slug else value)

    return replace(
        row,
        slug=filled(row.slug, slug=True),
        title=filled(row.title),
        params=tuple((name, filled(text)) for name, text in row.params),
    )


def _enum_values(context: Context, operation_id: str, name: str) -> tuple[str, ...]:
    op = context.contract.operations.get(operation_id)
    if op is None:
        return ()
    for parameter in op.query_parameters:
        if parameter.name == name:
            return tuple(str(v) for v in context.resolver(parameter.schema).get("enum", []))
    return ()


def expand(context: Context, row: FlowRow) -> Iterator[FlowRow]:
    """The flows one row stands for (``each``: per product, per enum value, or itself)."""
    if row.each in ("payment-products", "periodic-products", "other-products"):
        for op in _products(context):
            periodic = op.id in PERIODIC_PRODUCTS
            if (row.each == "periodic-products" and not periodic) or (
                row.each == "other-products" and periodic
            ):
                continue
            yield _for_product(row, op)
    elif row.each.startswith("query:"):
        _, operation_id, name = row.each.split(":", 2)
        for value in _enum_values(context, operation_id, name):
            yield _for_value(row, value)
    else:
        yield row


def _scenario(context: Context, flow: FlowRow) -> Scenario:
    op = context.contract.operations[flow.operation]
    requirement = context.contract.requirement(flow.name)
    return Scenario(
        id=scenario_id(op.id, flow.slug),
        operation=op.id,
        rule=f"STATE-{flow.name}",
        spec=flow.spec,
        level=requirement.level,
        kind="flow",
        title=f"{op.id} {op.name}: {flow.title}",
        expect=success(op),
        variant=base_variant(op, context),
        params=params(
            flow=flow.name,
            needs_sca=flow.needs_sca,
            needs_control=flow.needs_control,
            steps=flow.steps,
            **dict(flow.params),
        ),
        quotes=requirement.quotes,
        reading=requirement.reading,
        requirement=requirement.id,
    )


def generate(context: Context) -> Iterator[Scenario]:
    """Every flow of the table whose operations the contract has."""
    operations = context.contract.operations
    for row in context.contract.flows:
        for flow in expand(context, row):
            if flow.operation in operations and all(step in operations for step in flow.steps):
                yield _scenario(context, flow)
