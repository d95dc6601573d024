"""The contract's ``jsonschema`` validators with references inlined and string enums checked by
set: the same errors as stock ``jsonschema``, for less work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urldefrag, urljoin

from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator

__all__ = ["ContractValidator", "inline_refs"]

#: Keywords whose values are data, not subschemas: copied as they are.
_DATA_KEYWORDS = frozenset({"enum", "const", "examples", "default", "required", "type"})
#: Keywords whose values map names to subschemas.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})

#: ``lookup(absolute_uri) -> schema``; raises ``KeyError`` when the URI does not resolve.
Lookup = Callable[[str], Any]


def inline_refs(schema: Any, lookup: Lookup) -> Any:
    """``schema`` with every ``$ref`` it can inline replaced (see the module docstring)."""
    try:
        return _inline(schema, "", (), lookup)
    except (KeyError, _Dynamic):
        return schema


class _Dynamic(Exception):
    """A ``$dynamicRef`` (or ``$recursiveRef``): its target depends on the dynamic scope, which
    the ``$id``\\s that inlining drops decide, so such a schema is left as it is."""


def _inline(node: Any, base: str, seen: tuple[str, ...], lookup: Lookup) -> Any:
    if isinstance(node, list):
        return [_inline(item, base, seen, lookup) for item in node]
    if not isinstance(node, Mapping):
        return node
    if "$dynamicRef" in node or "$recursiveRef" in node:
        raise _Dynamic
    if isinstance(node.get("$id"), str):
        base = urljoin(base, node["$id"])
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$id":
            continue  # every reference below is absolute or inlined: no base is needed
        if key == "$ref" and isinstance(value, str):
            ref_key, ref_value = _inline_ref(node, urljoin(base, value), seen, lookup)
            result[ref_key] = ref_value
        else:
            result[key] = _inline_value(key, value, base, seen, lookup)
    return result


def _inline_ref(
    node: Mapping[str, Any], uri: str, seen: tuple[str, ...], lookup: Lookup
) -> tuple[str, Any]:
    """A ``$ref`` kept (absolute) where it recurs or sits beside ``allOf``, else its target
    inlined as the one member of ``allOf``."""
    if uri in seen or "allOf" in node:
        return "$ref", uri
    return "allOf", [_inline(lookup(uri), urldefrag(uri).url, (*seen, uri), lookup)]


def _inline_value(key: str, value: Any, base: str, seen: tuple[str, ...], lookup: Lookup) -> Any:
    """Any other keyword's value: data as it is, subschemas inlined."""
    if key in _DATA_KEYWORDS or key.startswith("x-"):
        return value
    if key in _SCHEMA_MAPS and isinstance(value, Mapping):
        return {name: _inline(sub, base, seen, lookup) for name, sub in value.items()}
    return _inline(value, base, seen, lookup)


_STOCK_ENUM = Draft202012Validator.VALIDATORS["enum"]
#: Per enum list (by identity, kept alive with it): the set of its string members.
_STRING_MEMBERS: dict[int, tuple[Any, frozenset[str]]] = {}
_STRING_MEMBERS_LIMIT = 4096


def _enum(
    validator: Any, enums: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """``enum`` as ``jsonschema`` has it, with a set lookup when the value is a string."""
    if not isinstance(instance, str) or not isinstance(enums, list):
        yield from _STOCK_ENUM(validator, enums, instance, schema)
        return
    entry = _STRING_MEMBERS.get(id(enums))
    if entry is None or entry[0] is not enums:
        if len(_STRING_MEMBERS) >= _STRING_MEMBERS_LIMIT:
            _STRING_MEMBERS.clear()
        entry = (enums, frozenset(member for member in enums if isinstance(member, str)))
        _STRING_MEMBERS[id(enums)] = entry
    if instance not in entry[1]:
        yield ValidationError(f"{instance!r} is not one of {enums!r}")


#: Draft 2020-12 with the set-based ``enum`` (same errors, same messages). The jsonschema stubs
#: leave ``extend`` unannotated.
ContractValidator: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"enum": _enum}
)
