"""One cause, one entry (issue 19 item 4): a check names every place and value that broke, the
failures that share a cause get one id whatever the operation, scenario or value, and the reports
group them (compliance.json/.md/.html, Allure's categories)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from conformance.checks import (
    ConformanceFailure,
    ReadingFailure,
    check_all,
    check_error_body,
    check_error_code,
    check_status,
)
from conformance.contract import Contract, load_contract
from conformance.contract.requirements import ERROR_BODY_READING, ERROR_FIELDS_READING
from conformance.exchange import Exchange
from conformance.problems import Problem, cause_id, unique_problems
from conformance.report.allure_files import CATEGORIES, categories
from conformance.report.causes import causes_of, terminal_lines
from conformance.report.compliance import RunInfo, build_document, render_markdown
from conformance.report.compliance_render import render_html
from conformance.report.verdicts import (
    FAILED,
    FAILED_SHOULD,
    PASSED,
    Finding,
    ScenarioFacts,
    ScenarioVerdict,
    cause_lines,
    cause_properties,
    example_exchange,
)

STARTED = datetime(2026, 1, 29, 8, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def exchange(status: int, body: Any, path: str = "/v1/payments/x") -> Exchange:
    return Exchange(
        method="POST",
        url=f"http://bank.test{path}",
        request_headers=(("X-Request-ID", "r-1"),),
        request_body=b"{}",
        signing_string=None,
        status=status,
        response_headers=(("Content-Type", "application/json"),),
        response_body=json.dumps(body).encode(),
        elapsed=0.01,
        signer="standard",
        base_url="http://bank.test",
    )


def refusal(status: int, *codes: str) -> dict[str, Any]:
    messages = [{"category": "ERROR", "code": code} for code in codes]
    return {"status": status, "code": codes[0], "tppMessages": messages}


def failure_of(check: Any) -> ConformanceFailure:
    with pytest.raises(ConformanceFailure) as failed:
        check()
    return failed.value


# --- the checks name every place and value ------------------------------------------------------


def test_a_schema_failure_names_the_place_and_the_value(contract: Contract) -> None:
    failure = failure_of(
        lambda: check_error_body(
            exchange(401, refusal(401, "CERTIFICATE_MISSING")), contract, payments=True
        )
    )
    assert (
        "breaks its schema in 1 place: `tppMessages[0].code` is 'CERTIFICATE_MISSING', not one of"
        in (failure.title)
    )
    assert "Codes allowed in tppMessages[].code of payment responses" in failure.title
    (problem,) = failure.problems
    assert (problem.check, problem.place, problem.kind) == ("schema", "tppMessages[0].code", "enum")


def test_a_schema_failure_names_five_places_and_counts_the_rest(contract: Contract) -> None:
    codes = [f"OWN_{index}" for index in range(7)]
    failure = failure_of(
        lambda: check_error_body(exchange(400, refusal(400, *codes)), contract, payments=True)
    )
    assert "breaks its schema in 7 places" in failure.title
    for index in range(5):
        assert f"`tppMessages[{index}].code` is 'OWN_{index}'" in failure.title
    assert "`tppMessages[5].code`" not in failure.title and "; and 2 more" in failure.title
    # seven places, one problem: the same place (indices aside) and the same kind of value
    assert len(unique_problems(failure.problems)) == 1


def test_the_value_words_follow_the_keyword(contract: Contract) -> None:
    body: dict[str, Any] = {
        "status": "400",
        "tppMessages": [{"category": "NOTE", "code": "FORMAT_ERROR"}],
    }
    failure = failure_of(lambda: check_error_body(exchange(400, body), contract, payments=True))
    assert not isinstance(failure, ReadingFailure)
    details = " | ".join(problem.detail for problem in failure.problems)
    assert "`status` is '400' (a string), not an integer" in details
    assert "`tppMessages[0].category` is 'NOTE', not one of ERROR, WARNING" in details
    # that `code` is present is our reading (spec 7's table has no Required column): a must
    # failure lists only the stated places, and a body that breaks the reading alone is a should
    assert "`code`" not in details
    body = {"status": 400, "tppMessages": [{"category": "ERROR", "code": "FORMAT_ERROR"}]}
    reading = failure_of(lambda: check_error_body(exchange(400, body), contract, payments=True))
    assert isinstance(reading, ReadingFailure) and reading.reading == ERROR_FIELDS_READING
    assert [problem.detail for problem in reading.problems] == ["`code` is missing (required)"]


# --- one cause across scenarios ------------------------------------------------------------------


def test_the_same_place_and_kind_is_one_cause_whatever_the_value_and_the_scenario(
    contract: Contract,
) -> None:
    one = failure_of(
        lambda: check_error_body(
            exchange(401, refusal(401, "SIGNATURE_INVALID")), contract, payments=True
        )
    )
    other = failure_of(
        lambda: check_error_body(
            exchange(400, refusal(400, "FORMAT_ERROR", "CANCELLATION_INVALID")),
            contract,
            payments=True,
        )
    )
    ids = {
        cause_id(p, rule) for p, rule in ((one.problems[0], "AUTH-a"), (other.problems[0], "ERR-6"))
    }
    assert len(ids) == 1


def test_a_status_problem_is_a_cause_per_requirement() -> None:
    first = failure_of(lambda: check_status(exchange(401, {}), (400,))).problems[0]
    assert first.per_requirement
    assert cause_id(first, "ERR-2-kid-missing") != cause_id(first, "ERR-1-reference-mix-invalid")
    assert cause_id(first, "ERR-2-kid-missing") == cause_id(first, "ERR-2-kid-missing")


def test_combined_checks_keep_every_problem(contract: Contract) -> None:
    answer = exchange(400, refusal(400, "OWN_CODE"))
    failure = failure_of(
        lambda: check_all(
            lambda: check_error_body(answer, contract, payments=True),
            lambda: check_error_code(answer, "KID_INVALID"),
        )
    )
    assert [problem.check for problem in failure.problems] == ["schema", "error-code"]


def test_a_failure_without_problems_is_its_requirement() -> None:
    failure = ConformanceFailure("something else broke", spec="spec 3", sent=None, expected="x")
    (problem,) = failure.problems
    assert problem == Problem("requirement", "", "", "something else broke", per_requirement=True)


# --- the reports group by cause ------------------------------------------------------------------

TEXT = """the error body of POST /v1/payments/x (HTTP 401) breaks its schema in 1 place

