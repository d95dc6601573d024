"""Versioning scenarios (spec 9): the ``/v1`` prefix, ``x-accept-fix`` values and their effects,
deprecated request members.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from conformance.contract import Operation
from conformance.contract.catalogue import (
    ACCEPT_FIX,
    DEPRECATED_MEMBER,
    UNKNOWN_FIX,
    WITHOUT_PREFIX,
    fix_id,
    success,
)
from conformance.generate._common import (
    Context,
    params,
    requires_header,
    scenario_id,
    takes_header,
)
from conformance.generate.breaking_values import id_safe
from conformance.generate.variants import base_variant
from conformance.scenario import Mutation, Scenario

__all__ = ["ACCEPT_FIX", "EFFECTS", "UNKNOWN_FIX_VALUE", "Effect", "generate"]

#: A value no release has used (spec 9 lists the known ones).
UNKNOWN_FIX_VALUE = "conformance-unknown-fix"
_PREFIX = "/v1"


@dataclass(frozen=True)
class Effect:
    """What one x-accept-fix value changes, seen on one operation (``params["effect"]``)."""

    operation: str
    effect: str
    title: str
    setup: tuple[str, ...] = ()


#: Spec 9's x-accept-fix values and where their effect is visible.
EFFECTS: Mapping[str, tuple[Effect, ...]] = {
    # spec 4.2 / spec 9: amounts serialised as strings with the currency's minor units (1.7.6)
    "amount-as-string": (
        Effect(
            "E8",
            "amounts-are-strings",
            "transaction amounts are JSON strings with the currency's number of decimals",
        ),
    ),
    # spec 8 / spec 9: account name up to 70 characters (1.7.6)
    "longer-name": (
        Effect(
            "E12",
            "account-name-up-to-70",
            "an account name of 70 characters (SA) reads back whole from E12",
            ("SCU", "SA"),
        ),
    ),
    # spec 9: ISO-compliant cashAccountType (1.16.1, future breaking change)
    "cash-account-type-iso": (
        Effect(
            "E12",
            "cash-account-type-is-iso",
            "cashAccountType is an ISO 20022 cash account type code",
            ("SCU", "SA"),
        ),
    ),
    # spec 9: originalAmount and transactionAmount switched on card transactions (1.6.3)
    "cardaccount-switch-originalamount-and-transactionamount": (
        Effect(
            "E4",
            "amounts-switched",
            "originalAmount and transactionAmount of card transactions are switched compared "
            "with the same read without the value",
            ("SCU", "SCA", "E5"),
        ),
    ),
}


def _known_values(context: Context) -> tuple[str, ...]:
    try:
        schema = context.contract.header_schema(ACCEPT_FIX)
    except KeyError:
        return ()
    return tuple(str(value) for value in schema.get("x-knownValues", ()))


def _header(value: str) -> Mutation:
    return Mutation(
        target="header", pointer=(ACCEPT_FIX,), action="set", value=value, keyword="x-knownValues"
    )


def _fix_scenario(
    op: Operation,
    context: Context,
    value: str,
    slug: str,
    title: str,
    *,
    name: str | None = None,
    **extra: Any,
) -> Scenario:
    """A request with ``x-accept-fix: value``, graded by the contract's requirement of the value
    (``catalogue.fix_id``); ``name`` replaces the value in the id and rule."""
    name = name or id_safe(value, None)
    requirement = context.contract.requirement(fix_id(name))
    return Scenario(
        id=scenario_id(op.id, "accept-fix", name, slug),
        operation=op.id,
        rule=requirement.id,
        spec=requirement.spec,
        level=requirement.level,
        kind="version",
        title=f"{op.id} {op.name}: with x-accept-fix {value}, {title}",
        expect=success(op),
        mutation=_header(value),
        variant=base_variant(op, context),
        params=params(value=value, **extra),
        quotes=requirement.quotes,
        reading=requirement.reading,
        requirement=requirement.id,
    )


def _known_value_scenarios(context: Context) -> Iterator[Scenario]:
    operations = context.contract.operations
    for value in _known_values(context):
        effects = EFFECTS.get(value)
        if effects is None:
            for op in context.operations():
                if requires_header(op, ACCEPT_FIX):
                    yield _fix_scenario(
                        op,
                        context,
                        value,
                        "accepted",
                        "the request is accepted",
                        effect="accepted",
                    )
            continue
        for effect in effects:
            if effect.operation in operations and all(s in operations for s in effect.setup):
                yield _fix_scenario(
                    operations[effect.operation],
                    context,
                    value,
                    effect.effect,
                    effect.title,
                    effect=effect.effect,
                    steps=effect.setup,
                )


def _unknown_value(op: Operation, context: Context) -> Iterator[Scenario]:
    if takes_header(op, ACCEPT_FIX):
        yield _fix_scenario(
            op,
            context,
            UNKNOWN_FIX_VALUE,
            "ignored",
            "a value no release defines, the request is answered as without it",
            name=UNKNOWN_FIX.removeprefix("VER-"),
            effect="ignored",
        )


def _deprecated_members(op: Operation, context: Context) -> Iterator[Scenario]:
    if op.request_schema is None:
        return
    body = context.resolver(op.request_schema)
    properties: Mapping[str, Any] = body.get("properties", {})
    for name, schema in properties.items():
        if not isinstance(schema, Mapping) or not (
            schema.get("deprecated") or context.resolver(schema).get("deprecated")
        ):
            continue
        requirement = context.contract.requirement(DEPRECATED_MEMBER)
        grade = requirement.at(quotes=context.resolver(schema).get("x-quotes", ()))
        yield Scenario(
            id=scenario_id(op.id, "deprecated", name, "accepted"),
            operation=op.id,
            rule=f"{DEPRECATED_MEMBER}-{name}",
            spec=str(schema.get("x-spec") or requirement.spec),
            level=grade.level,
            kind="version",
            title=(
                f"{op.id} {op.name}: a request using the deprecated member {name} is still accepted"
            ),
            expect=success(op),
            variant=base_variant(op, context, (name,)),
            params=params(member=name),
            quotes=grade.quotes,
            reading=grade.reading,
            requirement=requirement.id,
        )


def _without_prefix(op: Operation, context: Context) -> Iterator[Scenario]:
    if not op.path.startswith(_PREFIX + "/"):
        return
    requirement = context.contract.requirement(WITHOUT_PREFIX)
    yield Scenario(
        id=scenario_id(op.id, "without-v1-prefix", "not-found"),
        operation=op.id,
        rule=requirement.id,
        spec=requirement.spec,
        level=requirement.level,
        kind="version",
        title=f"{op.id} {op.name}: the same request without the /v1 prefix is answered 404",
        expect=requirement.expected,
        variant=base_variant(op, context),
        params=params(strip_prefix=_PREFIX),
        reading=requirement.reading,
        requirement=requirement.id,
    )


def generate(context: Context) -> Iterator[Scenario]:
    """Versioning scenarios of the contract."""
    yield from _known_value_scenarios(context)
    for op in context.operations():
        yield from _unknown_value(op, context)
        yield from _deprecated_members(op, context)
        yield from _without_prefix(op, context)
