"""The x-accept-fix variants of a schema (spec 9): a node's ``x-acceptFixVariants`` keywords in
effect under the fix values a request opted in to."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["schema_for_fixes"]


#: Schemas with their x-acceptFixVariants applied, per (schema identity, fix values).
_FIXED_SCHEMAS: dict[tuple[int, frozenset[str]], tuple[Mapping[str, Any], Mapping[str, Any]]] = {}


def schema_for_fixes(schema: Mapping[str, Any], fixes: frozenset[str]) -> Mapping[str, Any]:
    """``schema`` as it applies under the x-accept-fix values ``fixes`` (spec 9).

    A schema node may carry ``x-acceptFixVariants: {value: {keywords}}``: with that value in
    effect, those keywords replace the node's own (AL's account ``name``: 35 characters by
    default, 70 with longer-name). Computed once per schema and set of values; the schema itself
    is returned when no variant applies.
    """
    if not fixes:
        return schema
    key = (id(schema), fixes)
    cached = _FIXED_SCHEMAS.get(key)
    if cached is not None and cached[0] is schema:
        return cached[1]
    changed: Mapping[str, Any] = _apply_variants(schema, fixes)
    _FIXED_SCHEMAS[key] = (schema, changed)
    return changed


def _apply_variants(node: Any, fixes: frozenset[str]) -> Any:
    if isinstance(node, list):
        items = [_apply_variants(item, fixes) for item in node]
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    if not isinstance(node, Mapping):
        return node
    result = {key: _apply_variants(value, fixes) for key, value in node.items()}
    variants = node.get("x-acceptFixVariants")
    if isinstance(variants, Mapping):
        for value, keywords in variants.items():
            if value.lower() in fixes and isinstance(keywords, Mapping):
                result.update(keywords)
    unchanged = all(result[key] is node[key] for key in node) and len(result) == len(node)
    return node if unchanged else result
