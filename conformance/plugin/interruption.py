"""An interrupted run: what stopped it, so that its verdict says INTERRUPTED and never a
conformance verdict built on the scenarios that happened to run.

Three things stop a run early. Ctrl-C (SIGINT) raises ``KeyboardInterrupt``; SIGTERM (a CI
job's time-out) raises :class:`~conformance.errors.RunInterrupted` the same way, in every pytest
process of the suite (the controller and each xdist worker), whose handlers note the signal at
once, wherever the interrupt then lands; and a process whose bundled
reference server is gone (the one ``conformance run`` started, named by
``--conformance-server-pid``, or the one the process started itself) stops after the test it is
running (``session.shouldstop``), instead of running the rest into refused connections. Under
pytest-xdist a stopped worker tells the controller why (its ``workeroutput``), and the
controller ends the run with that reason.

The controller hands the reason to the compliance collector (:meth:`ComplianceCollector.interrupt`),
which also counts a run whose scenarios did not all reach a verdict as interrupted; the reports
say INTERRUPTED (``conformance.report.compliance_page``) and the exit code is
:data:`~conformance.errors.INTERRUPTED_EXIT` (``conformance.plugin.reporting``).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Generator
from types import FrameType
from typing import Any

import pytest

from conformance.bankside.bundled import ServerWatch, process_gone
from conformance.errors import RunInterrupted
from conformance.plugin.options import COLLECTOR, is_worker

__all__ = ["CTRL_C", "WATCHES", "Interruption"]

#: The bundled servers this process started itself (the plugin's fixture, without ``conformance
#: run``): a process stops when one of them is gone.
WATCHES = pytest.StashKey[list[ServerWatch]]()
#: What the verdict names when Ctrl-C stopped the run.
CTRL_C = "Ctrl-C or SIGINT"
#: The ``workeroutput`` key a worker tells the controller why it stopped under.
_WORKER_REASON = "conformance_interrupted"


class Interruption:
    """The plugin object (registered by ``pytest_configure`` in a run of the suite)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        plugins = config.pluginmanager.get_plugins()
        config.stash[WATCHES] = [plugin for plugin in plugins if isinstance(plugin, ServerWatch)]
        self._server_pid: int | None = config.getoption("conformance_server_pid", None)
        #: Why workers stopped, as they said it (the controller's).
        self._workers: list[str] = []
        self._raised = False
        self._previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            self._previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, self._terminated)
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not ignored
                self._previous[signal.SIGINT] = signal.signal(signal.SIGINT, self._ctrl_c)

    def _terminated(self, signum: int, frame: FrameType | None) -> None:
        """SIGTERM: the run ends as on Ctrl-C, once (a second one while the reports are being
        written would cut them short)."""
        self._record("SIGTERM")
        if not self._raised:
            self._raised = True
            raise RunInterrupted("SIGTERM")

    def _ctrl_c(self, signum: int, frame: FrameType | None) -> None:
        """Ctrl-C: said at once (wherever the interrupt then lands), and raised as Python does."""
        self._record(CTRL_C)
        raise KeyboardInterrupt

    def _record(self, reason: str) -> None:
        """The reason goes to the controller's collector, or from a worker to the controller
        (the first one told is kept)."""
        if is_worker(self.config):
            getattr(self.config, "workeroutput", {}).setdefault(_WORKER_REASON, reason)
            return
        collector = self.config.stash.get(COLLECTOR, None)
        if collector is not None:
            collector.interrupt(reason)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)

    def server_gone(self) -> str | None:
        """Why the bundled server this process talks to is gone, or None while it runs."""
        for watch in self.config.stash.get(WATCHES, []):
            if watch.stopped:
                return watch.stopped
            if watch.pid is not None and not watch.ending.is_set() and process_gone(watch.pid):
                # ended, and its watch not yet told (a loaded machine schedules its thread
                # late): a moment for the watch to name the exit code, then stop all the same
                for _ in range(100):
                    if watch.stopped:
                        return watch.stopped
                    time.sleep(0.01)
                return f"the bundled reference server (process {watch.pid}) stopped during the run"
        if self._server_pid is not None and process_gone(self._server_pid):
            return (
                f"the bundled reference server (process {self._server_pid}) stopped during the run"
            )
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        """After each test: a process whose server is gone runs no more (one test in flight
        meets the refused connection, not the thousand after it)."""
        result = yield
        reason = self.server_gone()
        if reason is not None and not item.session.shouldstop:
            item.session.shouldstop = reason
        return result

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Ctrl-C, SIGTERM, or a stop a process asked for (``shouldstop``): the reason goes to
        the controller's collector, or from a worker to the controller."""
        if excinfo.errisinstance(KeyboardInterrupt):  # not pytest.exit: its own line and code
            self._record(self._reason(excinfo.value))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object | None) -> None:
        """A worker ended (xdist, the controller): why it stopped, if it said; a worker that
        died is named, should a scenario it ran be left without a verdict."""
        said = getattr(node, "workeroutput", {}).get(_WORKER_REASON)
        if said:
            self._workers.append(str(said))
        collector = self.config.stash.get(COLLECTOR, None)
        if error is not None and collector is not None:
            collector.stop_notes.append(f"worker {node.gateway.id} stopped: {error}")

    def _reason(self, interrupt: BaseException) -> str:
        """What stopped the run, in the words of its verdict."""
        if type(interrupt) is KeyboardInterrupt:
            return CTRL_C
        if isinstance(interrupt, RunInterrupted):
            return str(interrupt)
        # a stop asked for (pytest's or xdist's Interrupted): the server's precise reason, a
        # worker's, or what was asked
        return self.server_gone() or next(iter(self._workers), "") or str(interrupt) or CTRL_C
