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

The two sides are judged apart: each has its own verdict (``compliance.json``'s ``traffic.sides``,
the page's verdict lines, the terminal), so a TPP's bad Digest never makes the bank NOT
CONFORMANT; the findings of one side that share a rule and a place are one cause
(:func:`traffic_cause`), listed under that side with the exchanges it covers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from conformance.contract import Contract
from conformance.contract.requirements import quote_text
from conformance.problems import Problem, cause_id
from conformance.report.allure_files import finish_results
from conformance.report.causes import specific_first
from conformance.report.compliance import RunInfo, build_document, write_compliance
from conformance.report.compliance_page import side_causes, traffic_verdict_lines
from conformance.report.junit import ShouldCase, add_should_suite
from conformance.report.masking import scrub
from conformance.report.release import suite_commit
from conformance.report.replays import VALUES_FILE, record_values
from conformance.report.verdicts import (
    FAILED,
    FAILED_SHOULD,
    NOT_APPLICABLE,
    PASSED,
    Finding,
    ScenarioFacts,
    ScenarioVerdict,
    cause_lines,
    cause_properties,
)
from conformance.traffic.model import BANK, SIDES, TPP, JudgedExchange

__all__ = [
    "SIDE_NAMES",
    "TrafficRun",
    "entry_id",
    "side_verdict",
    "summary",
    "terminal_lines",
    "traffic_cause",
    "write_reports",
]

#: How the reports name each side and what of it was judged.
SIDE_NAMES = {TPP: ("TPP", "its requests"), BANK: ("Bank", "its answers")}

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


def _main(judged: JudgedExchange) -> Finding | None:
    return (judged.must or judged.should or (None,))[0]


def _finding_title(finding: Finding) -> str:
    place = f" [{finding.place}]" if finding.place else ""
    return scrub(f"{finding.side}: {finding.title}{place}")


def _finding_spec(finding: Finding) -> str:
    """The spec part, and the quoted sentences of a must (each names its own spec part)."""
    quote = quote_text(specific_first(finding.quotes, finding.place))
    return f"{finding.spec}; the spec says: {quote}" if quote else finding.spec


def _title(judged: JudgedExchange) -> str:
    exchange = judged.exchange
    return scrub(f"{exchange.method} {exchange.path} → {exchange.status}")


def _reproduce(judged: JudgedExchange, reports: Path | None = None) -> str:
    """The exchange's ``conformance call`` line, masked; where masking hid a value and
    ``reports`` is given, the real ones go into its owner-only values file (as a run's do,
    ``report.replays``) and the line names it with the entry: ``--values FILE --entry ID``."""
    if judged.cut and "request body" in judged.cut:
        return "(not given: the request body was cut, so a replay would not send what was sent)"
    try:
        raw = judged.exchange.reproduce_command()
    except ValueError:
        raw = judged.exchange.reproduce_command(data_file="body.bin")
    shown = scrub(raw)
    if reports is None or not record_values(reports, entry_id(judged), raw, shown):
        return shown
    values = reports / VALUES_FILE
    with contextlib.suppress(ValueError):  # relative to the working directory below it
        values = values.resolve().relative_to(Path.cwd())
    return f"{shown} --values {shlex.quote(str(values))} --entry {entry_id(judged)}"


def traffic_cause(finding: Finding) -> str:
    """The cause of a finding: its side, its rule and its place (array indices as ``[*]``), the
    same in every exchange; a should finding is the same cause as a must one of that break."""
    problem = Problem(f"{finding.side} {finding.rule}", finding.place, "", finding.title)
    return cause_id(problem, "")


def verdict_of(
    judged: JudgedExchange, contract: Contract, text: str = "", reproduce: str | None = None
) -> ScenarioVerdict:
    """The report entry of one judged exchange; ``reproduce``: its replay line, as
    :func:`write_reports` made it once (else made here, without a values file)."""
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
        dataclasses.replace(
            f,
            title=_finding_title(f),
            quotes=specific_first(f.quotes, f.place),
            cause=traffic_cause(f),
        )
        for f in judged.findings
    )
    if main is None:
        return ScenarioVerdict(facts, PASSED, "", elapsed(judged))
    verdict = FAILED if judged.must else FAILED_SHOULD
    reason = scrub(f"{main.side} {main.level}: {main.title}")
    return ScenarioVerdict(
        facts,
        verdict,
        reason,
        elapsed(judged),
        findings,
        0,
        _reproduce(judged) if reproduce is None else reproduce,
        text=text,
    )


def elapsed(judged: JudgedExchange) -> float:
    return judged.exchange.elapsed


def summary(judged: Sequence[JudgedExchange]) -> dict[str, Any]:
    """Counts by side and level, each side's verdict, and every finding in one list with its
    cause (compliance.json's ``traffic``)."""
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
                    "cause": traffic_cause(finding),
                }
            )
    return {
        "exchanges": len(judged),
        "judged": sum(1 for item in judged if not item.skipped),
        "not_judged": sum(1 for item in judged if item.skipped),
        "findings_by_side": counts,
        "sides": {side: side_verdict(side, judged) for side in SIDES},
        "findings": listed,
    }


