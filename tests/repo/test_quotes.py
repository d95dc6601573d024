"""A must verdict quotes the spec: every quote of ``schemas/quotes.json`` is found verbatim in
``../shared/spec/interface.md``, every must scenario names quotes, every should scenario and
should finding names the reading it rests on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from unit.test_checks import exchange

from conformance.checks import ConformanceFailure, check_status
from conformance.contract import Contract, load_contract, quoted
from conformance.findings import at_should, collecting_findings
from conformance.generate import generate_scenarios
from conformance.scenario import Scenario

ROOT = Path(__file__).resolve().parents[2]
#: The specification under test, beside the repository (absent from an installed wheel).
SPEC = ROOT.parent / "shared" / "spec" / "interface.md"


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


@pytest.fixture(scope="module")
def scenarios(contract: Contract) -> tuple[Scenario, ...]:
    return tuple(generate_scenarios(contract))


def _normalised(text: str) -> str:
    return " ".join(text.split())


def test_every_quote_is_found_verbatim_in_the_spec(contract: Contract) -> None:
    if not SPEC.is_file():
        pytest.skip(f"the spec is not beside the repository ({SPEC}): an installed copy")
    spec = _normalised(SPEC.read_text(encoding="utf-8"))
    missing = [q.label for q in contract.quotes.values() if _normalised(q.text) not in spec]
    assert missing == [], f"quotes not found verbatim in interface.md: {missing}"


def test_every_must_scenario_quotes_the_spec(
    contract: Contract, scenarios: tuple[Scenario, ...]
) -> None:
    unquoted = [s.id for s in scenarios if s.level == "must" and not s.quotes]
    assert unquoted == []
    unknown = sorted(
        {label for s in scenarios for label in s.quotes if label not in contract.quotes}
    )
    assert unknown == [], f"labels no quote has: {unknown}"


def test_every_should_scenario_names_its_reading(scenarios: tuple[Scenario, ...]) -> None:
    assert [s.id for s in scenarios if s.level == "should" and not s.reading.strip()] == []
    assert [s.id for s in scenarios if s.level == "must" and s.reading] == []


def test_the_quotes_the_code_names_are_in_the_catalogue(contract: Contract) -> None:
    """Checks and generators name quote labels in code (``quotes=(...)``): each is a quote."""
    labels: set[str] = set()
    for source in (ROOT / "conformance").rglob("*.py"):
        for group in re.findall(r"quotes=\(([^()]*)\)", source.read_text(encoding="utf-8")):
            labels.update(re.findall(r'"([^"]+)"', group))
    assert labels, "no quote label found in the code"
    assert sorted(labels - set(contract.quotes)) == []


def test_a_should_finding_carries_its_reading() -> None:
    with collecting_findings() as findings:
        at_should(lambda: check_status(exchange(422), (400,)), reading="we expect 400")
    assert [finding.reading for finding in findings] == ["we expect 400"]
    assert "Our reading (should): we expect 400" in str(findings[0])


def test_a_must_failure_shows_the_quoted_sentence(contract: Contract) -> None:
    failure = ConformanceFailure(
        "accepted", spec="spec 7 rule 1", sent=None, expected="400", quotes=("7-rule-1",)
    )
    (quote,) = quoted(("7-rule-1",), contract)
    assert f'Quoted: spec 7 rule 1: "{quote.text}"' in str(failure)
