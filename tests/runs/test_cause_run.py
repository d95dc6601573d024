"""Issue 19's "done when" for item 4, through a real run: against a server that breaks one stated
rule on every payment operation (``tpp-message-code-outside-list``: codes outside spec 7's list in
``tppMessages`` of refused payment requests, as an independent implementation did), the reports
give ONE must cause, with its place and value, covering every scenario it fails.

The list is stated for the error bodies spec 7 shows (``contract.facts.ERRORS_SHOWN``): the payment
operations among them (E16, E17, E18) fail at must; the same break elsewhere (a basket's answers,
the operations whose error body the spec does not show) rests on our reading and is the same cause
at should (issue 19 item 1)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.contract.facts import ERRORS_SHOWN
from conformance.report.junit import SHOULD_SUITE
from conformance.selfcheck import ScenarioRef, expected_failures
from reference_server.faults import FAULTS
from reference_server.faults.payments import PAYMENT_OPERATIONS
from runs.shared_runs import fault_run

FAULT = "tpp-message-code-outside-list"
#: The payment operations whose error body spec 7 shows: there the code list is a must.
STATED = ("E16", "E17", "E18")


@pytest.mark.slow
def test_a_rule_broken_everywhere_is_one_cause(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--fault", FAULT, "--reports", str(reports),
         "-n", "2"],
        capture_output=True, text=True, timeout=900, check=False, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    failed = {s["id"] for s in document["scenarios"] if s["verdict"] == "failed"}
    assert set(STATED) <= ERRORS_SHOWN and set(STATED) <= set(PAYMENT_OPERATIONS)
    assert len(failed) > 20  # the signature and certificate refusals of E16, E17 and E18
    assert document["not_judged"] == []  # the bundled server has every control a rule needs
    must = [cause for cause in document["causes"] if cause["level"] == "must"]
    assert len(must) == 1, [cause["title"] for cause in must]
    (cause,) = must
    assert set(cause["scenarios"]) == failed
    assert tuple(cause["operations"]) == STATED
    assert re.match(
        r"`tppMessages\[0\]\.code` is '[A-Z_]+', not one of the 23 values", cause["title"]
    )
    assert "Codes allowed in tppMessages[].code of payment responses" in cause["title"]
    assert "Codes allowed in tppMessages[].code of payment responses: " in cause["quote"]
    assert cause["example"]["exchange"].startswith(">>> ")
    # one request replayed (call), or the scenario run again with the fault (a signature case)
    assert re.search(r" call | run .*--fault " + FAULT, cause["example"]["reproduce"])
    # the same break where it rests on our reading (a basket's answers, the error bodies the spec
    # does not show, should-level scenarios) is the same cause at should, with its readings named
    assert {c["id"] for c in document["causes"]} == {cause["id"]}
    (should,) = [c for c in document["causes"] if c["level"] == "should"]
    assert set(should["operations"]) == set(PAYMENT_OPERATIONS) and should["reading"]
    assert not set(should["scenarios"]) & failed
    # the two tiers together are exactly the scenarios the fault's row names (the self-check)
    refs = [ScenarioRef(s["id"], s["rule"], s["operation"]) for s in document["scenarios"]]
    assert failed | set(should["scenarios"]) == expected_failures(FAULTS[FAULT], refs)
    summary = f"must failures: 1 cause in {len(failed)} scenarios"
    assert summary in done.stdout
    assert f"CAUSE 1 ({cause['id']}, must): `tppMessages[0].code` is '" in done.stdout
    markdown = (reports / "compliance.md").read_text(encoding="utf-8")
    assert f"- {summary}" in markdown and markdown.count("### Cause ") == 2  # must, should
    # JUnit keeps one test case per scenario, each naming the cause (the pytest suite; the
    # "should" suite lists the should findings)
    root = ET.parse(reports / "junit.xml").getroot()
    (suite,) = [s for s in root.iter("testsuite") if s.get("name") != SHOULD_SUITE]
    cases = [case for case in suite.iter("testcase") if case.find("failure") is not None]
    assert len(cases) == len(failed)
    for case in cases:
        names = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert names.get("cause") == cause["id"], case.get("name")
    # Allure: the cause's category comes first and matches its scenarios' messages
    allure = json.loads((reports / "allure-results" / "categories.json").read_text("utf-8"))
    assert allure[0]["messageRegex"] == f"[\\s\\S]*Cause {cause['id']} [\\s\\S]*"


@pytest.mark.slow
def test_one_break_of_one_field_is_one_cause_naming_it() -> None:
    """Issue 29 item 8: ``long-creditor-name-accepted`` fails the LIM and the SCH scenarios of
    E16, E17 and E18 for one break, reported as one cause that names ``creditorName``. The run
    is the README's (its fresh-clone block, tests/repo/test_readme.py), made once."""
    done = fault_run("long-creditor-name-accepted")
    assert done.returncode == 1, done.tail()
    reports = done.reports
    document = done.document()
    failed = {s["id"] for s in document["scenarios"] if s["verdict"] == "failed"}
    assert failed == {
        f"{op}-{rule}"
        for op in STATED
        for rule in ("LIM-creditor-name-max-70-rejected", "creditorName-maxLength-71-rejected")
    }
    (cause,) = document["causes"]
    assert cause["level"] == "must" and set(cause["scenarios"]) == failed
    assert tuple(cause["operations"]) == STATED
    assert cause["rules"] == ["LIM-creditor-name-max-70", "SCH-maxLength"]
    assert cause["title"].startswith("`creditorName` (body) breaks maxLength")
    assert cause["quote"].startswith('spec 2.7: "creditorName: string; yes; at most 70 characters"')
    assert "|" not in cause["quote"] and "`" not in cause["quote"]
    markdown = (reports / "compliance.md").read_text(encoding="utf-8")
    assert "- must failures: 1 cause in 6 scenarios" in markdown
    assert markdown.count("### Cause ") == 1
    assert "must failures: 1 cause in 6 scenarios" in done.stdout


@pytest.mark.slow
def test_a_systematic_break_keeps_the_terminal_readable(tmp_path: Path) -> None:
    """Issue 44 item 2: ``html-errors`` (every error answered as an HTML page) fails hundreds of
    scenarios for one break. The terminal prints the causes first, then one line per failed
    scenario (the first hundred), in at most 500 lines; the reports keep every exchange."""
    reports = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--fault", "html-errors", "--reports",
         str(reports), "-n", "2"],
        capture_output=True, text=True, timeout=900, check=False, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) <= 500, len(lines)
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    failed = [s for s in document["scenarios"] if s["verdict"] == "failed"]
    assert len(failed) > 500  # so that one block per failure would flood the terminal
    first_cause = next(i for i, line in enumerate(lines) if line.startswith("CAUSE 1 ("))
    per_scenario = [i for i, line in enumerate(lines) if line.startswith("FAILED ")]
    assert per_scenario and first_cause < per_scenario[0]
    assert len(per_scenario) == 100
    assert f"... and {len(failed) - 100} more (compliance.md lists every one;" in done.stdout
    assert "Traceback" not in done.stdout and "___ " not in done.stdout  # no pytest blocks
    assert ">>> " in (reports / "compliance.md").read_text(encoding="utf-8")
