"""The ledger of the spec's statements (``schemas/coverage.json``): every numbered rule, numbered
part and limit of interface.md has an entry; every requirement and pattern it names is one the
generators make; and every report says how many statements its run judged."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from conformance.contract import load_contract
from conformance.contract.coverage import (
    Statement,
    judged_statements,
    load_statements,
)
from conformance.contract.silences import load_silences
from conformance.errors import ContractError
from conformance.generate import generate_scenarios
from conformance.report.compliance import RunInfo, build_document
from conformance.report.compliance_page import coverage_line
from conformance.report.compliance_render import render_html
from conformance.report.verdicts import NOT_APPLICABLE, PASSED, ScenarioFacts, ScenarioVerdict
from conformance.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "spec" / "interface.md"
SCHEMAS = ROOT / "schemas"


def _normalised(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def spec() -> str:
    if not SPEC.is_file():
        pytest.skip("interface.md is not beside the checkout")
    return SPEC.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def statements() -> tuple[Statement, ...]:
    return load_statements(SCHEMAS)


@pytest.fixture(scope="module")
def scenarios() -> tuple[Scenario, ...]:
    return tuple(generate_scenarios(load_contract()))


def _part(spec: str, number: str) -> str:
    """The text of part ``number`` (``5``, ``7``, ``8``) of the spec, up to the next part."""
    found = re.search(rf"^## {number}\. .*?(?=^## |\Z)", spec, re.M | re.S)
    assert found is not None, f"no part {number} in interface.md"
    return found.group(0)


@pytest.mark.parametrize(("part", "name"), [("5", "item"), ("7", "rule")])
def test_every_numbered_rule_of_the_spec_has_an_entry(
    spec: str, statements: tuple[Statement, ...], part: str, name: str
) -> None:
    numbers = re.findall(r"^(\d+)\. ", _part(spec, part), re.M)
    assert len(numbers) >= 8  # spec 5 items 1-8, spec 7 rules 1-8
    specs = {statement.spec for statement in statements}
    missing = [n for n in numbers if f"spec {part} {name} {n}" not in specs]
    assert missing == [], f"numbered {name}s of spec {part} without an entry: {missing}"


def test_every_numbered_part_of_the_spec_has_an_entry(
    spec: str, statements: tuple[Statement, ...]
) -> None:
    parts = re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", spec, re.M)
    assert "2.9" in parts and "9" in parts
    named = [re.findall(r"spec (\d+(?:\.\d+)?)", statement.spec) for statement in statements]
    covered = {number for names in named for number in names}
    covered |= {number.split(".")[0] for number in covered}
    assert [part for part in parts if part not in covered] == []


@pytest.mark.parametrize("part", ["2.1", "8"])
def test_every_row_of_the_constraint_tables_is_a_statement(
    spec: str, statements: tuple[Statement, ...], part: str
) -> None:
    heading = "### 2.1 " if part == "2.1" else "## 8. "
    table = spec.split(heading, 1)[1].split("\n#", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    rows = rows[1:]  # the header
    assert len(rows) >= 8
    texts = {_normalised(statement.text) for statement in statements}
    assert [row for row in rows if _normalised(row) not in texts] == []


def test_every_quote_and_every_not_shown_is_a_statement(
    statements: tuple[Statement, ...],
) -> None:
    quotes = json.loads((SCHEMAS / "quotes.json").read_text(encoding="utf-8"))["quotes"]
    quoted = {statement.quote for statement in statements}
    assert sorted(set(quotes) - quoted) == []
    not_shown = {entry.id for entry in load_silences(SCHEMAS) if entry.kind == "not-shown"}
    assert sorted(not_shown - {statement.silence for statement in statements}) == []


def test_every_own_text_is_found_verbatim_in_the_spec(
    spec: str, statements: tuple[Statement, ...]
) -> None:
    whole = _normalised(spec)
    own = [s for s in statements if s.quote is None and s.silence is None]
    assert own, "the ledger has statements of its own words"
    assert [s.id for s in own if _normalised(s.text) not in whole] == []


def test_every_requirement_the_ledger_names_quotes_its_statement(
    statements: tuple[Statement, ...], scenarios: tuple[Scenario, ...]
) -> None:
    rules = {scenario.rule for scenario in scenarios}
    problems = [
        f"{statement.id}: {rule}"
        for statement in statements
        for rule in statement.quoted_by
        if rule not in rules
        or not any(s.rule == rule and statement.quote in s.quotes for s in scenarios)
    ]
    assert problems == [], "no such requirement, or none of its scenarios names the quote"


def test_every_pattern_of_the_ledger_selects_scenarios(
    statements: tuple[Statement, ...], scenarios: tuple[Scenario, ...]
) -> None:
    rules = {scenario.rule for scenario in scenarios} | {rule.id for rule in load_contract().rules}
    operations = {scenario.operation for scenario in scenarios}
    problems = [
        *(
            f"{s.id}: rules {pattern}"
            for s in statements
            for pattern in s.rules
            if not any(fnmatchcase(rule, pattern) for rule in rules)
        ),
        *(
            f"{s.id}: scenarios {pattern}"
            for s in statements
            for pattern in s.scenarios
            if not any(fnmatchcase(scenario.id, pattern) for scenario in scenarios)
        ),
        *(f"{s.id}: {op}" for s in statements for op in s.operations if op not in operations),
    ]
    assert problems == []


def test_every_requirement_that_quotes_a_statement_is_in_its_entry(
    statements: tuple[Statement, ...], scenarios: tuple[Scenario, ...]
) -> None:
    """A generator that starts quoting a statement must be named in the ledger (else the ledger
    would undercount what judges it)."""
    quoting: defaultdict[str, set[str]] = defaultdict(set)
    for scenario in scenarios:
        for label in scenario.quotes:
            quoting[label].add(scenario.rule)
    by_quote = {statement.quote: statement for statement in statements if statement.quote}
    missing = {
        label: sorted(rules - set(by_quote[label].quoted_by))
        for label, rules in quoting.items()
        if rules - set(by_quote[label].quoted_by)
    }
    assert missing == {}


def test_a_judgeable_statement_is_judged_when_every_scenario_passes(
    statements: tuple[Statement, ...], scenarios: tuple[Scenario, ...]
) -> None:
    passed = [
        {"id": s.id, "rule": s.rule, "operation": s.operation, "quotes": list(s.quotes),
         "verdict": PASSED}
        for s in scenarios
    ]  # fmt: skip
    coverage = judged_statements(statements, passed)
    assert [s.id for s in coverage.unjudged] == []
    assert len(coverage.judged) > 150
    assert all(s.reason and s.why for s in coverage.not_judgeable)


def _bad_ledger(tmp_path: Path, entry: dict[str, object]) -> Path:
    for name in ("quotes.json", "silences.json", "silences.schema.json", "releases.json"):
        (tmp_path / name).write_text((SCHEMAS / name).read_text(encoding="utf-8"), "utf-8")
    ledger = {"statements": [entry]}
    (tmp_path / "coverage.json").write_text(json.dumps(ledger), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"id": "x", "quote": "no-such-label", "rules": ["POS-E1"]}, "not in quotes.json"),
        ({"id": "x", "quote": "7-rule-1"}, "not_judged with the reason"),
        (
            {"id": "x", "quote": "7-rule-1", "text": "When", "rules": ["ERR-1-*"]},
            "one home",
        ),
        (
            {"id": "x", "quote": "7-rule-1", "not_judged": {"reason": "lazy", "why": "-"}},
            "reason is one of",
        ),
        ({"id": "x", "quote": "7-rule-1", "release": "nope"}, "not a row of releases.json"),
    ],
)
def test_the_loader_refuses_a_broken_entry(
    tmp_path: Path, entry: dict[str, object], said: str
) -> None:
    with pytest.raises(ContractError, match=said):
        load_statements(_bad_ledger(tmp_path, entry))


def _verdict(scenario: str, rule: str, verdict: str, quotes: tuple[str, ...]) -> ScenarioVerdict:
    facts = ScenarioFacts(
        id=scenario, operation="E1", rule=rule, spec="spec 7 rule 1", level="must",
        kind="rule", title=scenario, assumptions=(), quotes=quotes,
    )  # fmt: skip
    return ScenarioVerdict(facts, verdict, "why")


def test_every_report_says_how_many_statements_its_run_judged() -> None:
    started = datetime(2026, 1, 29, 8, 0, tzinfo=UTC)
    info = RunInfo(
        started=started, finished=started + timedelta(seconds=3), seed=1, strict=False,
        target="https://bank.example",
    )  # fmt: skip
    document = build_document(
        [
            _verdict("E1-ERR-1", "ERR-1-reference-mix-invalid", PASSED, ("7-rule-1",)),
            _verdict("E1-LIM", "LIM-basket-max-10-payments", NOT_APPLICABLE, ("8-basket",)),
        ],
        info,
    )
    coverage = document["coverage"]
    total = len(load_statements())
    assert coverage["statements"] == total
    unjudged = {entry["statement"] for entry in coverage["unjudged"]}
    # the passed scenario judged 7 rule 1 (and what else names ERR-1: spec 9's dating of it, the
    # error body); the not applicable one judged nothing
    assert "8-basket" in unjudged and "7-rule-1" not in unjudged
    assert "9-release-reference-mix" not in unjudged
    judged = coverage["judged"]
    assert 2 <= judged == total - coverage["not_judgeable"] - len(unjudged)
    line = coverage_line(document)
    assert line.startswith(f"Spec coverage: this run judged {judged} of {total} statements")
    page = render_html(document)
    assert f"Spec coverage: this run judged {judged} of" in page and "8-basket" in page
