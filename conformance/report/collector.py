"""The pytest plugin object that gathers a run's verdicts in the reporting process and writes the
compliance matrix at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conformance.contract import load_contract
from conformance.report.allure_files import finish_results
from conformance.report.baseline import Baseline, judge_baseline
from conformance.report.compliance import RunInfo, build_document, write_compliance
from conformance.report.compliance_page import SMOKE_SELECTION
from conformance.report.release import check_installed, suite_commit
from conformance.report.replays import RERUN, Rerun
from conformance.report.timings import read_timings
from conformance.report.verdicts import (
    ERROR,
    ScenarioFacts,
    ScenarioVerdict,
    read_findings,
    read_not_judged,
    read_reproduce,
    read_retries,
    read_verdict,
    with_reproduce,
)

__all__ = ["ComplianceCollector"]

#: ``(target, profile summary)`` of the run, asked for when the matrix is written.
TargetDescription = Callable[[], tuple[str, Mapping[str, Any]]]


class ComplianceCollector:
    """Keeps one verdict per scenario test; writes ``compliance.json``, ``.md`` and ``.html`` at
    session end."""

    def __init__(
        self, *, reports: Path, seed: int, strict: bool, describe_target: TargetDescription
    ) -> None:
        self.reports = reports
        self.seed = seed
        self.strict = strict
        self.describe_target = describe_target
        self.started = datetime.now(UTC)
        self.verdicts: dict[str, ScenarioVerdict] = {}
        self.durations: dict[str, float] = {}
        """Seconds so far of the tests whose teardown report has not come yet."""
        self.texts: dict[str, str] = {}
        """The failure message of a test's call phase, until its teardown report comes."""
        self.written: tuple[Path, Path] | None = None
        #: The command that starts a server like the bundled run's, for its replays (or None).
        self.replay_server: str | None = None
        #: How the run was started: a flow's replay runs it again (``-- -k ID``).
        self.rerun: Rerun | None = None
        #: Whether the run could certify a bank (not the bundled server, not a played profile).
        self.certifies = True
        #: The tests whose teardown report came (every test, a scenario or not).
        self.finished: set[str] = set()
        #: What stopped the run early (Ctrl-C, SIGTERM, the bundled server), as said by
        #: :meth:`interrupt`; then, at session end, also a run some of whose tests never ended.
        self.interrupted: str | None = None
        #: What else may have left a test without its end (a worker that died).
        self.stop_notes: list[str] = []
        #: How many tests the run was to run (known at session end).
        self.to_run = 0
        #: The known failures the run is held against (``--conformance-baseline``), or None.
        self.baseline: Baseline | None = None
        #: Whether every process's Allure results are tidied as they are written
        #: (``allure_files.tidy_as_written``): then the run's end does not read them back.
        self.results_tidied = False

    def interrupt(self, reason: str) -> None:
        """The run was stopped early for ``reason`` (the first one told is kept)."""
        if self.interrupted is None:
            self.interrupted = reason

    @pytest.hookimpl(tryfirst=True)  # a scenario run again is named in full before JUnit reads it
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # The phases' durations add up per test; the facts and the verdict come with the
        # teardown report only (the plugin sends the other phases' reports without them).
        duration = self.durations.get(report.nodeid, 0.0) + report.duration
        if report.when == "teardown":
            self.finished.add(report.nodeid)
        if report.when != "teardown":
            self.durations[report.nodeid] = duration
            text = _failure_text(report)
            if text:
                self.texts[report.nodeid] = text
            return
        self.durations.pop(report.nodeid, None)
        facts = ScenarioFacts.from_properties(report.user_properties)
        if facts is None:
            return
        reported = read_reproduce(report.user_properties)
        reproduce = self._replay(facts.id, reported)
        if reproduce != reported:
            report.user_properties = with_reproduce(report.user_properties, reproduce)
        verdict, reason = read_verdict(report.user_properties) or (ERROR, "no verdict reported")
        findings = read_findings(report.user_properties)
        retries = read_retries(report.user_properties)
        self.verdicts[report.nodeid] = ScenarioVerdict(
            facts,
            verdict,
            reason,
            duration,
            findings,
            retries,
            reproduce,
            read_timings(report.user_properties),
            self.texts.pop(report.nodeid, ""),
            read_not_judged(report.user_properties),
        )

    def _replay(self, scenario_id: str, reproduce: str) -> str:
        """The replay a worker reported, with a scenario to run again named in full."""
        if reproduce != RERUN:
            return reproduce
        return self.rerun.line(scenario_id) if self.rerun is not None else ""

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self._count_unfinished(session)
        if not self.verdicts:
            return
        target, profile = self.describe_target()
        run = RunInfo(
            started=self.started,
            finished=datetime.now(UTC),
            seed=self.seed,
            strict=self.strict,
            target=target,
            profile=profile,
            selection=run_selection(session),
            commit=suite_commit(),
            replay_server=self.replay_server,
            to_run=self.to_run,
            interrupted=self.interrupted,
            certifies=self.certifies,
            release=check_installed() if self.certifies else None,
        )
        document = build_document(self.verdicts.values(), run, load_contract())
        if self.baseline is not None:
            document["baseline"] = judge_baseline(
                self.baseline,
                document["causes"],
                document["scenarios"],
                strict=self.strict,
                today=self.started.date(),
            )
        self.written = write_compliance(self.reports, document)
        allure_results = session.config.getoption("allure_report_dir", None)
        if allure_results:
            finish_results(Path(allure_results), document, tidy_results=not self.results_tidied)

    def _count_unfinished(self, session: pytest.Session) -> None:
        """How many scenarios the run was to run; a run some of whose tests never ended is an
        interrupted one whatever stopped it (``-x``, a worker that died), never complete. Only a
        run of scenarios counts (not ``--collect-only``, not the project's own tests)."""
        if session.config.option.collectonly or not (self.verdicts or self.interrupted):
            return
        unfinished = max(0, session.testscollected - len(self.finished))
        self.to_run = len(self.verdicts) + unfinished
        if unfinished and self.interrupted is None:
            stop = session.shouldstop or session.shouldfail
            fallback = "the run ended before every scenario had a verdict"
            self.interrupted = (
                stop if isinstance(stop, str) and stop else next(iter(self.stop_notes), fallback)
            )


def _failure_text(report: pytest.TestReport) -> str:
    """The message of a failed call phase, or of one that passed with should findings (the
    plugin keeps that on the report); "" otherwise."""
    if report.when != "call":
        return ""
    if report.failed:
        return report.longreprtext
    return str(getattr(report, "should_text", "") or "")


def run_selection(session: pytest.Session) -> dict[str, Any]:
    """What narrowed the run: ``-k``, ``-m`` and node ids given (empty: every scenario ran)."""
    config = session.config
    selection: dict[str, Any] = {}
    if config.getoption("conformance_smoke", False):
        selection["smoke"] = SMOKE_SELECTION
    keyword = config.getoption("keyword", "") or ""
    marks = config.getoption("markexpr", "") or ""
    if keyword:
        selection["-k"] = keyword
    if marks:
        selection["-m"] = marks
    listed = config.getoption("conformance_scenarios", None)
    if listed:
        selection["scenarios from"] = listed
    deselected = config.getoption("deselect", None)
    if deselected:
        selection["--deselect"] = list(deselected)
    named = [arg for arg in config.args if "::" in arg]
    if named:
        selection["node ids"] = named
    return selection
