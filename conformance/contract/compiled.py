"""Compiled validity checks: a schema turned once into closures that answer "valid?" with exactly
``jsonschema``'s verdict, falling back to ``jsonschema`` for what it does not compile.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator, FormatChecker

from conformance.contract.walk import iter_refs

__all__ = ["Check", "CheckCompiler"]

#: ``check(instance) -> bool``: True when the instance is valid.
Check = Callable[[Any], bool]

#: Keywords that assert something in Draft 2020-12, as the installed ``jsonschema`` knows them.
ASSERTING = frozenset(Draft202012Validator.VALIDATORS)

#: The asserting keywords this module compiles; any other asserting keyword falls back.
COMPILED = frozenset(
    {
        "$ref",
        "type",
        "enum",
        "const",
        "format",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "properties",
        "patternProperties",
        "additionalProperties",
        "required",
        "dependentRequired",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "contains",
    }
)


class _NotCompiled(Exception):
    """The schema cannot be compiled as a whole (a relative ``$ref``, a ``$ref`` that does not
    resolve, a malformed keyword value): its check is the full validator's."""


def _always(instance: Any) -> bool:
    return True


def _pending(instance: Any) -> bool:
    raise AssertionError("a $ref target was called before it was compiled")


def _never(instance: Any) -> bool:
    return False


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    kind = type(value)
    if kind is int or kind is float:  # what json.loads gives: skip the ABC check
        return True
    return not isinstance(value, bool) and isinstance(value, numbers.Number)


#: ``jsonschema``'s Draft 2020-12 type checker, one test per type name.
_TYPE_TESTS: Mapping[str, Check] = {
    "array": lambda value: isinstance(value, list),
    "boolean": lambda value: isinstance(value, bool),
    "integer": _is_integer,
    "null": lambda value: value is None,
    "number": _is_number,
    "object": lambda value: isinstance(value, dict),
    "string": lambda value: isinstance(value, str),
}


def _all(checks: Sequence[Check]) -> Check:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    frozen = tuple(checks)

    def every(instance: Any) -> bool:
        # A plain loop: all() over a generator costs a frame per call on this hot path.
        for check in frozen:  # noqa: SIM110
            if not check(instance):
                return False
        return True

    return every


