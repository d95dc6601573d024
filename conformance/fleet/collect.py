"""The runs under some folders, wherever they came from: a local ``conformance fleet run``, a CI
matrix's artefacts, a Kubernetes job's volume, or plain ``conformance run`` reports.

A run is a folder holding a ``compliance.json``, a ``fleet-run.json`` (how ``fleet run`` saw it
end), or both. Its bank is the profile's ``name`` (recorded in both files), else the folder's
name; its time is the run's start; its round is the fleet round ``fleet-run.json`` names, else
the day the run started.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError
from conformance.fleet.outcome import JUDGED, OUTCOME_JSON, BankOutcome, read_outcome
from conformance.report.compliance import COMPLIANCE_HTML, COMPLIANCE_JSON

__all__ = ["BankRun", "collect_runs"]


@dataclass(frozen=True)
class BankRun:
    """One bank's run: its compliance document (None when the run gave none) and its record."""

    folder: Path
    bank: str
    #: A short label for the matrix's column: the profile file's stem, else the folder's name.
    label: str
    started: str
    round: str
    status: str
    why: str
    seconds: float | None
    document: Mapping[str, Any] | None = None
    outcome: BankOutcome | None = None
    #: The must and should causes of the run: id → title, level, spec.
    causes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def judged(self) -> bool:
        """The run has a compliance document and ran to its end."""
        return self.document is not None and not _run_of(self.document).get("interrupted")

    @property
    def report(self) -> Path | None:
        """The bank's HTML report, when it has one."""
        page = self.folder / COMPLIANCE_HTML
        return page if page.is_file() else None


def _run_of(document: Mapping[str, Any]) -> Mapping[str, Any]:
    run = document.get("run")
    return run if isinstance(run, Mapping) else {}


def _read_document(path: Path) -> Mapping[str, Any] | None:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(document, dict) or not isinstance(document.get("scenarios"), list):
        return None
    return document


def _causes(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    for cause in document.get("causes", ()):
        if isinstance(cause, Mapping) and isinstance(cause.get("id"), str):
            found.setdefault(
                cause["id"],
                {
                    "title": str(cause.get("title", "")),
                    "level": str(cause.get("level", "")),
                    "spec": str(cause.get("spec", "")),
                    "count": int(cause.get("count", 0) or 0),
                },
            )
    return found


def _label(folder: Path, profile: Mapping[str, Any], outcome: BankOutcome | None) -> str:
    if outcome is not None:
        return outcome.bank
    source = profile.get("source")
    return Path(source).stem if isinstance(source, str) and source else folder.name


def _run_in(folder: Path) -> BankRun | None:
    """The run in ``folder``, or None when neither file there is readable."""
    document = _read_document(folder / COMPLIANCE_JSON)
    outcome = read_outcome(folder / OUTCOME_JSON)
    if document is None and outcome is None:
        return None
    profile = document.get("profile") if document is not None else None
    profile = profile if isinstance(profile, Mapping) else {}
    run = _run_of(document) if document is not None else {}
    name = profile.get("name") or (outcome.name if outcome else "") or folder.name
    started = str(run.get("started") or (outcome.started if outcome else ""))
    status = outcome.status if outcome is not None else JUDGED
    why = outcome.why if outcome is not None else ""
    if status == JUDGED and run.get("interrupted"):
        why = f"the run was interrupted ({run['interrupted']}): a partial run"
    seconds = outcome.seconds if outcome is not None else run.get("duration_seconds")
    return BankRun(
        folder=folder,
        bank=str(name),
        label=_label(folder, profile, outcome),
        started=started,
        round=outcome.round if outcome is not None else started[:10],
        status=status,
        why=why,
        seconds=None if seconds is None else float(seconds),
        # a run stopped at its deadline may have left a partial document: its verdict is the
        # deadline's, and its causes are not counted
        document=document if status == JUDGED else None,
        outcome=outcome,
        causes=_causes(document) if document is not None and status == JUDGED else {},
    )


def collect_runs(folders: Iterable[Path]) -> list[BankRun]:
    """Every run under ``folders`` (each counted once), by bank and start time."""
    seen: set[Path] = set()
    runs: list[BankRun] = []
    given = list(folders)
    for root in given:
        if not root.exists():
            raise ConformanceError(f"{root} does not exist (give folders of fleet reports)")
        candidates = [root] if root.is_file() else [root, *root.rglob("*")]
        for path in candidates:
            if path.name not in (COMPLIANCE_JSON, OUTCOME_JSON):
                continue
            folder = path.parent.resolve()
            if folder in seen:
                continue
            seen.add(folder)
            run = _run_in(folder)
            if run is not None:
                runs.append(run)
    if not runs:
        shown = ", ".join(str(folder) for folder in given)
        raise ConformanceError(f"no compliance.json or fleet-run.json under {shown}")
    return sorted(runs, key=lambda run: (run.bank, run.started, str(run.folder)))
