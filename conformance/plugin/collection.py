"""Collection: one pytest item per generated scenario, with its markers and its facts."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.errors import ConformanceError
from conformance.report.verdicts import (
    ScenarioFacts,
)

if TYPE_CHECKING:
    from conformance.scenario import Scenario

#: The marker of a test that :func:`pytest_pycollect_makeitem` makes one item per scenario of.
SCENARIO_MARKER = "conformance"

FACTS = pytest.StashKey[ScenarioFacts]()
#: The scenario of a scenario item (for the runs made ahead, ``conformance.plugin.prefetch``).
SCENARIO = pytest.StashKey["Scenario"]()


# --- hook specification -------------------------------------------------------------------------


class ScenarioHooks:
    """The plugin's own hook: where the scenarios come from."""

    @pytest.hookspec(firstresult=True)
    def pytest_conformance_scenarios(self, config: pytest.Config) -> Sequence[Scenario] | None:
        """The scenarios to parametrise the suite with (default: all generated from the
        contract). A conftest may return its own, e.g. to run a hand-made scenario."""


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(ScenarioHooks)


@pytest.hookimpl(trylast=True)
def pytest_conformance_scenarios(config: pytest.Config) -> Sequence[Scenario]:
    scenarios = generated_scenarios()
    listed = config.getoption("conformance_scenarios", None)
    if listed:
        wanted = listed_scenarios(listed)
        scenarios = tuple(scenario for scenario in scenarios if scenario.id in wanted)
    if config.getoption("conformance_smoke", False):
        # on use, not at import: the plugin loads in every pytest process (start-up time)
        from conformance.generate.smoke import smoke_selection

        return smoke_selection(scenarios)
    return scenarios


@functools.cache
def listed_scenarios(path: str) -> frozenset[str]:
    """The scenario ids ``--conformance-scenarios FILE`` lists (one a line; blank lines and
    ``#`` comments skipped); an unreadable file is a :class:`ConformanceError`."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ConformanceError(f"--conformance-scenarios {path}: {error.strerror}") from None
    return frozenset(
        stripped for line in lines if (stripped := line.strip()) and not stripped.startswith("#")
    )


@functools.cache
def generated_scenarios() -> tuple[Scenario, ...]:
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.contract import load_contract
    from conformance.generate import generate_scenarios

    return generate_scenarios(load_contract())


# --- options ------------------------------------------------------------------------------------


# --- configuration ------------------------------------------------------------------------------


def register_markers(config: pytest.Config, scenarios: Sequence[Scenario]) -> None:
    """Every marker the scenarios use, so that none is unknown (``--strict-markers`` works)."""
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.generate import all_marker_names

    known = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
    for name in all_marker_names(scenarios):
        if name not in known:
            config.addinivalue_line("markers", f"{name}: conformance scenarios ({name})")


# --- parametrisation ----------------------------------------------------------------------------


class _BoundScenario(functools.partial):  # type: ignore[type-arg]
    # A scenario test with its scenario bound: the callable of one scenario item. Deliberately
    # without a docstring (a class docstring is every instance's ``__doc__``), like the test
    # function: allure-pytest takes ``item.function.__doc__`` as the description of a scenario
    # that fails before it labels itself, and ``partial``'s own would show there otherwise.
    __doc__ = None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> list[pytest.Function] | None:
    """One item per scenario for a test marked ``conformance`` that takes ``scenario``.

    The same items ``metafunc.parametrize`` would make (node id ``test_scenario[<id>]``, the
    scenario's markers after the function's, the id as a keyword), built directly: each item
    gets its scenario bound to the function (:class:`_BoundScenario`) instead of through a
    ``scenario`` pseudo-fixture. Parametrising would give every item a function-scoped fixture of
    its own, which allure-pytest writes as one more result container file per item (1,929 of
    them) and pytest sets up and tears down per item; the scenario is no fixture, so nothing is
    lost. The fixture closure is computed once and shared, as parametrisation shares it.
    """
    if not inspect.isfunction(obj) or not collector.istestfunction(obj, name):
        return None
    if "scenario" not in inspect.signature(obj).parameters:
        return None
    own_marks = getattr(obj, "pytestmark", [])
    if collector.get_closest_marker(SCENARIO_MARKER) is None and not any(
        mark.name == SCENARIO_MARKER for mark in own_marks
    ):
        return None
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.generate import scenario_markers
    from conformance.generate.smoke import SMOKE_MARKER, smoke_selection

    config = collector.config
    scenarios = tuple(config.hook.pytest_conformance_scenarios(config=config))
    register_markers(config, scenarios)
    smoke = {scenario.id for scenario in smoke_selection(scenarios)}
    marks: dict[str, pytest.MarkDecorator] = {}
    items: list[pytest.Function] = []
    fixtureinfo = None
    for scenario in scenarios:
        call = _BoundScenario(obj, scenario=scenario)
        if own_marks:
            call.pytestmark = own_marks  # type: ignore[attr-defined]
        item = pytest.Function.from_parent(
            collector,
            name=f"{name}[{scenario.id}]",
            callobj=call,
            keywords={scenario.id: True},
            fixtureinfo=fixtureinfo,
        )
        # Given to the constructor, ``originalname`` would become the node id (pytest builds
        # ``name[params]`` from a callspec only); set afterwards, it is what parametrisation
        # sets: the function's name, which allure-pytest's ``fullName`` is made of.
        item.originalname = name
        fixtureinfo = item._fixtureinfo
        for marker in (
            *scenario_markers(scenario),
            *((SMOKE_MARKER,) if scenario.id in smoke else ()),
        ):
            mark = marks.get(marker)
            if mark is None:
                mark = marks[marker] = getattr(pytest.mark, marker)
            item.add_marker(mark)
        facts = ScenarioFacts.of(scenario)
        item.stash[FACTS] = facts
        item.stash[SCENARIO] = scenario
        item.user_properties.extend(facts.properties())
        items.append(item)
    return items


# --- fixtures -----------------------------------------------------------------------------------


# --- verdicts -----------------------------------------------------------------------------------
