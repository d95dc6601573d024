"""Answer times per operation, the evidence of an interface's performance a certification asks
for (PSD2 RTS Art. 32: the dedicated interface performs as well as the bank's own channel): every
exchange's elapsed time, grouped by the operation it called, summarised as the median (p50) and
the 95th percentile (p95), nearest-rank."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["answer_times", "describe", "percentile", "read_timings", "timings_properties"]

#: user_properties name (and JUnit ``<property>``) of a scenario's exchanges' answer times.
_TIMINGS = "timings"


def percentile(samples: Sequence[float], share: float) -> float:
    """The nearest-rank percentile of ``samples`` (``share`` 0.5 for p50, 0.95 for p95)."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def timings_properties(timings: Sequence[tuple[str, float]]) -> list[tuple[str, str]]:
    """The pair that carries a scenario's ``(operation id, milliseconds)`` per exchange."""
    if not timings:
        return []
    return [(_TIMINGS, json.dumps([[op, round(ms, 2)] for op, ms in timings]))]


def read_timings(properties: Iterable[tuple[str, Any]]) -> tuple[tuple[str, float], ...]:
    """The ``(operation id, milliseconds)`` a teardown report carries (none: empty)."""
    for name, value in properties:
        if name == _TIMINGS:
            return tuple((str(op), float(ms)) for op, ms in json.loads(str(value)))
    return ()


def answer_times(timings: Iterable[tuple[str, float]]) -> dict[str, dict[str, Any]]:
    """Per operation id: how many answers were timed and their p50 and p95 in milliseconds."""
    grouped: dict[str, list[float]] = {}
    for operation, milliseconds in timings:
        grouped.setdefault(operation, []).append(milliseconds)
    return {
        operation: {
            "answers": len(samples),
            "p50_ms": round(percentile(samples, 0.5), 1),
            "p95_ms": round(percentile(samples, 0.95), 1),
        }
        for operation, samples in grouped.items()
    }


def describe(times: Mapping[str, Any] | None) -> str:
    """``p50 3.1 ms, p95 9.8 ms (41 answers)``, or "" when nothing was timed."""
    if not times:
        return ""
    return f"p50 {times['p50_ms']} ms, p95 {times['p95_ms']} ms ({times['answers']} answers)"
