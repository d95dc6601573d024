"""The compliance matrix, verdict helpers and masking (conformance.report)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conformance import SPEC_VERSION, __version__
from conformance.contract import load_contract
from conformance.contract.identifiers import generate_national_id
from conformance.profile import CorporatePsu, PrivatePsu, TargetProfile
from conformance.report.compliance import (
    COMPLIANCE_HTML,
    COMPLIANCE_JSON,
    COMPLIANCE_MD,
    RunInfo,
    build_document,
    profile_summary,
    render_markdown,
    write_compliance,
)
from conformance.report.compliance_page import overall_verdict
from conformance.report.compliance_render import render_html
from conformance.report.masking import certificate_summary, scrub_identities
from conformance.report.verdicts import (
    BLOCKED,
    ERROR,
    FAILED,
    FAILED_SHOULD,
    NOT_APPLICABLE,
    PASSED,
    SKIPPED,
    Finding,
    ScenarioFacts,
    ScenarioVerdict,
    final_verdict,
    first_line,
    graded,
    read_findings,
    read_reproduce,
    read_retries,
    read_verdict,
    reproduce_line,
    reproduce_properties,
    retries_properties,
    setup_failure,
    verdict_properties,
)
from conformance.signing import generate_ca, generate_tpp_identity, write_identity

NATIONAL_ID = generate_national_id(random.Random(7))
STARTED = datetime(2026, 1, 29, 8, 0, tzinfo=UTC)


def facts(
    scenario_id: str,
    operation: str = "E16",
    rule: str = "SCH-maxLength",
    level: str = "must",
    assumptions: tuple[str, ...] = (),
    quotes: tuple[str, ...] = (),
) -> ScenarioFacts:
    return ScenarioFacts(
        id=scenario_id,
        operation=operation,
        rule=rule,
        spec="spec 2.7",
        level=level,
        kind="constraint",
        title=f"title of {scenario_id}",
        assumptions=assumptions,
        quotes=quotes,
    )


def run_info(**changes: object) -> RunInfo:
    values: dict[str, object] = {
        "started": STARTED,
        "finished": STARTED + timedelta(seconds=90),
        "seed": 42,
        "strict": False,
        "target": "https://psd2.test.example-bank.no",
        "profile": {"name": "Example Bank"},
    }
    values.update(changes)
    return RunInfo(**values)  # type: ignore[arg-type]


VERDICTS = [
    ScenarioVerdict(facts("E16-a-rejected"), PASSED),
    ScenarioVerdict(facts("E16-b-rejected"), FAILED, "creditorName of 71 accepted"),
    ScenarioVerdict(
        facts("E16-c-rejected", level="should", assumptions=("A shared assumption.",)),
        FAILED_SHOULD,
        "no Allow header",
    ),
    ScenarioVerdict(facts("E18-d-accepted", operation="E18", rule="POS-E18"), NOT_APPLICABLE, "x"),
    ScenarioVerdict(
        facts(
            "E2-e-accepted", operation="E2", rule="POS-E2", assumptions=("A shared assumption.",)
        ),
        SKIPPED,
        "skipped by hand",
    ),
    ScenarioVerdict(facts("E16-f-rejected", rule="SCH-enum"), ERROR, "TargetError: timed out"),
]


# --- verdict helpers -----------------------------------------------------------------------------


def test_facts_survive_user_properties() -> None:
    original = facts("E16-x-rejected", assumptions=("one", "two"))
    assert ScenarioFacts.from_properties(original.properties()) == original


def test_a_test_without_scenario_properties_has_no_facts() -> None:
    assert ScenarioFacts.from_properties([("other", "value")]) is None


def test_the_heaviest_phase_verdict_wins() -> None:
    assert final_verdict([(PASSED, ""), (SKIPPED, "s")]) == (SKIPPED, "s")
    assert final_verdict([(PASSED, ""), (FAILED, "f"), (ERROR, "teardown")]) == (
        ERROR,
        "teardown",
    )
    assert final_verdict([(NOT_APPLICABLE, "n"), (PASSED, "")]) == (NOT_APPLICABLE, "n")
    assert final_verdict([])[0] == ERROR


def test_verdict_properties_round_trip() -> None:
    assert read_verdict([("scenario", "x"), *verdict_properties(FAILED, "why")]) == (FAILED, "why")
    assert read_verdict([("scenario", "x")]) is None


def test_first_line_skips_blank_lines_and_cuts_long_ones() -> None:
    assert first_line("\n\n  title  \nmore") == "title"
    assert len(first_line("x" * 500, limit=50)) == 50


# --- the document --------------------------------------------------------------------------------


def test_document_names_the_run() -> None:
    document = build_document(VERDICTS, run_info(), load_contract())
    assert document["spec_version"] == SPEC_VERSION == "1.22.0"
    assert document["suite_version"] == __version__
    assert document["run"]["seed"] == 42
    assert document["run"]["started"] == "2026-01-29T08:00:00+00:00"
    assert document["run"]["finished"] == "2026-01-29T08:01:30+00:00"
    assert document["run"]["duration_seconds"] == 90
    assert document["target"] == "https://psd2.test.example-bank.no"
    assert document["profile"] == {"name": "Example Bank"}


def test_totals_and_cells_count_every_verdict() -> None:
    document = build_document(VERDICTS, run_info(), load_contract())
    assert document["totals"] == {
        "passed": 1,
        "failed": 1,
        "failed_should": 1,
        "not_applicable": 1,
        "waived": 0,
        "blocked": 0,
        "skipped": 1,
        "error": 1,
    }
    cells = {(cell["operation"], cell["rule"]): cell for cell in document["matrix"]}
    max_length = cells[("E16", "SCH-maxLength")]
    assert max_length["counts"]["passed"] == 1
    assert max_length["counts"]["failed"] == 1
    assert max_length["counts"]["failed_should"] == 1
    assert max_length["levels"] == ["must", "should"]
    assert cells[("E16", "SCH-enum")]["counts"]["error"] == 1
    # E2 before E16 before E18: operations in spec order, not string order.
    assert [entry["operation"] for entry in document["operations"]] == ["E2", "E16", "E18"]


def test_every_scenario_is_listed_with_its_verdict_and_reason() -> None:
    document = build_document(VERDICTS, run_info(), load_contract())
    listed = {s["id"]: s for s in document["scenarios"]}
    assert set(listed) == {v.facts.id for v in VERDICTS}
    assert listed["E16-b-rejected"]["verdict"] == FAILED
    assert listed["E16-b-rejected"]["reason"] == "creditorName of 71 accepted"
    assert listed["E18-d-accepted"]["verdict"] == NOT_APPLICABLE


def test_findings_are_listed_by_tier_with_the_quote_or_the_reading() -> None:
    chosen = "the spec shows no status; we expect this one"
    verdicts = [
        ScenarioVerdict(
            facts("E17-g-rejected", operation="E17", rule="ERR-4-x"),
            FAILED,
            "accepted",
            findings=(
                Finding(
                    "must",
                    "POST accepted (HTTP 201), must be rejected",
                    "spec 7 rule 4",
                    quotes=("7-rule-4",),
                ),
                Finding("should", "no FORMAT_ERROR code", "spec 7 rule 4", chosen),
            ),
        )
    ]
    document = build_document(verdicts, run_info(), load_contract())
    (listed,) = document["scenarios"]
    assert [f["level"] for f in listed["findings"]] == ["must", "should"]
    assert listed["findings"][1]["reading"] == chosen
    assert listed["findings"][0]["quotes"] == ["7-rule-4"]
    assert document["quotes"]["7-rule-4"]["text"].startswith("When a periodic payment")
    assert read_findings(verdict_properties(FAILED, "r", verdicts[0].findings)) == (
        verdicts[0].findings
    )
    markdown = render_markdown(document)
    assert "| `E17-g-rejected` | must | POST accepted" in markdown
    assert 'spec 7 rule 4: "When a periodic payment with frequency MonthlyVariable' in markdown
    assert f"| should | no FORMAT_ERROR code | spec 7 rule 4 | {chosen} |" in markdown


def test_assumptions_are_listed_once_and_referenced() -> None:
    contract = load_contract()
    document = build_document(VERDICTS, run_info(), contract)
    texts = [a["text"] for a in document["assumptions"]]
    assert len(texts) == len(set(texts))
    by_text = {a["text"]: a for a in document["assumptions"]}
    shared = by_text["A shared assumption."]
    assert shared["operations"] == ["E2", "E16"]
    assert shared["scenarios"] == 2
    listed = {s["id"]: s for s in document["scenarios"]}
    assert shared["id"] in listed["E2-e-accepted"]["assumptions"]
    # The operation's own contract assumptions are referenced too (E18's product is assumed).
    e18_texts = {item.text for item in contract.operations["E18"].assumptions}
    e18_ids = {by_text[text]["id"] for text in e18_texts}
    assert e18_ids <= set(listed["E18-d-accepted"]["assumptions"])
    assert by_text[next(iter(e18_texts))]["topic"]


def test_written_files_agree(tmp_path: Path) -> None:
    document = build_document(VERDICTS, run_info(), load_contract())
    json_path, md_path = write_compliance(tmp_path / "reports", document)
    assert json_path.name == COMPLIANCE_JSON and md_path.name == COMPLIANCE_MD
    assert json.loads(json_path.read_text(encoding="utf-8")) == document
    markdown = md_path.read_text(encoding="utf-8")
    assert markdown == render_markdown(document)
    assert "Spec release: 1.22.0" in markdown
    assert "Seed: 42" in markdown
    grid_row = "| E16 Create NDCT payment | ✗ 1/4 |"  # operations × scenario kinds
    assert grid_row in markdown
    assert document["matrix"]  # the matrix of every operation × rule: in compliance.json
    assert "## Must failures" in markdown and "creditorName of 71 accepted" in markdown
    assert "`E16-f-rejected`" in markdown
    # the reader's order: the verdict, then the must failures, and only then the grid
    verdict = markdown.index("## Verdict")
    assert verdict < markdown.index("## Must failures") < markdown.index("## Operations ×")
    assert "**NOT CONFORMANT at must level: 1 must failure(s)" in markdown
    page = (tmp_path / "reports" / COMPLIANCE_HTML).read_text(encoding="utf-8")
    assert page == render_html(document)
    assert '<p class="verdict bad">NOT CONFORMANT at must level' in page
    assert page.index("Must failures") < page.index("Operations ×")


def test_the_page_is_for_a_compliance_officer(tmp_path: Path) -> None:
    """The title is the profile's name; a must failure shows the requirement in words, and its
    replay command folded; a bar per operation, a grid of coloured cells; assumption ids that
    link to the list; no JavaScript."""
    failure = ScenarioVerdict(
        facts("E16-f-rejected", quotes=("2.7-ndct-creditorName",)),
        FAILED,
        "creditorName of 71 accepted",
        reproduce="conformance call POST /v1/payments/x --target http://x",
    )
    assumed = ScenarioVerdict(
        facts("E12-g-rejected", "E12", assumptions=("an assumed header set",)), PASSED
    )
    profile = {"name": "Example Bank test environment"}
    document = build_document([failure, assumed], run_info(profile=profile), load_contract())
    page = render_html(document)
    assert "<title>Compliance report: Example Bank test environment</title>" in page
    assert "<h1>Compliance report: Example Bank test environment</h1>" in page
    assert "psd2.test.example-bank.no" not in page.split("<h2>")[0]
    assert "<th>requirement</th>" in page and "<td>title of E16-f-rejected</td>" in page
    assert "<details><summary>command</summary><code>conformance call POST" in page
    assert '<div class="bar"><span class="pass"' in page and 'class="failing"' in page
    assert '<td class="cell fail"' in page and '<td class="cell pass"' in page
    assert '<a href="#A1">A1</a>' in page and '<li id="A1">' in page
    assert "rests on assumptions (listed at the end)" in page
    assert "<script" not in page
    markdown = render_markdown(document)
    # a failure without a cause is a row of the must-failure table, which quotes the spec
    assert (
        "| scenario | operation | requirement | spec | the target | the spec says (quoted) "
        "| replay |" in markdown
    )
    assert '| spec 2.7: "creditorName: string; yes; at most 70 characters" |' in markdown


def test_the_verdict_line_says_conformant_only_when_everything_was_judged() -> None:
    passed = [ScenarioVerdict(facts("E16-a-rejected"), PASSED)]
    assert overall_verdict(build_document(passed, run_info())).startswith(
        "CONFORMANT at must level"
    )
    blocked = [*passed, ScenarioVerdict(facts("E16-b-rejected"), BLOCKED, "refused")]
    assert overall_verdict(build_document(blocked, run_info())).startswith("NOT SHOWN CONFORMANT")


def test_a_must_failure_carries_its_replay_command() -> None:
    text = (
        "E16 accepted it\n\nExchange:\n    >>> POST /v1/payments/x\n\nReproduce with:\n"
        "    conformance call POST /v1/payments/x --target http://t\n"
    )
    command = reproduce_line(text)
    assert command == "conformance call POST /v1/payments/x --target http://t"
    assert read_reproduce(reproduce_properties(command)) == command
    assert reproduce_properties("") == [] and reproduce_line("no replay here") == ""
    verdict = ScenarioVerdict(facts("E16-g-rejected"), FAILED, "accepted", reproduce=command)
    markdown = render_markdown(build_document([verdict], run_info(), load_contract()))
    assert f"| `{command}` |" in markdown


def test_markdown_escapes_pipes() -> None:
    verdict = ScenarioVerdict(facts("E16-g-rejected"), FAILED, "a | b")
    markdown = render_markdown(build_document([verdict], run_info()))
    assert "a \\| b" in markdown


# --- secrets -------------------------------------------------------------------------------------


def test_identity_numbers_are_masked_wherever_they_stand() -> None:
    text = f"PSU {NATIONAL_ID} sent; account 12345678901 kept; {NATIONAL_ID}0 is no identity"
    scrubbed = scrub_identities(text)
    assert NATIONAL_ID not in scrubbed.replace(f"{NATIONAL_ID}0", "")
    assert "*********" + NATIONAL_ID[-2:] in scrubbed
    assert "12345678901" in scrubbed  # not a valid identity number: left alone
    assert f"{NATIONAL_ID}0" in scrubbed  # twelve digits: not an identity number


def test_a_failure_reason_in_the_document_is_masked() -> None:
    verdict = ScenarioVerdict(facts("E16-h-rejected"), FAILED, f"echoed {NATIONAL_ID}")
    document = build_document([verdict], run_info())
    assert NATIONAL_ID not in json.dumps(document)


def test_profile_summary_keeps_no_secret(tmp_path: Path) -> None:
    ca = generate_ca()
    files = write_identity(generate_tpp_identity(ca), tmp_path)
    profile = TargetProfile(
        name="Example Bank",
        base_url="https://psd2.test.example-bank.no",
        certificate=files["certificate"],
        key=files["key"],
        key_password="hunter2",
        psu_private=PrivatePsu(psu_id="p-1", national_id=NATIONAL_ID, customer_number="1"),
        psu_corporate=CorporatePsu(corporate_id="987654321"),
        unsupported_operations=frozenset({"E18"}),
    )
    summary = profile_summary(profile)
    text = json.dumps(summary)
    assert NATIONAL_ID not in text
    assert "hunter2" not in text
    assert str(files["key"]) not in text
    assert "PRIVATE KEY" not in text and "BEGIN CERTIFICATE" not in text
    assert summary["psu"]["private"]["national_id"] == "*********" + NATIONAL_ID[-2:]
    assert summary["unsupported_operations"] == ["E18"]
    certificate = summary["certificate"]
    assert certificate["subject"].startswith("CN=Conformance Test TPP")
    assert certificate["sha256"].endswith("…") and len(certificate["sha256"]) == 17


def test_certificate_summary_of_an_unreadable_file_names_the_path_only(tmp_path: Path) -> None:
    path = tmp_path / "tpp.p12"
    path.write_bytes(b"\x00\x01 not a certificate")
    summary = certificate_summary(path)
    assert summary.path == str(path)
    assert summary.subject == summary.serial == summary.sha256 == ""


@pytest.mark.parametrize("verdict", [PASSED, FAILED, FAILED_SHOULD, NOT_APPLICABLE, SKIPPED, ERROR])
def test_every_verdict_has_a_count(verdict: str) -> None:
    document = build_document([ScenarioVerdict(facts("E16-z-rejected"), verdict)], run_info())
    assert sum(document["totals"].values()) == 1


def test_a_should_requirement_grades_its_findings_should_with_its_reading() -> None:
    """A 5xx too: no sentence of the spec forbids one (E2 and E17 list 500)."""
    findings = (Finding("must", "refused with 401", "spec 4.2"),)
    assert graded(findings, "must") == findings
    (softened,) = graded(findings, "should", reading="we read it so")
    assert softened.level == "should" and softened.reading == "we read it so"
    (unnamed,) = graded(findings, "should")
    assert "assumption" in unnamed.reading


def test_throttled_answers_are_counted_per_scenario_and_per_run() -> None:
    verdicts = [
        ScenarioVerdict(facts("E16-a-rejected"), PASSED, retries=2),
        ScenarioVerdict(facts("E16-b-rejected"), PASSED),
    ]
    document = build_document(verdicts, run_info(), load_contract())
    assert document["run"]["throttled_answers"] == 2
    assert [s["retries"] for s in document["scenarios"]] == [2, 0]
    assert "Throttled answers waited out (429/503 with Retry-After): 2" in render_markdown(document)
    assert read_retries(retries_properties(2)) == 2 and retries_properties(0) == []


def test_the_security_group_has_a_section_of_its_own() -> None:
    verdicts = [
        ScenarioVerdict(facts("PS-auth-other-tpp-refused", "PS", "AUTH-other-tpp"), FAILED_SHOULD,
                        "GET accepted (HTTP 200) but must be rejected"),
        ScenarioVerdict(facts("E16-auth-replay-refused", "E16", "AUTH-replay"), PASSED),
        ScenarioVerdict(facts("E16-a-rejected"), PASSED),
    ]  # fmt: skip
    markdown = render_markdown(build_document(verdicts, run_info(), load_contract()))
    start = markdown.index("## Security")
    section = markdown[start : markdown.index("\n## ", start + 1)]
    assert "1 of 2 judged security scenarios held" in section
    assert "`PS-auth-other-tpp-refused`" in section and "E16-a-rejected" not in section


def test_a_run_most_of_whose_scenarios_one_set_up_cause_blocked_is_not_judged() -> None:
    """More than half of the scenarios to judge (not applicable and waived left out) blocked by
    one cause: no conformance verdict from the few that ran, whatever they found."""
    cause = "the target refused to create a sandbox customer: HTTP 404"
    ran = [ScenarioVerdict(facts("E16-a"), FAILED, "bad"), ScenarioVerdict(facts("E16-b"), PASSED)]
    blocked = [ScenarioVerdict(facts(f"E16-c{i}"), BLOCKED, cause) for i in range(3)]
    document = build_document([*ran, *blocked], run_info())
    verdict = overall_verdict(document)
    assert verdict.startswith(f"NOT JUDGED: set-up failed: {cause} (3 of the 5 scenarios")
    assert "NOT CONFORMANT" not in verdict
    assert 'class="verdict open"' in render_html(document)
    # at half or fewer it is a verdict, incomplete: blocked scenarios are not shown conformant
    half = build_document([*ran, *blocked[:2]], run_info())
    assert overall_verdict(half).startswith("NOT CONFORMANT at must level")


def test_not_judged_counts_only_the_scenarios_to_judge() -> None:
    counts = {"passed": 1, "blocked": 2, "not_applicable": 10, "waived": 5}
    judged = setup_failure(counts, [("cause", 2)])
    assert judged is not None and (judged.blocked, judged.to_judge) == (2, 3)
    assert setup_failure(counts, []) is None
    assert setup_failure({"passed": 2, "blocked": 2}, [("cause", 2)]) is None


def test_a_long_value_wraps_instead_of_widening_the_page() -> None:
    """A 71-character name in a replay line or a cell breaks where it must: every element that
    holds a value may wrap anywhere, and examples wrap their lines (no sideways scroll)."""
    long_name = "A" * 71
    failure = ScenarioVerdict(
        facts("E16-f-rejected", quotes=("2.7-ndct-creditorName",)),
        FAILED,
        f"creditorName {long_name} accepted",
        reproduce=f'conformance call POST /v1/payments/x --data-json \'{{"n": "{long_name}"}}\'',
    )
    page = render_html(build_document([failure], run_info(), load_contract()))
    style = page.split("<style>", 1)[1].split("</style>", 1)[0]
    assert "td, th, p, li, summary, pre { overflow-wrap: anywhere; }" in style
    assert "pre { white-space: pre-wrap; }" in style
    assert long_name in page
