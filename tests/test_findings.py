"""The two tiers of a verdict (``conformance.findings``, ``runners.verdict``): what the spec states
is must and ends the scenario; what the suite chose is a should finding, recorded, not raised;
a 5xx to a request sent on purpose is a must failure whatever the grading."""

from __future__ import annotations

import pytest
from test_checks import error_body, exchange

from conformance.checks import ConformanceFailure, check_status
from conformance.contract import Contract, load_contract
from conformance.findings import ShouldFindings, at_should, collecting_findings
from conformance.runners.verdict import judge_expectation
from conformance.scenario import BODY_SCHEMA_ERROR, CHOSEN_CODE, CHOSEN_STATUS, Expectation


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def _judge(
    contract: Contract, status: int, body: object, expect: Expectation
) -> list[ConformanceFailure]:
    with collecting_findings() as findings:
        judge_expectation(
            exchange(status, body),
            expect,
            contract.operations["E17"],
            contract,
            spec="spec 7 rule 4",
        )
    return findings


REFUSED = Expectation((400,), "FORMAT_ERROR", BODY_SCHEMA_ERROR, CHOSEN_STATUS)


def test_a_chosen_refusal_answered_with_another_4xx_is_a_should_finding(
    contract: Contract,
) -> None:
    findings = _judge(contract, 422, error_body(422, "FORMAT_ERROR"), REFUSED)
    assert len(findings) == 1
    assert "expected HTTP 400" in findings[0].title
    assert "shows no status" in findings[0].basis


def test_a_chosen_refusal_with_another_code_is_a_should_finding(contract: Contract) -> None:
    findings = _judge(contract, 400, error_body(400, "BAD_REQUEST"), REFUSED)
    assert [finding.basis for finding in findings] == [
        "the spec shows no code for this refusal; the suite chose this one"
    ]


def test_a_chosen_refusal_as_stated_has_no_finding(contract: Contract) -> None:
    assert _judge(contract, 400, error_body(400, "FORMAT_ERROR"), REFUSED) == []


@pytest.mark.parametrize("status", [201, 200, 302])
def test_accepting_a_request_the_spec_says_is_refused_fails_at_must(
    contract: Contract, status: int
) -> None:
    with pytest.raises(ConformanceFailure, match="must be rejected"):
        _judge(contract, status, {}, REFUSED)


def test_a_server_error_fails_at_must_and_no_grading_softens_it(contract: Contract) -> None:
    with pytest.raises(ConformanceFailure) as failed:
        _judge(contract, 500, error_body(500, "SYSTEM_ERROR"), REFUSED)
    assert failed.value.always_must
    with pytest.raises(ConformanceFailure) as again, collecting_findings():
        at_should(lambda: check_status(exchange(503), (400,)), basis="chosen")
    assert again.value.always_must


def test_a_refusal_without_the_error_body_fails_at_must(contract: Contract) -> None:
    with pytest.raises(ConformanceFailure):
        _judge(contract, 400, {"message": "no"}, REFUSED)


def test_a_stated_status_with_a_chosen_code_keeps_the_status_at_must(contract: Contract) -> None:
    expect = Expectation((400,), "KID_INVALID", BODY_SCHEMA_ERROR, CHOSEN_CODE)
    with pytest.raises(ConformanceFailure, match="expected HTTP 400"):
        _judge(contract, 401, error_body(401, "KID_INVALID"), expect)
    assert len(_judge(contract, 400, error_body(400, "FORMAT_ERROR"), expect)) == 1


def test_outside_a_scenario_a_should_check_raises_so_nothing_is_lost() -> None:
    with pytest.raises(ConformanceFailure):
        at_should(lambda: check_status(exchange(422), (400,)), basis="chosen")


def test_should_findings_become_one_failure_naming_each() -> None:
    with collecting_findings() as findings:
        at_should(lambda: check_status(exchange(422), (400,)), basis="chosen here")
        at_should(lambda: check_status(exchange(409), (400,)), basis="chosen there")
    raised = ShouldFindings(findings)
    assert raised.title.startswith("should: ") and "(and 1 more)" in raised.title
    assert "chosen here" in str(raised) and "chosen there" in str(raised)
    assert len(raised.findings) == 2
