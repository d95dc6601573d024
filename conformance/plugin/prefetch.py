"""Runs made ahead: with ``--conformance-threads N`` above 1, each process keeps N scenarios in
flight by handing its pool (:mod:`conformance.runners.pool`) the scenarios of the items it will
run next, in their order.

pytest runs one item at a time and each item still reports its own outcome (the test takes the
run the pool made, :func:`conformance.runners.pool.run_in_turn`). What comes next is what this
process will run for certain: under pytest-xdist the tests the controller has already sent to
this worker (its queue; the ``worksteal`` distribution, which may take queued tests back, runs
one at a time, ``scenario_threads``), in one process the session's items in order. Only scenario
items are run ahead, and only those the test would run (not unsupported, not waived, no skip or
xfail mark); the look-ahead stops at the first other item, so a plain test between scenarios
still runs after the ones before it and before the ones after it.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from conformance.plugin.collection import SCENARIO

__all__ = ["Prefetcher"]

#: Marks that make pytest skip an item or expect it to fail: such an item is not run ahead.
_OUTCOME_MARKS = ("skip", "skipif", "xfail")


class Prefetcher:
    """The plugin object (registered by ``pytest_configure`` when N is above 1)."""

    def __init__(self, threads: int) -> None:
        #: How many upcoming items are started ahead: twice the threads, so that a thread
        #: freed by one scenario finds the next one waiting.
        self.window = 2 * threads
        self._worker: Any = None
        self._order: dict[int, int] | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        scenario = item.stash.get(SCENARIO, None)
        funcargs = getattr(item, "funcargs", {})
        ctx, runner = funcargs.get("conformance_context"), funcargs.get("conformance_runner")
        pool = getattr(ctx, "pool", None)
        if scenario is None or pool is None or runner is None or not _runs(item, ctx):
            return
        chosen = [scenario]
        for upcoming in self._following(item):
            if upcoming.stash.get(SCENARIO, None) is None or upcoming.parent is not item.parent:
                break
            if _runs(upcoming, ctx):
                chosen.append(upcoming.stash[SCENARIO])
        pool.prefetch(chosen, ctx, runner)

    def _following(self, item: pytest.Item) -> list[pytest.Item]:
        """The items this process runs after ``item``, as far as the window reaches."""
        items = item.session.items
        worker = self._xdist_worker(item.config)
        if worker is not None:
            indices: list[object] = [getattr(worker, "nextitem_index", None)]
            queue = getattr(worker, "torun", None)
            if queue is not None and hasattr(queue, "lock"):
                with queue.lock() as pending:
                    indices += itertools.islice(pending, self.window - 1)
            return [items[i] for i in indices if isinstance(i, int) and 0 <= i < len(items)]
        if self._order is None:
            self._order = {id(each): index for index, each in enumerate(items)}
        index = self._order.get(id(item))
        return [] if index is None else items[index + 1 : index + self.window]

    def _xdist_worker(self, config: pytest.Config) -> Any:
        """pytest-xdist's worker plugin in a worker process (None elsewhere)."""
        if self._worker is None and hasattr(config, "workerinput"):
            for plugin in config.pluginmanager.get_plugins():
                if type(plugin).__name__ == "WorkerInteractor":
                    self._worker = plugin
                    break
        return self._worker


def _runs(item: pytest.Item, ctx: Any) -> bool:
    """Whether the test will run the item's scenario (the checks of the suite's test)."""
    if any(item.get_closest_marker(name) is not None for name in _OUTCOME_MARKS):
        return False
    runs = getattr(ctx, "runs", None)
    return bool(runs is not None and runs(item.stash[SCENARIO]))
