"""Compiled checks (``Contract.checker``) give the verdict of ``jsonschema`` on every instance.

The reference server says "valid" through the compiled check and asks the full validator only to
explain a refusal, so a check that accepted what the validator refuses would switch a contract
constraint off. Two kinds of proof: small schemas for every keyword the compiler handles (and
the ones it must hand back), with the instances where ``jsonschema``'s semantics are subtle
(``True`` vs ``1``, ``1.0`` as an integer, a string keyword on a number); and every schema of the
real contract (bodies, parameters, headers, responses) over seeded, schema-guided random
instances, mostly almost valid so that one broken constraint deep inside is what is tested.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from conformance.contract import Contract, load_contract
from conformance.contract.compiled import ASSERTING, COMPILED, CheckCompiler
from conformance.generate import factories

FORMATS = Draft202012Validator.FORMAT_CHECKER


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def _reference(schema: Any, registry: Registry[Any] | None = None) -> Draft202012Validator:
    return Draft202012Validator(schema, registry=registry or Registry(), format_checker=FORMATS)


def _compiler(registry: Registry[Any]) -> CheckCompiler:
    return CheckCompiler(
        lambda uri: registry.resolver().lookup(uri).contents,
        lambda schema: _reference(schema, registry).is_valid,
        FORMATS,
    )


def _same(schema: Any, instances: list[Any], registry: Registry[Any] | None = None) -> None:
    registry = registry or Registry()
    check = _compiler(registry).compile(schema)
    validator = _reference(schema, registry)
    for instance in instances:
        assert check(instance) is validator.is_valid(instance), (schema, instance)


# A value of every JSON type, with the ones where Python's equality and JSON's differ.
ODD = [None, True, False, 0, 1, -1, 1.0, 1.5, 0.0, "", "x", "1", "true", [], [1], {}, {"a": 1}]


# ------------------------------------------------------------------------------ keyword by keyword

KEYWORD_CASES: list[tuple[str, Any, list[Any]]] = [
    ("true", True, ODD),
    ("false", False, ODD),
    ("empty", {}, ODD),
    ("annotations-only", {"description": "d", "x-spec": "spec 2", "title": "t"}, ODD),
    ("type-string", {"type": "string"}, ODD),
    ("type-integer", {"type": "integer"}, [*ODD, 2.0, 10**20]),
    ("type-number", {"type": "number"}, ODD),
    ("type-boolean", {"type": "boolean"}, ODD),
    ("type-null", {"type": "null"}, ODD),
    ("type-array", {"type": "array"}, ODD),
    ("type-object", {"type": "object"}, ODD),
    ("type-list", {"type": ["string", "null"]}, ODD),
    ("enum-strings", {"enum": ["NOK", "EUR"]}, [*ODD, "NOK", "nok", "EUR ", ["NOK"]]),
    ("enum-mixed", {"enum": [1, "1", None, [1], {"a": 1}]}, [*ODD, 1.0, [True], {"a": True}]),
    ("enum-bool", {"enum": [True]}, ODD),
    ("const-string", {"const": "GET"}, [*ODD, "GET", "get"]),
    ("const-number", {"const": 1}, [*ODD, 1.0]),
    ("const-false", {"const": False}, ODD),
    ("const-object", {"const": {"a": 1}}, [*ODD, {"a": 1.0}, {"a": True}]),
    (
        "lengths",
        {"minLength": 2, "maxLength": 3},
        [*ODD, "ab", "abc", "abcd", "ø" * 3, "é" * 4, 12, ["a", "b"]],
    ),
    ("pattern", {"pattern": "^[0-9]{1,2}$"}, [*ODD, "12", "123", "1\n", "a1", 12]),
    ("pattern-search", {"pattern": "[0-9]"}, [*ODD, "a1b", "abc"]),
    ("format-date", {"format": "date"}, [*ODD, "2026-01-15", "2026-02-30", "2026-1-5", 20260115]),
    ("format-uuid", {"format": "uuid"}, [*ODD, str(uuid.UUID(int=7)), "not-a-uuid"]),
    ("format-unknown", {"format": "no-such-format"}, ODD),
    (
        "numbers",
        {"minimum": 1, "maximum": 3},
        [*ODD, 0.99, 3, 3.01, True, "2"],
    ),
    (
        "exclusive",
        {"exclusiveMinimum": 1, "exclusiveMaximum": 3},
        [*ODD, 1, 2, 2.5, 3],
    ),
    (
        "object",
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["a"],
            "additionalProperties": False,
        },
        [*ODD, {"a": "x"}, {"a": "x", "b": 1}, {"a": "x", "b": "1"}, {"a": 1}, {"a": "x", "c": 1}],
    ),
    (
        "object-additional-schema",
        {
            "properties": {"a": {}},
            "patternProperties": {"^x-": {"type": "string"}},
            "additionalProperties": {"type": "integer"},
        },
        [{"a": []}, {"x-1": "s"}, {"x-1": 1}, {"b": 1}, {"b": "s"}, {"a": 1, "x-a": 2}, "s"],
    ),
    (
        "object-counts",
        {"minProperties": 1, "maxProperties": 2, "dependentRequired": {"a": ["b"]}},
        [*ODD, {"a": 1, "b": 2}, {"b": 1}, {"a": 1, "b": 2, "c": 3}],
    ),
    (
        "property-names",
        {"propertyNames": {"maxLength": 1}},
        [*ODD, {"a": 1, "bb": 2}],
    ),
    (
        "array",
        {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
        [*ODD, ["a"], ["a", "b"], ["a", "b", "c"], ["a", 1], ("a",)],
    ),
    (
        "prefix-items",
        {"prefixItems": [{"type": "integer"}], "items": False},
        [*ODD, [1], [1, 2], ["a"], []],
    ),
    (
        "unique-items",
        {"uniqueItems": True},
        [*ODD, ["a", "a"], ["a", "b"], [1, True], [1, 1.0], [{"a": 1}, {"a": 1}], [[1], [True]]],
    ),
    (
        "contains",
        {"contains": {"const": "GET"}},
        [*ODD, ["GET"], ["POST"], ["POST", "GET"]],
    ),
    (
        "contains-counts",
        {"contains": {"type": "integer"}, "minContains": 2, "maxContains": 3},
        [*ODD, [1], [1, 2], [1, 2, 3, 4], [1, "a", 2]],
    ),
    ("min-contains-zero", {"contains": {"type": "integer"}, "minContains": 0}, [*ODD, ["a"]]),
    (
        "combinators",
        {
            "anyOf": [{"type": "string"}, {"type": "integer"}],
            "oneOf": [{"minLength": 2}, {"type": "integer"}],
            "not": {"const": "no"},
        },
        [*ODD, "ab", "no", 5, "a"],
    ),
    ("all-of", {"allOf": [{"minimum": 1}, {"maximum": 2}]}, [*ODD, 2, 3]),
    (
        "if-then-else",
        {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}},
        [*ODD, "ab", 2],
    ),
    ("then-without-if", {"then": False}, ODD),
    ("string-enum-const", {"type": "string", "enum": ["a", "b"], "const": "a"}, [*ODD, "a", "b"]),
    ("string-const-outside-enum", {"type": "string", "enum": ["b"], "const": "a"}, [*ODD, "a"]),
    (
        "string-everything",
        {
            "type": "string",
            "minLength": 2,
            "maxLength": 10,
            "pattern": "^[0-9-]+$",
            "format": "date",
        },
        [*ODD, "2026-01-15", "2026-02-30", "12", "abc", "2026-01-155"],
    ),
    (
        "integer-bounds-enum",
        {"type": "integer", "minimum": 1, "maximum": 5, "enum": [1, 2, 7]},
        [*ODD, 2, 2.0, 7, True, 5],
    ),
    (
        "object-any-of",
        {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
        [*ODD, {"a": 1}, {"b": 1}, {"c": 1}],
    ),
    ("boolean-const", {"type": "boolean", "const": True}, ODD),
    ("multiple-of", {"multipleOf": 0.5, "type": "number"}, [*ODD, 2.5, 2.25]),
    (
        "unevaluated",
        {"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": False},
        [*ODD, {"a": 1}, {"b": 1}],
    ),
]


@pytest.mark.parametrize(
    ("schema", "instances"),
    [pytest.param(schema, instances, id=name) for name, schema, instances in KEYWORD_CASES],
)
def test_keyword_verdicts_match_jsonschema(schema: Any, instances: list[Any]) -> None:
    _same(schema, instances)


def test_every_asserting_keyword_is_compiled_or_falls_back() -> None:
    """A keyword the compiler does not know is handed to jsonschema, never skipped."""
    assert COMPILED <= ASSERTING, "a compiled keyword that jsonschema does not assert"
    handed: list[Any] = []

    def fallback(schema: Any) -> Any:
        handed.append(schema)
        return _reference(schema).is_valid

    compiler = CheckCompiler(lambda uri: {}, fallback, FORMATS)
    for keyword in sorted(ASSERTING - COMPILED):
        schema = {"type": "object", keyword: {}}
        compiler.compile(schema)
        assert handed[-1] is schema, keyword


def _registry(*documents: dict[str, Any]) -> Registry[Any]:
    return Registry().with_resources(
        (doc["$id"], Resource.from_contents(doc, default_specification=DRAFT202012))
        for doc in documents
    )


def test_references_beside_siblings_and_cycles() -> None:
    tree = {
        "$id": "https://example.invalid/tree.json",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {
                        "type": "array",
                        "items": {"$ref": "https://example.invalid/tree.json#/$defs/Node"},
                    },
                },
                "required": ["name"],
            }
        },
    }
    registry = _registry(tree)
    schema = {"$ref": "https://example.invalid/tree.json#/$defs/Node", "maxProperties": 1}
    instances = [
        {"name": "a"},
        {"name": "a", "children": []},
        {"children": [{"name": "b"}]},
        {"name": "a", "children": [{"name": "b", "children": [{"children": []}]}]},
        {"name": 1},
        "a",
    ]
    _same(schema, instances, registry)
    _same({"$ref": "https://example.invalid/tree.json#/$defs/Node"}, instances, registry)


def test_relative_references_are_left_to_jsonschema() -> None:
    schema = {
        "$defs": {"Short": {"maxLength": 2}},
        "properties": {"a": {"$ref": "#/$defs/Short"}},
        "not": {"multipleOf": 3, "$ref": "#/$defs/Short"},
    }
    _same(schema, [{"a": "ab"}, {"a": "abc"}, {}, 3, 4, "abc", "ab"])


def test_an_unresolvable_reference_fails_as_in_jsonschema(contract: Contract) -> None:
    schema = {"$ref": "https://psd2-conformance.invalid/schemas/types/none.json#/$defs/X"}
    with pytest.raises(Exception) as expected:
        contract.validator(schema).is_valid(1)
    with pytest.raises(expected.type):
        contract.checker(schema)(1)


def test_checker_is_cached_like_the_validator(contract: Contract) -> None:
    schema = {"type": "string", "maxLength": 3}
    check = contract.checker(schema)
    assert contract.checker(schema) is check
    assert contract.checker({"maxLength": 3, "type": "string"}) is check
    assert check("abc") and not check("abcd")


# ------------------------------------------------------------------------------ the real contract


class Fuzzer:
    """Seeded instances guided by a schema: each node is generated valid with probability
    ``keep``, else broken (an odd value of any type, a value just past a bound, a member missing
    or unexpected), so most instances break few constraints, deep inside."""

    SAMPLES = (
        "DNBANOKK",
        "DNBANOKKXXX",
        "10.00",
        "0.00",
        "-5.5",
        "123456.12345",
        "5",
        "12",
        "01010112345",
        "12345678903",
        "NO9386011117947",
        "NOK",
        "SHA-256=abc=",
        "abc=",
        "Sun, 05 Jan 2014 21:31:40 GMT",
        "https://tpp.example/cb",
        "192.0.2.10",
        "::1",
        "x",
        "",
    )

    def __init__(self, contract: Contract, seed: int, keep: float = 0.97) -> None:
        self.contract = contract
        self.rng = random.Random(seed)
        self.keep = keep

    def value(self, schema: Any, depth: int = 0) -> Any:
        rng = self.rng
        if not isinstance(schema, dict) or depth > 8:
            return rng.choice(ODD)
        schema = self.contract.resolve(schema)
        valid = rng.random() < self.keep
        if not valid and rng.random() < 0.5:
            return rng.choice(ODD)
        composed = self._composition(schema)
        if composed is not None:
            return self.value(composed, depth + 1)
        if "const" in schema:
            return schema["const"] if valid else rng.choice(ODD)
        if "enum" in schema:
            chosen = rng.choice(schema["enum"])
            return chosen if valid else str(chosen).lower() + "x"
        return self._typed(schema, depth, valid)

    def _composition(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        """One branch of an ``anyOf``/``oneOf`` merged with the rest, or ``allOf`` merged."""
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                merged = {k: v for k, v in schema.items() if k != keyword}
                branch = self.contract.resolve(self.rng.choice(schema[keyword]))
                return {**merged, **branch}
        if "allOf" in schema:
            return self._merged(schema)
        return None

    def _typed(self, schema: dict[str, Any], depth: int, valid: bool) -> Any:
        rng = self.rng
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = rng.choice(kind)
        if kind == "object" or "properties" in schema:
            return self._object(schema, depth, valid)
        if kind == "array":
            return self._array(schema, depth, valid)
        if kind in ("integer", "number"):
            return self._number(schema, kind, valid)
        if kind == "boolean":
            return rng.random() < 0.5 if valid else rng.choice(ODD)
        if kind == "null":
            return None
        return self._string(schema, valid)

    def _merged(self, schema: dict[str, Any]) -> dict[str, Any]:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            for key, sub in self.contract.resolve(part).items():
                if key == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **sub}
                elif key == "required":
                    merged["required"] = [*merged.get("required", []), *sub]
                else:
                    merged.setdefault(key, sub)
        return merged

    def _object(self, schema: dict[str, Any], depth: int, valid: bool) -> Any:
        rng = self.rng
        required = set(schema.get("required", ()))
        document = {
            name: self.value(sub, depth + 1)
            for name, sub in schema.get("properties", {}).items()
            if name in required or rng.random() < 0.5
        }
        if not valid:
            if required and rng.random() < 0.5:
                document.pop(rng.choice(sorted(required)), None)
            else:
                document["unexpectedMember"] = rng.choice(ODD)
        return document

    def _array(self, schema: dict[str, Any], depth: int, valid: bool) -> Any:
        rng = self.rng
        low = schema.get("minItems", 0)
        high = schema.get("maxItems", low + 3)
        size = rng.randint(low, min(high, low + 3))
        if not valid:
            size = rng.choice([max(low - 1, 0), high + 1])
        values = [self.value(schema.get("items", {}), depth + 1) for _ in range(size)]
        if schema.get("uniqueItems"):
            values = [v for i, v in enumerate(values) if v not in values[:i]]
            if not valid and values:
                values.append(values[0])
        return values

    def _number(self, schema: dict[str, Any], kind: str, valid: bool) -> Any:
        rng = self.rng
        low = schema.get("minimum", schema.get("exclusiveMinimum", -5) + 1)
        high = schema.get("maximum", schema.get("exclusiveMaximum", low + 10) - 1)
        if valid:
            value = rng.choice([low, high, (low + high) // 2])
            return float(value) if kind == "number" and rng.random() < 0.3 else value
        return rng.choice([low - 1, high + 1, 1.5, True, str(low)])

    def _string(self, schema: dict[str, Any], valid: bool) -> Any:
        rng = self.rng
        fmt = schema.get("format")
        if fmt == "date":
            return "2026-01-15" if valid else rng.choice(["2026-02-30", "2026-1-5", "15.01.2026"])
        if fmt == "uuid":
            return str(uuid.UUID(int=rng.getrandbits(128))) if valid else "not-a-uuid"
        low = schema.get("minLength", 0)
        high = schema.get("maxLength", max(low, 8))
        pattern = schema.get("pattern")
        fitting = [
            text
            for text in self.SAMPLES
            if (pattern is None or re.search(pattern, text)) and low <= len(text) <= high
        ]
        if pattern is not None or fmt is not None:
            if valid and fitting:
                return rng.choice(fitting)
            return rng.choice(self.SAMPLES)
        if valid:
            size = rng.choice([low, high, (low + high) // 2])
        else:
            size = rng.choice([max(low - 1, 0), high + 1])
        return "".join(rng.choice("abcXYZ019 ø-") for _ in range(size))


def _schemas(contract: Contract) -> Iterator[tuple[str, Any]]:
    for op in contract.operations.values():
        if op.request_schema is not None:
            yield f"{op.id}-body", op.request_schema
        for parameter in op.parameters:
            yield f"{op.id}-{parameter.location}-{parameter.name}", parameter.schema
        for status, response in op.responses.items():
            if response.schema is not None:
                yield f"{op.id}-{status}", response.schema
    for name in contract.header_names:
        yield f"header-{name}", contract.header_schema(name)


_CONTRACT_SCHEMAS = list(_schemas(load_contract()))


@pytest.mark.parametrize(
    "name", [name for name, _schema in _CONTRACT_SCHEMAS], ids=[n for n, _s in _CONTRACT_SCHEMAS]
)
def test_contract_schema_verdicts_match_jsonschema(contract: Contract, name: str) -> None:
    schema = dict(_CONTRACT_SCHEMAS)[name]
    count = 120 if name.endswith("-body") else 40
    fuzzer = Fuzzer(contract, seed=sum(map(ord, name)))
    check, validator = contract.checker(schema), contract.validator(schema)
    verdicts = set()
    for _ in range(count):
        instance = fuzzer.value(schema)
        verdict = validator.is_valid(instance)
        assert check(instance) is verdict, (name, instance)
        verdicts.add(verdict)
    if name.endswith("-body"):
        assert verdicts == {True, False}, f"{name}: the fuzzer must reach both verdicts"


@pytest.mark.parametrize("keep", [0.9, 0.97, 0.995])
def test_request_body_verdicts_match_jsonschema_at_length(contract: Contract, keep: float) -> None:
    for op in contract.operations.values():
        if op.request_schema is None:
            continue
        fuzzer = Fuzzer(contract, seed=int(keep * 1000), keep=keep)
        check, validator = (
            contract.checker(op.request_schema),
            contract.validator(op.request_schema),
        )
        for _ in range(250):
            instance = fuzzer.value(op.request_schema)
            assert check(instance) is validator.is_valid(instance), (op.id, instance)


def test_factory_payments_are_valid_through_both(contract: Contract) -> None:
    schema = contract.operations["E16"].request_schema
    assert schema is not None
    for seed in range(30):
        body = factories.ndct_payment(seed)
        assert contract.checker(schema)(body) is contract.validator(schema).is_valid(body)
        assert contract.checker(schema)(body)


# ------------------------------------------------------------------ inlined references (validator)


def _errors(validator: Validator, instance: Any) -> list[tuple[Any, ...]]:
    return [
        (error.validator, error.message, tuple(error.absolute_path))
        for error in validator.iter_errors(instance)
    ]


@pytest.mark.parametrize(
    "name", [name for name, _schema in _CONTRACT_SCHEMAS], ids=[n for n, _s in _CONTRACT_SCHEMAS]
)
def test_contract_validators_report_the_errors_of_the_schema_with_references(
    contract: Contract, name: str
) -> None:
    """``Contract.validator`` validates the schema with its ``$ref``\\s inlined and enums of
    strings by set (``conformance.contract.validators``); the errors it lists must be stock
    ``jsonschema``'s on the schema as written, in the same order, so that the server's messages
    and ``best_match`` do not change."""
    schema = dict(_CONTRACT_SCHEMAS)[name]
    inlined, plain = contract.validator(schema), _reference(schema, contract.registry)
    fuzzer = Fuzzer(contract, seed=sum(map(ord, name)) + 1, keep=0.9)
    refused = 0
    for _ in range(60 if name.endswith("-body") else 20):
        instance = fuzzer.value(schema)
        expected = _errors(plain, instance)
        assert _errors(inlined, instance) == expected, (name, instance)
        refused += bool(expected)
    if name.endswith("-body"):
        assert refused, f"{name}: the fuzzer must reach refused bodies"


def test_inlining_keeps_recursive_and_allof_sibling_references() -> None:
    from conformance.contract.validators import inline_refs

    documents = {
        "https://x.invalid/node": {
            "type": "object",
            "properties": {"next": {"$ref": "https://x.invalid/node"}},
        },
        "https://x.invalid/name": {"type": "string", "maxLength": 3},
    }
    schema = {
        "properties": {
            "a": {"$ref": "https://x.invalid/node"},
            "b": {"allOf": [{"minLength": 1}], "$ref": "https://x.invalid/name"},
            "c": {"description": "d", "$ref": "https://x.invalid/name", "enum": ["$ref"]},
        }
    }
    inlined = inline_refs(schema, documents.__getitem__)
    node = inlined["properties"]["a"]["allOf"][0]
    assert node["properties"]["next"] == {"$ref": "https://x.invalid/node"}  # would recurse
    assert inlined["properties"]["b"]["$ref"] == "https://x.invalid/name"  # beside an allOf
    assert list(inlined["properties"]["c"]) == ["description", "allOf", "enum"]  # in its place
    assert inline_refs({"$ref": "https://x.invalid/missing"}, documents.__getitem__) == {
        "$ref": "https://x.invalid/missing"
    }
    dynamic = {"$id": "https://x.invalid/d", "items": {"$dynamicRef": "#n"}, "$ref": "name"}
    assert inline_refs(dynamic, documents.__getitem__) is dynamic


@pytest.mark.parametrize(
    "enum",
    [["NOK", "EUR"], [1, "1", None, [1], {"a": 1}], [True], ["a", "b", "a"], []],
    ids=["strings", "mixed", "bool", "repeated", "empty"],
)
def test_the_set_based_enum_reports_what_jsonschema_reports(enum: list[Any]) -> None:
    from conformance.contract.validators import ContractValidator

    schema = {"enum": enum}
    fast, stock = ContractValidator(schema), Draft202012Validator(schema)
    for instance in [*ODD, "NOK", "nok", "EUR ", "a", ["NOK"], 1.0, [True], {"a": True}]:
        assert _errors(fast, instance) == _errors(stock, instance), (enum, instance)
