"""The response headers a certifier checks (rules.json ``RH-*``): each check on recorded answers;
a failure is a should finding with its row's reading, unless the bank promises the header
(``[response_headers] promised``): then a must failure that names the promise, never a quote,
and stays must in a should-level scenario and in every report."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from conformance.checks import ConformanceFailure
from conformance.contract import Contract, load_contract
from conformance.errors import ProfileError
from conformance.findings import collecting_findings
from conformance.profile import ResponseHeaderPromises, TargetProfile, load_profile
from conformance.report.causes import spec_quote
from conformance.report.compliance_page import overall_verdict, promised_only
from conformance.report.verdicts import FAILED, Finding, ReportedFailure, ScenarioFacts, graded
from conformance.runners.response_headers import (
    judge_response_headers,
    location_problems,
    request_id_problems,
    sca_approach_problems,
)
from conformance.selfcheck import message_gaps
from unit.test_checks import exchange

PAYMENT = {"paymentId": "p-1", "transactionStatus": "RCVD", "_links": {}}
ECHOED = (("X-Request-ID", "r-1"),)


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def _answer(status: int = 201, body: Any = PAYMENT, **headers: str) -> Any:
    pairs = (("Content-Type", "application/json"), *ECHOED, *headers.items())
    return exchange(status, body, response_headers=tuple(pairs))


def test_x_request_id_is_the_requests() -> None:
    assert request_id_problems(_answer()) == []
    missing = exchange(201, PAYMENT)
    assert [p.kind for p in request_id_problems(missing)] == ["missing"]
    other = exchange(201, PAYMENT, response_headers=(("X-Request-ID", "r-2"),))
    assert "not the request's 'r-1'" in request_id_problems(other)[0].detail


def test_location_is_on_a_201_and_names_the_created_id() -> None:
    assert location_problems(_answer(Location="/v1/payments/ndct/p-1")) == []
    assert [p.kind for p in location_problems(_answer())] == ["missing"]
    assert [p.kind for p in location_problems(_answer(Location="/v1/x/other"))] == ["other"]
    assert location_problems(_answer(200)) == []  # not a creation


def test_the_sca_approach_names_the_profiles() -> None:
    named: dict[str, Any] = {"ASPSP-SCA-Approach": "REDIRECT"}
    assert sca_approach_problems(_answer(**named), "redirect") == []
    assert sca_approach_problems(_answer(**named), "oauth") == []  # Berlin Group: subsumed
    assert [p.kind for p in sca_approach_problems(_answer(**named), "decoupled")] == ["other"]
    assert [p.kind for p in sca_approach_problems(_answer(), "redirect")] == ["missing"]
    refused = {"code": "FORMAT_ERROR"}
    assert sca_approach_problems(_answer(400, refused), "redirect") == []
    redirect = {"_links": {"scaRedirect": {"href": "/sca/1", "verbs": ["GET"]}}}
    assert [p.kind for p in sca_approach_problems(_answer(401, redirect), "redirect")] == [
        "missing"
    ]


def _ctx(contract: Contract, *promised: str) -> Any:
    profile = TargetProfile(
        "bank", "https://bank.test", response_headers=ResponseHeaderPromises(frozenset(promised))
    )
    return SimpleNamespace(contract=contract, profile=profile)


def test_a_missing_header_is_a_should_finding_with_its_rows_reading(contract: Contract) -> None:
    with collecting_findings() as findings:
        judge_response_headers(_answer(), contract.operations["E16"], _ctx(contract))
    assert sorted(f.problems[0].place for f in findings) == ["ASPSP-SCA-Approach", "Location"]
    assert all(
        f.reading == contract.rule(f"RH-{name}").reading
        for f, name in zip(
            sorted(findings, key=lambda f: f.problems[0].place),
            ("sca-approach-named", "location-on-creation"),
            strict=True,
        )
    )


def test_a_promised_header_fails_at_must_as_the_banks_promise(contract: Contract) -> None:
    with collecting_findings() as findings, pytest.raises(ConformanceFailure) as raised:
        judge_response_headers(_answer(), contract.operations["E16"], _ctx(contract, "Location"))
    failure = raised.value
    assert "Location" in failure.promise and "interface.md does not state it" in failure.promise
    assert failure.quotes == () and failure.reading == ""
    assert [f.problems[0].place for f in findings] == ["ASPSP-SCA-Approach"]  # not promised
    text = str(failure)
    assert "Promised by the bank" in text and "Quoted:" not in text
    assert "the quoted sentence or our reading" not in message_gaps(text, failure.spec)


def test_a_promise_stays_must_in_a_should_scenario_and_in_the_reports() -> None:
    promised = Finding("must", "the 201 answer carries no Location", "spec 4.3", promise="p")
    plain = Finding("must", "other", "spec 4.3")
    shown = graded((promised, plain), "should", reading="r")
    assert [f.level for f in shown] == ["must", "should"]
    assert ReportedFailure("t", shown).promised
    assert not ReportedFailure("t", shown[1:]).promised
    facts = ScenarioFacts("E16-x", "E16", "RH-x", "spec 4.3", "should", "rule", "t", quotes=("q",))
    assert spec_quote(facts, promised) == ""
    assert Finding.from_dict(promised.as_dict()) == promised


def test_the_verdict_says_which_must_failures_are_only_promises() -> None:
    scenario = {
        "id": "E16-x",
        "verdict": FAILED,
        "findings": [{"level": "must", "promise": "p", "title": "t"}],
    }
    document = {
        "scenarios": [scenario],
        "totals": {
            "passed": 1, "failed": 1, "failed_should": 0, "error": 0, "blocked": 0,
            "not_applicable": 0, "waived": 0,
        },
        "run": {"complete": True},
    }  # fmt: skip
    assert promised_only(document) == [scenario]
    assert "1 of them only the bank's own promises" in overall_verdict(document)


def test_the_profile_names_promised_headers(tmp_path: Any) -> None:
    path = tmp_path / "bank.toml"
    head = 'base_url = "https://bank.test"\n[response_headers]\n'
    path.write_text(head + 'promised = ["location", "X-Request-ID"]\n')
    loaded = load_profile(path)
    assert loaded.response_headers.promised == frozenset({"Location", "X-Request-ID"})
    path.write_text(head + 'promised = ["Allow"]\n')
    with pytest.raises(ProfileError, match="'Allow', which is not one of"):
        load_profile(path)
