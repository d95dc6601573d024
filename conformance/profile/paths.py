"""Checks of the profile's URLs and paths: the TPP-Redirect-URI, operation ids, and the path
templates a bank put where the spec does not show them (``[paths]``: the same placeholders as the
contract's, filled by name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from conformance.profile.toml_table import Table

if TYPE_CHECKING:
    from conformance.contract import Operation

__all__ = ["DEFAULT_REDIRECT_URI", "check_op_id", "check_path_override", "check_redirect_uri"]

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
#: TPP-Redirect-URI when the profile names none (an address that never resolves).
DEFAULT_REDIRECT_URI = "https://tpp.invalid/conformance/redirect"


def check_redirect_uri(table: Table) -> str:
    """TPP-Redirect-URI must be an absolute URI (spec 4.2; types/headers.json: format uri)."""
    value = table.get("redirect_uri", str, DEFAULT_REDIRECT_URI)
    parts = urlsplit(value)
    if not parts.scheme or not parts.netloc:
        raise table.error("redirect_uri", f"must be an absolute URL, not {value!r}")
    return value


def check_op_id(table: Table, key: str, op_id: str, known: Mapping[str, Any]) -> str:
    if op_id not in known:
        raise table.error(
            key, f"names an unknown operation id {op_id!r} (known: {', '.join(sorted(known))})"
        )
    return op_id


def check_path_override(table: Table, op_id: str, known: Mapping[str, Operation]) -> str:
    """An override starts with / and keeps the contract's placeholders (filled by name)."""
    check_op_id(table, op_id, op_id, known)
    path = table.get(op_id, str, "")
    if not path.startswith("/"):
        raise table.error(op_id, f"must be a path starting with '/', not {path!r}")
    operation = known[op_id]
    wanted = _placeholders(operation.path)
    found = _placeholders(path)
    if wanted != found:
        raise table.error(
            op_id,
            f"has the placeholders {_braced(found)} but {op_id}'s path {operation.path} "
            f"has {_braced(wanted)}; keep the same names",
        )
    return path


def _placeholders(path: str) -> frozenset[str]:
    return frozenset(_PLACEHOLDER.findall(path))


def _braced(names: Iterable[str]) -> str:
    listed = ", ".join("{" + name + "}" for name in sorted(names))
    return listed or "none"
