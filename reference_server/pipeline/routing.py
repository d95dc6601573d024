"""A small router for the routes outside the contract (``/_control/...``, ``/sca/...``).

Contract operations are routed by ``conformance.contract`` (``match``/``allowed_methods``); the
reference-server-only routes need the same answers (handler, 405 with ``Allow``, 404) from a table
of :class:`~reference_server.api.Route`. Static paths are looked up in a dict first, templated ones
are tried as compiled patterns afterwards (the bottle model).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from reference_server.api import Route

__all__ = ["RouteMatch", "Router", "Template", "compile_template"]

_PARAMETER = re.compile(r"\{([^{}/]+)\}")


@dataclass(frozen=True)
class Template:
    """A compiled path template: ``/sca/{authorisationId}`` with its parameter names."""

    template: str
    pattern: re.Pattern[str]
    names: tuple[str, ...]
    prefix: str = ""
    """The literal text before the first ``{name}``: a path without it cannot match, which is
    told without running the pattern (every contract request passes through this router)."""

    def match(self, path: str) -> dict[str, str] | None:
        if not path.startswith(self.prefix):
            return None
        found = self.pattern.match(path)
        if found is None:
            return None
        return {
            name: unquote(value) for name, value in zip(self.names, found.groups(), strict=True)
        }


def compile_template(template: str) -> Template:
    """One ``[^/]+`` group per ``{name}`` segment; everything else matched literally."""
    pattern = ""
    position = 0
    names: list[str] = []
    for found in _PARAMETER.finditer(template):
        pattern += re.escape(template[position : found.start()]) + "([^/]+)"
        names.append(found.group(1))
        position = found.end()
    pattern += re.escape(template[position:])
    prefix = template.partition("{")[0]
    return Template(template, re.compile(f"^{pattern}$"), tuple(names), prefix)


@dataclass(frozen=True)
class RouteMatch:
    route: Route
    path_params: dict[str, str]


class Router:
    """Routes built once from a table; lookups never change it."""

    def __init__(self, routes: Iterable[Route]) -> None:
        self._static: dict[str, dict[str, Route]] = {}
        self._dynamic: list[tuple[Template, dict[str, Route]]] = []
        patterns: dict[str, tuple[Template, dict[str, Route]]] = {}
        for route in routes:
            method = route.method.upper()
            if _PARAMETER.search(route.path) is None:
                by_method = self._static.setdefault(route.path, {})
            else:
                if route.path not in patterns:
                    patterns[route.path] = (compile_template(route.path), {})
                    self._dynamic.append(patterns[route.path])
                by_method = patterns[route.path][1]
            if method in by_method:
                raise ValueError(f"route {method} {route.path} is declared twice")
            by_method[method] = route

    def _candidates(self, path: str) -> tuple[dict[str, Route], dict[str, str]] | None:
        if path in self._static:
            return self._static[path], {}
        for template, by_method in self._dynamic:
            found = template.match(path)
            if found is not None:
                return by_method, found
        return None

    def match(self, method: str, path: str) -> RouteMatch | None:
        candidates = self._candidates(path)
        if candidates is None or method.upper() not in candidates[0]:
            return None
        return RouteMatch(candidates[0][method.upper()], candidates[1])

    def allowed_methods(self, path: str) -> tuple[str, ...]:
        """The methods declared for ``path``; empty when the path is unknown."""
        candidates = self._candidates(path)
        return () if candidates is None else tuple(sorted(candidates[0]))
