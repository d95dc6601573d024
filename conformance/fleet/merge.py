"""The fleet document: the runs of many banks side by side and over time, as one JSON-ready dict
(``fleet.json``; ``render`` makes the pages of it).

- **The matrix** puts each cause (``report/causes.py``: the same id at every bank) against each
  bank's latest run: present (with its scenario count), absent, or not judged (no verdict).
- **Platform or bank.** A cause is the platform's when it fails at at least half of the banks
  whose latest run gave a verdict, and at two banks at least (:func:`platform_threshold`): a
  release of the shared code base broke it. Otherwise it is one bank's (or a few banks'):
  their configuration or their gateway. A fleet of one bank has only bank causes.
- **History.** Per bank, its latest run against its previous run that gave a verdict: causes
  new, fixed and persisting; a cause is fixed only when the latest run gave a verdict too. The
  trend per bank is the count of its must and should causes per run; the platform's is the
  count of platform and bank causes per round (``collect``: a ``fleet run``'s round, else the
  day), and how many banks gave no verdict.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.fleet.collect import BankRun

__all__ = [
    "FORMAT",
    "PLATFORM_LEAST",
    "PLATFORM_SHARE",
    "build_fleet",
    "platform_threshold",
    "threshold_words",
]

#: Names the layout of ``fleet.json``.
FORMAT = "psd2-conformance/fleet/1"
#: The share of the banks with a verdict at which a cause is the platform's...
PLATFORM_SHARE = 0.5
#: ...and the fewest banks that makes.
PLATFORM_LEAST = 2


def platform_threshold(judged: int) -> int:
    """How many of ``judged`` banks a cause must fail at to be the platform's."""
    return max(PLATFORM_LEAST, math.ceil(judged * PLATFORM_SHARE))


def threshold_words(judged: int) -> str:
    """The rule, stated with this fleet's numbers."""
    return (
        f"a cause is the platform's when it fails at at least half of the banks whose latest run "
        f"gave a verdict and at {PLATFORM_LEAST} banks at least: here at "
        f"{platform_threshold(judged)} of {judged}; otherwise it is the bank's"
    )


def _by_bank(runs: Sequence[BankRun]) -> dict[tuple[str, str], list[BankRun]]:
    """The runs of each bank, oldest first; a bank is its profile's name and its short label
    (two profiles of one name in two files are two banks)."""
    banks: dict[tuple[str, str], list[BankRun]] = {}
    for run in sorted(runs, key=lambda item: (item.started, str(item.folder))):
        banks.setdefault((run.label, run.bank), []).append(run)
    return dict(sorted(banks.items()))


def _rounds(runs: Sequence[BankRun]) -> list[str]:
    """The rounds in the order their first run started."""
    first: dict[str, str] = {}
    for run in runs:
        if run.round not in first or run.started < first[run.round]:
            first[run.round] = run.started
    return sorted(first, key=lambda name: (first[name], name))


def _scopes(latest: Sequence[BankRun]) -> tuple[dict[str, list[str]], int]:
    """Per cause the banks (labels) whose latest run has it; the platform threshold."""
    judged = [run for run in latest if run.document is not None]
    at: dict[str, list[str]] = {}
    for run in judged:
        for cause in run.causes:
            at.setdefault(cause, []).append(run.label)
    return at, platform_threshold(len(judged))


def _cause_rows(latest: Sequence[BankRun]) -> list[dict[str, Any]]:
    at, threshold = _scopes(latest)
    known: dict[str, Mapping[str, Any]] = {}
    for run in latest:
        for cause, facts in run.causes.items():
            known.setdefault(cause, facts)
    rows = [
        {
            "id": cause,
            "title": known[cause]["title"],
            # one cause can be must at a bank that promised what another leaves to a reading
            "level": "/".join(
                sorted({run.causes[cause]["level"] for run in latest if cause in run.causes})
            ),
            "spec": known[cause]["spec"],
            "scope": "platform" if len(banks) >= threshold else "bank",
            "banks": banks,
        }
        for cause, banks in at.items()
    ]
    return sorted(
        rows,
        key=lambda row: (
            row["scope"] != "platform",
            row["level"] != "must",
            -len(row["banks"]),
            row["id"],
        ),
    )


def _baseline(history: Sequence[BankRun]) -> BankRun | None:
    """The latest run before the last one that gave a verdict."""
    return next((run for run in reversed(history[:-1]) if run.document is not None), None)


