"""Verdicts: each phase's outcome turned into the suite's verdict, and the terminal summary."""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from conformance.checks import ConformanceFailure
from conformance.plugin.collection import FACTS
from conformance.plugin.options import COLLECTOR, SEED, strict_run
from conformance.report.masking import scrub_identities
from conformance.report.verdicts import (
    ERROR,
    FAILED,
    FAILED_SHOULD,
    NOT_APPLICABLE,
    NOT_APPLICABLE_PREFIX,
    PASSED,
    SHOULD_PREFIX,
    SKIPPED,
    ReportedFailure,
    ScenarioFacts,
    final_verdict,
    first_line,
    verdict_properties,
)

if TYPE_CHECKING:
    pass


#: The ``pytest_report_teststatus`` category of a tolerated should-level failure.
SHOULD_CATEGORY = "should-failed"


_PHASES = pytest.StashKey[list[tuple[str, str]]]()


#: Exceptions that are a verdict on the target (a failed requirement), not a crash of the suite.
_VERDICTS = (ReportedFailure, ConformanceFailure)


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def _failure_text(failure: BaseException) -> str:
    """The failure message a bank engineer reads, with the notes the test added (reproduce)."""
    parts = [str(failure), *getattr(failure, "__notes__", ())]
    return scrub_identities("\n\n".join(part for part in parts if part))


def _phase_verdict(
    item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport, facts: ScenarioFacts
) -> tuple[str, str]:
    if report.passed:
        return PASSED, ""
    if report.skipped:
        reason = _skip_reason(report)
        if reason.startswith(NOT_APPLICABLE_PREFIX):
            return NOT_APPLICABLE, reason.removeprefix(NOT_APPLICABLE_PREFIX)
        return SKIPPED, reason
    excinfo = call.excinfo
    if report.when == "call" and excinfo is not None and excinfo.errisinstance(_VERDICTS):
        text = _failure_text(excinfo.value)
        report.longrepr = text  # the message is the report; the traceback is the suite's business
        reason = first_line(text)
        if facts.level == "should" and not strict_run(item.config):
            report.outcome = "skipped"
            report.wasxfail = SHOULD_PREFIX + reason
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
    if report.when == "teardown":
        report.user_properties = [
            *report.user_properties,
            *verdict_properties(*final_verdict(phases)),
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
    if report.when == "call" and str(getattr(report, "wasxfail", "")).startswith(SHOULD_PREFIX):
        return SHOULD_CATEGORY, "f", ("FAILED (should)", {"yellow": True})
    return None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    collector = config.stash.get(COLLECTOR, None)
    if collector is None or not collector.verdicts:
        return
    should = terminalreporter.stats.get(SHOULD_CATEGORY, [])
    if should:
        terminalreporter.section("should-level failures", sep="-", yellow=True)
        for report in should:
            reason = str(report.wasxfail).removeprefix(SHOULD_PREFIX)
            terminalreporter.line(f"FAILED (should) {report.nodeid} - {reason}")
        if not strict_run(config):
            terminalreporter.line(
                "(reported, not counted: --conformance-strict, or conformance run --strict, "
                "makes them fail the run)"
            )
    seed = config.stash[SEED]
    terminalreporter.write_sep("-", "conformance", bold=True)
    terminalreporter.line(f"seed {seed} (reproduce with --seed {seed})")
    if collector.written:
        json_path, md_path = collector.written
        terminalreporter.line(f"compliance matrix: {md_path} and {json_path}")
