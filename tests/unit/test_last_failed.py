"""``conformance run --last-failed``: the scenarios that failed or erred in the previous run, run
again into the same reports folder, as a partial run (never eligible for certification)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.errors import ConformanceError
from conformance.report.last_failed import LAST_FAILED, last_failed, write_last_failed


def _previous(reports: Path, verdicts: dict[str, str]) -> None:
    reports.mkdir(parents=True, exist_ok=True)
    scenarios = [{"id": scenario, "verdict": verdict} for scenario, verdict in verdicts.items()]
    document = {"scenarios": scenarios}
    (reports / "compliance.json").write_text(json.dumps(document), encoding="utf-8")


def test_the_failed_and_erred_scenarios_of_the_previous_run(tmp_path: Path) -> None:
    _previous(
        tmp_path,
        {
            "E16-b": "failed",
            "E16-a": "error",
            "E16-c": "failed (should)",
            "E16-d": "passed",
            "E16-e": "blocked",
            "E16-f": "not applicable",
        },
    )
    assert last_failed(tmp_path, strict=False) == ["E16-a", "E16-b"]
    assert last_failed(tmp_path, strict=True) == ["E16-a", "E16-b", "E16-c"]
    path = write_last_failed(tmp_path, ["E16-a", "E16-b"])
    assert path == tmp_path / LAST_FAILED
    assert path.read_text(encoding="utf-8").splitlines()[1:] == ["E16-a", "E16-b"]


def test_without_a_previous_run_it_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConformanceError, match=r"previous run's .*compliance\.json"):
        last_failed(tmp_path, strict=False)
    (tmp_path / "compliance.json").write_text('{"traffic": {}, "scenarios": []}', "utf-8")
    with pytest.raises(ConformanceError, match="judged traffic"):
        last_failed(tmp_path, strict=False)


def _run(reports: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--reports", str(reports), "-n", "0",
         "--last-failed"],
        capture_output=True, text=True, timeout=300, check=False, cwd=reports.parent,
    )  # fmt: skip


def test_a_last_failed_run_runs_those_into_the_same_folder(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    failed = ["E12-valid-request-accepted", "E16-creditorName-maxLength-71-rejected"]
    _previous(reports, {failed[0]: "failed", failed[1]: "error", "E1-x": "passed"})
    done = _run(reports)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "running again the 2 scenario(s) that failed or erred" in done.stdout
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    assert sorted(item["id"] for item in document["scenarios"]) == failed
    assert document["run"]["selection"] == {"scenarios from": str(reports / LAST_FAILED)}
    assert document["run"]["complete"] is False  # a partial run
    assert document["eligibility"] is None  # the bundled server: no bank to certify
    # they passed this time: nothing is left to run again
    again = _run(reports)
    assert again.returncode == 0
    assert "no scenario failed or erred in the run of" in again.stdout
