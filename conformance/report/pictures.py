"""The pictures of ``compliance.html``, where a reader would rather look than read: a pass/fail bar
per operation (with its answer times), and a grid of operations × scenario kinds whose coloured
cells say at a glance where the target failed. Plain HTML and CSS, no JavaScript; the same facts
as tables for ``compliance.md``."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.report.timings import describe
from conformance.report.verdicts import (
    BLOCKED,
    ERROR,
    FAILED,
    FAILED_SHOULD,
    NOT_APPLICABLE,
    PASSED,
    WAIVED,
)
from conformance.scenario import KINDS

__all__ = [
    "PICTURE_STYLE",
    "grid_html",
    "grid_rows",
    "operation_bars_html",
    "operation_rows",
]

#: The bar's segments: count key of compliance.json, CSS class, words of the legend.
_SEGMENTS = (
    ("passed", "pass", "passed"),
    ("failed", "fail", "must failure"),
    ("failed_should", "should", "should findings"),
    ("blocked", "blocked", "blocked"),
    ("error", "blocked", "error"),
    ("not_applicable", "na", "not applicable"),
    ("waived", "na", "waived"),
)

#: A grid cell's mood, worst first: verdict → CSS class and the mark ``compliance.md`` shows.
_MOODS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    ((FAILED,), "fail", "✗"),
    ((ERROR, BLOCKED), "blocked", "?"),
    ((FAILED_SHOULD,), "should", "!"),
    ((PASSED,), "pass", "✓"),
    ((NOT_APPLICABLE, WAIVED), "na", "–"),
)

PICTURE_STYLE = """
.bars { border-collapse: collapse; } .bars td { border: none; padding: .15em .5em; }
.bar { display: flex; width: 24em; height: 1.1em; background: #eee; border-radius: 3px;
       overflow: hidden; }
