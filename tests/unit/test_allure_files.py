"""The run-level Allure files (``conformance.report.allure_files``): the environment block, the
categories, the CI executor, tidied not-applicable results, and the Allure 3 configuration."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conformance.contract import load_contract
from conformance.report.allure import sortable_spec, spec_label, spec_titles
from conformance.report.allure_files import (
    CATEGORIES,
    SHOULD_PREFIX,
    allure3_config,
    environment,
    executor,
    finish_results,
    report_name,
    tidy_as_written,
)


def _document(failed: int = 0) -> dict[str, Any]:
    return {
        "target": "https://psd2.test.example-bank.no",
        "spec_version": "1.22.0",
        "suite_version": "0.1.0",
        "run": {"seed": 7, "strict": False, "suite_commit": "abc", "complete": True},
        "profile": {"name": "Example Bank", "certificate": {"subject": "CN=TPP"}},
        "totals": {
            "passed": 10,
            "failed": failed,
            "failed_should": 0,
            "not_applicable": 1,
            "waived": 0,
            "blocked": 0,
            "skipped": 0,
            "error": 0,
        },
    }


def test_the_report_is_named_after_target_and_profile() -> None:
    assert report_name(_document()) == (
        "PSD2 conformance: https://psd2.test.example-bank.no (Example Bank)"
    )
    facts = environment(_document(failed=2))
    # short values: Allure's front page cuts long ones ("CONFORMANT at must level: no must f…")
    assert facts["Verdict"] == "NOT CONFORMANT" and facts["Must failures"] == "2"
    assert environment(_document())["Verdict"] == "CONFORMANT"
    assert all(len(value) <= 40 for key, value in facts.items() if key != "Target")
    assert facts["Certificate subject"] == "CN=TPP" and facts["Seed"] == "7"


def test_finishing_writes_environment_categories_and_tidies_skips(tmp_path: Path) -> None:
    skipped = tmp_path / "a-result.json"
    skipped.write_text(
        json.dumps(
            {
                "name": "E13 bulk",
                "status": "skipped",
                "statusDetails": {"message": "Skipped: not applicable: no bulk", "trace": "('x')"},
            }
        )
    )
    failed = tmp_path / "b-result.json"
    failed.write_text(json.dumps({"status": "failed", "statusDetails": {"message": "boom"}}))
    finish_results(tmp_path, _document())
    properties = (tmp_path / "environment.properties").read_text(encoding="utf-8")
    assert "Spec\\ release=1.22.0" in properties  # a space would end a properties key
    assert "Target=https\\://" not in properties and "Target=https://psd2" in properties
    categories = json.loads((tmp_path / "categories.json").read_text(encoding="utf-8"))
    assert categories[0]["name"].startswith("Must failures")
    assert {"not applicable:.*", "blocked:.*", "waived:.*"} <= {
        c.get("messageRegex") for c in categories
    }
    tidy = json.loads(skipped.read_text(encoding="utf-8"))
    assert tidy["statusDetails"] == {"message": "not applicable: no bulk"}  # no traceback
    # said as such, with its reason (issue 44: Allure's own word is "skipped")
    assert tidy["name"] == "NOT APPLICABLE: E13 bulk"
    assert tidy["description"] == "**Not applicable**: no bulk"
    assert json.loads(failed.read_text(encoding="utf-8"))["statusDetails"]["message"] == "boom"


def test_a_failure_opens_with_what_failed_and_should_findings_are_not_green(
    tmp_path: Path,
) -> None:
    """No Python class name before a failure's message; a scenario with should findings only
    (its pytest item passed) is "broken" in Allure, in the should-findings category, so a run
    with findings shows no all-green ring."""
    prefix = "conformance.report.verdicts.ReportedFailure: "
    failed = tmp_path / "a-result.json"
    failed.write_text(json.dumps({"status": "failed", "statusDetails": {"message": prefix + "x"}}))
    should = tmp_path / "b-result.json"
    should.write_text(json.dumps({"status": "passed", "statusDetails": {"message": prefix + "y"}}))
    clean = tmp_path / "c-result.json"
    clean.write_text(json.dumps({"status": "passed"}))
    finish_results(tmp_path, _document())
    assert json.loads(failed.read_text("utf-8"))["statusDetails"]["message"] == "x"
    tidied = json.loads(should.read_text("utf-8"))
    assert tidied["status"] == "broken"
    assert tidied["statusDetails"]["message"] == SHOULD_PREFIX + "y"
    assert json.loads(clean.read_text("utf-8"))["status"] == "passed"
    matching = [
        c["name"]
        for c in CATEGORIES
        if "broken" in c["matchedStatuses"]
        and re.fullmatch(c.get("messageRegex", "[\\s\\S]*"), tidied["statusDetails"]["message"])
    ]
    assert matching == ["Should findings (the suite's choice or an assumption)"]
    errors = [c for c in CATEGORIES if c["name"].startswith("Errors")]
    assert re.fullmatch(errors[0]["messageRegex"], "Traceback: boom")


def test_spec_parts_sort_in_spec_order_as_text() -> None:
    parts = ["spec 10", "spec 4.3 E16", "spec 7 rule 10", "spec 4.3 E2", "spec 7 rule 2", "spec 5"]
    assert [sortable_spec(part) for part in sorted(parts, key=sortable_spec)] == [
        "spec 04.03 E02",
        "spec 04.03 E16",
        "spec 05",
        "spec 07 rule 02",
        "spec 07 rule 10",
        "spec 10",
    ]


def test_the_ci_system_is_named_when_there_is_one() -> None:
    github = executor(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_REPOSITORY": "bank/psd2",
            "GITHUB_RUN_ID": "42",
            "GITHUB_WORKFLOW": "certify",
            "GITHUB_RUN_NUMBER": "9",
        }
    )
    assert github is not None and github["name"] == "GitHub Actions"
    assert github["buildUrl"] == "https://github.com/bank/psd2/actions/runs/42"
    assert github["buildName"] == "certify #9"
    assert executor({"GITLAB_CI": "true", "CI_JOB_URL": "u"}) == {
        "name": "GitLab CI",
        "type": "gitlab",
        "buildName": "job #",
        "buildUrl": "u",
    }
    assert executor({}) is None


def test_the_allure_3_configuration_groups_by_spec_part_operation_rule(tmp_path: Path) -> None:
    config = allure3_config(_document(), tmp_path / "history.jsonl")
    options = config["plugins"]["awesome"]["options"]
    assert options["groupBy"] == ["epic", "feature", "story"]
    assert options["defaultSortBy"] == "name,asc"  # spec parts in spec order (sortable labels)
    assert options["singleFile"] is True  # one index.html that opens from a file
    assert options["reportName"] == config["name"] == report_name(_document())
    assert config["categories"] == list(CATEGORIES)
    assert config["historyPath"].endswith("history.jsonl")
    # every category pattern is one JavaScript (Allure 3) and Java (Allure 2) both read: no
    # inline flags such as (?s), which JavaScript lacks (a lookahead, (?!...), both read)
    assert all(not re.search(r"\(\?[a-z]", c.get("messageRegex", "")) for c in CATEGORIES)
    assert allure3_config(None, tmp_path / "h.jsonl")["name"] == "PSD2 conformance"


SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec" / "interface.md"


def test_the_spec_titles_are_the_specs_headings() -> None:
    titles = spec_titles(load_contract().root)
    headings = set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? (.+)$", SPEC.read_text("utf-8"), re.M))
    assert set(titles.items()) == headings  # verbatim, every part of the spec


def test_a_spec_part_is_labelled_with_its_title() -> None:
    contract = load_contract()
    titles = spec_titles(contract.root)
    names = {op_id: operation.name for op_id, operation in contract.operations.items()}
    assert spec_label("spec 4.3 E16", titles, names) == "4.3 E16 Create NDCT payment"
    assert spec_label("spec 4.3 E2", titles, names) == f"4.3 E02 {names['E2']}"
    assert spec_label("spec 7 rule 2", titles, names) == "7 Errors, rule 2"
    assert spec_label("spec 2.4", titles, names) == "2.4 Signing basket"
    assert spec_label("spec 2.4, spec 3", titles, names) == "2.4 Signing basket; also 3"
    assert spec_label("spec 9 (1.17.4)", titles, names) == "9 Versioning (1.17.4)"
    assert spec_label("nothing of the spec", titles, names) == "nothing of the spec"


def test_the_labels_sort_in_spec_order_as_text() -> None:
    """Allure sorts the tree by name as text: the labels' text order is the spec's order."""
    contract = load_contract()
    titles = spec_titles(contract.root)
    names = {op_id: operation.name for op_id, operation in contract.operations.items()}
    parts = ["spec 9", "spec 4.3 E16", "spec 7 rule 8", "spec 4.3 E2", "spec 7 rule 2", "spec 5"]
    labels = [spec_label(part, titles, names) for part in parts]
    assert sorted(labels) == [
        f"4.3 E02 {names['E2']}",
        "4.3 E16 Create NDCT payment",
        "5 Authentication",
        "7 Errors, rule 2",
        "7 Errors, rule 8",
        "9 Versioning",
    ]


def test_a_result_is_named_after_its_scenario(tmp_path: Path) -> None:
    result = tmp_path / "1-result.json"
    result.write_text(
        json.dumps(
            {
                "name": "E16: a title",
                "fullName": "conformance.suite.test_conformance#test_scenario",
                "status": "passed",
                "parameters": [{"name": "scenario", "value": "'E16-x-rejected'"}],
                "labels": [
                    {"name": "epic", "value": "4.3 E16 Create NDCT payment"},
                    {"name": "package", "value": "conformance.suite.test_conformance"},
                    {"name": "testMethod", "value": "test_scenario"},
                    {"name": "suite", "value": "test_conformance"},
                    {"name": "parentSuite", "value": "conformance.suite"},
                    {"name": "host", "value": "vm"},
                ],
            }
        ),
        encoding="utf-8",
    )
    finish_results(tmp_path, _document())
    tidied = json.loads(result.read_text(encoding="utf-8"))
    assert tidied["fullName"] == "E16-x-rejected"
    assert [label["name"] for label in tidied["labels"]] == ["epic", "host"]
    assert "test_conformance" not in json.dumps(tidied)


def test_a_result_tidied_as_written_is_the_file_tidied_at_the_end(tmp_path: Path) -> None:
    """allure-pytest's writer made to tidy as it writes (tidy_as_written) writes what its own
    writer and the end's tidying write: one result of each kind the tidying changes or keeps."""
    from allure_commons.logger import AllureFileLogger
    from allure_commons.model2 import Label, Parameter, StatusDetails, TestResult

    def results() -> list[TestResult]:
        made = []
        for index, (status, message) in enumerate(
            [
                ("skipped", "Skipped: not applicable: no bulk product"),
                ("passed", "conformance.checks.Finding: a should finding"),
                ("failed", "AssertionError: must failure"),
                ("passed", None),
            ]
        ):
            made.append(
                TestResult(
                    uuid=f"u{index}",
                    name=f"test_scenario[S{index}]",
                    fullName="conformance.suite.test_conformance#test_scenario",
                    status=status,
                    statusDetails=StatusDetails(message=message) if message else None,
                    parameters=[Parameter(name="scenario", value=f"'E9-S{index}'")],
                    labels=[Label(name="suite", value="x"), Label(name="story", value="ÆØÅ")],
                )
            )
        return made

    plain, tidying = tmp_path / "plain", tmp_path / "tidying"
    writer = AllureFileLogger(str(plain))  # type: ignore[no-untyped-call]
    for result in results():
        writer.report_result(result)  # type: ignore[no-untyped-call]
    finish_results(plain, _document())
    other = AllureFileLogger(str(tidying))  # type: ignore[no-untyped-call]
    assert tidy_as_written(other) and not tidy_as_written(object())
    for result in results():
        other.report_result(result)  # type: ignore[no-untyped-call]
    finish_results(tidying, _document(), tidy_results=False)

    def read(folder: Path) -> dict[str, str]:
        return {
            json.loads(path.read_text("utf-8"))["uuid"]: path.read_text("utf-8")
            for path in folder.glob("*-result.json")
        }

    assert read(plain) == read(tidying)
    assert len(read(plain)) == 4
    assert all('"fullName": "E9-S' in text for text in read(tidying).values())
