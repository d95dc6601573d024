"""Walk a JSON Schema by its keywords (not by every dict), rewriting each ``$ref`` on the way."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urljoin

_ONE = frozenset(
    {
        "additionalProperties",
        "propertyNames",
        "items",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
        "additionalItems",
    }
)
_MAP = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})

Pointer = tuple[str | int, ...]
#: ``rewrite(ref, base, pointer) -> new ref``: pointer is that of the schema holding the ``$ref``.
RefRewrite = Callable[[str, str, Pointer], str]


def pointer_text(parts: Pointer) -> str:
    """RFC 6901 text of a pointer given as its parts (``("a", 0, "b/c")`` → ``/a/0/b~1c``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _children(schema: dict[str, Any]) -> Iterator[tuple[str, Pointer, Any]]:
    for key, value in schema.items():
        if key in _ONE:
            yield key, (key,), value
        elif key in _MAP and isinstance(value, dict):
            for name, sub in value.items():
                yield key, (key, name), sub
        elif key in _LIST and isinstance(value, list):
            for index, sub in enumerate(value):
                yield key, (key, index), sub


def _extension(value: Any, rewrite: RefRewrite, base: str, at: Pointer) -> Any:
    """An ``x-…`` value: any object in it with a string ``$ref`` is taken to be a schema.

    Extensions such as ``x-acceptFixVariants`` (spec 9: the shape a field takes under an
    x-accept-fix value) hold schemas the JSON Schema vocabulary does not know about.
    """
    if isinstance(value, dict):
        copy = {key: _extension(sub, rewrite, base, (*at, key)) for key, sub in value.items()}
        if isinstance(value.get("$ref"), str):
            copy["$ref"] = rewrite(value["$ref"], base, at)
        return copy
    if isinstance(value, list):
        return [_extension(sub, rewrite, base, (*at, index)) for index, sub in enumerate(value)]
    return value


def rewrite_refs(schema: Any, rewrite: RefRewrite, base: str = "", at: Pointer = ()) -> Any:
    """A copy of ``schema`` with each ``$ref`` replaced by ``rewrite(ref, base, pointer)``.

    ``base`` follows ``$id`` the way JSON Schema does, so a rewrite can make a relative reference
    absolute. Non-schema values (``enum``, ``const``, ``examples``) are copied untouched; in
    ``x-…`` extensions every object with a ``$ref`` is treated as a schema.
    """
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get("$id"), str):
        base = urljoin(base, schema["$id"])
    copy: dict[str, Any] = dict(schema)
    if isinstance(schema.get("$ref"), str):
        copy["$ref"] = rewrite(schema["$ref"], base, at)
    for key, value in schema.items():
        if key.startswith("x-"):
            copy[key] = _extension(value, rewrite, base, (*at, key))
    for key, where, sub in _children(schema):
        new = rewrite_refs(sub, rewrite, base, at + where)
        if len(where) == 1:
            copy[key] = new
        else:
            if copy[key] is schema[key]:
                copy[key] = (
                    dict(schema[key]) if isinstance(schema[key], dict) else list(schema[key])
                )
            copy[key][where[1]] = new
    return copy


def iter_refs(schema: Any, at: Pointer = ()) -> Iterator[tuple[Pointer, str]]:
    """Every ``(pointer, $ref)`` in ``schema`` (extensions included); pointer of the holder."""
    found: list[tuple[Pointer, str]] = []

    def collect(ref: str, _base: str, where: Pointer) -> str:
        found.append((where, ref))
        return ref

    rewrite_refs(schema, collect, "", at)
    yield from found


def absolute(ref: str, base: str, _at: Pointer = ()) -> str:
    """A :data:`RefRewrite` that resolves ``ref`` against ``base`` (``urljoin``)."""
    return urljoin(base, ref) if base else ref