def _selection(run: BankRun) -> Any:
    return (run.document or {}).get("run", {}).get("selection")


def _changes(history: Sequence[BankRun]) -> dict[str, Any]:
    """New, fixed and persisting causes of the bank's last run since its previous verdict."""
    latest, before = history[-1], _baseline(history)
    if before is None:
        return {"since": None, "new": [], "fixed": [], "persisting": [], "note": "first run"}
    if latest.document is None:
        return {
            "since": before.started,
            "new": [],
            "fixed": [],
            "persisting": [],
            "note": f"the last run gave no verdict ({latest.status}): nothing new or fixed "
            "can be told",
        }
    now, then = set(latest.causes), set(before.causes)
    note = ""
    if _selection(latest) != _selection(before):
        note = "the two runs chose different scenarios: a cause gone may be one not judged"
    return {
        "since": before.started,
        "new": sorted(now - then),
        "fixed": sorted(then - now),
        "persisting": sorted(now & then),
        "note": note,
    }


def _level_count(run: BankRun, level: str) -> int:
    return sum(1 for facts in run.causes.values() if facts["level"] == level)


def _trend(history: Sequence[BankRun]) -> list[dict[str, Any]]:
    return [
        {
            "started": run.started,
            "round": run.round,
            "status": run.status,
            "verdict": run.document is not None,
            "must": _level_count(run, "must"),
            "should": _level_count(run, "should"),
        }
        for run in history
    ]


def _platform_trend(runs: Sequence[BankRun]) -> list[dict[str, Any]]:
    """Per round: banks, banks without a verdict, platform and bank causes."""
    points = []
    for name in _rounds(runs):
        latest = list(_by_bank([run for run in runs if run.round == name]).values())
        last = [history[-1] for history in latest]
        rows = _cause_rows(last)
        points.append(
            {
                "round": name,
                "started": min(run.started for run in last),
                "banks": len(last),
                "no_verdict": sum(1 for run in last if run.document is None),
                "platform": sum(1 for row in rows if row["scope"] == "platform"),
                "bank": sum(1 for row in rows if row["scope"] == "bank"),
            }
        )
    return points


def _relative(path: Path | None, out: Path) -> str | None:
    return None if path is None else Path(os.path.relpath(path, out)).as_posix()


def _bank_entry(history: Sequence[BankRun], out: Path) -> dict[str, Any]:
    latest = history[-1]
    document = latest.document or {}
    return {
        "bank": latest.bank,
        "label": latest.label,
        "status": latest.status,
        "why": latest.why,
        "verdict": latest.document is not None,
        "complete": bool(document.get("run", {}).get("complete")),
        # a smoke run or a -k/-m selection: its causes are real, its verdict no conformance one
        "selection": dict(document.get("run", {}).get("selection") or {}),
        "started": latest.started,
        "round": latest.round,
        "seconds": latest.seconds,
        "report": _relative(latest.report, out),
        "folder": str(latest.folder),
        "totals": dict(document.get("totals", {})),
        "causes": {cause: facts["count"] for cause, facts in latest.causes.items()},
        "levels": {cause: facts["level"] for cause, facts in latest.causes.items()},
        "changes": _changes(history),
        "trend": _trend(history),
    }


def build_fleet(runs: Sequence[BankRun], out: Path) -> dict[str, Any]:
    """The fleet document of ``runs``, its links relative to ``out`` (where it is written)."""
    banks = _by_bank(runs)
    latest = [history[-1] for history in banks.values()]
    judged = sum(1 for run in latest if run.document is not None)
    seconds = [run.seconds for run in latest if run.seconds is not None]
    return {
        "format": FORMAT,
        "threshold": {
            "share": PLATFORM_SHARE,
            "least": PLATFORM_LEAST,
            "banks": platform_threshold(judged),
            "words": threshold_words(judged),
        },
        "rounds": _rounds(runs),
        "latest_round": _rounds(latest)[-1],
        "banks_judged": judged,
        "banks": [_bank_entry(history, out) for history in banks.values()],
        "causes": _cause_rows(latest),
        # every cause of every run, fixed ones too: the history names them by their title
        "cause_titles": {
            cause: facts["title"] for run in runs for cause, facts in sorted(run.causes.items())
        },
        "platform_trend": _platform_trend(runs),
        "runs_seconds": round(sum(seconds), 3),
    }
