"""Header scenarios (spec 4.2, spec 7 rules 3 and 7): each required header omitted, each header
constraint broken, a corporate PSU without PSU-Corporate-ID.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.contract import Operation
from conformance.contract.catalogue import (
    CORPORATE_ID,
    CORPORATE_RULE_SPEC,
    HEADER_FORMAT,
    HEADER_REQUIRED,
)
from conformance.generate._common import (
    SIGNATURE_HEADERS,
    Context,
    merge_texts,
    op_assumptions,
    params,
    scenario_id,
)
from conformance.generate.mutations import parameter_constraints
from conformance.generate.variants import base_variant
from conformance.scenario import Mutation, Scenario

__all__ = ["CORPORATE_ID_HEADER", "CORPORATE_RULE_SPEC", "generate"]

CORPORATE_ID_HEADER = "PSU-Corporate-ID"
#: The assumption topics about an operation's headers; ``required-headers``: the spec does not
#: show which of its headers are required (the operation is only named, or its row says "same
#: set as" another without required markers).
HEADER_TOPICS = ("headers", "required-headers")


def _missing(op: Operation, context: Context) -> Iterator[Scenario]:
    requirement = context.contract.requirement(HEADER_REQUIRED, op.id)
    for name in op.required_headers:
        if name.lower() in SIGNATURE_HEADERS:
            continue
        yield Scenario(
            id=scenario_id(op.id, "header", name, "missing", "rejected"),
            operation=op.id,
            rule="HDR-required",
            spec=op.headers_spec,
            level=requirement.level,
            kind="header",
            title=(
                f"{op.id} {op.name}: a request without the required header {name} "
                "is rejected with 400"
            ),
            expect=requirement.expected,
            mutation=Mutation(
                target="header", pointer=(name,), action="remove", keyword="required"
            ),
            variant=base_variant(op, context),
            requirement=requirement.id,
            assumptions=merge_texts(
                (
                    "The status of a missing-header answer is not shown: 400 is expected, with "
                    "no code required (HTTP_HEADER_REQUIRED, from spec 7's code list, would fit).",
                ),
                op_assumptions(op, *HEADER_TOPICS),
            ),
            quotes=requirement.quotes,
            reading=requirement.reading,
        )


def _malformed(op: Operation, context: Context) -> Iterator[Scenario]:
    for name in (*op.required_headers, *op.optional_headers):
        if name.lower() in SIGNATURE_HEADERS:
            continue
        schema = context.contract.header_schema(name)
        spec = str(schema.get("x-spec") or op.headers_spec)
        for broken in parameter_constraints(
            schema, context.resolver, target="header", name=name, spec=spec
        ):
            requirement = context.contract.requirement(HEADER_FORMAT, op.id, name)
            grade = requirement.at(reading="; ".join(broken.assumed), quotes=broken.quotes)
            yield Scenario(
                id=scenario_id(op.id, "header", name, broken.label, "rejected"),
                operation=op.id,
                rule=f"HDR-{broken.mutation.keyword}",
                spec=broken.spec,
                level=grade.level,
                kind="header",
                title=(
                    f"{op.id} {op.name}: header {name} {broken.description}; "
                    "it is rejected with 400"
                ),
                expect=requirement.expected,
                mutation=broken.mutation,
                variant=base_variant(op, context),
                assumptions=merge_texts(broken.assumed, op_assumptions(op, *HEADER_TOPICS)),
                quotes=grade.quotes,
                reading=grade.reading,
                requirement=requirement.id,
            )


def _corporate_without_id(op: Operation, context: Context) -> Iterator[Scenario]:
    key = (CORPORATE_ID, op.id, "")
    if key not in context.contract.requirements:
        return  # the operation takes no PSU-Corporate-ID, or a row of rules.json covers it
    requirement = context.contract.requirements[key]
    yield Scenario(
        id=scenario_id(op.id, "header", CORPORATE_ID_HEADER, "corporate-missing", "rejected"),
        operation=op.id,
        rule=CORPORATE_ID,
        spec=requirement.spec,
        level=requirement.level,
        kind="header",
        title=(
            f"{op.id} {op.name}: a corporate PSU (PSU-Context CORPORATE) sending no "
            f"{CORPORATE_ID_HEADER} is rejected with 400"
        ),
        expect=requirement.expected,
        mutation=Mutation(
            target="header", pointer=(CORPORATE_ID_HEADER,), action="remove", keyword="required"
        ),
        variant=base_variant(op, context),
        params=params(psu="corporate"),
        assumptions=(
            "'Corporate user' (spec 7 rule 3) is read as a request in the corporate context: "
            "PSU-Context CORPORATE with the identity of a corporate sandbox customer's member.",
        ),
        quotes=requirement.quotes,
        reading=requirement.reading,
        requirement=requirement.id,
    )


def generate(context: Context) -> Iterator[Scenario]:
    """Header scenarios of every operation."""
    for op in context.operations():
        yield from _missing(op, context)
        yield from _malformed(op, context)
        yield from _corporate_without_id(op, context)
