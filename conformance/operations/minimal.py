"""The ``minimal`` and ``complete`` variants of a request body (``conformance.generate.variants``):
a minimal body keeps only the members its schema requires, plus those a cross-field rule of
spec 2.7 makes necessary (``keep``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from conformance.profile.templates import apply_template

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.operations.parts import BuildContext

__all__ = ["COMPLETE", "MINIMAL", "Keep", "minimal_body", "operation_minimal_body", "variant_body"]

MINIMAL = "minimal"
COMPLETE = "complete"

#: Pointers to optional members a minimal body keeps.
Keep = tuple[tuple[str, ...], ...]

#: A request body, of whatever JSON type.
Body = TypeVar("Body")


def minimal_body(
    contract: Contract,
    schema: Mapping[str, Any],
    body: Body,
    keep: Keep = (),
) -> Body:
    """``body`` with every member its schema does not require removed (recursively), except
    the pointers in ``keep``."""
    stripped: Body = _strip(contract, schema, copy.deepcopy(body), (), keep)
    return stripped


def _strip(
    contract: Contract,
    schema: Mapping[str, Any],
    node: Any,
    path: tuple[str, ...],
    keep: Keep,
) -> Any:
    resolved = contract.resolve(schema)
    if isinstance(node, list):
        items = resolved.get("items")
        if isinstance(items, Mapping):
            return [_strip(contract, items, item, path, keep) for item in node]
        return node
    if not isinstance(node, dict):
        return node
    required = set(resolved.get("required", ()))
    properties = resolved.get("properties", {})
    for name in list(node):
        if name not in required and (*path, name) not in keep:
            del node[name]
        elif name in properties and isinstance(properties[name], Mapping):
            node[name] = _strip(contract, properties[name], node[name], (*path, name), keep)
    return node


def operation_minimal_body(ctx: BuildContext, op_id: str, body: Body, keep: Keep = ()) -> Body:
    """``body`` of ``op_id`` made minimal against the operation's request schema."""
    schema = ctx.contract.operations[op_id].request_schema or {}
    return minimal_body(ctx.contract, schema, body, keep)


def variant_body(
    ctx: BuildContext, op_id: str, variant: str, complete: Any, keep: Keep = ()
) -> Any:
    """``complete`` as the ``variant`` wants it: made minimal for ``minimal``, else as it is.

    Every variant's body of a sandbox creation the profile has a set-up template for (``[setup]
    templates``) gets the template's members too, as the run's own set-up data does: the
    contract's shape is its own design (spec 4.1: "Their request and response shapes: not
    shown"), and the template says the bank's form (what it requires beyond the contract's
    members, and what it refuses: a ``null`` removes a member). A scenario's mutation is applied
    afterwards, so it still breaks what it means to break."""
    operation = ctx.contract.operations[op_id]
    body = complete
    if variant == MINIMAL and operation.request_schema is not None:
        body = minimal_body(ctx.contract, operation.request_schema, complete, keep)
    template = ctx.profile.setup_templates.get(op_id)
    return body if template is None else apply_template(template, body)
