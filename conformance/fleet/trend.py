"""The trend pictures of the fleet report, as inline SVG written by hand (no plotting library):
a small line chart per bank (its must and should causes per run) and one for the platform (its
platform and bank causes, and the banks without a verdict, per round). A run without a verdict
is a grey cross on the axis, never a zero that would read as "all passed"."""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Series", "bank_trend_svg", "label_span", "line_chart", "platform_trend_svg"]

_RED, _AMBER, _GREY, _BLUE = "#d93025", "#f5a623", "#9e9e9e", "#1a73e8"
_MARGIN_LEFT, _MARGIN_RIGHT, _MARGIN_TOP, _MARGIN_BOTTOM = 34, 12, 12, 30
#: How far the first and last points stand in from the axes, so that a no-verdict cross on the
#: first round does not overlap the axis's "0".
_INSET = 10
#: A round label's font size, the width of one of its characters (a generous estimate for a
#: sans-serif font at that size) and the least room between two labels, in pixels.
_LABEL_FONT, _LABEL_CHAR, _LABEL_GAP = 9, 6.0, 6.0


@dataclass(frozen=True)
class Series:
    """One line: its name (the legend), colour and a value per point (None: no value there)."""

    name: str
    colour: str
    values: tuple[int | None, ...]


def _ticks(top: int) -> list[int]:
    step = max(1, -(-top // 4))
    return list(range(0, top + 1, step))


def line_chart(
    series: Sequence[Series],
    labels: Sequence[str],
    *,
    title: str,
    width: int = 420,
    height: int = 160,
    gaps: Sequence[str] = (),
) -> str:
    """An SVG line chart: one point per label (left to right), a line per series, whole-number
    axis; ``gaps`` holds, per point, why it has no value ("" where it has one), drawn as a grey
    cross on the axis with that reason as its tooltip."""
    count = max(len(labels), 1)
    top = max([1, *(v for s in series for v in s.values if v is not None)])
    plot_w = width - _MARGIN_LEFT - _MARGIN_RIGHT
    plot_h = height - _MARGIN_TOP - _MARGIN_BOTTOM

    def x(index: int) -> float:
        inner = plot_w - 2 * _INSET
        return _MARGIN_LEFT + _INSET + (inner / 2 if count == 1 else inner * index / (count - 1))

    def y(value: int) -> float:
        return _MARGIN_TOP + plot_h * (1 - value / top)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}">',
        f"<title>{html.escape(title)}</title>",
    ]
    for tick in _ticks(top):
        parts.append(
            f'<line x1="{_MARGIN_LEFT}" x2="{width - _MARGIN_RIGHT}" y1="{y(tick):.1f}" '
            f'y2="{y(tick):.1f}" stroke="#e0e0e0"/>'
            f'<text x="{_MARGIN_LEFT - 4}" y="{y(tick) + 4:.1f}" font-size="10" '
            f'text-anchor="end" fill="#555">{tick}</text>'
        )
    for index in _labelled(labels, x):
        parts.append(
            f'<text x="{x(index):.1f}" y="{height - _MARGIN_BOTTOM + 14}" '
            f'font-size="{_LABEL_FONT}" text-anchor="{_anchor(index, count)}" fill="#555">'
            f"{html.escape(labels[index])}</text>"
        )
    for line in series:
        parts += _polyline(line, labels, x, y)
    for index, why in enumerate(gaps):
        if why:
            parts.append(_cross(x(index), y(0), why))
    parts.append(_legend(series, height, bool(any(gaps))))
    parts.append("</svg>")
    return "".join(parts)


def _anchor(index: int, count: int) -> str:
    """Where a round's label hangs from its point: the first and last inward, so that neither
    is cut off at the picture's edge."""
    if count > 1 and index == 0:
        return "start"
    if count > 1 and index == count - 1:
        return "end"
    return "middle"


def label_span(label: str, at: float, anchor: str) -> tuple[float, float]:
    """Where a round's label reaches, left and right, hung from ``at`` by ``anchor`` (estimated
    from its length: the chart is drawn without a font at hand)."""
    width = _LABEL_CHAR * len(label)
    left = {"start": at, "end": at - width}.get(anchor, at - width / 2)
    return left, left + width


