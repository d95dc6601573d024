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
from conformance.report.causes import causes_of, scenario_lines, terminal_lines
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
    assert must.quote.startswith('spec 7: "Codes allowed in tppMessages[].code of payment')
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
    assert '- The spec says: spec 7: "Codes allowed in tppMessages[].code' in failures
    page = render_html(built)
    assert "<h3>Cause 1: `tppMessages[0].code` is &#x27;SIGNATURE_INVALID&#x27;" in page


def test_the_terminal_block_names_place_example_and_scenarios() -> None:
    (cause,) = [c for c in document()["causes"] if c["level"] == "must"]
    lines = terminal_lines(cause, 1)
    assert lines[0] == (
        "CAUSE 1 (cause-00000001, must): `tppMessages[0].code` is 'SIGNATURE_INVALID', not ..."
    )
    assert lines[2] == "  spec: spec 7"  # the quote names its spec part once, on its own line
    assert lines[3].startswith('  the spec says: spec 7: "Codes allowed in tppMessages[].code')
    assert lines[3].count("spec 7") == 1
    assert "  example: E16-auth-a-rejected" in lines
    assert "    <<< HTTP 401 Unauthorized (1.0 ms)" in lines
    assert lines[-1] == "  2 scenarios: E16-auth-a-rejected, PC-ERR-6-rejected"


def test_the_terminal_lists_each_failed_scenario_in_one_line_naming_its_cause() -> None:
    assert scenario_lines(verdicts()) == [
        "FAILED E16-auth-a-rejected (cause-00000001): the error body breaks its schema",
        "FAILED PC-ERR-6-rejected (cause-00000001): the error body breaks its schema",
    ]


def test_the_terminal_list_of_failed_scenarios_stops_and_says_how_many_more() -> None:
    many = [
        ScenarioVerdict(facts(f"E16-x{number:03}-rejected", "E16", "SCH-x"), FAILED, "accepted")
        for number in range(250)
    ]
    lines = scenario_lines(many, most=100)
    assert len(lines) == 101
    assert lines[0] == "FAILED E16-x000-rejected: accepted"
    assert lines[-1].startswith("... and 150 more (compliance.md lists every one;")


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
    # the spec says: the rule's own sentences, each once, as plain text; the field's own row
    # before the table of every payment name; not the periodic body's whole sentence
    assert cause.quote == (
        'spec 2.7: "creditorName: string; yes; at most 70 characters"; '
        'spec 8: "creditorName, ultimateDebtor: at most 70 characters; payments"'
    )


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


# --- what the spec says, once and plain (issue 44 item 3) ---------------------------------------


def test_a_quote_is_shown_as_plain_text_each_sentence_once(contract: Contract) -> None:
    from conformance.contract import said_of

    row = contract.quotes["2.7-ndct-creditorName"]
    assert row.plain == "creditorName: string; yes; at most 70 characters"
    assert contract.quotes["2.7-ndct-instructedAmount"].plain == "instructedAmount: object; yes"
    assert contract.quotes["7-rule-6"].plain == contract.quotes["7-rule-6"].text
    # the NCBCT row says the same with fewer words: said by the NDCT row; a label twice once
    shown = said_of(["2.7-ndct-creditorName", "2.7-ncbct-creditorName", "2.7-ndct-creditorName"])
    assert shown == 'spec 2.7: "creditorName: string; yes; at most 70 characters"'
    assert "|" not in said_of(contract.quotes) and "`" not in said_of(contract.quotes)


def test_only_the_quotes_of_the_broken_rule_are_kept() -> None:
    from conformance.report.causes import specific_first

    # the operation's sentence about its query, met on the way down to a body field: left out
    assert specific_first(["4.3-E16", "2.7-ndct-creditorName", "8-names"], "creditorName") == (
        "2.7-ndct-creditorName",
        "8-names",
    )
    # the periodic body's whole sentence where a row of the field's own states it: left out
    rule = ["8-names", "2.7-ndct-creditorName", "2.7-periodic-body"]
    assert "2.7-periodic-body" not in specific_first(rule, "body /creditorName")
    assert specific_first(["2.7-periodic-body"], "creditorName") == ("2.7-periodic-body",)
    # a sentence naming nothing (a rule of spec 7) always stays
    assert specific_first(["7-rule-2", "2.7-remittance-item"], "[0].reference") == (
        "2.7-remittance-item",
        "7-rule-2",
    )


def test_a_state_rules_title_names_the_state_and_the_operation(contract: Contract) -> None:
    from conformance.checks import check_client_error
    from conformance.generate import generate_scenarios
    from conformance.suite.test_conformance import _findings

    (scenario,) = [
        s
        for s in generate_scenarios(contract)
        if s.id == "PC-ERR-6-pending-payment-not-deletable-rejected"
    ]
    deleted = exchange(204, {}, path="/v1/payments/norwegian-domestic-credit-transfers/p-1")
    failure = failure_of(lambda: check_client_error(deleted)).for_scenario(scenario)
    (finding,) = _findings(failure, scenario, "payments")
    assert finding.title == (
        "cancel the payment (PC: DELETE /v1/payments/{payment-product}/{payment-id}) given a "
        "payment whose status (PS) reads PDNG: the request was accepted (HTTP 204), not refused "
        "with a 4xx"
    )


