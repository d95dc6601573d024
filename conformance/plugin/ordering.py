"""The order the scenarios run in: the longest first, so that a worker's last minutes are not one
long flow while the other workers are idle.

pytest-xdist hands its workers the tests in collection order (the ``load`` distribution sends
each worker a first chunk of consecutive tests, then more to whichever worker runs low;
``worksteal`` splits the list and an idle worker takes from the tail of a busy one's share):
whatever comes last in the list is what a run waits for at its end. A flow is several requests
in a row (up to a dozen: a paging walk, an SCA redirect, a basket of payments and its reads),
each waiting for its answer, so it is by far the longest item against a distant bank; run
first, it overlaps with everything else.

Only the order changes: the test ids, the items and what each one runs are the same. The scenario
items of one test keep their place among the other items (a plain test between scenarios stays
where it was), and equal estimates keep their collection order (the sort is stable), so every
process of a run orders the same items the same way, which xdist requires.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from conformance.plugin.collection import SCENARIO

if TYPE_CHECKING:
    from conformance.scenario import Scenario

__all__ = ["longest_first", "pytest_collection_modifyitems", "round_trips"]


def round_trips(scenario: Scenario) -> int:
    """An estimate of the requests a scenario sends one after another: the steps it names (a
    flow, a version scenario's set-up), 2 for a rule with a precondition (its set-up, then the
    request), else 1. Known before the run, from the scenario alone (the exchanges a run makes
    also depend on the set-up data its worker already has)."""
    steps = scenario.param("steps")
    if steps:
        return len(steps)
    if scenario.kind == "rule" and scenario.param("precondition"):
        return 2
    return 1


def longest_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` with each run of consecutive scenario items of one test sorted by
    :func:`round_trips`, the most first (stable); every other item stays where it was."""
    ordered: list[pytest.Item] = []
    run: list[tuple[pytest.Item, Scenario]] = []

    def flush() -> None:
        run.sort(key=lambda pair: -round_trips(pair[1]))
        ordered.extend(item for item, _ in run)
        run.clear()

    for item in items:
        scenario = item.stash.get(SCENARIO, None)
        if run and (scenario is None or item.parent is not run[0][0].parent):
            flush()
        if scenario is None:
            ordered.append(item)
        else:
            run.append((item, scenario))
    flush()
    return ordered


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """The longest scenarios first (module docstring), after every other plugin's selection."""
    items[:] = longest_first(items)
