"""``conformance run --last-failed``: the scenarios that failed or erred in the previous run (its
``compliance.json`` in the same reports folder), listed in ``last-failed.txt`` for
``--conformance-scenarios``. Such a run is a partial one (its selection says so), hence never
eligible for certification; its reports replace the previous run's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

from conformance.errors import ConformanceError
from conformance.report.compliance import COMPLIANCE_JSON
from conformance.report.verdicts import ERROR, FAILED, FAILED_SHOULD

__all__ = ["LAST_FAILED", "last_failed", "write_last_failed"]

#: The list of a ``--last-failed`` run's scenarios, in the reports folder.
LAST_FAILED: Final = "last-failed.txt"


def last_failed(reports: Path, *, strict: bool) -> list[str]:
    """The ids of the scenarios of the previous run in ``reports`` that failed or erred (with
    ``strict``, those with should findings too), by id."""
    path = reports / COMPLIANCE_JSON
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        scenarios = document["scenarios"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConformanceError(
            f"--last-failed reads the previous run's {path}, which cannot be read: "
            f"{getattr(error, 'strerror', None) or error}"
        ) from None
    if "traffic" in document:
        raise ConformanceError(f"--last-failed: {path} is of judged traffic, not of a run")
    wanted = {FAILED, ERROR} | ({FAILED_SHOULD} if strict else set())
    return sorted(str(item["id"]) for item in scenarios if item.get("verdict") in wanted)


def write_last_failed(reports: Path, scenarios: list[str]) -> Path:
    """``last-failed.txt`` in ``reports``: one scenario id a line."""
    path = reports / LAST_FAILED
    header = (
        "# the scenarios that failed or erred in the previous run (conformance run --last-failed)"
    )
    path.write_text("\n".join([header, *scenarios]) + "\n", encoding="utf-8")
    return path
