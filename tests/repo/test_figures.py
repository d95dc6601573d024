"""The figures hold: the Figures table of ``bench/RESULTS.md`` is the one ``python -m
bench.figures`` writes (the counts from the code, the measurements from ``bench/figures.jsonl``),
and its counts (the README states none) are what the code makes: the scenarios
``generate_scenarios`` makes of the contract, the bundled run's judged and not applicable ones,
the reference server's faults by grade and the example profiles; the example profiles' table
(``docs/explanation/reference-server.md``) names each of them, and the operation count of
``docs/explanation/contract.md`` is the contract's."""

from __future__ import annotations

import re
from pathlib import Path

from bench import figures
from conformance.contract import load_contract
from conformance.generate import generate_scenarios
from reference_server.faults import FAULTS

ROOT = Path(__file__).resolve().parents[2]
FIGURES = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
EXAMPLES_TABLE = (ROOT / "docs" / "explanation" / "reference-server.md").read_text(encoding="utf-8")
CONTRACT_PAGE = (ROOT / "docs" / "explanation" / "contract.md").read_text(encoding="utf-8")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _value(key: str) -> str:
    """The value of the counted figure ``key`` in the table of bench/RESULTS.md."""
    labels = {figure.key: figure.label for figure in figures.counted()}
    for line in figures.section(FIGURES).splitlines():
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        if cells[0] == labels[key]:
            return cells[1].strip("*")
    raise AssertionError(f"bench/RESULTS.md's Figures table has no row {labels[key]!r}")


def test_the_figures_table_is_the_one_written_from_the_code_and_the_data() -> None:
    """The table between the markers is what ``python -m bench.figures`` writes: the counts
    from the code, the last measurement of each figure in bench/figures.jsonl."""
    assert figures.section(FIGURES) == figures.table(), "run: .venv/bin/python -m bench.figures"


def test_a_later_measurement_replaces_the_earlier_and_the_table_is_written_between_markers(
    tmp_path: Path,
) -> None:
    data, results = tmp_path / "figures.jsonl", tmp_path / "RESULTS.md"
    data.write_text("", encoding="utf-8")
    figures.record("run", "`make run`", "40 s", how="loaded", date="2026-11-28", data=data)
    figures.record("test", "`make test`", "3 | 4 min", how="a", date="2026-11-28", data=data)
    figures.record("run", "`make run`", "30 s", how="quiet", date="2026-11-29", data=data)
    shown = figures.latest(data)
    assert [(f.key, f.value, f.how) for f in shown] == [
        ("run", "30 s", "quiet"),
        ("test", "3 | 4 min", "a"),
    ]
    assert "| `make run` | **30 s** | 2026-11-29 | quiet |" in figures.render(shown)
    assert "3 \\| 4 min" in figures.render(shown)  # a bar in a value does not split the cell
    results.write_text(f"# R\n\n{figures.BEGIN}\nold\n{figures.END}\n\nafter\n", "utf-8")
    assert figures.write(results, data)
    written = results.read_text(encoding="utf-8")
    assert "old" not in written and written.endswith(f"{figures.END}\n\nafter\n")
    assert figures.section(written) == figures.table(data)
    assert not figures.write(results, data)  # written again: unchanged


def test_the_stated_scenario_count_is_what_the_contract_generates() -> None:
    stated = re.fullmatch(r"([\d,]+) \(([\d,]+) must, ([\d,]+) should\)", _value("scenarios"))
    assert stated, "bench/RESULTS.md states the scenario count in its Figures table"
    scenarios = generate_scenarios(load_contract())
    assert _number(stated.group(1)) == len(scenarios)
    assert _number(stated.group(2)) == sum(1 for s in scenarios if s.level == "must")
    assert _number(stated.group(3)) == sum(1 for s in scenarios if s.level == "should")


def test_the_bundled_runs_judged_count_is_the_scenarios_it_can_judge() -> None:
    """Not applicable to the bundled server (no mutual TLS by default): a bulk basket (spec 1
    has no bulk product), the checks of the TLS client certificate and the bounds of psuMessage
    (the server sends none, and a bound no answer showed is not judged); the figures say it
    judges the rest."""
    judged = re.fullmatch(
        r"([\d,]+) judged, all passed; ([\d,]+) not applicable", _value("bundled-verdicts")
    )
    assert judged
    scenarios = generate_scenarios(load_contract())
    # without mutual TLS the checks of the TLS client certificate (the QWAC) cannot be judged
    qwac = sum(1 for s in scenarios if s.rule.startswith("AUTH-qwac-"))
    psu_message = sum(1 for s in scenarios if s.rule == "LIM-psu-message-max-512")
    assert _number(judged.group(2)) == 1 + qwac + psu_message
    assert _number(judged.group(1)) == len(scenarios) - 1 - qwac - psu_message


def test_the_stated_fault_count_is_the_fault_table() -> None:
    stated = re.fullmatch(r"([\d,]+) \(([\d,]+) graded must, ([\d,]+) should\)", _value("faults"))
    assert stated, "bench/RESULTS.md states the fault count in its Figures table"
    assert _number(stated.group(1)) == len(FAULTS)
    assert _number(stated.group(2)) == sum(1 for f in FAULTS.values() if f.level == "must")
    assert _number(stated.group(3)) == sum(1 for f in FAULTS.values() if f.level == "should")


def test_the_stated_example_profile_count_is_the_examples_folder() -> None:
    examples = sorted((ROOT / "profiles" / "examples").glob("*.toml"))
    assert _number(_value("example-profiles")) == len(examples)
    for example in examples:  # and the examples' table names each of them
        assert f"| `{example.name}` |" in EXAMPLES_TABLE


def test_the_stated_operation_count_is_the_contracts() -> None:
    stated = re.search(r"([\d,]+) operations: E1–E18", CONTRACT_PAGE)
    assert stated
    assert _number(stated.group(1)) == len(load_contract().operations)
