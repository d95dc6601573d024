"""The figures hold: the counts stated once, in the "Figures" paragraph of ``bench/RESULTS.md``
(the README states none), are what the code makes: the scenarios ``generate_scenarios`` makes of
the contract, the bundled run's judged and not applicable ones, the reference server's faults by
grade and the example profiles; the example profiles' table (``docs/explanation/
reference-server.md``) names each of them, and the operation count of
``docs/explanation/contract.md`` is the contract's."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.contract import load_contract
from conformance.generate import generate_scenarios
from reference_server.faults import FAULTS

ROOT = Path(__file__).resolve().parents[2]
FIGURES = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
EXAMPLES_TABLE = (ROOT / "docs" / "explanation" / "reference-server.md").read_text(encoding="utf-8")
CONTRACT_PAGE = (ROOT / "docs" / "explanation" / "contract.md").read_text(encoding="utf-8")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_stated_scenario_count_is_what_the_contract_generates() -> None:
    stated = re.search(
        r"the\s+contract\s+generates\s+\*\*([\d,]+)\s+scenarios\*\*\s+\(([\d,]+)\s+must,\s+([\d,]+)\s+should",
        FIGURES,
    )
    assert stated, "bench/RESULTS.md states the scenario count in its Figures paragraph"
    scenarios = generate_scenarios(load_contract())
    assert _number(stated.group(1)) == len(scenarios)
    assert _number(stated.group(2)) == sum(1 for s in scenarios if s.level == "must")
    assert _number(stated.group(3)) == sum(1 for s in scenarios if s.level == "should")


def test_the_bundled_runs_judged_count_is_the_scenarios_it_can_judge() -> None:
    """Not applicable to the bundled server (no mutual TLS by default): a bulk basket (spec 1
    has no bulk product), the checks of the TLS client certificate and the bounds of psuMessage
    (the server sends none, and a bound no answer showed is not judged); the figures say it
    judges the rest."""
    judged = re.search(
        r"the\s+bundled\s+run\s+judges\s+([\d,]+)\s+of\s+them\s+and\s+passes\s+them\s+all,\s+"
        r"with\s+([\d,]+)\s+not\s+applicable",
        FIGURES,
    )
    assert judged
    scenarios = generate_scenarios(load_contract())
    # without mutual TLS the checks of the TLS client certificate (the QWAC) cannot be judged
    qwac = sum(1 for s in scenarios if s.rule.startswith("AUTH-qwac-"))
    psu_message = sum(1 for s in scenarios if s.rule == "LIM-psu-message-max-512")
    assert _number(judged.group(2)) == 1 + qwac + psu_message
    assert _number(judged.group(1)) == len(scenarios) - 1 - qwac - psu_message


def test_the_stated_fault_count_is_the_fault_table() -> None:
    stated = re.search(
        r"\*\*([\d,]+)\s+deliberate\s+faults\*\*\s+\(([\d,]+)\s+graded\s+must,\s+([\d,]+)\s+should\)",
        FIGURES,
    )
    assert stated, "bench/RESULTS.md states the fault count in its Figures paragraph"
    assert _number(stated.group(1)) == len(FAULTS)
    assert _number(stated.group(2)) == sum(1 for f in FAULTS.values() if f.level == "must")
    assert _number(stated.group(3)) == sum(1 for f in FAULTS.values() if f.level == "should")


def test_the_stated_example_profile_count_is_the_examples_folder() -> None:
    stated = re.search(r"\*\*([\d,]+)\s+example\s+profiles\*\*", FIGURES)
    assert stated, "bench/RESULTS.md states the example profile count in its Figures paragraph"
    examples = sorted((ROOT / "profiles" / "examples").glob("*.toml"))
    assert _number(stated.group(1)) == len(examples)
    for example in examples:  # and the examples' table names each of them
        assert f"| `{example.name}` |" in EXAMPLES_TABLE


def test_the_stated_operation_count_is_the_contracts() -> None:
    stated = re.search(r"([\d,]+) operations: E1–E18", CONTRACT_PAGE)
    assert stated
    assert _number(stated.group(1)) == len(load_contract().operations)
