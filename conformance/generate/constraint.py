"""Constraint scenarios (spec 2, spec 4.3): each constraint of a request body, query or path
parameter broken alone, ``<op>-<field>-<keyword>-<value>-rejected``.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.contract import Operation
from conformance.contract.catalogue import REQUEST_SCHEMA, UNKNOWN_PRODUCT
from conformance.contract.requirements import Requirement
from conformance.generate._common import (
    Context,
    merge_texts,
    op_assumptions,
    pointer_label,
    scenario_id,
)
from conformance.generate.mutations import (
    DEFAULT_SPEC,
    BrokenConstraint,
    body_constraints,
    parameter_constraints,
)
from conformance.generate.variants import base_variant
from conformance.scenario import Scenario

__all__ = ["generate"]


def _grade(context: Context, op: Operation, broken: BrokenConstraint) -> Requirement:
    """The requirement a constraint scenario is graded by: a product the bank does not offer
    (a pinned path value), else the operation's request (must unless the operation, its request
    or the constraint rests on the contract's assumption)."""
    if broken.mutation.target == "path":
        return context.contract.requirement(UNKNOWN_PRODUCT, op.id)
    return context.contract.requirement(REQUEST_SCHEMA, op.id)


def _scenario(op: Operation, context: Context, broken: BrokenConstraint) -> Scenario:
    mutation = broken.mutation
    field = pointer_label(mutation.target, mutation.pointer)
    # The spec states the field (and so that a request breaking it is refused): a 4xx with a JSON
    # body is must. The exact status is stated for E17 only (spec 7: 400, "for example
    # FORMAT_ERROR"); elsewhere it, and the code everywhere, are the suite's choice (should).
    # A constraint, a request shape or an operation that is itself our reading makes the whole
    # scenario should (the contract's requirement, ``catalogue``).
    requirement = _grade(context, op, broken)
    grade = requirement.at(reading="; ".join(broken.assumed), quotes=broken.quotes)
    expect = requirement.expected
    outcome = f"is answered {'/'.join(map(str, expect.statuses))}"
    if mutation.target != "path":
        outcome = "is rejected with 400" + (f" {expect.code}" if expect.code else "")
    if mutation.target == "body":
        subject = field if mutation.pointer else "the body"
    else:
        subject = f"{mutation.target} parameter {mutation.pointer[0]}"
    # outside payments the 400 answer is the contract's assumption (spec 7: "not shown")
    status_assumptions = () if op.family == "payments" else op_assumptions(op, "response")
    return Scenario(
        id=scenario_id(op.id, field, broken.label, "rejected"),
        operation=op.id,
        rule=f"SCH-{mutation.keyword}",
        spec=broken.spec,
        level=grade.level,
        kind="constraint",
        title=f"{op.id} {op.name}: {subject} {broken.description}; it {outcome}",
        expect=expect,
        mutation=mutation,
        variant=base_variant(op, context, mutation.pointer if mutation.target == "body" else ()),
        assumptions=merge_texts(broken.assumed, status_assumptions),
        quotes=grade.quotes,
        reading=grade.reading,
        requirement=requirement.id,
    )


def generate(context: Context) -> Iterator[Scenario]:
    """One scenario per request constraint of every operation, broken alone."""
    for op in context.operations():
        found: list[BrokenConstraint] = []
        if op.request_schema is not None:
            found.extend(
                body_constraints(
                    op.request_schema, context.resolver, spec=op.request_spec or DEFAULT_SPEC
                )
            )
        for parameter in op.parameters:
            found.extend(
                parameter_constraints(
                    parameter.schema,
                    context.resolver,
                    target=parameter.location,
                    name=parameter.name,
                    spec=parameter.spec,
                    required=parameter.required,
                    quotes=tuple(parameter.schema.get("x-quotes", ())),
                )
            )
        for broken in found:
            yield _scenario(op, context, broken)
