"""Constraint mutations: each breaks exactly the constraint it names, and nothing else.

The strongest check is against the real contract: every constraint scenario's mutation is applied
to a complete valid body built from the schema, and the contract's own validator must then report
errors of that one keyword at that one place.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

import pytest

from conformance.contract import Contract, Operation, load_contract
from conformance.generate import generate_scenarios
from conformance.generate.breaking_values import (
    BAD_FORMAT_VALUES,
    breaking_pattern,
    id_safe,
    other_than_const,
    outside_enum,
    string_of_length,
)
from conformance.generate.mutations import SchemaResolver, body_constraints, parameter_constraints
from conformance.scenario import FrozenObject, Mutation, Scenario, freeze, thaw

# ------------------------------------------------------------------------------- a valid example

#: Strings tried, in order, for a schema with a pattern: the first the pattern accepts is used.
PATTERN_SAMPLES = ("DNBANOKK", "10.00", "5", "01010112345", "x")


def example(schema: Mapping[str, Any], resolver: SchemaResolver) -> Any:
    """A valid instance of ``schema`` carrying every optional member (a "complete" base)."""
    schema = resolver(schema)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {name: example(sub, resolver) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [example(schema.get("items", {}), resolver)]
    if kind == "integer":
        return max(int(schema.get("minimum", 1)), 1) if "maximum" not in schema else 1
    if kind == "boolean":
        return True
    if schema.get("format") == "date":
        return "2026-01-15"
    if "pattern" in schema:
        return next(s for s in PATTERN_SAMPLES if re.search(schema["pattern"], s))
    return "x" * max(schema.get("minLength", 1), 1)


def apply(body: Any, mutation: Mutation) -> Any:
    """``body`` with ``mutation`` applied as the harness applies it (bankside.request)."""
    if not mutation.pointer:
        assert mutation.action == "set"
        return mutation.json_value
    body = copy.deepcopy(body)
    parent = body
    for part in mutation.pointer[:-1]:
        if isinstance(part, str) and part not in parent:
            parent[part] = {}
        parent = parent[part]
    last = mutation.pointer[-1]
    if mutation.action == "remove":
        del parent[last]
    elif mutation.action == "set":
        parent[last] = mutation.json_value
    elif mutation.action == "resize":
        items = parent[last]
        parent[last] = [copy.deepcopy(items[i % len(items)]) for i in range(mutation.value)]
    elif mutation.action == "duplicate":
        parent[last].append(copy.deepcopy(parent[last][0]))
    return body


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


@pytest.fixture(scope="module")
def resolver(contract: Contract) -> SchemaResolver:
    return SchemaResolver(contract.resolve)


def _constraint_scenarios(target: str) -> list[Scenario]:
    return [
        s
        for s in generate_scenarios(load_contract())
        if s.kind == "constraint" and s.mutation is not None and s.mutation.target == target
    ]


# ------------------------------------------------------------------------------- the real contract


def test_every_operation_with_a_body_has_a_valid_complete_example(
    contract: Contract, resolver: SchemaResolver
) -> None:
    for op in contract.operations.values():
        if op.request_schema is not None:
            body = example(op.request_schema, resolver)
            errors = list(contract.validator(op.request_schema).iter_errors(body))
            assert not errors, f"{op.id}: {errors[0].message}"


@pytest.mark.parametrize("scenario", _constraint_scenarios("body"), ids=lambda s: s.id)
def test_body_mutation_breaks_only_its_constraint(
    scenario: Scenario, contract: Contract, resolver: SchemaResolver
) -> None:
    op = contract.operations[scenario.operation]
    assert op.request_schema is not None and scenario.mutation is not None
    mutation = scenario.mutation
    body = apply(example(op.request_schema, resolver), mutation)
    errors = list(contract.validator(op.request_schema).iter_errors(body))
    assert errors, f"{scenario.id}: the mutated body is still valid"
    where = mutation.pointer[:-1] if mutation.keyword == "required" else mutation.pointer
    # a value of the wrong type also fails the enum or const of the same field: one field broken
    allowed = {"type", "enum", "const"} if mutation.keyword == "type" else {mutation.keyword}
    for error in errors:
        assert error.validator in allowed, f"{scenario.id}: also breaks {error.validator}"
        assert tuple(error.absolute_path) == where, f"{scenario.id}: breaks {error.json_path}"


def _typed(text: str, schema: Mapping[str, Any]) -> Any:
    """A query value as the server would read it: integers and booleans parsed when they parse."""
    if schema.get("type") == "integer" and re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    if schema.get("type") == "boolean" and text in ("true", "false"):
        return text == "true"
    return text


@pytest.mark.parametrize(
    "scenario", _constraint_scenarios("query") + _constraint_scenarios("path"), ids=lambda s: s.id
)
def test_parameter_mutation_breaks_its_parameter(scenario: Scenario, contract: Contract) -> None:
    op = contract.operations[scenario.operation]
    assert scenario.mutation is not None
    name = scenario.mutation.pointer[0]
    parameter = next(p for p in op.parameters if p.name == name)
    if scenario.mutation.action == "remove":
        assert parameter.required
        return
    schema = contract.resolve(parameter.schema)
    value = _typed(scenario.mutation.value, schema)
    errors = list(contract.validator(parameter.schema).iter_errors(value))
    assert errors and {e.validator for e in errors} == {scenario.mutation.keyword}


def test_header_mutations_break_the_header_schema(contract: Contract) -> None:
    headers = [
        s
        for s in generate_scenarios(contract)
        if s.kind == "header" and s.mutation is not None and s.mutation.action == "set"
    ]
    assert headers
    for scenario in headers:
        assert scenario.mutation is not None
        schema = contract.header_schema(str(scenario.mutation.pointer[0]))
        errors = list(contract.validator(schema).iter_errors(scenario.mutation.value))
        keywords = {e.validator for e in errors}
        expected = {scenario.mutation.keyword}
        if scenario.mutation.keyword == "format" and "anyOf" in schema:
            expected = {"anyOf"}
        assert errors and keywords == expected, scenario.id


def test_optional_alternative_branches_use_their_own_base(contract: Contract) -> None:
    """debtorAccount.other is the card alternative of E16: its mutations start from that base."""
    by_id = {s.id: s for s in generate_scenarios(contract)}
    other = [s for s in by_id.values() if s.id.startswith("E16-debtorAccount.other")]
    assert other and {s.variant for s in other} == {"ndct-card-debtor"}
    assert (
        by_id["E17-monthsOfExecution-maxItems-12-rejected"].variant == "periodic-monthly-variable"
    )
    assert by_id["E16-creditorName-maxLength-71-rejected"].variant == "ndct-unstructured"


def test_int32_bounds_are_crossed_by_one(contract: Contract) -> None:
    by_id = {s.id: s for s in generate_scenarios(contract)}
    high = by_id["E7-0.amount-maximum-2147483648-rejected"].mutation
    low = by_id["E7-0.amount-minimum--2147483649-rejected"].mutation
    assert high is not None and high.value == 2**31 and high.pointer == (0, "amount")
    assert low is not None and low.value == -(2**31) - 1


# ------------------------------------------------------------------------------- value helpers


def test_outside_enum_keeps_the_enum_shape() -> None:
    assert outside_enum(["NO", "SE"], {"maxLength": 2}) == "ZZ"
    assert outside_enum(["14", "26"]) == "00"
    assert outside_enum(["norwegian-domestic-credit-transfers"]) == "unknown"
    assert outside_enum(["ZZ", "AB"]) not in ("ZZ", "AB")
    assert outside_enum([1, 5]) == 6
    assert outside_enum([True]) is False
    assert outside_enum([True, False]) is None


def test_breaking_pattern_fails_the_pattern_and_keeps_lengths() -> None:
    bic = "^[A-Z]{6,6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3,3}){0,1}$"
    value = breaking_pattern(bic)
    assert value is not None and re.search(bic, value) is None
    short = breaking_pattern("^[a-c]+$", max_length=1)
    assert short is not None and len(short) == 1 and re.search("^[a-c]+$", short) is None
    long = breaking_pattern("^[0-9]+$", min_length=5)
    assert long is not None and len(long) >= 5 and re.search("^[0-9]+$", long) is None
    assert breaking_pattern(".*") is None


def test_string_of_length_matches_the_pattern_when_it_can() -> None:
    assert string_of_length(4, "^[0-9]+$") == "1111"
    assert string_of_length(3) == "AAA"
    assert string_of_length(0) == ""


def test_other_than_const_keeps_the_type() -> None:
    assert other_than_const("creditCardAccount") == "unknown"
    assert other_than_const(3) == 4
    assert other_than_const(True) is False


def test_id_safe_keeps_ids_ascii() -> None:
    assert id_safe("2026-02-30") == "2026-02-30"
    assert id_safe("a b/ø") == "a_b_"
    assert id_safe("") == "empty"
    assert len(id_safe("x" * 100)) == 32 and len(id_safe("x" * 100, None)) == 100


def test_bad_format_values_are_not_of_their_format() -> None:
    from jsonschema import Draft202012Validator

    checker = Draft202012Validator.FORMAT_CHECKER
    for fmt, value in BAD_FORMAT_VALUES.items():
        assert fmt in checker.checkers, f"{fmt} is not checked by the contract's validator"
        assert not checker.conforms(value, fmt), fmt


# ------------------------------------------------------------------------------- the walker


def _identity(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    return schema


SMALL = {
    "type": "object",
    "x-spec": "spec 2.7",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "maxLength": 3, "x-spec": "spec 8"},
        "kind": {"enum": ["A", "B"]},
        "tags": {
            "type": "array",
            "maxItems": 2,
            "uniqueItems": True,
            "items": {"type": "integer", "minimum": 1, "maximum": 9},
            "x-assumed": "tags are an invention of this test",
        },
    },
}


def test_body_constraints_of_a_small_schema() -> None:
    found = body_constraints(SMALL, SchemaResolver(_identity))
    summary = {(b.mutation.pointer, b.label): b for b in found}
    assert set(summary) == {
        ((), "type-array"),
        (("name",), "required"),
        (("name",), "type-integer"),
        (("name",), "maxLength-4"),
        (("kind",), "enum-Z"),
        (("tags",), "type-object"),
        (("tags",), "maxItems-3"),
        (("tags",), "uniqueItems-duplicate"),
        (("tags", 0), "type-string"),
        (("tags", 0), "maximum-10"),
        (("tags", 0), "minimum-0"),
    }
    assert summary[(("name",), "maxLength-4")].spec == "spec 8"
    assert summary[(("name",), "required")].spec == "spec 2.7"
    assert summary[(("tags",), "maxItems-3")].mutation.value == (1, 2, 3)
    assert summary[(("tags",), "uniqueItems-duplicate")].mutation.value == (1, 1)
    # an assumption on a schema covers everything below it, and nothing beside it
    assert summary[(("tags", 0), "maximum-10")].assumed == ("tags are an invention of this test",)
    assert summary[(("name",), "maxLength-4")].assumed == ()


def test_walk_is_deterministic() -> None:
    resolver = SchemaResolver(_identity)
    assert body_constraints(SMALL, resolver) == body_constraints(SMALL, resolver)


def test_all_of_parts_are_merged() -> None:
    schema = {
        "allOf": [
            {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}},
            {"required": ["b"], "properties": {"b": {"type": "boolean"}}},
        ]
    }
    found = body_constraints(schema, SchemaResolver(_identity))
    labels = {(b.mutation.pointer, b.label) for b in found}
    assert (("a",), "required") in labels and (("b",), "required") in labels
    assert (("b",), "type-string") in labels


def test_parameter_values_are_text() -> None:
    resolver = SchemaResolver(_identity)
    limit = {"type": "integer", "minimum": 1, "maximum": 2147483647}
    found = parameter_constraints(
        limit, resolver, target="query", name="limit", spec="spec 8", required=True
    )
    assert {(b.label, b.mutation.value) for b in found} == {
        ("required", None),
        ("type-abc", "abc"),
        ("maximum-2147483648", "2147483648"),
        ("minimum-0", "0"),
    }
    product = {"type": "string", "const": "norwegian-domestic-credit-transfers", "minLength": 1}
    found = parameter_constraints(product, resolver, target="path", name="p", spec="spec 4.1")
    assert [b.label for b in found] == ["const-unknown"]


def test_any_of_formats_get_one_value_failing_all() -> None:
    schema = {"type": "string", "anyOf": [{"format": "ipv4"}, {"format": "ipv6"}]}
    found = parameter_constraints(
        schema, SchemaResolver(_identity), target="header", name="PSU-IP-Address", spec="spec 4.2"
    )
    assert [b.label for b in found] == ["format-999.1.1.1"]


# ------------------------------------------------------------------------------- the dataclasses


def test_frozen_values_thaw_to_json() -> None:
    value = {"a": [1, {"b": None}], "c": "d"}
    frozen = freeze(value)
    assert isinstance(frozen, FrozenObject)
    hash(frozen)
    assert thaw(frozen) == value
    assert thaw(()) == [] and thaw(FrozenObject()) == {}


def test_mutation_refuses_unknown_targets_and_actions() -> None:
    with pytest.raises(ValueError, match="target"):
        Mutation(target="cookie", pointer=("a",), action="set", keyword="type")
    with pytest.raises(ValueError, match="action"):
        Mutation(target="body", pointer=("a",), action="swap", keyword="type")


def test_operation_ids_are_frozen_in_scenarios(contract: Contract) -> None:
    op: Operation = contract.operations["E16"]
    scenario = next(s for s in generate_scenarios(contract) if s.operation == op.id)
    with pytest.raises(AttributeError):
        scenario.id = "x"  # type: ignore[misc]


def test_a_reading_of_an_all_of_part_stays_with_the_keyword_it_names() -> None:
    """A part's ``x-readings`` grade only the keywords the merge takes from it: the schema's own
    pattern (stated) stays must, a bound only the part has is should."""
    schema = {
        "type": "string",
        "pattern": "^[0-9]+$",
        "allOf": [
            {"pattern": "^1", "maxLength": 3, "x-readings": {"pattern": "p", "maxLength": "m"}}
        ],
    }
    found = {
        broken.mutation.keyword: broken
        for broken in body_constraints(schema, SchemaResolver(lambda s: s), spec="spec 2")
    }
    assert found["pattern"].assumed == ()
    assert found["maxLength"].assumed == ("m",)
