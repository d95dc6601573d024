"""The smoke run (``conformance run --smoke``): one positive and one negative scenario per
operation, and a verdict that says it is a smoke run, never a conformance verdict."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conformance.contract import load_contract
from conformance.generate import generate_scenarios
from conformance.generate.smoke import NEGATIVE_RULE, smoke_selection
from conformance.report.compliance_page import overall_verdict, verdict_word


def test_one_positive_and_one_negative_per_operation() -> None:
    contract = load_contract()
    chosen = smoke_selection(generate_scenarios(contract))
    by_operation = Counter(scenario.operation for scenario in chosen)
    assert set(by_operation) == set(contract.operations)
    assert set(by_operation.values()) == {2}
    for operation in contract.operations:
        kinds = sorted(
            (s.kind, s.rule == NEGATIVE_RULE) for s in chosen if s.operation == operation
        )
        assert kinds == [("auth", True), ("positive", False)], operation
    # the operation's plain request where it has one
    assert "E12-valid-request-accepted" in {s.id for s in chosen}
    assert smoke_selection(generate_scenarios(contract)) == chosen  # deterministic


def _document(failed: int, selection: dict[str, Any]) -> dict[str, Any]:
    totals = dict.fromkeys(
        ("passed", "failed", "failed_should", "error", "blocked", "not_applicable", "waived"), 0
    )
    totals.update(passed=62 - failed, failed=failed)
    return {
        "totals": totals,
        "run": {"complete": not selection, "selection": selection},
        "scenarios": [],
    }


@pytest.mark.parametrize("failed", [0, 3])
def test_a_smoke_verdict_is_never_a_conformance_verdict(failed: int) -> None:
    verdict = overall_verdict(_document(failed, {"smoke": "..."}))
    assert verdict.startswith("SMOKE RUN FAILED" if failed else "SMOKE RUN PASSED")
    assert "not a conformance verdict" in verdict
    assert "CONFORMANT" not in verdict
    assert overall_verdict(_document(0, {})).startswith("CONFORMANT")


def test_a_smoke_run_of_the_bundled_server(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--smoke", "--reports", str(reports)],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    assert "conformance: one process, one scenario at a time (" in done.stdout
    assert "SMOKE RUN PASSED: no must failure" in done.stdout
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    assert document["run"]["complete"] is False
    assert "smoke" in document["run"]["selection"]
    assert document["totals"]["passed"] == 2 * len(load_contract().operations)


def test_a_smoke_run_whose_set_up_failed_is_not_judged_never_a_must_failure() -> None:
    """One set-up cause blocked most of it (the bank refused the suite's certificate after the
    preflight): NOT JUDGED, as a whole run says, not "SMOKE RUN FAILED: 1 must failure"."""
    document = _document(1, {"smoke": "..."})
    document["totals"].update(passed=4, blocked=65)
    cause = "Set-up failed: creating a sandbox customer (SCU) was answered HTTP 401"
    document["scenarios"] = [{"verdict": "blocked", "reason": cause}] * 65
    verdict = overall_verdict(document)
    assert verdict.startswith("NOT JUDGED: set-up failed: creating a sandbox customer")
    assert "must failure" not in verdict and "not a conformance verdict" in verdict
    assert verdict_word(document) == "NOT JUDGED (set-up failed)"