Exchange:
    >>> POST http://bank.test/v1/payments/x
    X-Request-ID: r-1

    <<< HTTP 401 Unauthorized (1.0 ms)

    {"code": "SIGNATURE_INVALID"}

Reproduce with:
    conformance call POST /v1/payments/x --target http://bank.test

Cause cause-00000001 (must): `tppMessages[0].code` is 'SIGNATURE_INVALID', not one of ..."""


def facts(scenario_id: str, operation: str, rule: str, level: str = "must") -> ScenarioFacts:
    return ScenarioFacts(scenario_id, operation, rule, "spec 7", level, "auth", scenario_id)


def verdicts() -> list[ScenarioVerdict]:
    shared = "cause-00000001"
    return [
        ScenarioVerdict(
            facts("E16-auth-a-rejected", "E16", "AUTH-a"),
            FAILED,
            "the error body breaks its schema",
            findings=(
                Finding(
                    "must",
                    "`tppMessages[0].code` is 'SIGNATURE_INVALID', not ...",
                    "spec 7",
                    quotes=("7-codes",),
                    cause=shared,
                ),
            ),
            reproduce="conformance call POST /v1/payments/x --target http://bank.test",
            text=TEXT,
        ),
        ScenarioVerdict(
            facts("PC-ERR-6-rejected", "PC", "ERR-6"),
            FAILED,
            "the error body breaks its schema",
            findings=(
                Finding(
                    "must",
                    "`tppMessages[0].code` is 'CANCELLATION_INVALID', not ...",
                    "spec 7",
                    cause=shared,
                ),
            ),
        ),
        ScenarioVerdict(
            facts("E1-date-far-past-rejected", "E1", "AUTH-date", level="should"),
            FAILED_SHOULD,
            "the error body breaks its schema",
            findings=(
                Finding(
                    "should",
                    "`tppMessages[0].code` is 'SIGNATURE_INVALID', ...",
                    "spec 7",
                    reading=ERROR_BODY_READING,
                    cause=shared,
                ),
            ),
        ),
        ScenarioVerdict(facts("E16-ok-accepted", "E16", "POS-E16"), PASSED),
    ]


def document() -> dict[str, Any]:
    run = RunInfo(
        started=STARTED,
        finished=STARTED + timedelta(seconds=5),
        seed=1,
        strict=False,
        target="https://bank.test",
    )
    return build_document(verdicts(), run, load_contract())


def test_causes_group_findings_across_operations_and_scenarios() -> None:
    (must,) = causes_of(verdicts(), "must")
    assert must.scenarios == ("E16-auth-a-rejected", "PC-ERR-6-rejected")
    assert must.operations == ("E16", "PC") and must.rules == ("AUTH-a", "ERR-6")
    assert must.example == "E16-auth-a-rejected"
    assert must.exchange.startswith(">>> POST http://bank.test/v1/payments/x")
    assert must.exchange.endswith('{"code": "SIGNATURE_INVALID"}')
    assert must.reproduce.startswith("conformance call POST")
    assert must.quote.startswith('spec 7: "Codes allowed in `tppMessages[].code` of payment')
    (should,) = causes_of(verdicts(), "should")
    assert should.scenarios == ("E1-date-far-past-rejected",)
    assert should.reading == ERROR_BODY_READING and should.quote == ""


def test_a_should_cause_names_each_reading_of_its_findings_once() -> None:
    basket = "a basket's error body carries payment-style tppMessages"
    findings = [
        (scenario, Finding("should", "`tppMessages[0].code` is 'X'", "spec 7", reading, cause="c"))
        for scenario, reading in (("E1-a", basket), ("PA-b", ERROR_BODY_READING), ("E1-c", basket))
    ]
    listed = [
        ScenarioVerdict(
            facts(scenario, scenario[:2], "ERR-6"), FAILED_SHOULD, "x", findings=(finding,)
        )
        for scenario, finding in findings
    ]
    (should,) = causes_of(listed, "should")
    assert should.reading == f"{basket}; {ERROR_BODY_READING}"


def test_compliance_documents_show_one_entry_per_cause() -> None:
    built = document()
    assert [(c["level"], c["count"]) for c in built["causes"]] == [("must", 2), ("should", 1)]
    markdown = render_markdown(built)
    failures = markdown.split("## Must failures")[1].split("## Should findings")[0]
    assert "- must failures: 1 cause in 2 scenarios" in failures
    assert "### Cause 1: `tppMessages[0].code` is 'SIGNATURE_INVALID'" in failures
    assert "Operations: E16 Create NDCT payment, PC" in failures
    assert ">>> POST http://bank.test/v1/payments/x" in failures
    assert "<details><summary>2 scenario(s)</summary>" in failures
    assert "should findings: 1 cause in 1 scenario" in markdown
    assert '- The spec says: spec 7: "Codes allowed in `tppMessages[].code`' in failures
    page = render_html(built)
    assert "<h3>Cause 1: `tppMessages[0].code` is &#x27;SIGNATURE_INVALID&#x27;" in page


def test_the_terminal_block_names_place_example_and_scenarios() -> None:
    (cause,) = [c for c in document()["causes"] if c["level"] == "must"]
    lines = terminal_lines(cause, 1)
    assert lines[0] == (
        "CAUSE 1 (cause-00000001, must): `tppMessages[0].code` is 'SIGNATURE_INVALID', not ..."
    )
    assert lines[2] == "  spec: spec 7"  # the quote names its spec part once, on its own line
    assert lines[3].startswith('  the spec says: spec 7: "Codes allowed in `tppMessages[].code`')
    assert lines[3].count("spec 7") == 1
    assert "  example: E16-auth-a-rejected" in lines
    assert "    <<< HTTP 401 Unauthorized (1.0 ms)" in lines
    assert lines[-1] == "  2 scenarios: E16-auth-a-rejected, PC-ERR-6-rejected"


def test_allure_gets_a_category_per_cause_before_the_general_ones() -> None:
    found = categories(document())
    assert found[2:] == list(CATEGORIES)
    assert found[0]["name"].startswith("Must: `tppMessages[0].code`")
    assert found[0]["messageRegex"] == "[\\s\\S]*Cause cause-00000001 [\\s\\S]*"
    assert found[0]["matchedStatuses"] == ["failed"]
    # a should cause: its scenarios are amber ("broken"), or failed where a must failure joins it
    assert found[1]["name"].startswith("Should: `tppMessages[0].code`")
    assert found[1]["matchedStatuses"] == ["broken", "failed"]


def test_the_failure_message_and_junit_name_the_cause() -> None:
    findings = [Finding("must", "`a` is 1", "spec 7", cause="cause-0000000a")] * 2
    assert cause_lines(findings) == "\n\nCause cause-0000000a (must): `a` is 1"
    assert cause_properties(findings) == [
        ("cause", "cause-0000000a"),
        ("cause_summary", "must: `a` is 1"),
    ]
    assert example_exchange(TEXT).splitlines()[0] == ">>> POST http://bank.test/v1/payments/x"
    assert example_exchange("no exchange here") == ""


# --- one break, one cause (issue 29 item 8) ------------------------------------------------------


def _creditor_name_scenarios(contract: Contract) -> list[Any]:
    from conformance.generate import generate_scenarios

    wanted = {
        f"{op}-{rule}"
        for op in ("E16", "E17", "E18")
        for rule in ("LIM-creditor-name-max-70-rejected", "creditorName-maxLength-71-rejected")
    }
    found = [s for s in generate_scenarios(contract) if s.id in wanted]
    assert len(found) == len(wanted)
    return found


def _accepted_failure(scenario: Any) -> ConformanceFailure:
    """What the scenario's runner raises against a bank that accepts the name: the refusal
    checked as the scenario expects it; a rule row's check names what it broke."""
    from conformance.checks import breaking, check_client_error
    from conformance.problems import body_breach

    accepted = exchange(201, {"transactionStatus": "RCVD", "paymentId": "p-1"})
    # the status is stated, the code chosen: judged as a status
    if scenario.expect.status_stated and not scenario.expect.code_stated:
        failure = failure_of(lambda: check_status(accepted, scenario.expect.statuses))
    elif scenario.mutation is None:  # the rule row's check (runners/rule/lengths.py)
        breach = body_breach(("creditorName",), "maxLength", "71 characters")
        with pytest.raises(ConformanceFailure) as failed, breaking(breach):
            check_client_error(accepted)
        failure = failed.value
    else:
        failure = failure_of(lambda: check_client_error(accepted))
    return failure.for_scenario(scenario)


