"""Reporting (schemathesis's ``pytest/reporting.py``): each phase's outcome turned into the
suite's verdict, and the terminal summary."""

from __future__ import annotations

import json
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance.checks import ConformanceFailure
from conformance.errors import INTERRUPTED_EXIT
from conformance.exchange import replay_program
from conformance.findings import ShouldFindings
from conformance.plugin.cleanup import cleanup_requested, note_creations, write_summary
from conformance.plugin.collection import FACTS
from conformance.plugin.options import COLLECTOR, SEED, brief_run, is_worker, strict_run
from conformance.plugin.replay import scenario_replay
from conformance.plugin.timings import exchange_timings
from conformance.report.baseline import baseline_lines
from conformance.report.causes import causes_summary, scenario_lines, terminal_lines
from conformance.report.compliance_page import (
    coverage_line,
    interrupted_head,
    not_judged_lines,
    overall_verdict,
    verdict_word,
)
from conformance.report.eligibility import eligibility_line
from conformance.report.junit import (
    ShouldCase,
    add_run_properties,
    add_should_suite,
    group_by_operation,
)
from conformance.report.masking import scrub
from conformance.report.timings import timings_properties
from conformance.report.verdicts import (
    BLOCKED,
    BLOCKED_PREFIX,
    ERROR,
    FAILED,
    FAILED_SHOULD,
    NOT_APPLICABLE,
    NOT_APPLICABLE_PREFIX,
    NOT_JUDGED_EXIT,
    PASSED,
    SKIPPED,
    WAIVED,
    WAIVED_PREFIX,
    Finding,
    NotJudged,
    ReportedFailure,
    ScenarioFacts,
    ScenarioVerdict,
    blocked_causes,
    cause_properties,
    final_verdict,
    first_line,
    graded,
    reproduce_properties,
    retries_properties,
    setup_failure,
    verdict_properties,
)

if TYPE_CHECKING:
    from conformance.report.collector import ComplianceCollector


#: The ``pytest_report_teststatus`` category of a tolerated should-level failure: pytest's
#: summary line counts it under these words, the reports' own.
SHOULD_CATEGORY = "with should findings"
#: A scenario pytest reports as skipped, counted in the summary line in the reports' words:
#: skip reason prefix → (category, letter, verbose word).
_SKIP_WORDS = (
    (NOT_APPLICABLE_PREFIX, ("not applicable", "n", "NOT APPLICABLE")),
    (BLOCKED_PREFIX, ("blocked", "B", "BLOCKED")),
    (WAIVED_PREFIX, ("waived", "w", "WAIVED")),
)


_PHASES = pytest.StashKey[list[tuple[str, str]]]()
#: How many throttled answers a test waited out, for its teardown report.
_RETRIES = pytest.StashKey[int]()
#: ``(operation, milliseconds)`` of each exchange a test made, for its teardown report.
_TIMINGS = pytest.StashKey[list[tuple[str, float]]]()
#: The findings of a test's failure (must and should), for its teardown report.
_FOUND = pytest.StashKey[list[Finding]]()
#: The replay command of a test's failure, for its teardown report.
_REPLAY = pytest.StashKey[str]()
#: The should findings the controller saw (by node id), for JUnit's "should" suite.
_SHOULD = pytest.StashKey[dict[str, ShouldCase]]()


#: Exceptions that are a verdict on the target (a failed requirement), not a crash of the suite.
_VERDICTS = (ReportedFailure, ConformanceFailure)


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def _failure_text(failure: BaseException) -> str:
    """The failure message a bank engineer reads, with the notes the test added (reproduce)."""
    parts = [str(failure), *getattr(failure, "__notes__", ())]
    return scrub("\n\n".join(part for part in parts if part))


def _throttled_answers(item: pytest.Item) -> int:
    """How many throttled answers (429/503 with Retry-After) the scenario's requests waited out."""
    context = getattr(item, "funcargs", {}).get("conformance_context")
    exchanges = getattr(context, "exchanges", ())
    return sum(len(exchange.retries) for exchange in exchanges)


def _timings(item: pytest.Item) -> list[tuple[str, float]]:
    return item.stash.get(_TIMINGS, [])


def _found(item: pytest.Item) -> list[Finding]:
    return item.stash.get(_FOUND, [])


def _is_should(failure: BaseException, facts: ScenarioFacts) -> bool:
    """Whether a failure is a should finding: only the scenario's chosen part failed, or the
    whole scenario rests on a reading of the spec (level should; a 5xx there too: no sentence
    of the spec forbids one). A must finding the bank promised (its profile) is never one."""
    if isinstance(failure, ShouldFindings) or getattr(failure, "tier", "must") == "should":
        return True
    if getattr(failure, "promised", False):
        return False
    return facts.level == "should"


