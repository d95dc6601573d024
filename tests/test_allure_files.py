"""The run-level Allure files (``conformance.report.allure_files``): the environment block, the
categories, the CI executor, tidied not-applicable results, and the Allure 3 configuration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.report.allure_files import (
    CATEGORIES,
    allure3_config,
    environment,
    executor,
    finish_results,
    report_name,
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
    assert facts["Verdict"] == "NOT CONFORMANT at must level: 2 must failure(s)"
    assert facts["Certificate subject"] == "CN=TPP" and facts["Seed"] == "7"


def test_finishing_writes_environment_categories_and_tidies_skips(tmp_path: Path) -> None:
    skipped = tmp_path / "a-result.json"
    skipped.write_text(
        json.dumps(
            {
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
    assert json.loads(failed.read_text(encoding="utf-8"))["statusDetails"]["message"] == "boom"


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
    assert options["reportName"] == config["name"] == report_name(_document())
    assert config["categories"] == list(CATEGORIES)
    assert config["historyPath"].endswith("history.jsonl")
    # every category pattern is one JavaScript (Allure 3) and Java (Allure 2) both read
    assert all("(?" not in c.get("messageRegex", "") for c in CATEGORIES)
    assert allure3_config(None, tmp_path / "h.jsonl")["name"] == "PSD2 conformance"