.bar span { display: block; height: 100%; }
.bar span.fail, .bar span.should, .bar span.blocked { min-width: 4px; }
.pass { background: #4caf50; } .fail { background: #d93025; } .should { background: #f5a623; }
.blocked { background: #9c6ade; } .na { background: #c8c8c8; }
.failing { color: #b3261e; font-weight: 600; }
.grid td.cell { text-align: center; min-width: 3.2em; color: #111; }
.grid td.cell.pass { background: #c8e6c9; } .grid td.cell.fail { background: #f4a6a0; }
.grid td.cell.should { background: #ffe0a3; } .grid td.cell.blocked { background: #dcc8f0; }
.grid td.cell.na { background: #eee; color: #777; }
.legend span { display: inline-block; width: .9em; height: .9em; margin: 0 .3em 0 1em;
               vertical-align: middle; }
"""


def _name(document: Mapping[str, Any], operation: str) -> str:
    name = (document.get("operation_names") or {}).get(operation)
    return f"{operation} {name}" if name else operation


def _counts_text(counts: Mapping[str, int]) -> str:
    shown = [
        f"{counts[key]} {_plural(words, counts[key])}"
        for key, _, words in _SEGMENTS
        if counts.get(key, 0)
    ]
    return ", ".join(shown) or "no scenario"


def _plural(words: str, count: int) -> str:
    """``must failure`` → ``must failures`` for more than one (the other words do not change)."""
    return words + "s" if words.endswith("failure") and count != 1 else words


def operation_rows(document: Mapping[str, Any]) -> tuple[tuple[str, ...], ...]:
    """Per operation: its name, its counts in words, its answer times (``compliance.md``)."""
    return tuple(
        (
            _name(document, entry["operation"]),
            _counts_text(entry["counts"]),
            describe(entry.get("answer_times")) or "not timed",
        )
        for entry in document["operations"]
    )


def operation_bars_html(document: Mapping[str, Any]) -> str:
    """One stacked bar per operation (green passed, red must failures, amber should findings,
    purple not judged, grey not applicable or waived); an operation with a failure is named in
    red; beside it the counts and the answer times."""
    rows: list[str] = []
    for entry in document["operations"]:
        counts: Mapping[str, int] = entry["counts"]
        total = sum(counts.get(key, 0) for key, _, _ in _SEGMENTS) or 1
        segments = "".join(
            f'<span class="{css}" style="width:{100 * counts[key] / total:.2f}%" '
            f'title="{counts[key]} {words}"></span>'
            for key, css, words in _SEGMENTS
            if counts.get(key, 0)
        )
        failing = ' class="failing"' if counts.get("failed") else ""
        name = html.escape(_name(document, entry["operation"]))
        timing = html.escape(describe(entry.get("answer_times")) or "not timed")
        rows.append(
            f'<tr><td{failing}>{name}</td><td><div class="bar">{segments}</div></td>'
            f"<td>{html.escape(_counts_text(counts))}</td><td>{timing}</td></tr>"
        )
    legend = "".join(
        f'<span class="{css}"></span>{words}'
        for css, words in (
            ("pass", "passed"),
            ("fail", "must failure"),
            ("should", "should findings"),
            ("blocked", "blocked or error"),
            ("na", "not applicable or waived"),
        )
    )
    return (
        f'<p class="legend">{legend}</p>'
        '<table class="bars"><thead><tr><th>operation</th><th>scenarios</th><th>counts</th>'
        "<th>answer times</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


def _cells(document: Mapping[str, Any]) -> dict[tuple[str, str], list[str]]:
    """Verdicts by (operation, kind)."""
    cells: dict[tuple[str, str], list[str]] = {}
    for scenario in document["scenarios"]:
        cells.setdefault((scenario["operation"], scenario["kind"]), []).append(scenario["verdict"])
    return cells


def _kinds(document: Mapping[str, Any]) -> list[str]:
    present = {scenario["kind"] for scenario in document["scenarios"]}
    return [kind for kind in KINDS if kind in present] + sorted(present - set(KINDS))


def _mood(verdicts: Sequence[str]) -> tuple[str, str]:
    """The worst verdict of a cell: its CSS class and its mark."""
    for chosen, css, mark in _MOODS:
        if any(verdict in chosen for verdict in verdicts):
            return css, mark
    return "na", "–"


def _cell_text(verdicts: Sequence[str]) -> str:
    """``48`` when all passed, else ``46/48``: how many of the cell's scenarios passed."""
    passed = sum(1 for verdict in verdicts if verdict == PASSED)
    if passed == len(verdicts):
        return str(passed)
    return f"{passed}/{len(verdicts)}"


def grid_rows(document: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The grid as a table for ``compliance.md``: header (operation, kinds) and rows whose cells
    are a mark (✓ passed, ✗ must failure, ! should findings, ? not judged, – not applicable) and
    the passed count of the cell's scenarios (``7/8``: 7 of 8 passed); empty: no scenario."""
    kinds = _kinds(document)
    cells = _cells(document)
    rows = []
    for entry in document["operations"]:
        operation = entry["operation"]
        row = [_name(document, operation)]
        for kind in kinds:
            verdicts = cells.get((operation, kind))
            row.append(f"{_mood(verdicts)[1]} {_cell_text(verdicts)}" if verdicts else "")
        rows.append(tuple(row))
    return ("operation", *kinds), tuple(rows)


def grid_html(document: Mapping[str, Any]) -> str:
    """The grid: operations down, scenario kinds across, each cell coloured by its worst verdict
    (red a must failure, amber should findings, purple not judged, green all passed, grey not
    applicable), with the passed count; its tooltip gives the counts."""
    kinds = _kinds(document)
    cells = _cells(document)
    head = "".join(f"<th>{html.escape(kind)}</th>" for kind in kinds)
    rows: list[str] = []
    for entry in document["operations"]:
        operation = entry["operation"]
        tds: list[str] = []
        for kind in kinds:
            verdicts = cells.get((operation, kind))
            if not verdicts:
                tds.append("<td></td>")
                continue
            css, _ = _mood(verdicts)
            tally: dict[str, int] = {}
            for verdict in verdicts:
                tally[verdict] = tally.get(verdict, 0) + 1
            title = html.escape(", ".join(f"{count} {word}" for word, count in tally.items()))
            tds.append(
                f'<td class="cell {css}" title="{title}">{html.escape(_cell_text(verdicts))}</td>'
            )
        failing = ' class="failing"' if entry["counts"].get("failed") else ""
        name = html.escape(_name(document, operation))
        rows.append(f"<tr><td{failing}>{name}</td>{''.join(tds)}</tr>")
    return (
        '<p class="legend">a cell: the scenarios of one operation and kind, coloured by the worst '
        'verdict among them<span class="pass"></span>all passed<span class="fail"></span>a must '
        'failure<span class="should"></span>should findings<span class="blocked"></span>not '
        'judged<span class="na"></span>not applicable; the number: how many passed '
        "(7/8: 7 of 8)</p>"
        f'<table class="grid"><thead><tr><th>operation</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
