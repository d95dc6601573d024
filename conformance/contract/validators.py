"""The contract's ``jsonschema`` validators, made cheaper without changing a single error.

They list the errors of every body the reference server refuses, and of every answer the suite
finds invalid, so they run often; two costs of stock ``jsonschema`` dominate there, and both are
removed here with the same errors as a result (held to stock ``jsonschema`` over every contract
schema by ``tests/test_contract_check.py``).

**References** (:func:`inline_refs`). ``referencing`` resolves a ``$ref`` on every validation
(``urljoin``, a registry lookup, a new resolver), which costs more than the validation itself:
listing the errors of a refused payment body takes about twice as long with the references as
without. In Draft 2020-12 a ``$ref`` applies in place like an ``allOf`` member, so
``{"$ref": X, ...}`` validates as ``{"allOf": [X], ...}``: the same verdicts and the same errors
(keyword, message, instance path; only the schema path differs). The ``allOf`` takes the
``$ref``'s place among the keywords, so ``jsonschema`` reports the errors in the same order too,
and ``best_match`` or a list of the first errors picks the same ones. A ``$ref`` is kept (made
absolute, for ``referencing``) where inlining would recurse, and where its schema already has an
``allOf`` (merging the two would move errors in the order). When a reference cannot be looked
up, the schema is returned as it is, so that ``jsonschema`` raises as it would have; so is a
schema with a ``$dynamicRef``, whose target depends on the ``$id``\\s inlining drops.

**Enumerations** (:data:`ContractValidator`). The contract's enums are long lists of codes
(currencies, countries); ``jsonschema`` compares a value with each member in turn through its
JSON-aware ``equal``. For a string value that comparison is plain ``==``, so membership in the
set of the enum's string members is the same test.
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
            uri = urljoin(base, value)
            if uri in seen or "allOf" in node:
                result["$ref"] = uri
            else:
                target = _inline(lookup(uri), urldefrag(uri).url, (*seen, uri), lookup)
                result["allOf"] = [target]
        elif key in _DATA_KEYWORDS or key.startswith("x-"):
            result[key] = value
        elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
            result[key] = {name: _inline(sub, base, seen, lookup) for name, sub in value.items()}
        else:
            result[key] = _inline(value, base, seen, lookup)
    return result


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
