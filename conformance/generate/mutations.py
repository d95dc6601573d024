"""Constraint mutations: walk a JSON Schema and break each of its constraints alone.

For every constraint a request schema states (a required member, a ``maxLength``, an ``enum``,
a ``pattern``, an int32 bound, ...) this module yields one :class:`BrokenConstraint`: a
:class:`~conformance.scenario.Mutation` that, applied to a valid base request, breaks that
constraint and, as far as a value can be chosen to do so, nothing else (a too-long string still
matches the field's pattern; a value outside an enum keeps the field's length bounds). Because the
mutations come from the schema, a constraint added to ``schemas/`` becomes a scenario without code.

The values come from ``breaking_values``, so scenario ids stay stable.

Mutations point *into* optional objects and arrays as well; the scenario that carries one names
a base variant that holds those parents (``conformance.generate.variants``), so a mutation below
an optional parent never adds a half-built parent of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from conformance._types import Schema
from conformance.generate.breaking_values import (
    BAD_FORMAT_VALUES,
    OTHER_TYPE,
    OTHER_TYPE_TEXT,
    bad_any_format,
    breaking_pattern,
    distinct_items,
    id_safe,
    other_than_const,
    outside_enum,
    string_of_length,
)
from conformance.scenario import FrozenObject, Mutation

__all__ = [
    "DEFAULT_SPEC",
    "BrokenConstraint",
    "SchemaResolver",
    "body_constraints",
    "parameter_constraints",
]

Pointer = tuple[str | int, ...]
#: Spec part of a constraint whose schema (and every schema above it) names none.
DEFAULT_SPEC = "spec 2"

#: Member added when ``additionalProperties`` is ``false``.
_UNEXPECTED_MEMBER = "unexpectedMember"
_MAX_DEPTH = 16


@dataclass(frozen=True, slots=True)
class BrokenConstraint:
    """One constraint broken alone: the mutation, and what a scenario needs to describe it.

    ``label`` is ``<keyword>-<value or size>`` (``maxLength-71``, ``enum-ZZ``, ``required``),
    the tail of a scenario id; ``spec`` the nearest ``x-spec`` at or above the constraint;
    ``description`` a phrase for a title ("71 characters, over maxLength 70"); ``assumed`` the
    ``x-assumed`` texts of the schemas the constraint rests on, and the ``x-readings`` entry of
    its keyword at or above it; ``quotes`` the ``x-quotes`` labels of the schemas on the way
    down (the sentences of the spec that state the constraint).
    """

    mutation: Mutation
    label: str
    spec: str
    description: str
    assumed: tuple[str, ...] = ()
    quotes: tuple[str, ...] = ()


class SchemaResolver:
    """The effective schema of a (sub)schema: ``$ref`` followed, ``allOf`` parts merged; cached.

    ``resolve`` follows a top-level reference (``Contract.resolve``). Results are cached by the
    identity of the schema object, which the contract keeps alive, so each schema is resolved
    once per contract however many scenarios walk it.
    """

    def __init__(self, resolve: Callable[[Schema], Schema]) -> None:
        self._resolve = resolve
        self._cache: dict[int, tuple[Schema, Schema]] = {}

    def __call__(self, schema: Schema) -> Schema:
        entry = self._cache.get(id(schema))
        if entry is not None and entry[0] is schema:
            return entry[1]
        effective = self._merge_all_of(self._resolve(schema))
        self._cache[id(schema)] = (schema, effective)
        return effective

    def _merge_all_of(self, schema: Schema) -> Schema:
        parts = schema.get("allOf")
        if not isinstance(parts, list) or not parts:
            return schema
        merged: dict[str, Any] = {key: value for key, value in schema.items() if key != "allOf"}
        for part in parts:
            if not isinstance(part, Mapping):
                continue
            effective = self(part)
            taken = {key for key in effective if key not in merged}
            for key, value in effective.items():
                if key == "required":
                    merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
                elif key == "properties":
                    merged["properties"] = {**value, **merged.get("properties", {})}
                elif key == "x-readings" and isinstance(value, Mapping):
                    # a part's readings name its own keywords: only those the merge takes
                    # from it (a keyword the schema or an earlier part has keeps its grade)
                    kept = {k: v for k, v in value.items() if k in taken}
                    if kept:
                        merged["x-readings"] = {**kept, **merged.get("x-readings", {})}
                else:
                    merged.setdefault(key, value)
        return merged


def _assumed(schema: Schema) -> tuple[str, ...]:
    texts = []
    for key in ("x-assumed", "x-assumption"):
        value = schema.get(key)
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, list):
            texts.extend(str(item) for item in value)
    return tuple(texts)


# ------------------------------------------------------------------------------------ walking


@dataclass(frozen=True, slots=True)
class _Site:
    """Where a constraint is broken: the mutation target, the pointer, the inherited spec part and
    the ``x-assumed`` texts of the schemas on the way down.

    An assumption recorded on a schema covers every constraint at or below it (a field whose name
    is assumed makes its items' bounds assumed too): conservative, and simple to explain.
    """

    target: str
    pointer: Pointer
    spec: str
    assumed: tuple[str, ...] = ()
    quotes: tuple[str, ...] = ()
    readings: tuple[tuple[str, str], ...] = ()

    def enter(self, schema: Schema) -> _Site:
        """This site seen from inside ``schema``: its ``x-spec``, ``x-assumed``, ``x-quotes`` and
        ``x-readings`` added (``x-readings``: keyword → reading, for this schema's own keywords)."""
        quotes = schema.get("x-quotes")
        readings = schema.get("x-readings")
        return _Site(
            self.target,
            self.pointer,
            _spec_of(schema, self.spec),
            (*self.assumed, *_assumed(schema)),
            tuple(dict.fromkeys((*self.quotes, *(quotes if isinstance(quotes, list) else ())))),
            (
                *self.readings,
                *(
                    (str(keyword), str(text))
                    for keyword, text in (readings.items() if isinstance(readings, Mapping) else ())
                ),
            ),
        )

    def below(self, part: str | int) -> _Site:
        """A member or item of this site: its ``x-readings`` stay behind (they name keywords of
        this schema), its ``x-assumed`` and ``x-quotes`` go along."""
        return _Site(self.target, (*self.pointer, part), self.spec, self.assumed, self.quotes)

    def reading_of(self, keyword: str) -> tuple[str, ...]:
        """The ``x-readings`` texts recorded for ``keyword`` at or above this site."""
        return tuple(text for name, text in self.readings if name == keyword)


class _Walker:
    """Yields the broken constraints of one schema; one instance per schema walked."""

    def __init__(self, resolver: SchemaResolver) -> None:
        self.resolver = resolver

    def body(
        self, schema: Schema, spec: str, quotes: tuple[str, ...] = ()
    ) -> Iterator[BrokenConstraint]:
        yield from self._node(schema, _Site("body", (), spec, quotes=quotes), depth=0)

    def value(self, schema: Schema, site: _Site) -> Iterator[BrokenConstraint]:
        """Constraints of one text value (query or path parameter, header)."""
        effective = self.resolver(schema)
        yield from self._scalar(effective, site.enter(effective))

    # -- one node of a body

    def _node(self, schema: Schema, site: _Site, depth: int) -> Iterator[BrokenConstraint]:
        if depth > _MAX_DEPTH:
            return
        effective = self.resolver(schema)
        if effective.get("readOnly"):
            return
        site = site.enter(effective)
        yield from self._scalar(effective, site)
        if effective.get("type") == "object" or "properties" in effective:
            yield from self._object(effective, site, depth)
        if effective.get("type") == "array" or "items" in effective:
            yield from self._array(effective, site, depth)

    def _object(self, schema: Schema, site: _Site, depth: int) -> Iterator[BrokenConstraint]:
        properties: Mapping[str, Any] = schema.get("properties", {})
        for name in schema.get("required", []):
            child = properties.get(name)
            # "required (assumed ...)" is written on the member, so its own notes count here
            extra = _assumed(child) if isinstance(child, Mapping) else ()
            member = self.resolver(child) if isinstance(child, Mapping) else {}
            member_quotes = member.get("x-quotes")
            yield _broken(
                site,
                (name,),
                "remove",
                None,
                "required",
                "required",
                f"without the required member {name}",
                extra,
                tuple(member_quotes) if isinstance(member_quotes, list) else (),
            )
        if schema.get("additionalProperties") is False:
            yield _broken(
                site,
                (_UNEXPECTED_MEMBER,),
                "set",
                "x",
                "additionalProperties",
                f"additionalProperties-{_UNEXPECTED_MEMBER}",
                f"with a member {_UNEXPECTED_MEMBER} the schema does not allow",
            )
        for name, child in properties.items():
            if isinstance(child, Mapping):
                yield from self._node(child, site.below(name), depth + 1)

    def _array(self, schema: Schema, site: _Site, depth: int) -> Iterator[BrokenConstraint]:
        raw_items = schema.get("items")
        items = self.resolver(raw_items) if isinstance(raw_items, Mapping) else {}
        if isinstance(schema.get("maxItems"), int):
            count = schema["maxItems"] + 1
            concrete = distinct_items(items, count)
            action, value = ("set", concrete) if concrete is not None else ("resize", count)
            yield _broken(
                site,
                (),
                action,
                value,
                "maxItems",
                f"maxItems-{count}",
                f"with {count} items, over maxItems {schema['maxItems']}",
            )
        if isinstance(schema.get("minItems"), int) and schema["minItems"] >= 1:
            count = schema["minItems"] - 1
            concrete = distinct_items(items, count)
            action, value = ("set", concrete) if concrete is not None else ("resize", count)
            yield _broken(
                site,
                (),
                action,
                value,
                "minItems",
                f"minItems-{count}",
                f"with {count} items, under minItems {schema['minItems']}",
            )
        if schema.get("uniqueItems") is True:
            pair = distinct_items(items, 1)
            action, value = ("set", pair * 2) if pair is not None else ("duplicate", None)
            yield _broken(
                site,
                (),
                action,
                value,
                "uniqueItems",
                "uniqueItems-duplicate",
                "with an item repeated although items must be unique",
            )
        if isinstance(raw_items, Mapping):
            yield from self._node(raw_items, site.below(0), depth + 1)

    # -- constraints on the value itself

    def _scalar(self, schema: Schema, site: _Site) -> Iterator[BrokenConstraint]:
        declared = schema.get("type")
        if isinstance(declared, str):
            yield from self._type(declared, site)
        if "const" in schema:
            other = other_than_const(schema["const"])
            if other is not None:
                yield self._set(
                    site,
                    other,
                    "const",
                    f"const-{id_safe(other)}",
                    f"set to {other!r} instead of the constant {schema['const']!r}",
                )
        elif isinstance(schema.get("enum"), list):
            outside = outside_enum(schema["enum"], schema)
            if outside is not None:
                yield self._set(
                    site,
                    outside,
                    "enum",
                    f"enum-{id_safe(outside)}",
                    f"set to {outside!r}, which is not one of its {len(schema['enum'])} values",
                )
        if declared == "string" or (declared is None and _looks_textual(schema)):
            yield from self._string(schema, site)
        if declared in ("integer", "number"):
            yield from self._number(schema, site)

    def _type(self, declared: str, site: _Site) -> Iterator[BrokenConstraint]:
        if site.target in ("path", "header"):
            return  # a path segment or header value is text whatever its schema says
        if site.target == "query":
            if declared not in OTHER_TYPE_TEXT:
                return
            text = OTHER_TYPE_TEXT[declared]
            yield _broken(
                site,
                (),
                "set",
                text,
                "type",
                f"type-{text}",
                f"set to {text!r}, which is not a {declared}",
            )
            return
        other = OTHER_TYPE[declared]
        yield _broken(
            site,
            (),
            "set",
            other,
            "type",
            f"type-{_json_type(other)}",
            f"given as a JSON {_json_type(other)} instead of a {declared}",
        )

    def _string(self, schema: Schema, site: _Site) -> Iterator[BrokenConstraint]:
        pattern = schema.get("pattern") if isinstance(schema.get("pattern"), str) else None
        min_length = schema.get("minLength", 0)
        max_length = schema.get("maxLength")
        enumerated = "enum" in schema or "const" in schema
        if isinstance(max_length, int) and not enumerated and site.target != "path":
            text = string_of_length(max_length + 1, pattern)
            yield self._set(
                site,
                text,
                "maxLength",
                f"maxLength-{len(text)}",
                f"{len(text)} characters long, over maxLength {max_length}",
            )
        if (
            isinstance(min_length, int)
            and min_length >= 1
            and not enumerated
            and site.target != "path"
        ):
            text = string_of_length(min_length - 1, pattern)
            yield self._set(
                site,
                text,
                "minLength",
                f"minLength-{len(text)}",
                f"{len(text)} characters long, under minLength {min_length}",
            )
        if pattern is not None and not enumerated:
            breaker = breaking_pattern(
                pattern, min_length if isinstance(min_length, int) else 0, max_length
            )
            if breaker is not None:
                yield self._set(
                    site,
                    breaker,
                    "pattern",
                    f"pattern-{id_safe(breaker)}",
                    f"set to {breaker!r}, which does not match the pattern {pattern}",
                )
        fmt = schema.get("format")
        if isinstance(fmt, str) and fmt in BAD_FORMAT_VALUES and not enumerated:
            text = BAD_FORMAT_VALUES[fmt]
            yield self._set(
                site,
                text,
                "format",
                f"format-{id_safe(text)}",
                f"set to {text!r}, which is not a valid {fmt}",
            )
        formats = _any_of_formats(schema)
        if formats:
            outside = bad_any_format(formats)
            if outside is not None:
                yield self._set(
                    site,
                    outside,
                    "format",
                    f"format-{id_safe(outside)}",
                    f"set to {outside!r}, which is none of {', '.join(formats)}",
                )

    def _number(self, schema: Schema, site: _Site) -> Iterator[BrokenConstraint]:
        bounds = (
            ("maximum", 1, "over the maximum"),
            ("minimum", -1, "under the minimum"),
            ("exclusiveMaximum", 0, "at the exclusive maximum"),
            ("exclusiveMinimum", 0, "at the exclusive minimum"),
        )
        for keyword, step, phrase in bounds:
            limit = schema.get(keyword)
            if isinstance(limit, int | float) and not isinstance(limit, bool):
                value = limit + step
                sent = str(value) if site.target in ("query", "path", "header") else value
                yield _broken(
                    site,
                    (),
                    "set",
                    sent,
                    keyword,
                    f"{keyword}-{value}",
                    f"set to {value}, {phrase} {limit}",
                )

    def _set(
        self, site: _Site, value: Any, keyword: str, label: str, description: str
    ) -> BrokenConstraint:
        return _broken(site, (), "set", value, keyword, label, description)


def _broken(
    site: _Site,
    below: Pointer,
    action: str,
    value: Any,
    keyword: str,
    label: str,
    description: str,
    extra_assumed: tuple[str, ...] = (),
    extra_quotes: tuple[str, ...] = (),
) -> BrokenConstraint:
    mutation = Mutation(
        target=site.target,
        pointer=(*site.pointer, *below),
        action=action,
        value=value,
        keyword=keyword,
    )
    assumed = tuple(dict.fromkeys((*site.assumed, *site.reading_of(keyword), *extra_assumed)))
    quotes = tuple(dict.fromkeys((*site.quotes, *extra_quotes)))
    return BrokenConstraint(mutation, label, site.spec, description, assumed, quotes)


def _spec_of(schema: Schema, inherited: str) -> str:
    spec = schema.get("x-spec")
    return spec if isinstance(spec, str) and spec else inherited


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, tuple):
        return "array"
    if isinstance(value, FrozenObject):
        return "object"
    return "null"


def _looks_textual(schema: Schema) -> bool:
    return any(key in schema for key in ("pattern", "format", "maxLength", "minLength", "anyOf"))


def _any_of_formats(schema: Schema) -> tuple[str, ...]:
    """The formats of an ``anyOf`` whose branches each only name a format (PSU-IP-Address)."""
    branches = schema.get("anyOf")
    if not isinstance(branches, list) or not branches:
        return ()
    formats = []
    for branch in branches:
        if not isinstance(branch, Mapping) or set(branch) != {"format"}:
            return ()
        formats.append(str(branch["format"]))
    return tuple(formats)


# ------------------------------------------------------------------------------------ entry points


def body_constraints(
    schema: Schema,
    resolver: SchemaResolver,
    *,
    spec: str = DEFAULT_SPEC,
    quotes: tuple[str, ...] = (),
) -> tuple[BrokenConstraint, ...]:
    """Every constraint of a request body schema, each broken alone, in document order.

    ``spec`` is the part used where neither the constraint's schema nor any schema above it has an
    ``x-spec``. Array bodies (E5, E7, E15) are walked through their first item (pointer ``0``).
    """
    return tuple(_Walker(resolver).body(schema, spec, quotes))


def parameter_constraints(
    schema: Schema,
    resolver: SchemaResolver,
    *,
    target: str,
    name: str,
    spec: str,
    required: bool = False,
    quotes: tuple[str, ...] = (),
) -> tuple[BrokenConstraint, ...]:
    """The constraints of one query or path parameter or header value, each broken alone;
    ``quotes`` are the labels that state the parameter (its operation's).

    Values are the text to send. A required query parameter or header also yields its removal.
    Path segments yield no ``type``, ``minLength`` or ``maxLength`` mutation: every segment is text,
    and an empty one changes the path rather than the value.
    """
    site = _Site(target, (name,), spec, quotes=tuple(quotes))
    found: list[BrokenConstraint] = []
    if required and target != "path":
        found.append(_broken(site, (), "remove", None, "required", "required", f"without {name}"))
    found.extend(_Walker(resolver).value(schema, site))
    return tuple(found)
