"""The grading of traffic findings: one function decides, from data the contract carries, and
every quoted sentence is interface.md's, verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.contract import load_contract
from conformance.traffic.grading import (
    QUOTES,
    RULE_QUOTES,
    grade,
    grade_operation,
    grade_rule,
    rule_quote,
)

SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "interface.md"


@pytest.mark.skipif(not SPEC.is_file(), reason="the spec is not beside the checkout")
@pytest.mark.parametrize("quote", sorted({*QUOTES.values(), *RULE_QUOTES.values()}))
def test_every_quote_is_the_specs_own_text(quote: str) -> None:
    assert quote in SPEC.read_text(encoding="utf-8")


def test_stated_is_must_with_its_quote_and_the_rest_should_with_its_reading() -> None:
    assert grade(stated=True, quote="q").level == "must"
    should = grade(stated=False, reading="why")
    assert (should.level, should.basis) == ("should", "why")


def test_an_operations_assumptions_make_its_requirements_should() -> None:
    operations = load_contract().operations
    assert grade_operation(operations["E16"], "required-headers").level == "must"
    assert grade_operation(operations["E2"], "required-headers").level == "should"
    assert grade_operation(operations["PS"]).level == "should"  # only named by the spec
    assert "required-headers" in grade_operation(operations["E17"], "required-headers").basis


def test_rule_rows_grade_by_what_the_spec_states() -> None:
    contract = load_contract()
    assert grade_rule(contract.rule("ERR-2-kid-invalid")).level == "must"
    assert grade_rule(contract.rule("XF-kid-check-digit")).level == "should"
    assert rule_quote(contract.rule("ERR-1-reference-mix-invalid")).startswith("When a signing")