# --- one break, one cause, across fields (issue 44 item 4) ---------------------------------------


def _accepted_verdicts(contract: Contract, wanted: set[str]) -> list[ScenarioVerdict]:
    """The verdicts of the ``wanted`` scenarios against a bank that accepts what they send."""
    from conformance.generate import generate_scenarios
    from conformance.suite.test_conformance import _findings

    scenarios = [s for s in generate_scenarios(contract) if s.id in wanted]
    assert len(scenarios) == len(wanted)
    listed = []
    for scenario in scenarios:
        family = contract.operations[scenario.operation].family
        findings = _findings(_accepted_failure(scenario), scenario, family)
        facts = ScenarioFacts(
            scenario.id, scenario.operation, scenario.rule, scenario.spec, "must", scenario.kind,
            scenario.title, quotes=scenario.quotes,
        )  # fmt: skip
        listed.append(ScenarioVerdict(facts, FAILED, "accepted", findings=tuple(findings)))
    return listed


def test_a_long_iban_accepted_in_several_fields_of_a_family_is_one_cause(
    contract: Contract,
) -> None:
    """``long-iban-accepted`` was one cause per IBAN field: the creditor's and the debtor's of
    E17 and E18 are one cause of the payments, naming both fields; the sandbox's IBAN fields
    (E7's creditor, a mock account's) one of the sandbox."""
    payments = {
        f"{op}-{side}Account.iban-maxLength-35-rejected"
        for op in ("E17", "E18")
        for side in ("creditor", "debtor")
    }
    sandbox = {"E7-0.creditorAccount.iban-maxLength-35-rejected", "SA-iban-maxLength-35-rejected"}
    causes = causes_of(_accepted_verdicts(contract, payments | sandbox), "must")
    assert [len(cause.scenarios) for cause in causes] == [4, 2]
    first, second = causes
    assert set(first.scenarios) == payments and set(second.scenarios) == sandbox
    assert first.title.startswith(
        "`creditorAccount.iban`, `debtorAccount.iban` (body) breaks maxLength (35 characters)"
    )
    assert second.title.startswith("`[*].creditorAccount.iban`, `iban` (body) breaks maxLength")


def test_the_creditor_address_parts_of_one_operation_are_one_cause(contract: Contract) -> None:
    """E17's creditorAddress parts accepting integers were a cause each; the object itself of
    the wrong type, or another rule on a part, stays a cause of its own."""
    parts = {
        f"E17-creditorAddress.{part}-type-integer-rejected"
        for part in ("street", "buildingNumber", "city")
    }
    others = {
        "E17-creditorAddress-type-array-rejected",
        "E17-creditorAddress.street-maxLength-71-rejected",
    }
    causes = causes_of(_accepted_verdicts(contract, parts | others), "must")
    assert [len(cause.scenarios) for cause in causes] == [3, 1, 1]
    assert set(causes[0].scenarios) == parts
    for name in (
        "`creditorAddress.street`",
        "`creditorAddress.buildingNumber`",
        "`creditorAddress.city`",
    ):
        assert name in causes[0].title


def test_limit_zero_accepted_is_one_cause_whether_a_rule_row_or_the_schema_sent_it(
    contract: Contract,
) -> None:
    """``no-limit-minimum`` was two causes, one without a field in its title: the rule row's
    check (runners/rule/limits.py) names the break its schema scenario makes, `limit` below its
    minimum."""
    from conformance.checks import breaking, check_client_error
    from conformance.generate import generate_scenarios
    from conformance.problems import Breach
    from conformance.suite.test_conformance import _findings

    wanted = {"E3-LIM-limit-at-least-1-rejected", "E3-query.limit-minimum-0-rejected"}
    listed = []
    for scenario in [s for s in generate_scenarios(contract) if s.id in wanted]:
        accepted = exchange(200, [], path="/v1/sandbox/accounts/a-1/transactions")
        with (
            pytest.raises(ConformanceFailure) as failed,
            breaking(None if scenario.mutation else Breach("query", "limit", "minimum")),
        ):
            check_client_error(accepted)
        findings = _findings(failed.value.for_scenario(scenario), scenario, "sandbox")
        facts = ScenarioFacts(
            scenario.id, scenario.operation, scenario.rule, scenario.spec, "must", scenario.kind,
            scenario.title,
        )  # fmt: skip
        listed.append(ScenarioVerdict(facts, FAILED, "accepted", findings=tuple(findings)))
    (cause,) = causes_of(listed, "must")
    assert set(cause.scenarios) == wanted
    assert cause.title.startswith("`limit` (query) breaks minimum: the request was accepted")
