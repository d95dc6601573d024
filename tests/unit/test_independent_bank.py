"""How ``make independent`` holds a run against a bank another team wrote to its EXPECTED.md
(``scripts/independent_bank.py``): the judgement of a compliance.json, and the expectation kept
beside the bank's own words."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import independent_support
import pytest

script = independent_support.script()
BANKS = independent_support.BANK.parent
EXPECTED = script.EXPECTATIONS["independent-1"]


def _compliance(failed: list[str], **totals: int) -> dict[str, Any]:
    counts = {"passed": 2100, "failed": len(failed), "blocked": 0, "error": 0, **totals}
    return {
        "run": {"complete": True},
        "totals": counts,
        "scenarios": [{"id": scenario, "verdict": "failed"} for scenario in failed]
        + [{"id": "E1-positive", "verdict": "passed"}],
    }


def _stated_breaks() -> list[str]:
    return [
        f"{op}-auth-{kind}-rejected"
        for op in ("E16", "E17", "E18")
        for kind in (
            "body-changed-after-signing",
            "headers-list-incomplete",
            "keyid-ca-mismatch",
            "keyid-serial-mismatch",
            "no-certificate",
            "no-signature",
            "stale-digest",
            "wrong-algorithm",
            "wrong-key",
        )
    ] + [
        f"E17-creditorAddress.{field}-type-integer-rejected"
        for field in ("buildingNumber", "city", "postalCode")
    ]


def test_a_run_failing_on_exactly_the_stated_breaks_matches() -> None:
    assert script.judge(_compliance(_stated_breaks()), EXPECTED) == []


def test_a_must_failure_beyond_the_stated_breaks_is_named() -> None:
    problems = script.judge(_compliance([*_stated_breaks(), "AL-positive"]), EXPECTED)
    assert any("AL-positive" in problem for problem in problems)


def test_a_stated_break_no_longer_caught_is_a_mismatch() -> None:
    problems = script.judge(_compliance(_stated_breaks()[1:]), EXPECTED)
    assert problems == ["29 must failures, expected 30 (the bank's stated breaks)"]


@pytest.mark.parametrize("verdict", ["blocked", "error"])
def test_a_blocked_or_erring_scenario_is_a_mismatch(verdict: str) -> None:
    problems = script.judge(_compliance(_stated_breaks(), **{verdict: 3}), EXPECTED)
    assert problems == [f"3 scenario(s) {verdict}, expected none"]


def test_a_partial_run_is_a_mismatch() -> None:
    compliance = _compliance(_stated_breaks(), passed=100)
    compliance["run"]["complete"] = False
    problems = script.judge(compliance, EXPECTED)
    assert "the run did not complete" in problems
    assert any("expected at least 2000" in problem for problem in problems)


@pytest.mark.parametrize("name", sorted(script.EXPECTATIONS))
def test_the_expectation_is_the_banks_own_words(name: str) -> None:
    """The count, the floor and the blocked scenarios are the ones EXPECTED.md states, so the
    two cannot drift."""
    expectation = script.EXPECTATIONS[name]
    text = (expectation.folder / "EXPECTED.md").read_text(encoding="utf-8")
    count = re.search(r"\((\d+) today\)", text)
    floor = re.search(r"judge at least ([\d,]+) scenarios", text)
    assert count is not None and floor is not None
    assert expectation.must_failure_count == int(count.group(1))
    assert expectation.least_judged == int(floor.group(1).replace(",", ""))
    blocked = re.search(r"block exactly the (\d+) scenarios? below", text)
    assert expectation.blocked_count == (int(blocked.group(1)) if blocked else 0)
    for pattern in expectation.blocked:  # each named in the table, its * a written id's part
        assert pattern.split("*")[0].rstrip("-") in text, pattern


def test_a_run_blocking_exactly_the_listed_scenarios_matches() -> None:
    expectation = script.EXPECTATIONS["independent-3"]
    compliance = _compliance([], blocked=1)
    compliance["scenarios"].append({"id": "E14-private-agreement-reads-back", "verdict": "blocked"})
    assert script.judge(compliance, expectation) == []
    compliance["scenarios"].append({"id": "E1-positive-x", "verdict": "blocked"})
    compliance["totals"]["blocked"] = 2
    assert script.judge(compliance, expectation) == [
        "blocked scenarios EXPECTED.md does not list: E1-positive-x",
        "2 scenario(s) blocked, expected 1",
    ]


def test_the_profile_names_its_command_and_templates_in_the_banks_folder(tmp_path: Path) -> None:
    bank = script.EXPECTATIONS["independent-2"].folder
    text = script._profile(bank, 4321, tmp_path / "bank.toml").read_text(encoding="utf-8")
    assert f'command = "{bank / "suite_sca.py"}"' in text
    assert f'templates = "{bank / "setup"}"' in text


def test_the_profile_gets_the_port_it_runs_on(tmp_path: Path) -> None:
    profile = script._profile(BANKS / "independent-1", 4321, tmp_path / "bank.toml")
    assert 'base_url = "http://127.0.0.1:4321"' in profile.read_text(encoding="utf-8")


def test_the_identities_are_made_again_in_a_folder_that_has_them(tmp_path: Path) -> None:
    """A second ``make independent`` in one checkout makes its identities afresh (it stopped on
    the first run's CA key)."""
    script._identities(tmp_path)
    first = (tmp_path / "ca.pem").read_bytes()
    script._identities(tmp_path)
    assert (tmp_path / "tpp.pem").is_file() and (tmp_path / "utf8" / "ca.pem").is_file()
    assert (tmp_path / "ca.pem").read_bytes() != first