def side_verdict(side: str, judged: Sequence[JudgedExchange]) -> dict[str, Any]:
    """One side's verdict on the traffic: CONFORMANT at must level when none of its requests
    (TPP) or answers (bank) broke a must rule, with the counts behind it and the line that says
    so; NOT JUDGED when no exchange was judged. The other side's findings never count here."""
    name, what = SIDE_NAMES[side]
    judged_count = sum(1 for item in judged if not item.skipped)
    mine = [[f for f in item.findings if f.side == side] for item in judged]
    must = sum(1 for found in mine for f in found if f.level == "must")
    should = sum(1 for found in mine for f in found if f.level == "should")
    with_must = sum(1 for found in mine if any(f.level == "must" for f in found))
    noun = what.split()[-1]  # requests, answers
    if not judged_count:
        word, head = "NOT JUDGED", f"no exchange judged, so none of {what}"
    elif must:
        word = "NOT CONFORMANT"
        head = (
            f"{must} must finding{'s' if must != 1 else ''} in {with_must} of the "
            f"{judged_count} {noun} judged"
        )
    else:
        word, head = "CONFORMANT", f"no must finding in the {judged_count} {noun} judged"
    level = "" if word == "NOT JUDGED" else " at must level"
    line = (
        f"{name} ({what}): {word}{level}: {head}; {should} should "
        f"finding{'s' if should != 1 else ''}."
    )
    return {
        "side": side,
        "verdict": word,
        "must": must,
        "should": should,
        "exchanges_with_must": with_must,
        "judged": judged_count,
        "line": line,
    }


def terminal_lines(document: Mapping[str, Any]) -> list[str]:
    """What the terminal shows at the end: each side's verdict, then each side's causes, one
    line each (the reports have the exchanges and the spec)."""
    lines = traffic_verdict_lines(document)
    for side in SIDES:
        for level in ("must", "should"):
            count, causes = side_causes(document, side, level)
            if not count:
                continue
            lines.append(count)
            lines += [
                f"  CAUSE {number} ({cause['id']}): {cause['title']} ({cause['count']} "
                f"exchange{'s' if cause['count'] != 1 else ''}: {', '.join(cause['scenarios'][:3])}"
                + (", ..." if cause["count"] > 3 else "")
                + ")"
                for number, cause in enumerate(causes, start=1)
            ]
    return lines


def write_reports(
    directory: Path, judged: Sequence[JudgedExchange], run: TrafficRun, contract: Contract
) -> dict[str, Any]:
    """Write every report into ``directory``; returns the compliance document."""
    # the previous reports' hidden values go: these reports' replays name their own
    (directory / VALUES_FILE).unlink(missing_ok=True)
    # Rendered and masked once per exchange, for the causes, JUnit and Allure alike; the
    # replay of an exchange with findings keeps what masking hid in the values file.
    replays = [_reproduce(item, directory) if item.findings else "" for item in judged]
    evidence = [_evidence(item, replay) for item, replay in zip(judged, replays, strict=True)]
    verdicts = [
        verdict_of(item, contract, text if item.findings else "", replay)
        for item, text, replay in zip(judged, evidence, replays, strict=True)
    ]
    info = RunInfo(
        started=run.started,
        finished=run.finished,
        seed=0,
        strict=False,
        target=run.target,
        profile=run.profile,
        selection={},
        commit=suite_commit(),
        certifies=False,  # traffic is judged, never certified
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
    should: list[ShouldCase] = []
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
            properties = ET.SubElement(case, "properties")
            for name, value in cause_properties(verdict.findings):
                ET.SubElement(properties, "property", name=name, value=value)
            failure = ET.SubElement(case, "failure", message=verdict.reason)
            failure.text = text
        should_findings = [f for f in item.findings if f.level == "should"]
        if should_findings:
            should.append(ShouldCase(verdict.facts.id, _finding_title(should_findings[0]), text))
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    add_should_suite(path, should)


def _evidence(judged: JudgedExchange, replay: str) -> str:
    """The findings, then the exchange and its replay command: one text, masked."""
    lines = [
        f"[{f.side} {f.level}] {f.rule} at {f.place or '-'}: {f.title} ({_finding_spec(f)})"
        + (f"\n        should, because {f.reading}" if f.reading else "")
        for f in judged.findings
    ]
    lines += ["", "Exchange:", judged.exchange.render()]
    if judged.cut:
        lines += ["", f"(cut: {judged.cut})"]
    lines += ["", "Reproduce with:", replay or _reproduce(judged)]
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
        # the causes' ids, which Allure's categories match (``allure_files.categories``)
        message = verdict.reason + cause_lines(verdict.findings)
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
