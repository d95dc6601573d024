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
from typing import Any

from conformance.profile.toml_table import Table

__all__ = ["SETUP_OPERATIONS", "apply_template", "read_templates"]

#: The creations a run makes its data with: the sandbox operations that send a body.
SETUP_OPERATIONS = frozenset({"SCU", "SA", "SCA", "SAG", "SDF", "E5", "E6", "E7", "E15"})


def read_templates(table: Table, directory: Path | None) -> Mapping[str, Mapping[str, Any]]:
    """The templates in ``directory`` (``[setup] templates``), one ``<op id>.json`` each."""
    if directory is None:
        return MappingProxyType({})
    if not directory.is_dir():
        raise table.error("templates", f"names {directory}, which is not a folder")
    templates: dict[str, Mapping[str, Any]] = {}
    for path in sorted(directory.iterdir()):
        if path.suffix != ".json":
            continue
        if path.stem not in SETUP_OPERATIONS:
            known = ", ".join(sorted(SETUP_OPERATIONS))
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
