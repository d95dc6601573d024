"""Map a request's method and path to its contract operation: static paths in a dict, templates as
compiled patterns, pinned path values choosing between operations that share a template.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from conformance.contract.model import Operation

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def route_key(path: str) -> str:
    """The template with its placeholder names dropped: two templates that differ only in the
    names of their parameters (``{paymentId}`` vs ``{payment-id}``) are the same route."""
    return _PLACEHOLDER.sub("{}", path)


def _specificity(path: str) -> tuple[int, ...]:
    """Sort key: at each segment a literal (0) comes before a placeholder (1)."""
    return tuple(1 if _PLACEHOLDER.fullmatch(part) else 0 for part in path.split("/"))


def _compile(path: str) -> re.Pattern[str]:
    pattern = []
    for index, piece in enumerate(_PLACEHOLDER.split(path)):
        # split() alternates literal text and placeholder names.
        pattern.append(f"(?P<p{index // 2}>[^/]+)" if index % 2 else re.escape(piece))
    return re.compile("".join(pattern) + r"\Z")


@dataclass(frozen=True, slots=True)
class _Template:
    """One route: its compiled pattern, parameter names and operations in contract order."""

    path: str
    pattern: re.Pattern[str]
    names: tuple[str, ...]
    operations: tuple[Operation, ...]

    def values(self, path: str) -> dict[str, str] | None:
        found = self.pattern.match(path)
        if found is None:
            return None
        return {name: unquote(found.group(f"p{i}")) for i, name in enumerate(self.names)}


#: An operation's pinned path parameters: (name, the values it takes) for each that pins some.
_Pins = tuple[tuple[str, frozenset[str]], ...]


def _pinned(operation: Operation) -> _Pins:
    """Computed once per operation when the router is built: ``Operation.path_parameters`` and
    ``Parameter.pinned_values`` build new tuples on every access, and ``match`` runs per request."""
    return tuple(
        (parameter.name, frozenset(parameter.pinned_values))
        for parameter in operation.path_parameters
        if parameter.pinned_values is not None
    )


def _fits(pins: _Pins, values: dict[str, str]) -> bool:
    return all(values.get(name) in allowed for name, allowed in pins)


class Router:
    """Routes of a contract; built once by the loader, read-only afterwards (thread-safe)."""

    __slots__ = ("_dynamic", "_pins", "_static")

    def __init__(self, operations: Iterable[Operation]) -> None:
        grouped: dict[str, list[Operation]] = {}
        self._pins: dict[int, _Pins] = {}  # by id(): the router keeps the operations alive
        for operation in operations:
            grouped.setdefault(operation.path, []).append(operation)
            self._pins[id(operation)] = _pinned(operation)
        self._static: dict[str, tuple[Operation, ...]] = {}
        by_segments: dict[int, list[_Template]] = {}
        for path in sorted(grouped, key=_specificity):
            ops = tuple(grouped[path])
            names = tuple(_PLACEHOLDER.findall(path))
            if not names:
                self._static[path] = ops
                continue
            template = _Template(path, _compile(path), names, ops)
            by_segments.setdefault(path.count("/"), []).append(template)
        self._dynamic = {count: tuple(items) for count, items in by_segments.items()}

    def _candidates(self, path: str) -> Iterable[tuple[tuple[Operation, ...], dict[str, str]]]:
        path = path.partition("?")[0]  # tolerate a query string although none should be passed
        static = self._static.get(path)
        if static is not None:
            yield static, {}
        for template in self._dynamic.get(path.count("/"), ()):
            values = template.values(path)
            if values is not None:
                yield template.operations, values

    def match(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        """The operation for ``method`` on ``path`` (no query string) and its path values.

        Among operations sharing a template, the first whose pinned path values fit wins; if none
        fits, the first that pins nothing; if all pin values, ``None`` (the path is still known:
        see :meth:`templates_for`, which lets the server answer PRODUCT_UNKNOWN instead of 404).
        """
        method = method.upper()
        for operations, values in self._candidates(path):
            same_method = [op for op in operations if op.method == method]
            for operation in same_method:
                if _fits(self._pins[id(operation)], values):
                    return operation, values
            for operation in same_method:
                if not self._pins[id(operation)]:
                    return operation, values
        return None

    def templates_for(self, path: str) -> tuple[Operation, ...]:
        """Every operation whose template matches ``path``, whatever its method or pinned values."""
        found: list[Operation] = []
        for operations, _values in self._candidates(path):
            found.extend(operations)
        return tuple(found)

    def allowed_methods(self, path: str) -> tuple[str, ...]:
        """Methods known for ``path`` (sorted, for ``Allow``); empty when the path is unknown."""
        return tuple(sorted({op.method for op in self.templates_for(path)}))
