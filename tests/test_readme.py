"""The README's figures hold: the scenario count it states once (its "Figures" paragraph) is the
number ``generate_scenarios`` makes of the contract, and no other count of scenarios contradicts
it."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.contract import load_contract
from conformance.generate import generate_scenarios

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_stated_scenario_count_is_what_the_contract_generates() -> None:
    stated = re.search(
        r"the contract generates \*\*([\d,]+) scenarios\*\* \(([\d,]+) must, ([\d,]+) should",
        README,
    )
    assert stated, "the README states the scenario count in its Figures paragraph"
    scenarios = generate_scenarios(load_contract())
    assert _number(stated.group(1)) == len(scenarios)
    assert _number(stated.group(2)) == sum(1 for s in scenarios if s.level == "must")
    assert _number(stated.group(3)) == sum(1 for s in scenarios if s.level == "should")


def test_the_bundled_runs_judged_count_is_the_scenarios_it_can_judge() -> None:
    """Not applicable to the bundled server (no mutual TLS by default): a bulk basket (spec 1
    has no bulk product) and the checks of the TLS client certificate; the README says it judges
    the rest."""
    judged = re.search(
        r"the bundled run judges\s+([\d,]+) of them and passes them all, with ([\d,]+) "
        r"not\s+applicable",
        README,
    )
    assert judged
    scenarios = generate_scenarios(load_contract())
    # without mutual TLS the checks of the TLS client certificate (the QWAC) cannot be judged
    qwac = sum(1 for s in scenarios if s.rule.startswith("AUTH-qwac-"))
    assert _number(judged.group(2)) == 1 + qwac
    assert _number(judged.group(1)) == len(scenarios) - 1 - qwac