class CheckCompiler:
    """Compiles schemas of one contract to :data:`Check` functions.

    ``lookup(uri)`` returns the schema an absolute ``$ref`` names (``KeyError`` when none);
    ``fallback(schema)`` returns the full validator's ``is_valid`` for a schema (with the same
    registry and format checker as the contract's validators). Compiled targets of ``$ref`` are
    kept for the compiler's lifetime: the contract is read-only, so they never go stale. Not
    thread-safe: the caller compiles under its lock.
    """

    def __init__(
        self,
        lookup: Callable[[str], Any],
        fallback: Callable[[Any], Check],
        format_checker: FormatChecker,
    ) -> None:
        self._lookup = lookup
        self._fallback = fallback
        self._formats = format_checker
        self._targets: dict[str, list[Check]] = {}

    def compile(self, schema: Any) -> Check:
        """The check of ``schema``; the full validator's ``is_valid`` when it cannot be compiled."""
        if isinstance(schema, dict) and any(not _absolute(ref) for _at, ref in iter_refs(schema)):
            return self._fallback(schema)
        try:
            return self._node(schema)
        except _NotCompiled:
            return self._fallback(schema)

    # -- one subschema ---------------------------------------------------------------------------

    def _node(self, schema: Any) -> Check:
        if schema is True:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, dict):
            raise _NotCompiled(f"not a schema: {schema!r}")
        asserting = schema.keys() & ASSERTING
        if asserting - COMPILED:
            # A validator of this subschema alone resolves only absolute references right.
            if any(not _absolute(ref) for _at, ref in iter_refs(schema)):
                raise _NotCompiled("a relative $ref under a keyword that is not compiled")
            return self._fallback(schema)
        kind = schema.get("type")
        if isinstance(kind, str) and kind in _TYPE_TESTS:
            return self._typed(schema, kind)
        general: list[Check] = []
        if "type" in schema:
            general.append(self._type(schema["type"]))
        general.extend(self._general(schema))
        return _by_type(
            _all(general),
            self._string(schema),
            self._number(schema),
            self._object(schema),
            self._array(schema),
        )

    def _general(self, schema: Mapping[str, Any]) -> list[Check]:
        """The keywords that apply to an instance of any type (``type`` aside)."""
        general: list[Check] = []
        if "$ref" in schema:
            general.append(self._reference(schema["$ref"]))
        for keyword in ("enum", "const", "format"):
            if keyword in schema:
                general.append(getattr(self, "_" + keyword)(schema[keyword]))
        general.extend(self._combinators(schema))
        return general

    def _typed(self, schema: Mapping[str, Any], kind: str) -> Check:
        """A schema with one ``type``: the type test first, then only that type's keywords
        (the others cannot apply to an instance that passed it). The common shapes of the
        contract, an object with properties and a string with bounds, are single closures."""
        test = _TYPE_TESTS[kind]
        if kind == "string":
            return self._typed_string(schema)
        general = _all(self._general(schema))
        part = {
            "object": self._object,
            "array": self._array,
            "integer": self._number,
            "number": self._number,
        }.get(kind, lambda _schema: None)(schema)
        if part is None:
            if general is _always:
                return test
            return lambda instance: test(instance) and general(instance)
        if general is _always:
            return lambda instance: test(instance) and part(instance)
        return lambda instance: test(instance) and part(instance) and general(instance)

    def _typed_string(self, schema: Mapping[str, Any]) -> Check:
        """``"type": "string"`` with its bounds, pattern, string ``enum``/``const`` and
        ``format`` in one closure; anything else (a ``$ref``, a combinator) after them."""
        shortest = schema.get("minLength", 0)
        longest = schema.get("maxLength")
        pattern = re.compile(schema["pattern"]) if "pattern" in schema else None
        values: frozenset[str] | None = None
        rest = dict(schema)
        if isinstance(schema.get("enum"), list) and all(isinstance(v, str) for v in schema["enum"]):
            values = frozenset(rest.pop("enum"))
        if isinstance(schema.get("const"), str):
            const = rest.pop("const")
            values = frozenset({const}) if values is None else values & {const}
        fmt = rest.pop("format", None)
        conforms = self._formats.conforms if fmt in self._formats.checkers else None
        others = _all(self._general(rest))

        def check(instance: Any) -> bool:
            if not isinstance(instance, str):
                return False
            size = len(instance)
            if size < shortest or (longest is not None and size > longest):
                return False
            if pattern is not None and pattern.search(instance) is None:
                return False
            if values is not None and instance not in values:
                return False
            if conforms is not None and not conforms(instance, fmt):
                return False
            return others is _always or others(instance)

        return check

    def _reference(self, ref: Any) -> Check:
        if not isinstance(ref, str) or not _absolute(ref):
            raise _NotCompiled(f"$ref {ref!r} is not absolute")
        cell = self._targets.get(ref)
        if cell is None:
            try:
                target = self._lookup(ref)
            except KeyError as error:
                raise _NotCompiled(str(error)) from None
            cell = self._targets[ref] = [_pending]
            try:
                cell[0] = self._node(target)
            except _NotCompiled:
                del self._targets[ref]
                raise
            return cell[0]
        if cell[0] is not _pending:
            return cell[0]

        # A reference to a target still being compiled: a cycle. Read the cell at call time.
        def cyclic(instance: Any) -> bool:
            return cell[0](instance)

        return cyclic

    def _type(self, types: Any) -> Check:
        names = [types] if isinstance(types, str) else types
        if not isinstance(names, list) or not all(name in _TYPE_TESTS for name in names):
            raise _NotCompiled(f"unknown type {types!r}")
        tests = tuple(_TYPE_TESTS[name] for name in names)
        if len(tests) == 1:
            return tests[0]
        return lambda instance: any(test(instance) for test in tests)

    def _enum(self, values: Any) -> Check:
        if isinstance(values, list) and all(isinstance(value, str) for value in values):
            allowed = frozenset(values)
            return lambda instance: isinstance(instance, str) and instance in allowed
        return self._fallback({"enum": values})

    def _const(self, value: Any) -> Check:
        if isinstance(value, str):
            return lambda instance: isinstance(instance, str) and instance == value
        return self._fallback({"const": value})

    def _format(self, name: Any) -> Check:
        if not isinstance(name, str) or name not in self._formats.checkers:
            return _always  # FormatChecker.check ignores formats it has no checker for
        conforms = self._formats.conforms
        return lambda instance: conforms(instance, name)

    def _combinators(self, schema: Mapping[str, Any]) -> list[Check]:
        checks: list[Check] = []
        if "allOf" in schema:
            checks.extend(self._node(sub) for sub in self._list(schema["allOf"]))
        if "anyOf" in schema:
            options = tuple(self._node(sub) for sub in self._list(schema["anyOf"]))
            checks.append(lambda instance: any(option(instance) for option in options))
        if "oneOf" in schema:
            choices = tuple(self._node(sub) for sub in self._list(schema["oneOf"]))
            checks.append(lambda instance: sum(1 for c in choices if c(instance)) == 1)
        if "not" in schema:
            negated = self._node(schema["not"])
            checks.append(lambda instance: not negated(instance))
        if "if" in schema:
            condition = self._node(schema["if"])
            then = self._node(schema["then"]) if "then" in schema else _always
            otherwise = self._node(schema["else"]) if "else" in schema else _always
            checks.append(
                lambda instance: then(instance) if condition(instance) else otherwise(instance)
            )
        return checks

    @staticmethod
    def _list(value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise _NotCompiled(f"expected a list of schemas, not {value!r}")
        return value

    # -- keywords that look at one instance type ----------------------------------------------

    def _string(self, schema: Mapping[str, Any]) -> Check | None:
        shortest = schema.get("minLength")
        longest = schema.get("maxLength")
        pattern = re.compile(schema["pattern"]) if "pattern" in schema else None
        if shortest is None and longest is None and pattern is None:
            return None

        def check(text: str) -> bool:
            if shortest is not None and len(text) < shortest:
                return False
            if longest is not None and len(text) > longest:
                return False
            return pattern is None or pattern.search(text) is not None

        return check

    def _number(self, schema: Mapping[str, Any]) -> Check | None:
        bounds = {
            keyword: schema[keyword]
            for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
            if keyword in schema
        }
        if not bounds:
            return None
        low = bounds.get("minimum")
        high = bounds.get("maximum")
        low_open = bounds.get("exclusiveMinimum")
        high_open = bounds.get("exclusiveMaximum")

        def check(number: Any) -> bool:
            if low is not None and number < low:
                return False
            if high is not None and number > high:
                return False
            if low_open is not None and number <= low_open:
                return False
            return high_open is None or number < high_open

        return check

    def _object(self, schema: Mapping[str, Any]) -> Check | None:
        keywords = (
            "properties",
            "patternProperties",
            "additionalProperties",
            "required",
            "dependentRequired",
            "propertyNames",
            "minProperties",
            "maxProperties",
        )
        if not any(keyword in schema for keyword in keywords):
            return None
        return _all([self._object_shape(schema), self._object_members(schema)])

    def _object_shape(self, schema: Mapping[str, Any]) -> Check:
        """The object's keys as a whole: required, how many, and the keys others require."""
        required = tuple(schema.get("required", ()))
        dependent = tuple(
            (name, tuple(needed)) for name, needed in schema.get("dependentRequired", {}).items()
        )
        fewest = schema.get("minProperties")
        most = schema.get("maxProperties")

        def check(document: dict[Any, Any]) -> bool:
            for name in required:
                if name not in document:
                    return False
            if fewest is not None and len(document) < fewest:
                return False
            if most is not None and len(document) > most:
                return False
            for name, needed in dependent:
                if name in document and any(other not in document for other in needed):
                    return False
            return True

        return check

    def _object_members(self, schema: Mapping[str, Any]) -> Check:
        """Each member: its declared schema, the patterns its name matches, else the additional
        schema; and its name."""
        properties = {name: self._node(sub) for name, sub in schema.get("properties", {}).items()}
        patterns = tuple(
            (re.compile(pattern), self._node(sub))
            for pattern, sub in schema.get("patternProperties", {}).items()
        )
        additional = (
            self._node(schema["additionalProperties"]) if "additionalProperties" in schema else None
        )
        names = self._node(schema["propertyNames"]) if "propertyNames" in schema else None

        def check(document: dict[Any, Any]) -> bool:
            for name, value in document.items():
                declared = properties.get(name)
                if declared is not None and not declared(value):
                    return False
                matched = False
                for pattern, sub in patterns:
                    if pattern.search(name):
                        matched = True
                        if not sub(value):
                            return False
                if (
                    declared is None
                    and not matched
                    and additional is not None
                    and not additional(value)
                ):
                    return False
                if names is not None and not names(name):
                    return False
            return True

        return check

    def _array(self, schema: Mapping[str, Any]) -> Check | None:
        keywords = ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains")
        if not any(keyword in schema for keyword in keywords):
            return None
        parts = (self._array_items(schema), self._array_whole(schema))
        return _all([part for part in parts if part is not None])

    def _array_items(self, schema: Mapping[str, Any]) -> Check:
        """How many items, and each item against its schema: by position, then the rest."""
        prefix = tuple(self._node(sub) for sub in self._list(schema.get("prefixItems", [])))
        rest = self._node(schema["items"]) if "items" in schema else None
        fewest = schema.get("minItems")
        most = schema.get("maxItems")

        def check(items: list[Any]) -> bool:
            if fewest is not None and len(items) < fewest:
                return False
            if most is not None and len(items) > most:
                return False
            for check_item, item in zip(prefix, items, strict=False):
                if not check_item(item):
                    return False
            if rest is not None:
                for item in items[len(prefix) :]:
                    if not rest(item):
                        return False
            return True

        return check

    def _array_whole(self, schema: Mapping[str, Any]) -> Check | None:
        """The items together: unique, and how many match ``contains`` (None: neither)."""
        unique = self._unique() if schema.get("uniqueItems") else None
        contains = self._node(schema["contains"]) if "contains" in schema else None
        if unique is None and contains is None:
            return None
        least = schema.get("minContains", 1)
        at_most = schema.get("maxContains")

        def check(items: list[Any]) -> bool:
            if unique is not None and not unique(items):
                return False
            if contains is not None:
                matches = sum(1 for item in items if contains(item))
                if matches < least or (at_most is not None and matches > at_most):
                    return False
            return True

        return check

    def _unique(self) -> Check:
        general = self._fallback({"uniqueItems": True})

        def unique(items: list[Any]) -> bool:
            if all(isinstance(item, str) for item in items):
                return len(set(items)) == len(items)
            return general(items)

        return unique


def _by_type(
    general: Check,
    string: Check | None,
    number: Check | None,
    document: Check | None,
    array: Check | None,
) -> Check:
    """One check: the keywords for every instance, then those of the instance's own type."""
    if string is None and number is None and document is None and array is None:
        return general

    def check(instance: Any) -> bool:
        if general is not _always and not general(instance):
            return False
        if isinstance(instance, str):
            return string is None or string(instance)
        if isinstance(instance, dict):
            return document is None or document(instance)
        if isinstance(instance, list):
            return array is None or array(instance)
        if number is not None and _is_number(instance):
            return number(instance)
        return True

    return check


def _absolute(ref: str) -> bool:
    return bool(urlsplit(ref).scheme)