def test_an_accepted_long_creditor_name_is_one_cause_naming_the_field(contract: Contract) -> None:
    from conformance.suite.test_conformance import _findings

    scenarios = _creditor_name_scenarios(contract)
    listed = []
    for scenario in scenarios:
        findings = _findings(_accepted_failure(scenario), scenario, "payments")
        facts = ScenarioFacts(
            scenario.id, scenario.operation, scenario.rule, scenario.spec, "must", scenario.kind,
            scenario.title, quotes=scenario.quotes,
        )  # fmt: skip
        listed.append(ScenarioVerdict(facts, FAILED, "accepted", findings=tuple(findings)))
    (cause,) = causes_of(listed, "must")
    assert len(cause.scenarios) == 6
    assert cause.operations == ("E16", "E17", "E18")
    assert cause.rules == ("LIM-creditor-name-max-70", "SCH-maxLength")
    assert cause.title.startswith("`creditorName` (body) breaks maxLength")
    assert "was accepted (HTTP 201)" in cause.title
    # the spec says: quotes only, the field's own row before the table of every payment name
    first = cause.quote.split('" spec ')[0]
    assert first.startswith('spec 2.7: "| `creditorName` | string | yes | at most 70')
    assert cause.quote.index("`creditorName`, `ultimateDebtor`") > len(first)


