"""A reports folder whose record matches its run: what an older run left there is moved aside
before a new run writes its reports (``conformance run``).

- ``evidence/`` of an older sealed run goes to ``evidence-<first 12 hex digits of its digest>``,
  as a series keeps it (``record.make_room``); an unsealed one (exchanges only) is removed;
- ``traffic.har`` and ``events.ndjson`` of an older run go to ``earlier-<its start>/``.

So ``conformance verify reports/evidence`` never verifies a run other than the one whose
``compliance.html`` stands beside it. A new sealed run still follows the newest record of the
folder (:func:`latest_record`), moved aside or not.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from conformance.evidence.record import MANIFEST, make_room
from conformance.report.compliance import COMPLIANCE_JSON
from conformance.report.exchange_record import EVIDENCE_DIR
from conformance.report.traffic_files import EVENTS, HAR

__all__ = ["EARLIER_PREFIX", "latest_record", "move_aside"]

#: The folder an older run's traffic files are moved into: ``earlier-<its start>``.
EARLIER_PREFIX: Final = "earlier-"


def _sealed_at(folder: Path) -> str:
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(manifest.get("sealed_at", ""))


def latest_record(reports: Path) -> Path | None:
    """The newest sealed record in ``reports``: ``evidence/``, else the latest sealed of the
    records moved aside (``evidence-*``); None when there is none."""
    current = reports / EVIDENCE_DIR
    if (current / MANIFEST).is_file():
        return current
    kept = [
        folder
        for folder in reports.glob(f"{EVIDENCE_DIR}-*")
        if (folder / MANIFEST).is_file() and _sealed_at(folder)
    ]
    return max(kept, key=_sealed_at) if kept else None


def _older_run(reports: Path, traffic: list[str]) -> str:
    """When the run whose files are in ``reports`` started (its compliance.json), as a name."""
    try:
        document = json.loads((reports / COMPLIANCE_JSON).read_text(encoding="utf-8"))
        started = datetime.fromisoformat(str(document["run"]["started"]))
    except (OSError, ValueError, KeyError, TypeError):
        first = min((reports / name).stat().st_mtime for name in traffic)
        started = datetime.fromtimestamp(first, UTC)
    return started.strftime("%Y%m%dT%H%M%S")


def move_aside(reports: Path) -> list[str]:
    """Move what an older run left in ``reports`` aside (see the module); one line per move."""
    said = []
    if (reports / EVIDENCE_DIR).exists():
        kept = make_room(reports)
        if kept is not None:
            said.append(f"the previous run's sealed record is kept in {kept}")
    traffic = [name for name in (HAR, EVENTS) if (reports / name).is_file()]
    if traffic:
        earlier = reports / f"{EARLIER_PREFIX}{_older_run(reports, traffic)}"
        earlier.mkdir(exist_ok=True)
        for name in traffic:
            target = earlier / name
            if target.exists():
                target.unlink()
            (reports / name).rename(target)
        said.append(f"the previous run's {' and '.join(traffic)} moved to {earlier}")
    return said
