"""How one bank's run ended, as ``fleet-run.json`` beside its reports: written by ``conformance
fleet run`` for every bank, so that a bank whose run gave no ``compliance.json`` (its deadline
passed, the target refused the suite's certificate, the profile could not be read) is still
named in the fleet report, with why.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "FORMAT",
    "INTERRUPTED",
    "JUDGED",
    "NOT_RUN",
    "OUTCOME_JSON",
    "STATUSES",
    "TIMED_OUT",
    "BankOutcome",
    "read_outcome",
]

OUTCOME_JSON = "fleet-run.json"
#: Names the layout of ``fleet-run.json``.
FORMAT = "psd2-conformance/fleet-run/1"

#: The run ended with a compliance document (its own verdict, complete or interrupted, is in it).
JUDGED = "judged"
#: The run passed its deadline and its process group was killed.
TIMED_OUT = "timed out"
#: The run ended without a compliance document (a refused certificate, an unreachable target,
#: a profile that could not be read): ``why`` is the run's last word.
NOT_RUN = "not run"
#: The run was interrupted (Ctrl-C, SIGTERM) and wrote no compliance document.
INTERRUPTED = "interrupted"
STATUSES = (JUDGED, TIMED_OUT, NOT_RUN, INTERRUPTED)


@dataclass(frozen=True)
class BankOutcome:
    """One bank's run as the fleet saw it from outside."""

    #: The bank's folder under the fleet's reports (its profile file's stem).
    bank: str
    #: The profile's ``name``, or the folder when the profile could not be read.
    name: str
    profile: str
    status: str
    why: str
    exit_code: int | None
    started: str
    finished: str
    seconds: float
    #: The fleet round this run belongs to (``--round``; by default the fleet's start time).
    round: str
    command: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, **asdict(self), "command": list(self.command)}

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / OUTCOME_JSON
        path.write_text(json.dumps(self.as_dict(), indent=2) + "\n", encoding="utf-8")
        return path


def read_outcome(path: Path) -> BankOutcome | None:
    """The record at ``path``, or None when it is not one (unreadable, another format)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    try:
        return BankOutcome(
            bank=str(data["bank"]),
            name=str(data["name"]),
            profile=str(data["profile"]),
            status=str(data["status"]),
            why=str(data["why"]),
            exit_code=None if data["exit_code"] is None else int(data["exit_code"]),
            started=str(data["started"]),
            finished=str(data["finished"]),
            seconds=float(data["seconds"]),
            round=str(data["round"]),
            command=tuple(str(word) for word in data.get("command", ())),
        )
    except (KeyError, TypeError, ValueError):
        return None
