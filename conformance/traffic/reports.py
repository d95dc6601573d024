"""The reports of judged traffic, as a run writes them: ``compliance.json``/``.md``/``.html``
(``conformance.report.compliance``), ``junit.xml`` (with the "should" suite of
``conformance.report.junit``) and ``allure-results/`` (allure-python-commons' file writer, with the
run-level files of ``conformance.report.allure_files``).

Each judged exchange is one entry of the report (id ``X00007-E16``): its verdict is failed when a
must finding was made, failed (should) when only should findings were, passed when none, not
applicable when it was not judged (outside ``/v1``, no answer). Its findings say which side broke
the rule (``TPP:`` its request, ``bank:`` its answer), the exact place, the spec part and, where the
spec states the rule, its sentence; the exchange itself is the evidence (Allure attachment, the
``conformance call`` line that replays it). Every text goes through the run's masking (``scrub``).
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from conformance.contract import Contract
from conformance.report.allure_files import finish_results
from conformance.report.compliance import RunInfo, build_document, write_compliance
from conformance.report.junit import ShouldFinding, add_should_suite
from conformance.report.masking import scrub
from conformance.report.verdicts import (
    FAILED,
    FAILED_SHOULD,
    NOT_APPLICABLE,
    PASSED,
    Finding,
    ScenarioFacts,
    ScenarioVerdict,
)
from conformance.traffic.model import SIDES, JudgedExchange, TrafficFinding

__all__ = ["TrafficRun", "entry_id", "summary", "write_reports"]

#: The rule of an exchange with no finding (the matrix's row of clean exchanges).
CLEAN_RULE = "exchange"
KIND = "traffic"


@dataclass(frozen=True)
class TrafficRun:
    """What the reports say about where the traffic came from."""

    source: str
    target: str
    started: datetime
    finished: datetime
    profile: Mapping[str, Any]


def entry_id(judged: JudgedExchange) -> str:
    return f"X{judged.index:05d}-{judged.operation or 'none'}"


def _main(judged: JudgedExchange) -> TrafficFinding | None:
    return (judged.must or judged.should or (None,))[0]


def _finding_title(finding: TrafficFinding) -> str:
    place = f" [{finding.place}]" if finding.place else ""
    return scrub(f"{finding.side}: {finding.title}{place}")


def _finding_spec(finding: TrafficFinding) -> str:
    """The spec part, and the quoted sentences of a must (each names its own spec part)."""
    return f"{finding.spec}; the spec says: {finding.quote}" if finding.quote else finding.spec


def _title(judged: JudgedExchange) -> str:
    exchange = judged.exchange
    return scrub(f"{exchange.method} {exchange.path} → {exchange.status}")


def _reproduce(judged: JudgedExchange) -> str:
    try:
        return scrub(judged.exchange.reproduce_command())
    except ValueError:
        return scrub(judged.exchange.reproduce_command(data_file="body.bin"))


def verdict_of(judged: JudgedExchange, contract: Contract) -> ScenarioVerdict:
    main = _main(judged)
    operation = contract.operations.get(judged.operation or "")
    spec = main.spec if main is not None else (operation.spec if operation else "spec 4.1")
    facts = ScenarioFacts(
        id=entry_id(judged),
        operation=judged.operation or "none",
        rule=main.rule if main is not None else CLEAN_RULE,
        spec=spec,
        level="should" if main is not None and main.level == "should" else "must",
        kind=KIND,
        title=_title(judged),
    )
    if judged.skipped:
        return ScenarioVerdict(facts, NOT_APPLICABLE, judged.skipped, elapsed(judged))
    findings = tuple(
        Finding(f.level, _finding_title(f), f.spec, f.basis, f.quotes) for f in judged.findings
    )
    if main is None:
        return ScenarioVerdict(facts, PASSED, "", elapsed(judged))
    verdict = FAILED if judged.must else FAILED_SHOULD
    reason = scrub(f"{main.side} {main.level}: {main.title}")
    return ScenarioVerdict(facts, verdict, reason, elapsed(judged), findings, 0, _reproduce(judged))


def elapsed(judged: JudgedExchange) -> float:
    return judged.exchange.elapsed


def summary(judged: Sequence[JudgedExchange]) -> dict[str, Any]:
    """Counts by side and level, and every finding in one list (compliance.json's ``traffic``)."""
    counts = {side: {"must": 0, "should": 0} for side in SIDES}
    listed: list[dict[str, Any]] = []
    for item in judged:
        for finding in item.findings:
            counts[finding.side][finding.level] += 1
            listed.append(
                {
                    "exchange": entry_id(item),
                    **{
                        k: scrub(v) if isinstance(v, str) else v
                        for k, v in finding.as_dict().items()
                    },
                }
            )
    return {
        "exchanges": len(judged),
        "judged": sum(1 for item in judged if not item.skipped),
        "not_judged": sum(1 for item in judged if item.skipped),
        "findings_by_side": counts,
        "findings": listed,
    }


def write_reports(
    directory: Path, judged: Sequence[JudgedExchange], run: TrafficRun, contract: Contract
) -> dict[str, Any]:
    """Write every report into ``directory``; returns the compliance document."""
    verdicts = [verdict_of(item, contract) for item in judged]
    # Rendered and masked once per exchange, for JUnit and Allure alike.
    evidence = [_evidence(item) for item in judged]
    info = RunInfo(
        started=run.started,
        finished=run.finished,
        seed=0,
        strict=False,
        target=run.target,
        profile=run.profile,
        selection={},
    )
    document = build_document(verdicts, info, contract)
    document["traffic"] = {"source": run.source, **summary(judged)}
    write_compliance(directory, document)
    _write_junit(directory / "junit.xml", judged, verdicts, evidence)
    results = directory / "allure-results"
    _write_allure(results, judged, verdicts, evidence)
    finish_results(results, document)
    return document


def _write_junit(
    path: Path,
    judged: Sequence[JudgedExchange],
    verdicts: Sequence[ScenarioVerdict],
    evidence: Sequence[str],
) -> None:
    failures = sum(1 for v in verdicts if v.verdict == FAILED)
    skipped = sum(1 for v in verdicts if v.verdict == NOT_APPLICABLE)
    root = ET.Element("testsuites")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=KIND,
        tests=str(len(verdicts)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
    )
    should: list[ShouldFinding] = []
    for item, verdict, text in zip(judged, verdicts, evidence, strict=True):
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"{KIND}.{verdict.facts.operation}",
            name=verdict.facts.id,
            time=f"{verdict.duration:.3f}",
        )
        if verdict.verdict == NOT_APPLICABLE:
            ET.SubElement(case, "skipped", message=f"not applicable: {verdict.reason}")
            continue
        if verdict.verdict == FAILED:
            failure = ET.SubElement(case, "failure", message=verdict.reason)
            failure.text = text
        should_findings = [f for f in item.findings if f.level == "should"]
        if should_findings:
            should.append(ShouldFinding(verdict.facts.id, _finding_title(should_findings[0]), text))
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    add_should_suite(path, should)


