"""Eligibility for certification, said by every report of a run: a complete run, every must
scenario of what the profile offers judged, no waiver of a must, a released suite version."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conformance import checks as checks_module
from conformance.report import compliance, release
from conformance.report.compliance import RunInfo, build_document, write_compliance
from conformance.report.compliance_page import SMOKE_SELECTION
from conformance.report.eligibility import eligibility, eligibility_line, released
from conformance.report.release import check_installed, file_sha256
from conformance.report.verdicts import (
    BLOCKED,
    ERROR,
    FAILED,
    NOT_APPLICABLE,
    PASSED,
    WAIVED,
    ScenarioFacts,
    ScenarioVerdict,
)

STARTED = datetime(2026, 1, 29, 8, 0, tzinfo=UTC)


def _verdict(
    scenario: str, verdict: str, level: str = "must", lacking: str = ""
) -> ScenarioVerdict:
    facts = ScenarioFacts(
        id=scenario, operation="E16", rule="SCH-maxLength", spec="spec 2.7", level=level,
        kind="constraint", title=scenario, assumptions=(), quotes=(),
    )  # fmt: skip
    return ScenarioVerdict(facts, verdict, "why", not_judged=lacking)


def _document(*verdicts: ScenarioVerdict, version: str = "1.0.0", **run: Any) -> dict[str, Any]:
    info = RunInfo(
        started=STARTED, finished=STARTED + timedelta(seconds=9), seed=1, strict=False,
        target="https://bank.example", **run,
    )  # fmt: skip
    listed = verdicts or (_verdict("E16-a", PASSED),)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compliance, "__version__", version)
        return build_document(listed, info)


def test_a_complete_run_of_a_released_suite_that_judged_every_must_is_eligible() -> None:
    document = _document(
        _verdict("E16-a", PASSED),
        _verdict("E16-b", FAILED),  # a failing run is eligible: its verdict is what counts
        _verdict("E16-c", NOT_APPLICABLE),  # an operation the profile does not offer
        _verdict("E16-d", WAIVED, level="should"),  # a should waived
    )
    assert document["eligibility"] == {"eligible": True, "reasons": []}
    assert eligibility_line(document).startswith("ELIGIBLE for certification: a complete run")


@pytest.mark.parametrize(
    ("run", "reason"),
    [
        ({"selection": {"smoke": SMOKE_SELECTION}}, "a smoke run"),
        ({"selection": {"-k": "E16"}}, "a partial run (-k E16)"),
        ({"selection": {"-m": "must"}}, "a partial run (-m must)"),
        ({"selection": {"scenarios from": "last-failed.txt"}}, "a partial run (scenarios from"),
        ({"interrupted": "SIGTERM"}, "interrupted (SIGTERM)"),
    ],
)
def test_a_partial_or_interrupted_run_is_never_eligible(run: dict[str, Any], reason: str) -> None:
    said = _document(**run)["eligibility"]
    assert said["eligible"] is False
    assert said["reasons"][0].startswith(reason)


@pytest.mark.parametrize(
    ("verdict", "reason"),
    [
        (_verdict("E16-x", WAIVED), "1 must scenario(s) waived by the profile"),
        (_verdict("E16-x", BLOCKED), "1 must scenario(s) blocked by their set-up, not judged"),
        (_verdict("E16-x", ERROR), "1 must scenario(s) erred, not judged"),
        (
            _verdict("E16-x", NOT_APPLICABLE, lacking="a second PSU"),
            "1 must scenario(s) not judged here for lack of a control",
        ),
    ],
)
def test_a_must_scenario_not_judged_makes_the_run_ineligible(
    verdict: ScenarioVerdict, reason: str
) -> None:
    said = _document(_verdict("E16-a", PASSED), verdict)["eligibility"]
    assert said == {"eligible": False, "reasons": [reason]}


@pytest.mark.parametrize(
    ("version", "is_released"),
    [("1.0.0", True), ("2.13.4", True), ("0.1.0", False), ("1.0.0.dev3", False),
     ("1.0.0rc1", False), ("1.0.0+local", False)],
)  # fmt: skip
def test_only_a_released_suite_version_is_eligible(version: str, is_released: bool) -> None:
    assert released(version) is is_released
    said = _document(version=version)["eligibility"]
    assert said["eligible"] is is_released
    if not is_released:
        assert said["reasons"] == [f"suite version {version} is not a released version"]


def test_every_report_says_it(tmp_path: Path) -> None:
    document = _document(selection={"-k": "E16"}, version="0.1.0")
    write_compliance(tmp_path, document)
    line = (
        "NOT ELIGIBLE for certification: a partial run (-k E16); suite version 0.1.0 is not a "
        "released version"
    )
    assert eligibility_line(document) == line
    assert line in (tmp_path / "compliance.md").read_text(encoding="utf-8")
    assert "NOT ELIGIBLE for certification" in (tmp_path / "compliance.html").read_text(
        encoding="utf-8"
    )
    assert eligibility(document) == document["eligibility"]
    assert eligibility_line({"traffic": {}}) == ""  # judged traffic: no such claim


def test_an_edited_installed_file_is_not_eligible_and_named(tmp_path: Path) -> None:
    """A release manifest whose digest of a check is not the installed file's (one byte edited
    after the release): NOT ELIGIBLE, naming the file (tests/repo/test_release.py edits an installed
    copy; here the document says it)."""
    manifest = tmp_path / "_release.json"
    site = Path(checks_module.__file__).resolve().parent.parent
    files = {
        module.relative_to(site).as_posix(): file_sha256(module)
        for package in ("conformance", "reference_server")
        for module in (site / package).rglob("*.py")
    }
    files["conformance/checks.py"] = hashlib.sha256(b"one byte edited").hexdigest()
    manifest.write_text(json.dumps({"version": "1.0.0", "files": files}), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(release, "__version__", "1.0.0")
        checked = check_installed(manifest)
        document = _document(release=checked)
    assert checked["changed"] == ["conformance/checks.py"]
    assert document["eligibility"]["eligible"] is False
    assert eligibility_line(document) == (
        "NOT ELIGIBLE for certification: installed file(s) conformance/checks.py differs from "
        "the release"
    )
    assert (
        document["release"]["manifest_sha256"] == hashlib.sha256(manifest.read_bytes()).hexdigest()
    )


def test_a_checkout_without_a_release_manifest_says_so(tmp_path: Path) -> None:
    document = _document(release=check_installed(tmp_path / "_release.json"))
    assert document["eligibility"]["reasons"] == [
        "no release manifest: the suite runs from a checkout, not from a release"
    ]


def test_a_run_that_certifies_no_bank_states_no_eligibility(tmp_path: Path) -> None:
    """The bundled reference server or a played profile: no eligibility anywhere."""
    document = _document(_verdict("E16-a", PASSED), version="0.1.0", certifies=False)
    assert document["eligibility"] is None
    assert document["run"]["certifies"] is False
    assert eligibility_line(document) == ""
    write_compliance(tmp_path, document)
    for name in ("compliance.md", "compliance.html"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert "ELIGIBLE for certification" not in text
        assert "eligibility for certification not stated" in text


@pytest.mark.parametrize(
    ("verdict", "eligible", "colour"),
    [(PASSED, False, "open"), (FAILED, True, "ok")],
)
def test_the_eligibility_line_has_its_own_colour(
    tmp_path: Path, verdict: str, eligible: bool, colour: str
) -> None:
    """Amber when not eligible on a passing (green) run; green when eligible on a failing (red)
    one: the line's colour is its own, not the verdict's."""
    document = _document(_verdict("E16-a", verdict), version="1.0.0" if eligible else "0.1.0")
    write_compliance(tmp_path, document)
    page = (tmp_path / "compliance.html").read_text(encoding="utf-8")
    word = "ELIGIBLE" if eligible else "NOT ELIGIBLE"
    assert f'<p class="verdict {colour}">{word} for certification' in page
    verdict_colour = "bad" if verdict == FAILED else "ok"
    assert f'<p class="verdict {verdict_colour}">' in page
