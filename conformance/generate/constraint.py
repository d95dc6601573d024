"""Constraint scenarios (spec 2, spec 4.3): each constraint of a request body, query or path
parameter broken alone, ``<op>-<field>-<keyword>-<value>-rejected``.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.contract import Operation
from conformance.generate._common import (
    FORMAT_ERROR,
    PAYMENT_FAMILIES,
    Context,
    merge_texts,
    op_assumptions,
    pointer_label,
    rejection,
    scenario_id,
)
from conformance.generate.mutations import (
    DEFAULT_SPEC,
    BrokenConstraint,
    body_constraints,
    parameter_constraints,
)
from conformance.generate.variants import base_variant
from conformance.scenario import CHOSEN_STATUS, Scenario

__all__ = ["UNKNOWN_PATH_VALUE_STATUSES", "generate"]

#: Accepted answers to a pinned path parameter given another value (see the module docstring).
UNKNOWN_PATH_VALUE_STATUSES = (400, 403, 404)


def _scenario(op: Operation, context: Context, broken: BrokenConstraint) -> Scenario:
    mutation = broken.mutation
    field = pointer_label(mutation.target, mutation.pointer)
    payments = op.family in PAYMENT_FAMILIES
    # The spec states the field (and so that a request breaking it is refused); where it shows no
    # status (everywhere but payments) the status is the suite's choice, judged at should.
    # A constraint or request shape that is itself assumed makes the whole scenario should.
    assumed = bool(broken.assumed or op_assumptions(op, "request"))
    level = "should" if assumed else "must"
    if mutation.target == "path":
        expect = rejection(op, UNKNOWN_PATH_VALUE_STATUSES, chosen=CHOSEN_STATUS)
        outcome = f"is answered {'/'.join(map(str, UNKNOWN_PATH_VALUE_STATUSES))}"
    else:
        chosen = "" if payments else CHOSEN_STATUS
        expect = rejection(op, (400,), FORMAT_ERROR if payments else None, chosen=chosen)
        outcome = "is rejected with 400" + (" FORMAT_ERROR" if payments else "")
    if mutation.target == "body":
        subject = field if mutation.pointer else "the body"
    else:
        subject = f"{mutation.target} parameter {mutation.pointer[0]}"
    # outside payments the 400 answer is the contract's assumption (spec 7: "not shown")
    status_assumptions = () if payments else op_assumptions(op, "response")
    return Scenario(
        id=scenario_id(op.id, field, broken.label, "rejected"),
        operation=op.id,
        rule=f"SCH-{mutation.keyword}",
        spec=broken.spec,
        level=level,
        kind="constraint",
        title=f"{op.id} {op.name}: {subject} {broken.description}; it {outcome}",
        expect=expect,
        mutation=mutation,
        variant=base_variant(op, context, mutation.pointer if mutation.target == "body" else ()),
        assumptions=merge_texts(broken.assumed, status_assumptions),
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
                )
            )
        for broken in found:
            yield _scenario(op, context, broken)
