"""The grading of traffic findings: one function decides, from the data the contract carries and
a suite run grades by (issue 19): a must quotes interface.md through ``schemas/quotes.json`` (a
test there holds each quote to the spec file), a should names its reading."""

from __future__ import annotations

import json

import pytest

from conformance.checks import ConformanceFailure, ReadingFailure
from conformance.contract import Contract, load_contract
from conformance.contract.requirements import (
    BODY_SCHEMA_ERROR,
    AnswerDue,
    grade,
    grade_flow,
    grade_operation,
    grade_rule,
    quote_text,
)
from conformance.exchange import Exchange
from conformance.report.verdicts import Finding
from conformance.traffic.answer_checks import judge_answer
from conformance.traffic.grading import grade_failure
from conformance.traffic.model import TPP, GradedViolation


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def test_stated_is_must_with_its_quotes_and_the_rest_should_with_its_reading() -> None:
    must = grade(stated=True, quotes=("7-rule-2",))
    assert (must.level, must.quotes, must.reading) == ("must", ("7-rule-2",), "")
    should = grade(stated=False, quotes=("7-rule-2",), reading="why")
    assert (should.level, should.quotes, should.reading) == ("should", (), "why")


def test_a_quote_is_the_text_of_quotes_json_naming_its_spec_part(contract: Contract) -> None:
    text = quote_text(("7-rule-2", "intro-json"))
    assert text == (
        f'spec 7 rule 2: "{contract.quotes["7-rule-2"].text}"; '
        'spec introduction: "Request and response bodies are JSON."'
    )
    assert quote_text(()) == ""


def test_an_operations_assumptions_make_its_requirements_should(contract: Contract) -> None:
    operations = contract.operations
    assert grade_operation(operations["E16"], "required-headers").level == "must"
    assert grade_operation(operations["E2"], "required-headers").level == "should"
    assert grade_operation(operations["PS"]).level == "should"  # only named by the spec
    assert "required-headers" in grade_operation(operations["E17"], "required-headers").reading


def test_rule_rows_grade_by_their_quotes_and_readings(contract: Contract) -> None:
    """As the scenarios of the same rows: an empty KID is missing in every reading (must, spec
    7 rule 2 quoted); what makes a KID invalid is our reading (should, named)."""
    empty = grade_rule(contract.rule("ERR-2-kid-missing-empty"), "E16")
    assert (empty.level, empty.quotes) == ("must", ("7-rule-2", "2.7-remittance-item"))
    invalid = contract.rule("ERR-2-kid-invalid")
    assert grade_rule(invalid, "E16").level == "should"
    assert grade_rule(invalid, "E16").reading == invalid.reading
    assert grade_rule(contract.rule("XF-kid-check-digit")).level == "should"
    assert quote_text(grade_rule(contract.rule("ERR-1-reference-mix-invalid")).quotes).startswith(
        'spec 7 rule 1: "When a signing basket'
    )


def test_a_rule_stated_elsewhere_is_should_on_the_operation_it_names_a_reading_for(
    contract: Contract,
) -> None:
    rule = next(rule for rule in contract.rules if rule.readings)
    operation, reading = next(iter(rule.readings.items()))
    assert grade_rule(rule).level == "must"
    assert (grade_rule(rule, operation).level, grade_rule(rule, operation).reading) == (
        "should",
        reading,
    )


def test_flows_grade_as_the_flow_scenarios(contract: Contract) -> None:
    worst = grade_flow(contract, "basket-worst-case")
    assert worst.level == "must" and "2.4-worst-case" in worst.quotes
    started = grade_flow(contract, "payment-authorisation-started")
    assert started.level == "should" and started.reading
    with pytest.raises(KeyError):
        grade_flow(contract, "no-such-flow")


def test_a_checks_failure_keeps_its_grade() -> None:
    stated = ConformanceFailure(
        "x", spec="spec 7", sent=None, expected="y", quotes=("7-body-status",)
    )
    assert grade_failure(stated) == grade(stated=True, quotes=("7-body-status",))
    reading = ReadingFailure("x", reading="our reading", spec="spec 7", sent=None, expected="y")
    assert grade_failure(reading) == grade(stated=False, reading="our reading")


def _refused_with(status: int, code: str) -> Exchange:
    body = json.dumps({"status": status, "code": code, "message": "refused"}).encode()
    return Exchange(
        "POST",
        "http://bank.test/v1/consents",
        (),
        b"",
        None,
        status,
        (("Content-Type", "application/json"),),
        body,
        0.01,
    )


@pytest.mark.parametrize("level", ["must", "should"])
def test_a_status_or_code_due_binds_at_must_only_for_a_must(contract: Contract, level: str) -> None:
    """A refusal due whose status and code are 'stated' holds the bank at must only where the
    broken requirement is a must: a should's answer due rests on its reading too."""
    quotes = ("5-1",) if level == "must" else ()
    finding = Finding(
        level,
        "a broken rule",
        "spec 5",
        reading="" if quotes else "ours",
        quotes=quotes,
        side=TPP,
        rule="TPP-x",
    )
    due = AnswerDue(
        (403,), "FORBIDDEN", status_stated=True, code_stated=True, body=BODY_SCHEMA_ERROR
    )
    violation = GradedViolation(finding, due)
    [status] = judge_answer(_refused_with(400, "FORBIDDEN"), None, contract, [violation])[:1]
    [code] = judge_answer(_refused_with(403, "OTHER"), None, contract, [violation])[:1]
    assert (status.rule, status.level) == ("BANK-refusal-status", level)
    assert (code.rule, code.level) == ("BANK-refusal-code", level)
