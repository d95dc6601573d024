"""The one-file Allure report of a whole run can be mailed (issue 44 item 6): rendered from the
session's shared run of the README's fault (``shared_runs.fault_run``), copied, not made again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.commands.report import allure_command
from runs.shared_runs import fault_run

#: What common mail systems take (the issue's bound for a whole run's one-file report).
MAILABLE = 10 * 1024 * 1024


def test_a_whole_runs_single_file_report_can_be_mailed(tmp_path: Path) -> None:
    """At most 10 MB (a whole run shown scenario by scenario made 73 MB), and a not-applicable
    scenario said as such with its reason."""
    reports = tmp_path / "reports"
    if allure_command(reports / "allure-results", reports / "allure-report") is None:
        pytest.skip("no Allure command line (allure, or npx for allure@3)")
    run = fault_run("long-creditor-name-accepted")
    assert run.returncode == 1, run.tail()
    shutil.copytree(run.reports, reports)
    made = subprocess.run(
        [sys.executable, "-m", "conformance", "report", "--reports", str(reports)],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    index = reports / "allure-report" / "index.html"
    assert index.stat().st_size <= MAILABLE, index.stat().st_size
    assert not (reports / "allure-results-carried").exists()  # the copy went after rendering
    names = [
        json.loads(path.read_text(encoding="utf-8")).get("name", "")
        for path in (reports / "allure-results").glob("*-result.json")
    ]
    assert any(str(name).startswith("NOT APPLICABLE: ") for name in names)
