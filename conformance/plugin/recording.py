"""Keeping the run's exchanges, masked as the reports are: one file per scenario for the sealed
record (``--conformance-evidence``, which ``conformance run --seal`` gives;
:mod:`conformance.report.exchange_record`), and the event stream and HAR of the run's traffic
(``--conformance-traffic``, ``conformance run --traffic``; :mod:`conformance.report.traffic_files`).
Each process writes what the scenarios it ran exchanged, so no exchange crosses to the xdist
controller; the controller adds the verdicts as it learns them and writes the HAR at the end."""

from __future__ import annotations

import json
from collections.abc import Generator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.plugin.collection import FACTS
from conformance.report.compliance import COMPLIANCE_JSON
from conformance.report.compliance_page import overall_verdict
from conformance.report.exchange_record import (
    EXCHANGES_DIR,
    RECORDING_DIR,
    exchange_record,
    write_exchanges,
)
from conformance.report.traffic_files import EVENTS, HAR, append_event, write_har
from conformance.report.verdicts import ScenarioFacts, read_verdict

if TYPE_CHECKING:
    from conformance.exchange import Exchange

__all__ = ["EventStream", "ExchangeRecorder", "events_file", "exchanges_folder"]


def exchanges_folder(config: pytest.Config) -> Path | None:
    """Where this run keeps its exchanges for the sealed record, or None when it keeps none."""
    if not config.getoption("conformance_evidence", False):
        return None
    return Path(config.getoption("reports")).resolve() / RECORDING_DIR / EXCHANGES_DIR


def events_file(config: pytest.Config) -> Path | None:
    """The run's event stream, or None when it writes none."""
    if not config.getoption("conformance_traffic", False):
        return None
    return Path(config.getoption("reports")).resolve() / EVENTS


class ExchangeRecorder:
    """Writes each scenario's exchanges after its call phase (before the next test clears them)."""

    def __init__(self, folder: Path | None, events: Path | None) -> None:
        self.folder = folder
        self.events = events

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report: pytest.TestReport = yield
        facts = item.stash.get(FACTS, None)
        # the call phase; a setup that failed or skipped has none (its exchanges then)
        after_setup = report.when == "setup" and not report.passed
        if facts is None or not (report.when == "call" or after_setup):
            return report
        context = getattr(item, "funcargs", {}).get("conformance_context")
        exchanges: Sequence[Exchange] = getattr(context, "exchanges", ())
        if self.folder is not None:
            write_exchanges(self.folder, facts.id, exchanges)
        if self.events is not None:
            now = datetime.now(UTC)
            for position, exchange in enumerate(exchanges):
                record = exchange_record(exchange, now)
                append_event(
                    self.events, "exchange", scenario=facts.id, position=position, exchange=record
                )
        return report


class EventStream:
    """The reporting process's part of the event stream: the run's start, each verdict as it
    comes, the end with the verdict line; then the HAR."""

    def __init__(self, events: Path, seed: int) -> None:
        self.events = events
        events.parent.mkdir(parents=True, exist_ok=True)
        events.write_text("", encoding="utf-8")  # a new run, a new stream
        append_event(events, "run", seed=seed)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        facts = ScenarioFacts.from_properties(report.user_properties)
        said = read_verdict(report.user_properties)
        if facts is None or said is None:
            return
        verdict, reason = said
        append_event(
            self.events,
            "verdict",
            scenario=facts.id,
            verdict=verdict,
            reason=reason,
            level=facts.level,
            operation=facts.operation,
        )

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        compliance = Path(session.config.getoption("reports")).resolve() / COMPLIANCE_JSON
        if compliance.is_file():
            document = json.loads(compliance.read_text(encoding="utf-8"))
            append_event(self.events, "end", verdict=overall_verdict(document))
        write_har(self.events, self.events.with_name(HAR))