def _evidence(judged: JudgedExchange) -> str:
    """The findings, then the exchange and its replay command: one text, masked."""
    lines = [
        f"[{f.side} {f.level}] {f.rule} at {f.place or '-'}: {f.title} ({_finding_spec(f)})"
        + (f"\n        should, because {f.basis}" if f.basis else "")
        for f in judged.findings
    ]
    lines += ["", "Exchange:", judged.exchange.render(), "", "Reproduce with:", _reproduce(judged)]
    return scrub("\n".join(lines))


def _write_allure(
    results: Path,
    judged: Sequence[JudgedExchange],
    verdicts: Sequence[ScenarioVerdict],
    evidence: Sequence[str],
) -> None:
    # allure-python-commons writes result files without pytest (a dependency already).
    from allure_commons.logger import AllureFileLogger
    from allure_commons.model2 import Attachment, Label, StatusDetails, TestResult

    writer = AllureFileLogger(str(results))
    status_of = {FAILED: "failed", FAILED_SHOULD: "passed", PASSED: "passed"}
    for item, verdict, text in zip(judged, verdicts, evidence, strict=True):
        facts = verdict.facts
        uuid = hashlib.sha256(f"{facts.id}{item.exchange.url}".encode()).hexdigest()[:32]
        # One attachment per exchange (findings, the exchange, its replay): every file costs.
        source = f"{uuid}-attachment.txt"
        writer.report_attached_data(body=text, file_name=source)
        attachments = [Attachment(name=facts.title, source=source, type="text/plain")]
        labels = [
            Label(name="epic", value=facts.spec),
            Label(name="feature", value=facts.operation),
            Label(name="story", value=facts.rule),
            Label(name="severity", value="critical" if facts.level == "must" else "normal"),
            Label(name="tag", value=KIND),
            *(Label(name="tag", value=f"{side}-findings") for side in item.sides()),
        ]
        if verdict.verdict == FAILED_SHOULD:
            labels.append(Label(name="tag", value="should-findings"))
        status = status_of.get(verdict.verdict, "skipped")
        message = verdict.reason
        if status == "skipped":
            message = f"not applicable: {verdict.reason}"
        writer.report_result(
            TestResult(
                uuid=uuid,
                historyId=hashlib.md5(facts.id.encode()).hexdigest(),
                fullName=f"{KIND}.{facts.id}",
                name=facts.title,
                status=status,
                statusDetails=StatusDetails(message=message) if message else None,
                stage="finished",
                labels=labels,
                attachments=attachments,
            )
        )
