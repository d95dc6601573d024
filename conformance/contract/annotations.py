"""What the contract's schemas say about the place of a validation error: the reading it rests on
(``x-assumed``, ``x-readings``: then a should) and the quotes of the spec that state it
(``x-quotes``: a must quotes them). The suite's checks and the traffic judge read both here, so a
schema error is graded the same way wherever it is found."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import ValidationError

__all__ = ["quotes_at", "reading_at"]

#: Keywords whose subschemas judge members or items: an ``x-readings`` entry of a schema names
#: that schema's own keywords, so it does not reach through these.
_MEMBER_KEYWORDS = frozenset(
    {"properties", "patternProperties", "additionalProperties", "items", "prefixItems"}
)


def reading_at(schema: Any, error: ValidationError) -> str:
    """The reading the schema records for the place of ``error`` ("" when stated): an
    ``x-assumed`` at or above it, or its keyword in the ``x-readings`` of its schema (or of a
    schema that composes it: ``allOf``, ``anyOf``, ``oneOf``, an inlined ``$ref``)."""
    node = schema
    readings: list[Mapping[str, Any]] = []
    for part in list(error.absolute_schema_path)[:-1]:
        if isinstance(node, Mapping):
            assumed = node.get("x-assumed")
            if isinstance(assumed, str) and assumed:
                return assumed
            readings = _readings_below(node, part, readings)
            node = node.get(part) if isinstance(part, str) else None
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return ""
    found = _reading_of(node, error.validator, readings)
    if not found and error.validator == "required" and isinstance(node, Mapping):
        return _missing_assumed(node, error.instance)
    return found


def _missing_assumed(node: Mapping[str, Any], instance: Any) -> str:
    """The ``x-assumed`` of the required members of ``node`` that ``instance`` lacks: "required
    (assumed ...)" is written on the member (as the scenario generator reads it,
    ``conformance.generate.mutations``)."""
    members = node.get("properties")
    if not isinstance(members, Mapping) or not isinstance(instance, Mapping):
        return ""
    texts: list[str] = []
    for name in node.get("required", ()):
        member = members.get(name)
        if name in instance or not isinstance(member, Mapping):
            continue
        for key in ("x-assumed", "x-assumption"):
            value = member.get(key)
            texts += [value] if isinstance(value, str) else [str(v) for v in value or ()]
    return "; ".join(dict.fromkeys(text for text in texts if text))


def _readings_below(
    node: Mapping[str, Any], part: Any, readings: list[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The ``x-readings`` tables that reach below ``node`` through ``part``: those gathered so
    far and ``node``'s own, none through a keyword that judges members or items."""
    if part in _MEMBER_KEYWORDS:
        return []
    if isinstance(node.get("x-readings"), Mapping):
        return [*readings, node["x-readings"]]
    return readings


def _reading_of(node: Any, keyword: Any, readings: list[Mapping[str, Any]]) -> str:
    """The reading for ``keyword`` at the error's schema ``node``: its own, else the innermost
    composing schema's."""
    if isinstance(node, Mapping):
        found = _node_reading(node, keyword)
        if found:
            return found
    for table in reversed(readings):
        if isinstance(table.get(keyword), str):
            return str(table[keyword])
    return ""


def _node_reading(node: Mapping[str, Any], keyword: Any) -> str:
    assumed = node.get("x-assumed")
    if isinstance(assumed, str) and assumed:
        return assumed
    readings = node.get("x-readings")
    if isinstance(readings, Mapping) and isinstance(readings.get(keyword), str):
        return str(readings[keyword])
    return ""


def quotes_at(schema: Any, error: ValidationError) -> tuple[str, ...]:
    """The labels of the quotes (``x-quotes``) of the schemas from ``schema`` down to the place
    of ``error``, outermost first; for a missing member, its own ``x-quotes`` too (as the
    scenario generator gathers them, ``conformance.generate.mutations``)."""
    labels: list[str] = []
    node = schema
    for part in list(error.absolute_schema_path)[:-1]:
        if isinstance(node, Mapping):
            labels += _labels(node)
            node = node.get(part) if isinstance(part, str) else None
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            node = None
            break
    if isinstance(node, Mapping):
        labels += _labels(node)
        if error.validator == "required":
            labels += _missing_members(node, error.instance)
    return tuple(dict.fromkeys(labels))


def _missing_members(node: Mapping[str, Any], instance: Any) -> list[str]:
    """The ``x-quotes`` of the required members of ``node`` that ``instance`` lacks."""
    members = node.get("properties")
    if not isinstance(members, Mapping) or not isinstance(instance, Mapping):
        return []
    labels: list[str] = []
    for name in node.get("required", ()):
        member = members.get(name)
        if name not in instance and isinstance(member, Mapping):
            labels += _labels(member)
    return labels


def _labels(node: Mapping[str, Any]) -> list[str]:
    quotes = node.get("x-quotes")
    return [str(label) for label in quotes] if isinstance(quotes, list) else []
