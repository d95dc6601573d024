"""Which operation each exchange of a scenario called, with its answer time: the samples of the
per-operation answer times (``conformance.report.timings``) the reports give."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.exchange import Exchange
    from conformance.profile import TargetProfile

from conformance.profile.model import PRODUCT_PARAMETER as PRODUCT

__all__ = ["exchange_timings", "operation_of"]

_PLACEHOLDER = re.compile(r"\\\{[^}]*\\\}")


_Route = tuple[str, re.Pattern[str], str]
#: The routes of a (contract, profile) pair, by their ids: one pair per worker process.
_CACHE: dict[tuple[int, int], tuple[_Route, ...]] = {}


def _routes(contract: Contract, profile: TargetProfile) -> tuple[_Route, ...]:
    """``(method, path pattern, operation id)`` of every operation as this target routes it (the
    profile's paths and methods over the contract's), the most specific (longest) first."""
    key = (id(contract), id(profile))
    if key in _CACHE:
        return _CACHE[key]
    routes: list[_Route] = []
    for operation in contract.operations.values():
        templates = {profile.path_for(operation), profile.path_for(operation, periodic=True)}
        for template in templates:
            for name, value in operation.fixed_path_values.items():  # E16 and E18: the product
                fixed = profile.product_ids.get(value, value) if name == PRODUCT else value
                template = template.replace("{" + name + "}", fixed)
            pattern = _PLACEHOLDER.sub("[^/]+", re.escape(template))
            routes.append((profile.method_for(operation), re.compile(pattern + "$"), operation.id))
    routes.sort(key=lambda route: -len(route[1].pattern))
    _CACHE[key] = tuple(routes)
    return _CACHE[key]


def operation_of(exchange: Exchange, contract: Contract, profile: TargetProfile) -> str | None:
    """The operation an exchange called, or None (a path no operation has: a robustness probe)."""
    path = urlsplit(exchange.path).path
    for method, pattern, op_id in _routes(contract, profile):
        if method == exchange.method and pattern.match(path):
            return op_id
    return None


def exchange_timings(context: Any) -> list[tuple[str, float]]:
    """``(operation id, milliseconds)`` of each exchange of a run context (none without one)."""
    exchanges: Sequence[Exchange] = getattr(context, "exchanges", ())
    contract = getattr(context, "contract", None)
    profile = getattr(context, "profile", None)
    if not exchanges or contract is None or profile is None:
        return []
    timed: list[tuple[str, float]] = []
    for exchange in exchanges:
        op_id = operation_of(exchange, contract, profile)
        if op_id is not None:
            timed.append((op_id, exchange.elapsed * 1000))
    return timed