def test_a_break_of_another_field_family_or_rule_is_another_cause() -> None:
    from conformance.problems import ACCEPTED, ACCEPTED_KIND, Breach, body_breach

    accepted = Problem(ACCEPTED, "HTTP status", ACCEPTED_KIND, "accepted", per_requirement=True)
    name = body_breach(("creditorName",), "maxLength")

    def cause(breach: Breach, family: str = "payments", rule: str = "SCH-maxLength") -> str:
        return cause_id(accepted, rule, breach.key(family))

    assert cause(name) == cause(name, rule="LIM-creditor-name-max-70")
    assert cause(name) != cause(body_breach(("ultimateDebtor",), "maxLength"))
    assert cause(name) != cause(body_breach(("creditorName",), "type"))
    assert cause(name) != cause(name, family="sandbox")
    # a header is the interface's: one cause in every family
    psu = Breach("header", "PSU-ID", "format")
    assert cause(psu, "accounts") == cause(Breach("header", "psu-id", "format"), "payments")
    # without a breach an acceptance stays a cause per requirement
    assert cause_id(accepted, "AUTH-a") != cause_id(accepted, "AUTH-b")


def test_an_acceptance_is_one_problem_whatever_the_2xx_or_the_refusal_due() -> None:
    def problem(check: Any) -> Problem:
        return failure_of(check).problems[0]

    from conformance.checks import check_client_error

    created = problem(lambda: check_status(exchange(201, {}), (400,)))
    read = problem(lambda: check_client_error(exchange(200, {})))
    assert created.check == read.check == "accepted"
    assert created.signature("R", "x") == read.signature("R", "x")
    assert created.detail == "the request was accepted (HTTP 201), not refused with HTTP 400"
    # a refusal with another status is still a status problem of its requirement
    assert problem(lambda: check_status(exchange(401, {}), (400,))).check == "status"


def test_the_limit_rules_titles_say_what_is_accepted(contract: Contract) -> None:
    (lim,) = [
        s
        for s in _creditor_name_scenarios(contract)
        if s.id == "E16-LIM-creditor-name-max-70-rejected"
    ]
    assert "creditorName of 71 characters (a 70-character name is accepted)" in lim.title
    # no row says "the answer is 400" of a value its check sends to be accepted
    actions = " ".join(rule.action for rule in contract.rules)
    assert "; then of 70" not in actions and "; then of 140" not in actions
