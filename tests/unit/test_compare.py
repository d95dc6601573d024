"""``conformance compare``: two runs' compliance.json side by side; exit 1 on a regression."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.report.compare import CompareError, compare_runs, load_run, render_comparison


def _run(*scenarios: tuple[str, str], version: str = "1.0", **findings: Any) -> dict[str, Any]:
    return {
        "suite_version": version,
        "scenarios": [
            {"id": i, "verdict": v, "reason": f"why {i}", "findings": findings.get(i, [])}
            for i, v in scenarios
        ],
    }


def test_each_kind_of_change_is_sorted_out() -> None:
    old = _run(
        ("a", "passed"), ("b", "failed"), ("c", "passed"), ("d", "passed"), ("gone", "passed")
    )
    new = _run(
        ("a", "failed"),
        ("b", "passed"),
        ("c", "failed (should)"),
        ("d", "passed"),
        ("new", "passed"),
        d=[{"level": "should", "title": "code chosen"}],
    )
    comparison = compare_runs(old, new)
    assert [c.id for c in comparison.newly_failing] == ["a"]
    assert [c.id for c in comparison.newly_passing] == ["b"]
    assert [c.id for c in comparison.other_changes] == ["c"]
    assert [c.id for c in comparison.changed_findings] == ["d"]
    assert [c.id for c in comparison.added] == ["new"]
    assert [c.id for c in comparison.removed] == ["gone"]
    assert comparison.regressed
    text = render_comparison(comparison, "old", "new")
    assert "**Regression**: 1 scenario(s) newly fail" in text
    assert "| `a` | passed | failed | why a |" in text


def test_identical_runs_do_not_regress() -> None:
    run = _run(("a", "passed"), ("b", "failed"))
    comparison = compare_runs(run, run)
    assert not comparison.regressed
    assert "**No regression**" in render_comparison(comparison, "x", "y")


def test_another_suite_version_is_noted() -> None:
    comparison = compare_runs(_run(("a", "passed")), _run(("a", "passed"), version="2.0"))
    assert any("suite version 1.0 → 2.0" in note for note in comparison.notes)


def test_a_partial_run_and_another_profile_are_noted() -> None:
    old = {**_run(("a", "passed")), "profile": {"sha256": "1"}}
    new = {
        **_run(("a", "passed")),
        "profile": {"sha256": "2"},
        "run": {"complete": False, "selection": {"-k": "E16"}},
    }
    notes = compare_runs(old, new).notes
    assert any("the new run is a selection" in note for note in notes)
    assert any("different profile files" in note for note in notes)


def _write(directory: Path, document: dict[str, Any]) -> Path:
    directory.mkdir()
    (directory / "compliance.json").write_text(json.dumps(document), encoding="utf-8")
    return directory


def test_the_command_exits_1_on_a_regression_and_0_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _write(tmp_path / "old", _run(("a", "passed")))
    new = _write(tmp_path / "new", _run(("a", "error")))
    assert main(["compare", str(old), str(new), "--out", str(tmp_path / "c.md")]) == 1
    assert "Newly failing (1)" in capsys.readouterr().out
    assert "Newly failing" in (tmp_path / "c.md").read_text(encoding="utf-8")
    assert main(["compare", str(old), str(old / "compliance.json")]) == 0


def test_an_unreadable_run_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(CompareError, match=r"not a readable compliance\.json"):
        load_run(tmp_path / "bad.json")
    assert main(["compare", str(tmp_path / "missing"), str(tmp_path / "bad.json")]) == 2
