"""Header scenarios (spec 4.2, spec 7 rules 3 and 7): each required header omitted, each header
constraint broken, a corporate PSU without PSU-Corporate-ID.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.contract import Operation
from conformance.contract.requirements import CHOSEN_STATUS
from conformance.generate._common import (
    SIGNATURE_HEADERS,
    Context,
    merge_texts,
    op_assumptions,
    params,
    rejection,
    scenario_id,
    takes_header,
)
from conformance.generate.mutations import BrokenConstraint, parameter_constraints
from conformance.generate.variants import base_variant
from conformance.scenario import Mutation, Scenario

__all__ = ["CORPORATE_ID_HEADER", "CORPORATE_RULE_SPEC", "generate"]

CORPORATE_ID_HEADER = "PSU-Corporate-ID"
#: The spec part of the corporate-user rule; rows of the rule table with it are not repeated here.
CORPORATE_RULE_SPEC = "spec 7 rule 3"
#: The assumption topics about an operation's headers; ``required-headers``: the spec does not
#: show which of its headers are required (the operation is only named, or its row says "same
#: set as" another without required markers).
HEADER_TOPICS = ("headers", "required-headers")


def required_set_assumed(op: Operation) -> bool:
    """Whether the operation's required headers are the suite's assumption, not the spec's."""
    return bool(op_assumptions(op, "required-headers"))


#: Sandbox operations the spec only names: spec 7 rule 7 ("the sandbox receives a malformed
#: PSU-ID") covers their PSU-ID although their header set is not shown.
SANDBOX_PSU_ID_RULE = "7-rule-7"


def _missing_reading(op: Operation) -> str:
    """The reading a missing-header scenario rests on: the operation's header set is not shown."""
    if required_set_assumed(op):
        return "; ".join(op_assumptions(op, "required-headers"))
    if not op.headers_quotes:
        return (
            f"spec 4.2 shows no header row for {op.id}; we expect the required headers the "
            "contract lists for it"
        )
    return ""


def _malformed_reading(op: Operation, name: str, broken: BrokenConstraint) -> str:
    """The reading a malformed-header scenario rests on ("" when the spec states it)."""
    if broken.assumed:
        return "; ".join(broken.assumed)
    if op.numbered or (name == "PSU-ID" and op.family == "sandbox"):
        return ""
    return (
        f"spec 4.2 does not show {op.id}'s header set (spec 4.1: 'only named'); we expect it to "
        f"take {name} and check its value"
    )


def _missing(op: Operation, context: Context) -> Iterator[Scenario]:
    reading = _missing_reading(op)
    for name in op.required_headers:
        if name.lower() in SIGNATURE_HEADERS:
            continue
        yield Scenario(
            id=scenario_id(op.id, "header", name, "missing", "rejected"),
            operation=op.id,
            rule="HDR-required",
            spec=op.headers_spec,
            level="should" if reading else "must",
            kind="header",
            title=(
                f"{op.id} {op.name}: a request without the required header {name} "
                "is rejected with 400"
            ),
            expect=rejection(op, (400,), chosen=CHOSEN_STATUS),
            mutation=Mutation(
                target="header", pointer=(name,), action="remove", keyword="required"
            ),
            variant=base_variant(op, context),
            assumptions=merge_texts(
                (
                    "The status of a missing-header answer is not shown: 400 is expected, with "
                    "no code required (HTTP_HEADER_REQUIRED, from spec 7's code list, would fit).",
                ),
                op_assumptions(op, *HEADER_TOPICS),
            ),
            quotes=() if reading else (*op.headers_quotes, "4.2-required-intro"),
            reading=reading,
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
            reading = _malformed_reading(op, name, broken)
            quotes = broken.quotes
            if name == "PSU-ID" and op.family == "sandbox":
                quotes = (*quotes, SANDBOX_PSU_ID_RULE)
            yield Scenario(
                id=scenario_id(op.id, "header", name, broken.label, "rejected"),
                operation=op.id,
                rule=f"HDR-{broken.mutation.keyword}",
                spec=broken.spec,
                level="should" if reading else "must",
                kind="header",
                title=(
                    f"{op.id} {op.name}: header {name} {broken.description}; "
                    "it is rejected with 400"
                ),
                expect=rejection(op, (400,), chosen=CHOSEN_STATUS),
                mutation=broken.mutation,
                variant=base_variant(op, context),
                assumptions=merge_texts(broken.assumed, op_assumptions(op, *HEADER_TOPICS)),
                quotes=() if reading else quotes,
                reading=reading,
            )


def _corporate_operations_in_rules(context: Context) -> frozenset[str]:
    return frozenset(
        operation
        for rule in context.contract.rules
        if CORPORATE_RULE_SPEC in rule.spec
        for operation in rule.operations
    )


def _corporate_without_id(
    op: Operation, context: Context, covered: frozenset[str]
) -> Iterator[Scenario]:
    if op.id in covered or not takes_header(op, CORPORATE_ID_HEADER):
        return
    yield Scenario(
        id=scenario_id(op.id, "header", CORPORATE_ID_HEADER, "corporate-missing", "rejected"),
        operation=op.id,
        rule="HDR-corporate-id",
        spec=CORPORATE_RULE_SPEC,
        level="must",
        kind="header",
        title=(
            f"{op.id} {op.name}: a corporate PSU (PSU-Context CORPORATE) sending no "
            f"{CORPORATE_ID_HEADER} is rejected with 400"
        ),
        expect=rejection(op, (400,)),
        mutation=Mutation(
            target="header", pointer=(CORPORATE_ID_HEADER,), action="remove", keyword="required"
        ),
        variant=base_variant(op, context),
        params=params(psu="corporate"),
        assumptions=(
            "'Corporate user' (spec 7 rule 3) is read as a request in the corporate context: "
            "PSU-Context CORPORATE with the identity of a corporate sandbox customer's member.",
        ),
        quotes=("7-rule-3", "5-5"),
    )


def generate(context: Context) -> Iterator[Scenario]:
    """Header scenarios of every operation."""
    covered = _corporate_operations_in_rules(context)
    for op in context.operations():
        yield from _missing(op, context)
        yield from _malformed(op, context)
        yield from _corporate_without_id(op, context, covered)
