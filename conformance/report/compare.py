"""Two runs side by side (``conformance compare``): which scenarios got worse, which got better,
whose findings changed, which were added or removed, from their ``compliance.json`` files."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError
from conformance.report.compliance import COMPLIANCE_JSON
from conformance.report.verdicts import ERROR, FAILED, PASSED

__all__ = [
    "Change",
    "CompareError",
    "Comparison",
    "compare_runs",
    "load_run",
    "render_comparison",
]

#: Verdicts that fail a run: a scenario moving into one of them is a regression.
_FAILING = frozenset({FAILED, ERROR})


@dataclass(frozen=True)
class Change:
    """One scenario's verdict in the two runs (``""``: absent from that run)."""

    id: str
    old: str
    new: str
    reason: str = ""


@dataclass(frozen=True)
class Comparison:
    """What changed between two runs; ``regressed`` when a scenario newly fails (must)."""

    newly_failing: tuple[Change, ...] = ()
    newly_passing: tuple[Change, ...] = ()
    other_changes: tuple[Change, ...] = ()
    changed_findings: tuple[Change, ...] = ()
    added: tuple[Change, ...] = ()
    removed: tuple[Change, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def regressed(self) -> bool:
        return bool(self.newly_failing)


class CompareError(ConformanceError):
    """A run to compare could not be read."""


def load_run(path: Path) -> Mapping[str, Any]:
    """The ``compliance.json`` at ``path``, or inside the report directory ``path``."""
    file = path / COMPLIANCE_JSON if path.is_dir() else path
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CompareError(
            f"{file} does not exist (give a compliance.json or its directory)"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CompareError(f"{file} is not a readable compliance.json: {error}") from None
    if not isinstance(document, dict) or not isinstance(document.get("scenarios"), list):
        raise CompareError(f"{file} is not a compliance.json (it lists no scenarios)")
    return document


def _by_id(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(item["id"]): item for item in document["scenarios"] if isinstance(item, dict)}


def _findings(item: Mapping[str, Any]) -> list[tuple[str, str]]:
    return sorted((str(f.get("level")), str(f.get("title"))) for f in item.get("findings", ()))


def _partial_run(label: str, run: Any) -> str:
    """The note on a run that judged only some scenarios (interrupted, or a selection)."""
    if not isinstance(run, dict):
        return ""
    if run.get("interrupted"):
        return f"{label} run was interrupted ({run['interrupted']}): a partial run"
    if run.get("complete") is False:
        return f"{label} run is a selection ({run.get('selection')}): a partial run"
    return ""


def compare_runs(old: Mapping[str, Any], new: Mapping[str, Any]) -> Comparison:
    """The scenarios whose verdict or findings differ between ``old`` and ``new``."""
    before, after = _by_id(old), _by_id(new)
    worse: list[Change] = []
    better: list[Change] = []
    other: list[Change] = []
    findings: list[Change] = []
    for scenario_id in sorted(before.keys() & after.keys()):
        was, now = str(before[scenario_id]["verdict"]), str(after[scenario_id]["verdict"])
        change = Change(scenario_id, was, now, str(after[scenario_id].get("reason", "")))
        if was != now:
            if now in _FAILING and was not in _FAILING:
                worse.append(change)
            elif was in _FAILING and now == PASSED:
                better.append(change)
            else:
                other.append(change)
        elif _findings(before[scenario_id]) != _findings(after[scenario_id]):
            findings.append(change)
    notes = []
    if old.get("suite_version") != new.get("suite_version"):
        notes.append(
            f"suite version {old.get('suite_version')} → {new.get('suite_version')}: "
            "added and removed scenarios may come from the suite, not the target"
        )
    for label, document in (("the old", old), ("the new", new)):
        note = _partial_run(label, document.get("run"))
        if note:
            notes.append(note)
    digests = [(d.get("profile") or {}).get("sha256") for d in (old, new)]
    if all(digests) and digests[0] != digests[1]:
        notes.append("the runs used different profile files (their SHA-256 differ)")
    return Comparison(
        newly_failing=tuple(worse),
        newly_passing=tuple(better),
        other_changes=tuple(other),
        changed_findings=tuple(findings),
        added=tuple(
            Change(i, "", str(after[i]["verdict"])) for i in sorted(after.keys() - before.keys())
        ),
        removed=tuple(
            Change(i, str(before[i]["verdict"]), "") for i in sorted(before.keys() - after.keys())
        ),
        notes=tuple(notes),
    )


def _escaped(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(title: str, changes: Sequence[Change]) -> list[str]:
    if not changes:
        return []
    lines = ["", f"### {title} ({len(changes)})", "", "| scenario | before | now | why |"]
    lines.append("|---|---|---|---|")
    lines += [
        f"| `{c.id}` | {c.old or '—'} | {c.new or '—'} | {_escaped(c.reason)} |" for c in changes
    ]
    return lines


def render_comparison(comparison: Comparison, old_label: str, new_label: str) -> str:
    """Markdown for a CI comment: the verdict first, then one table per kind of change."""
    c = comparison
    headline = (
        f"**Regression**: {len(c.newly_failing)} scenario(s) newly fail"
        if c.regressed
        else "**No regression**: no scenario newly fails"
    )
    lines = [f"## Conformance: {new_label} against {old_label}", "", headline]
    lines += [f"- {note}" for note in c.notes]
    lines += _table("Newly failing", c.newly_failing)
    lines += _table("Newly passing", c.newly_passing)
    lines += _table("Other verdict changes", c.other_changes)
    lines += _table("Findings changed", c.changed_findings)
    lines += _table("Added scenarios", c.added)
    lines += _table("Removed scenarios", c.removed)
    return "\n".join(lines) + "\n"