def _phase_verdict(
    item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport, facts: ScenarioFacts
) -> tuple[str, str]:
    if report.passed:
        return PASSED, ""
    if report.skipped:
        reason = _skip_reason(report)
        if reason.startswith(NOT_APPLICABLE_PREFIX):
            return NOT_APPLICABLE, reason.removeprefix(NOT_APPLICABLE_PREFIX)
        if reason.startswith(BLOCKED_PREFIX):
            return BLOCKED, reason.removeprefix(BLOCKED_PREFIX)
        if reason.startswith(WAIVED_PREFIX):
            return WAIVED, reason.removeprefix(WAIVED_PREFIX)
        return SKIPPED, reason
    excinfo = call.excinfo
    if report.when == "call" and excinfo is not None and excinfo.errisinstance(_VERDICTS):
        text = _failure_text(excinfo.value)
        report.longrepr = text  # the message is the report; the traceback is the suite's business
        reason = first_line(text)
        failure = excinfo.value
        found = graded(getattr(failure, "findings", ()), facts.level, reading=facts.reading)
        item.stash[_FOUND] = list(found)
        context = getattr(item, "funcargs", {}).get("conformance_context")
        exchanges = getattr(context, "exchanges", ())
        item.stash[_REPLAY] = scenario_replay(item.config, facts, failure, exchanges)
        if _is_should(excinfo.value, facts) and not strict_run(item.config):
            # The must tier held: the test passes, with its should findings attached (the
            # terminal, the compliance matrix and JUnit's "should" suite list them).
            report.outcome = "passed"
            reading = str(getattr(failure, "reading", "") or facts.reading)
            vars(report).update(
                should_findings=reason,
                should_text=text,
                should_reading=reading,
                should_causes=[list(pair) for pair in cause_properties(found)],
                scenario=facts.id,
            )
            return FAILED_SHOULD, reason
        return FAILED, reason
    reason = (
        first_line(excinfo.exconly()) if excinfo is not None else first_line(report.longreprtext)
    )
    return ERROR, reason


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Turn a phase's outcome into a verdict; the teardown report carries the final one.

    ``trylast``: the innermost wrapper, so allure-pytest and the JUnit writer see the report
    after a should-level failure became an expected failure.
    """
    report: pytest.TestReport = yield
    facts = item.stash.get(FACTS, None)
    if facts is None:
        return report
    phases = item.stash.setdefault(_PHASES, [])
    phases.append(_phase_verdict(item, call, report, facts))
    if report.when == "call":
        item.stash[_RETRIES] = _throttled_answers(item)
        context = getattr(item, "funcargs", {}).get("conformance_context")
        item.stash[_TIMINGS] = exchange_timings(context)
        if cleanup_requested(item.config):
            note_creations(item.config, context)
    if report.when == "teardown":
        retries = item.stash.get(_RETRIES, 0)
        report.user_properties = [
            *report.user_properties,
            *verdict_properties(*final_verdict(phases), _found(item)),
            *cause_properties(_found(item)),
            *retries_properties(retries),
            *timings_properties(_timings(item)),
            *reproduce_properties(item.stash.get(_REPLAY, "")),
        ]
    else:
        # Only the teardown report is read for the facts (JUnit's <property>s, the compliance
        # collector); under xdist every report crosses to the controller, so the other two
        # travel without them.
        report.user_properties = []
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    summary = getattr(report, "should_findings", None)
    if report.when == "call" and summary:
        text = str(getattr(report, "should_text", summary))
        causes = tuple(
            (str(name), str(value)) for name, value in getattr(report, "should_causes", ())
        )
        config.stash.setdefault(_SHOULD, {})[report.nodeid] = ShouldCase(
            report.nodeid, summary, text, causes
        )
        return SHOULD_CATEGORY, "s", ("PASSED (should findings)", {"yellow": True})
    if report.skipped:
        reason = _skip_reason(report)
        for prefix, (category, letter, word) in _SKIP_WORDS:
            if reason.startswith(prefix):
                return category, letter, (word, {"yellow": True})
    return None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if cleanup_requested(config) and not is_worker(config):  # the workers' files are merged
        write_summary(config, terminalreporter)
    collector = config.stash.get(COLLECTOR, None)
    if collector is None or not collector.verdicts:
        return
    document: dict[str, Any] | None = None
    if collector.written:
        document = json.loads(collector.written[0].read_text(encoding="utf-8"))
    _write_findings(terminalreporter, config, document)
    _write_not_judged(terminalreporter, collector.verdicts.values())
    if brief_run(config):
        _write_failed_scenarios(terminalreporter, collector.verdicts.values())
    _write_run_end(terminalreporter, config, collector)


def _write_findings(
    terminalreporter: Any, config: pytest.Config, document: dict[str, Any] | None
) -> None:
    """The must failures and the should findings, one entry per cause (by scenario when the
    run wrote no compliance document)."""
    causes = list((document or {}).get("causes", ()))
    must = [cause for cause in causes if cause["level"] == "must"]
    if must:
        terminalreporter.section(causes_summary(must, "must"), sep="-", red=True)
        _write_causes(terminalreporter, must)
    should = [cause for cause in causes if cause["level"] == "should"]
    if should:
        terminalreporter.section(causes_summary(should, "should"), sep="-", yellow=True)
        _write_causes(terminalreporter, should)
    elif document is None and terminalreporter.stats.get(SHOULD_CATEGORY):
        terminalreporter.section("should findings", sep="-", yellow=True)
        for report in terminalreporter.stats[SHOULD_CATEGORY]:
            scenario = getattr(report, "scenario", report.nodeid)
            reading = getattr(report, "should_reading", "")
            terminalreporter.line(
                f"SHOULD {scenario} - {report.should_findings}"
                + (f" (our reading: {reading})" if reading else "")
            )
    if (should or terminalreporter.stats.get(SHOULD_CATEGORY)) and not strict_run(config):
        terminalreporter.line(
            "(should findings are reported, not counted: --conformance-strict, or conformance "
            "run --strict, makes them fail the run)"
        )


def _write_not_judged(terminalreporter: Any, verdicts: Iterable[ScenarioVerdict]) -> None:
    """The scenarios not judged: blocked by their set-up, not applicable, waived; each group by
    its cause or reason, with how many scenarios it covers."""
    listed = list(verdicts)
    blocked = blocked_causes(listed)
    if blocked:
        terminalreporter.section("set-up blocked (not judged)", sep="-", yellow=True)
        for cause, count in blocked:
            terminalreporter.line(f"BLOCKED {count} scenario(s): {cause}")
    not_applicable = blocked_causes(listed, NOT_APPLICABLE)
    if not_applicable:
        terminalreporter.section("not applicable (each with its reason)", sep="-")
        for reason, count in not_applicable:
            terminalreporter.line(f"NOT APPLICABLE {count} scenario(s): {reason}")
    waived = blocked_causes(listed, WAIVED)
    if waived:
        terminalreporter.section("waived by the profile (not run, not passed)", sep="-")
        for reason, count in waived:
            terminalreporter.line(f"WAIVED {count} scenario(s): {reason}")


def _write_failed_scenarios(terminalreporter: Any, verdicts: Iterable[ScenarioVerdict]) -> None:
    """``--conformance-brief``: after the causes, one line per failed scenario (pytest's failure
    blocks and its short summary are off: the reports keep each whole exchange)."""
    lines = scenario_lines(verdicts)
    if lines:
        terminalreporter.section("failed scenarios (one line each)", sep="-", red=True)
        for line in lines:
            terminalreporter.line(line)


def _write_run_end(
    terminalreporter: Any, config: pytest.Config, collector: ComplianceCollector
) -> None:
    """The seed, the server the replay commands need, and where the reports are."""
    terminalreporter.write_sep("-", "conformance", bold=True)
    seed = config.stash[SEED]
    terminalreporter.line(f"seed {seed} (reproduce with --seed {seed})")
    replays = any(verdict.reproduce for verdict in collector.verdicts.values())
    if replays and collector.replay_server:
        terminalreporter.line(
            "the replay commands name this run's server, stopped with it; start one like it "
            f"first (same port, trust and faults; empty): {collector.replay_server}"
        )
    if collector.written:
        _, md_path = collector.written
        reports = _here(md_path.parent)
        terminalreporter.line(
            f"reports in {reports}/ (compliance.md, compliance.html, compliance.json, "
            "junit.xml, allure-results/)"
        )
        terminalreporter.line(
            f"open them: {reports / 'compliance.html'} in a browser (a file, no server); "
            f"`{replay_program()} report --reports {reports}` renders the Allure report "
            f"as one file, {reports / 'allure-report' / 'index.html'}"
        )


def _here(path: Path) -> Path:
    """``path`` as the user typed it: relative to the working directory when it is below it."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """The overall verdict, the very last line of the run (after pytest's own count line): what
    a bank engineer reads first, found where a terminal leaves the eye."""
    collector = config.stash.get(COLLECTOR, None)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if collector is None or reporter is None:
        return
    if not collector.written:
        if collector.interrupted:  # stopped before any scenario had a verdict
            head = interrupted_head(0, collector.to_run, collector.interrupted)
            reporter.write_line(f"{head}.", bold=True)
        return
    json_path, _ = collector.written
    document = json.loads(json_path.read_text(encoding="utf-8"))
    # The rules not judged at this target stand right above the verdict line, which names their
    # number: the verdict stays the last line (compliance.md lists them right below it).
    for line in not_judged_lines(document):
        reporter.write_line(line)
    for line in baseline_lines(document):
        reporter.write_line(line)
    covered = coverage_line(document)
    if covered:
        reporter.write_line(covered)
    eligible = eligibility_line(document)
    if eligible:
        reporter.write_line(eligible)
    reporter.write_line(overall_verdict(document), bold=True)


def _write_causes(terminalreporter: Any, causes: list[dict[str, Any]]) -> None:
    for number, cause in enumerate(causes, start=1):
        for line in terminal_lines(cause, number):
            terminalreporter.line(line)


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    """After pytest wrote the JUnit file: add the "should" suite to it. A run with blocked
    scenarios (set-up the target refused) is incomplete: it does not exit 0."""
    result = yield
    if is_worker(session.config):
        return result
    xmlpath = getattr(session.config.option, "xmlpath", None)
    collector = session.config.stash.get(COLLECTOR, None)
    if xmlpath:
        _group_by_operation(Path(xmlpath))
        add_should_suite(Path(xmlpath), list(session.config.stash.get(_SHOULD, {}).values()))
        if collector is not None:
            add_run_properties(Path(xmlpath), _run_properties(collector))
    blocked = collector is not None and blocked_causes(collector.verdicts.values())
    if blocked and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if collector is not None and _not_judged(collector.verdicts.values()) is not None:
        session.exitstatus = NOT_JUDGED_EXIT
    if collector is not None and collector.interrupted:
        session.exitstatus = INTERRUPTED_EXIT
    elif collector is not None and collector.baseline is not None:
        session.exitstatus = _held_to_baseline(collector, session.exitstatus)
    return result


def _held_to_baseline(collector: ComplianceCollector, status: int) -> int:
    """With a baseline, the run fails on what it does not know only: failures all of whose
    causes are known pass; a new cause, a failure without one, or an expired entry fails."""
    if not collector.written:
        return status
    document = json.loads(collector.written[0].read_text(encoding="utf-8"))
    said = document.get("baseline")
    if said is None:
        return status
    if not said["holds"]:
        return pytest.ExitCode.TESTS_FAILED if status == pytest.ExitCode.OK else status
    totals = document["totals"]
    if status == pytest.ExitCode.TESTS_FAILED and not (totals["error"] or totals["blocked"]):
        return pytest.ExitCode.OK
    return status


def _run_properties(collector: ComplianceCollector) -> list[tuple[str, str]]:
    """The run's verdict in a word, whether it was complete, and what interrupted it, for
    JUnit (none when the run wrote no compliance document)."""
    if not collector.written:
        return []
    json_path, _ = collector.written
    document = json.loads(json_path.read_text(encoding="utf-8"))
    run = document["run"]
    pairs = [
        ("verdict", verdict_word(document)),
        ("verdict_line", overall_verdict(document)),
        ("complete", "true" if run.get("complete") else "false"),
    ]
    if document.get("baseline"):
        pairs.append(("baseline", "holds" if document["baseline"]["holds"] else "broken"))
    said = document.get("eligibility")
    if said is not None:
        pairs.append(("eligible", "true" if said["eligible"] else "false"))
        pairs += [("not_eligible_because", reason) for reason in said["reasons"]]
    if run.get("interrupted"):
        pairs.append(("interrupted", str(run["interrupted"])))
    return pairs


def _not_judged(verdicts: Iterable[ScenarioVerdict]) -> NotJudged | None:
    """The set-up failure that decides the run (:func:`setup_failure`), or None."""
    listed = list(verdicts)
    counts: dict[str, int] = {}
    for verdict in listed:
        key = verdict.verdict.replace(" (should)", "_should").replace(" ", "_")
        counts[key] = counts.get(key, 0) + 1
    return setup_failure(counts, blocked_causes(listed))


def _group_by_operation(xmlpath: Path) -> None:
    """JUnit's classname is the scenario's operation (CI dashboards group by it)."""
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.contract import load_contract

    names = {op_id: op.name for op_id, op in load_contract().operations.items()}
    group_by_operation(xmlpath, names)
