"""Constraint scenarios (spec 2, spec 4.3): each constraint of a request body, query or path
parameter broken alone, ``<op>-<field>-<keyword>-<value>-rejected``.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.contract import Operation
from conformance.contract.facts import STATUS_SHOWN
from conformance.contract.requirements import CHOSEN_CODE, CHOSEN_STATUS
from conformance.generate._common import (
    FORMAT_ERROR,
    PAYMENT_FAMILIES,
    Context,
    merge_texts,
    op_assumptions,
    pointer_label,
    reading_of,
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
from conformance.scenario import Scenario

__all__ = ["UNKNOWN_PATH_VALUE_STATUSES", "generate"]

#: Accepted answers to a pinned path parameter given another value (see the module docstring).
UNKNOWN_PATH_VALUE_STATUSES = (400, 403, 404)


#: The reading behind a payment path with a product the bank does not offer.
UNKNOWN_PRODUCT_READING = (
    "a payments path naming a product the bank does not offer is refused; spec 4.1 names the "
    "product identifier, and spec 7 shows '403 (for example PRODUCT_INVALID)' for E17 without "
    "saying when"
)


def _reading(op: Operation, broken: BrokenConstraint) -> str:
    """The reading a constraint scenario rests on ("" when the spec states the constraint)."""
    if broken.mutation.target == "path":
        return UNKNOWN_PRODUCT_READING
    if not op.numbered:
        return reading_of(op)
    texts = (*broken.assumed, *op_assumptions(op, "request"))
    return "; ".join(dict.fromkeys(texts))


def _scenario(op: Operation, context: Context, broken: BrokenConstraint) -> Scenario:
    mutation = broken.mutation
    field = pointer_label(mutation.target, mutation.pointer)
    payments = op.family in PAYMENT_FAMILIES
    # The spec states the field (and so that a request breaking it is refused): a 4xx with a JSON
    # body is must. The exact status is stated for E17 only (spec 7: 400, "for example
    # FORMAT_ERROR"); elsewhere it, and the code everywhere, are the suite's choice (should).
    # A constraint, a request shape or an operation that is itself our reading makes the whole
    # scenario should.
    reading = _reading(op, broken)
    level = "should" if reading else "must"
    if mutation.target == "path":
        expect = rejection(op, UNKNOWN_PATH_VALUE_STATUSES, chosen=CHOSEN_STATUS)
        outcome = f"is answered {'/'.join(map(str, UNKNOWN_PATH_VALUE_STATUSES))}"
    else:
        chosen = CHOSEN_CODE if op.id in STATUS_SHOWN else CHOSEN_STATUS
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
        quotes=() if reading else broken.quotes,
        reading=reading,
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