def _labelled(labels: Sequence[str], x: Any) -> list[int]:
    """The rounds whose labels are drawn: every one where they all fit side by side, else every
    k-th (the fewest left out) and the last, so that no two overlap; a point left unlabelled
    keeps its label in its tooltip."""
    count = len(labels)

    def spans(chosen: list[int]) -> list[tuple[float, float]]:
        return [label_span(labels[i], x(i), _anchor(i, count)) for i in chosen]

    def clear(chosen: list[int]) -> bool:
        reach = spans(chosen)
        return all(
            right + _LABEL_GAP <= left for (_, right), (left, _) in itertools.pairwise(reach)
        )

    for step in range(1, count + 1):
        chosen = list(range(0, count, step))
        if chosen[-1] != count - 1:
            chosen.append(count - 1)
            if not clear(chosen[-2:]):
                del chosen[-2 if len(chosen) > 2 else -1]
        if clear(chosen):
            return chosen
    return [0] if count else []


def _polyline(line: Series, labels: Sequence[str], x: Any, y: Any) -> list[str]:
    points = [(x(i), y(v), v, labels[i]) for i, v in enumerate(line.values) if v is not None]
    parts = []
    if len(points) > 1:
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _, _ in points)
        parts.append(
            f'<polyline points="{path}" fill="none" stroke="{line.colour}" stroke-width="2"/>'
        )
    for px, py, value, label in points:
        parts.append(
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{line.colour}">'
            f"<title>{html.escape(f'{label}: {value} {line.name}')}</title></circle>"
        )
    return parts


def _cross(cx: float, cy: float, why: str) -> str:
    return (
        f'<g stroke="{_GREY}" stroke-width="2"><title>{html.escape(why)}</title>'
        f'<line x1="{cx - 4:.1f}" y1="{cy - 4:.1f}" x2="{cx + 4:.1f}" y2="{cy + 4:.1f}"/>'
        f'<line x1="{cx - 4:.1f}" y1="{cy + 4:.1f}" x2="{cx + 4:.1f}" y2="{cy - 4:.1f}"/></g>'
    )


def _legend(series: Sequence[Series], height: int, crosses: bool) -> str:
    entries = [(line.name, line.colour) for line in series]
    if crosses:
        entries.append(("no verdict", _GREY))
    parts, left = [], _MARGIN_LEFT
    for name, colour in entries:
        parts.append(
            f'<rect x="{left}" y="{height - 11}" width="9" height="9" fill="{colour}"/>'
            f'<text x="{left + 12}" y="{height - 3}" font-size="10" fill="#333">'
            f"{html.escape(name)}</text>"
        )
        left += 22 + 6 * len(name)
    return "".join(parts)


def _short(started: str) -> str:
    """``2026-11-28T02:00:05+00:00`` → ``11-28 02:00``."""
    return started[5:16].replace("T", " ") if len(started) >= 16 else started


#: A round named by the time its fleet started (``fleet run`` without ``--round``).
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def _round_label(point: Mapping[str, Any]) -> str:
    """A point's label: its round as given (``--round r1``); a round named by its start time,
    or none, as that time, short."""
    name = str(point.get("round") or "")
    if not name or _STAMP.match(name):
        return _short(name or str(point["started"]))
    return name


def bank_trend_svg(bank: Mapping[str, Any]) -> str:
    """One bank's must and should causes per run (a fleet document's bank entry)."""
    trend = bank["trend"]
    labels = [_round_label(point) for point in trend]
    gaps = ["" if point["verdict"] else point["status"] for point in trend]
    return line_chart(
        [
            Series("must causes", _RED, tuple(p["must"] if p["verdict"] else None for p in trend)),
            Series(
                "should causes",
                _AMBER,
                tuple(p["should"] if p["verdict"] else None for p in trend),
            ),
        ],
        labels,
        title=f"{bank['label']}: causes per run",
        width=360,
        height=130,
        gaps=gaps,
    )


def platform_trend_svg(points: Sequence[Mapping[str, Any]]) -> str:
    """The platform's causes and the banks without a verdict, per round."""
    labels = [_round_label(point) for point in points]
    return line_chart(
        [
            Series("platform causes", _RED, tuple(point["platform"] for point in points)),
            Series("bank causes", _AMBER, tuple(point["bank"] for point in points)),
            Series(
                "banks without a verdict", _BLUE, tuple(point["no_verdict"] for point in points)
            ),
        ],
        labels,
        title="The platform: causes and banks without a verdict per round",
        width=560,
        height=200,
    )
