"""Set-up templates (``[setup] templates = "DIR"``): a bank team's own fields for the sandbox
creation requests the run sends to make its data.

Spec 4.1 only names the sandbox creations (POST /v1/sandbox/customers, /accounts, /card-accounts,
/agreements: "Their request and response shapes: not shown"), so a bank's sandbox may want other
values than the contract assumes (its own product names, a branch, a field of its own). One JSON
file per operation (``SA.json``, ``SCU.json``, ...) holds an object merged into the body the
suite makes: a key given replaces the suite's value (objects merged key by key), ``null`` removes
the suite's key; for a body that is an array (E5, E7, E15) the object is merged into every item.
The suite's generated values (unique customer numbers, account numbers, dates) stay wherever the
template does not name them, so two runs never collide.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conformance.profile.toml_table import Table

if TYPE_CHECKING:
    from conformance.contract import Operation

__all__ = ["apply_template", "read_templates", "setup_operations"]


def setup_operations(operations: Mapping[str, Operation]) -> frozenset[str]:
    """The creations a run makes its data with: the contract's sandbox operations that write
    (SCU, SA, SCA, SAG, SDF, E5, E6, E7, E15), read from the contract so that a new one needs
    no list of its own; an optional one (the sandbox reset SI) makes no data of the run's."""
    return frozenset(
        op.id
        for op in operations.values()
        if op.family == "sandbox" and op.method != "GET" and not op.optional
    )


def read_templates(
    table: Table, directory: Path | None, operations: Mapping[str, Operation]
) -> Mapping[str, Mapping[str, Any]]:
    """The templates in ``directory`` (``[setup] templates``), one ``<op id>.json`` each, every
    one for a set-up operation of the contract ``operations``."""
    if directory is None:
        return MappingProxyType({})
    if not directory.is_dir():
        raise table.error("templates", f"names {directory}, which is not a folder")
    allowed = setup_operations(operations)
    templates: dict[str, Mapping[str, Any]] = {}
    for path in sorted(directory.iterdir()):
        if path.suffix != ".json":
            continue
        if path.stem not in allowed:
            known = ", ".join(sorted(allowed))
            raise table.error(
                "templates", f"holds {path.name}: not a set-up operation (one of {known})"
            )
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise table.error("templates", f"holds {path.name}, not valid JSON: {error}") from None
        if not isinstance(document, dict):
            raise table.error("templates", f"holds {path.name}, which is not a JSON object")
        templates[path.stem] = MappingProxyType(document)
    return MappingProxyType(templates)


def apply_template(template: Mapping[str, Any], body: Any) -> Any:
    """``body`` with ``template`` merged in (into every item of an array body); a new value."""
    if isinstance(body, list):
        return [apply_template(template, item) for item in body]
    if not isinstance(body, dict):
        return body
    merged = copy.deepcopy(body)
    for key, value in template.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = apply_template(value, merged[key])
        else:
            merged[key] = copy.deepcopy(value)
    return merged
