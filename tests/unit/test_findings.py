"""The two tiers of a verdict (``conformance.findings``, ``runners.judging``): what the spec states
is must and ends the scenario; what rests on our reading (a chosen status or code, the parts of
the error body the spec does not state) is a should finding, recorded with its reading, not
raised; a 5xx to a request sent on purpose fails a must scenario whatever its chosen parts."""

from __future__ import annotations

import pytest

from conformance.checks import ConformanceFailure, check_status
from conformance.contract import Contract, load_contract
from conformance.contract.requirements import (
    BODY_SCHEMA_ERROR,
    BODY_SCHEMA_RESPONSE,
    CHOSEN_CODE,
    CHOSEN_STATUS,
    AnswerDue,
    answer_due,
)
from conformance.findings import ShouldFindings, at_should, collecting_findings
from conformance.runners.judging import judge_expectation
from unit.test_checks import error_body, exchange


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def _judge(
    contract: Contract, status: int, body: object, expect: AnswerDue
) -> list[ConformanceFailure]:
    with collecting_findings() as findings:
        judge_expectation(
            exchange(status, raw=body) if isinstance(body, bytes) else exchange(status, body),
            expect,
            contract.operations["E17"],
            contract,
            spec="spec 7 rule 4",
        )
    return findings


REFUSED = answer_due((400,), "FORMAT_ERROR", BODY_SCHEMA_ERROR, CHOSEN_STATUS)


def test_a_chosen_refusal_answered_with_another_4xx_is_a_should_finding(
    contract: Contract,
) -> None:
    findings = _judge(contract, 422, error_body(422, "FORMAT_ERROR"), REFUSED)
    assert len(findings) == 1
    assert "expected HTTP 400" in findings[0].title
    assert "shows no status" in findings[0].reading


def test_a_chosen_refusal_with_another_code_is_a_should_finding(contract: Contract) -> None:
    findings = _judge(contract, 400, error_body(400, "BAD_REQUEST"), REFUSED)
    assert [finding.reading for finding in findings] == [
        "the spec shows no code for this refusal; we expect this one"
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
        at_should(lambda: check_status(exchange(503), (400,)), reading="chosen")
    assert again.value.always_must


def test_a_refusal_whose_body_is_not_json_fails_at_must(contract: Contract) -> None:
    with pytest.raises(ConformanceFailure, match="not JSON") as failed:
        _judge(contract, 400, b"<html>no</html>", REFUSED)
    assert failed.value.quotes == ("intro-json",)


def test_an_error_body_without_status_and_code_is_a_should_finding(contract: Contract) -> None:
    """Spec 7's table has no Required column: that status and code are there is our reading."""
    findings = _judge(contract, 400, {"message": "no"}, REFUSED)
    readings = [f.reading for f in findings]
    assert any("no Required column" in reading for reading in readings)
    assert any("shows no code" in reading for reading in readings)  # no code at all either


def test_the_error_body_of_an_operation_whose_errors_are_not_shown_is_a_reading(
    contract: Contract,
) -> None:
    """Spec 7: "Error responses of the remaining operations: not shown" (E12 is one)."""
    with collecting_findings() as findings:
        judge_expectation(
            exchange(404, {"oops": True}),
            answer_due((404,), None, BODY_SCHEMA_ERROR, CHOSEN_STATUS),
            contract.operations["E12"],
            contract,
            spec="spec 7",
        )
    assert len(findings) == 1 and "not shown" in findings[0].reading


def test_the_sca_redirect_form_of_payment_creation_is_a_success(contract: Contract) -> None:
    """Spec 5 item 6: payment creation may answer 401 with _links.scaRedirect."""
    redirect = {"_links": {"scaRedirect": {"href": "https://bank.example/sca/1"}}}
    with collecting_findings() as findings:
        judge_expectation(
            exchange(401, redirect),
            answer_due((201,), None, BODY_SCHEMA_RESPONSE),
            contract.operations["E16"],
            contract,
            spec="spec 4.3 E16",
        )
    assert findings == []
    with pytest.raises(ConformanceFailure, match="scaRedirect"):
        judge_expectation(
            exchange(401, error_body(401, "CERTIFICATE_INVALID")),
            answer_due((201,), None, BODY_SCHEMA_RESPONSE),
            contract.operations["E16"],
            contract,
            spec="spec 4.3 E16",
        )


def test_a_stated_status_with_a_chosen_code_keeps_the_status_at_must(contract: Contract) -> None:
    expect = answer_due((400,), "KID_INVALID", BODY_SCHEMA_ERROR, CHOSEN_CODE)
    with pytest.raises(ConformanceFailure, match="expected HTTP 400"):
        _judge(contract, 401, error_body(401, "KID_INVALID"), expect)
    assert len(_judge(contract, 400, error_body(400, "FORMAT_ERROR"), expect)) == 1


def test_outside_a_scenario_a_should_check_raises_so_nothing_is_lost() -> None:
    with pytest.raises(ConformanceFailure):
        at_should(lambda: check_status(exchange(422), (400,)), reading="chosen")


def test_should_findings_become_one_failure_naming_each() -> None:
    with collecting_findings() as findings:
        at_should(lambda: check_status(exchange(422), (400,)), reading="chosen here")
        at_should(lambda: check_status(exchange(409), (400,)), reading="chosen there")
    raised = ShouldFindings(findings)
    assert raised.title.startswith("should: ") and "(and 1 more)" in raised.title
    assert "chosen here" in str(raised) and "chosen there" in str(raised)
    assert len(raised.findings) == 2
