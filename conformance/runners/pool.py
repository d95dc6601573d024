"""Scenarios in flight within one worker: a thread pool that runs upcoming scenarios ahead of
their pytest items, so that a worker overlaps the waits of a distant target.

pytest runs one item at a time. The plugin (``conformance.plugin.prefetch``) hands the pool the
scenarios of the items coming next (:meth:`ScenarioPool.prefetch`); each runs in a pool thread
with a context of its own (:meth:`RunContext.for_scenario`: its own exchange list, and its own
record in the client, :meth:`TargetClient.recording`), and what it raised is kept. When pytest
reaches the item, :func:`run_in_turn` takes that run (waiting for it if it is still going) and
raises what it raised, so each item reports its own outcome, Allure and JUnit as before.

What the threads share is made safe for them: the client (httpx's client is thread-safe, the
record is per scenario), the data factory's cache of shared set-up (a lock per key: two threads
never create the same customer), the masking state (its lock), the pacer (its lock), the
findings being collected (a context variable) and the seeded generators (one Faker per thread,
reseeded per use: a scenario's data depends on its seed only).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext, Runner
    from conformance.scenario import Scenario

__all__ = ["ScenarioPool", "ScenarioRun", "run_in_turn"]


@dataclass(frozen=True)
class ScenarioRun:
    """One scenario's run: its exchanges, and what it raised (None: it passed)."""

    exchanges: tuple[Exchange, ...]
    error: BaseException | None


def _run_own(scenario: Scenario, ctx: RunContext, runner: Runner) -> ScenarioRun:
    """``runner(scenario, ...)`` with a context and a client record of its own."""
    own = ctx.for_scenario()
    error: BaseException | None = None
    with own.client.recording():
        try:
            runner(scenario, own)
        except BaseException as raised:  # re-raised in the item's own call (run_in_turn)
            error = raised
    return ScenarioRun(tuple(own.exchanges), error)


class ScenarioPool:
    """``threads`` scenarios in flight; each run made ahead is kept until its item takes it."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="scenario")
        self._runs: dict[str, Future[ScenarioRun]] = {}
        self._lock = threading.Lock()

    def prefetch(self, scenarios: Iterable[Scenario], ctx: RunContext, runner: Runner) -> None:
        """Start the runs of ``scenarios`` not started yet, in their order."""
        with self._lock:
            for scenario in scenarios:
                if scenario.id not in self._runs:
                    context = contextvars.copy_context()
                    self._runs[scenario.id] = self._executor.submit(
                        context.run, _run_own, scenario, ctx, runner
                    )

    def started(self, scenario: Scenario) -> bool:
        with self._lock:
            return scenario.id in self._runs

    def take(self, scenario: Scenario, ctx: RunContext, runner: Runner) -> ScenarioRun:
        """The scenario's run: the one started ahead (waited for), else made now in this
        thread."""
        with self._lock:
            future = self._runs.pop(scenario.id, None)
        if future is None:
            return _run_own(scenario, ctx, runner)
        return future.result()

    def close(self) -> None:
        """Wait for the runs in flight; drop those not started (the session ended early)."""
        self._executor.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            self._runs.clear()


def run_in_turn(scenario: Scenario, ctx: RunContext, runner: Runner) -> None:
    """Run ``scenario`` for its pytest item: at once without a pool; with one, take the run the
    pool made (or make it now), put its exchanges in ``ctx.exchanges`` and raise what it
    raised."""
    pool: ScenarioPool | None = getattr(ctx, "pool", None)
    if pool is None:
        runner(scenario, ctx)
        return
    done = pool.take(scenario, ctx, runner)
    ctx.exchanges.extend(done.exchanges)
    if done.error is not None:
        raise done.error
