"""Keeping every exchange of a scenario, masked, for the sealed record (``--conformance-evidence``,
which ``conformance run --seal`` gives): each process writes the files of the scenarios it ran
(:mod:`conformance.report.exchange_record`), so no exchange crosses to the xdist controller."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.plugin.collection import FACTS
from conformance.report.exchange_record import EVIDENCE_DIR, EXCHANGES_DIR, write_exchanges

if TYPE_CHECKING:
    from conformance.exchange import Exchange

__all__ = ["ExchangeRecorder", "exchanges_folder"]


def exchanges_folder(config: pytest.Config) -> Path | None:
    """Where this run keeps its exchanges, or None when it keeps none."""
    if not config.getoption("conformance_evidence", False):
        return None
    return Path(config.getoption("reports")).resolve() / EVIDENCE_DIR / EXCHANGES_DIR


class ExchangeRecorder:
    """Writes each scenario's exchanges after its call phase (before the next test clears them)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

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
        write_exchanges(self.folder, facts.id, exchanges)
        return report
