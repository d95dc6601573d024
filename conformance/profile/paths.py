"""Checks of the profile's URLs and paths: the TPP-Redirect-URI, operation ids, and the methods and
path templates a bank put where the spec does not show them (``[paths]``: the same placeholders as
the contract's, filled by name; a separate template for periodic payments where the operation
names a payment by id).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from conformance.profile.toml_table import Table

if TYPE_CHECKING:
    from conformance.contract import Operation

__all__ = [
    "DEFAULT_REDIRECT_URI",
    "PAYMENT_SERVICE",
    "PERIODIC_SERVICE",
    "PathChoices",
    "check_op_id",
    "check_path_override",
    "check_redirect_uri",
    "read_paths",
]

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


def check_path_override(table: Table, key: str, operation: Operation) -> str:
    """An override starts with / and keeps the contract's placeholders (filled by name)."""
    path = table.get(key, str, "")
    if not path.startswith("/"):
        raise table.error(key, f"must be a path starting with '/', not {path!r}")
    wanted = _placeholders(operation.path)
    found = _placeholders(path)
    if wanted != found:
        raise table.error(
            key,
            f"has the placeholders {_braced(found)} but {operation.id}'s path {operation.path} "
            f"has {_braced(wanted)}; keep the same names",
        )
    return path


#: The operations that name a payment by id, whose path may differ for a periodic payment.
_PAYMENT_BY_ID = frozenset({"PS", "PC", "PA", "PCA"})
#: A path value the suite adds beside a payment's product and id: its service, ``payments`` or
#: ``periodic-payments`` (which template of ``[paths]`` is used; never sent itself).
PAYMENT_SERVICE = "payment-service"
PERIODIC_SERVICE = "periodic-payments"
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


@dataclass(frozen=True)
class PathChoices:
    """``[paths]``: the bank's path template and method per operation, and the template for a
    periodic payment of the operations naming a payment by id (PS, PC, PA)."""

    paths: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    methods: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    periodic: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


def _path_not_shown(operation: Operation) -> bool:
    """Whether spec 4.1 leaves the operation's method and path open (its "Method and path" is
    "not shown", or it is only referenced: the contract's assumption topic ``path``)."""
    return any(item.topic == "path" for item in operation.assumptions)


def read_paths(top: Table, known: Mapping[str, Operation]) -> PathChoices:
    """``[paths]``: ``OP = "/path"``, or ``OP = { path = ..., method = ..., periodic = ... }``.

    A path or method only where spec 4.1 does not show it; ``periodic`` only for PS, PC and PA
    (spec 4.1 names PS's path with ``{payment-product}`` only, and shows no path for a periodic
    payment's status, cancellation or authorisation: NextGenPSD2 banks put them under
    ``/v1/periodic-payments``).
    """
    table = top.table("paths")
    paths: dict[str, str] = {}
    methods: dict[str, str] = {}
    periodic: dict[str, str] = {}
    for op_id in table.names():
        check_op_id(table, op_id, op_id, known)
        operation = known[op_id]
        if not isinstance(table.peek(op_id), dict):
            paths[op_id] = _stated_path_check(table, op_id, operation, op_id)
            continue
        entry = table.table(op_id)
        if entry.peek("path") is not None:
            paths[op_id] = _stated_path_check(entry, "path", operation, op_id)
        method = entry.optional_str("method")
        if method is not None:
            if not _path_not_shown(operation):
                raise entry.error("method", f"cannot change: spec 4.1 shows {op_id}'s method")
            if method not in _METHODS:
                raise entry.error("method", f"must be one of {', '.join(_METHODS)}")
            methods[op_id] = method
        if entry.peek("periodic") is not None:
            if op_id not in _PAYMENT_BY_ID:
                raise entry.error(
                    "periodic",
                    "is only for PS, PC, PA and PCA (the operations naming a payment by id)",
                )
            periodic[op_id] = check_path_override(entry, "periodic", operation)
        entry.finish()
    table.finish()
    return PathChoices(
        MappingProxyType(paths), MappingProxyType(methods), MappingProxyType(periodic)
    )


def _stated_path_check(table: Table, key: str, operation: Operation, op_id: str) -> str:
    if not _path_not_shown(operation):
        raise table.error(key, f"cannot change: spec 4.1 shows {op_id}'s path ({operation.path})")
    return check_path_override(table, key, operation)


def _placeholders(path: str) -> frozenset[str]:
    return frozenset(_PLACEHOLDER.findall(path))


def _braced(names: Iterable[str]) -> str:
    listed = ", ".join("{" + name + "}" for name in sorted(names))
    return listed or "none"
