"""The pytest plugin of the suite (entry point ``conformance.plugin``).

pytest reads hooks and fixtures from this module's names, so it re-exports those of its modules:
:mod:`~conformance.plugin.options` (command-line options), :mod:`~conformance.plugin.configure`
(seed, markers, xdist, header, preflight), :mod:`~conformance.plugin.collection` (one item per
scenario), :mod:`~conformance.plugin.fixtures` (the run's client, profile and context) and
:mod:`~conformance.plugin.reporting` (outcomes as the suite's verdicts; the overall verdict is
the last line of the terminal). :mod:`~conformance.plugin.timings` records which operation each
exchange called and its answer time; :mod:`~conformance.plugin.prefetch` hands the scenarios of
the items a process runs next to its pool (``--threads``); :mod:`~conformance.plugin.interruption`
stops a run on SIGTERM or when its bundled server is gone, and says why in its INTERRUPTED verdict;
:mod:`~conformance.plugin.ordering` runs the longest scenarios first;
:mod:`~conformance.plugin.recording` keeps each scenario's exchanges for the sealed record and
the run's event stream (``run --seal``, ``run --traffic``).
"""

from conformance.plugin.collection import (
    SCENARIO_MARKER,
    ScenarioHooks,
    pytest_addhooks,
    pytest_conformance_scenarios,
    pytest_pycollect_makeitem,
)
from conformance.plugin.configure import (
    pytest_configure,
    pytest_load_initial_conftests,
    pytest_report_header,
    pytest_sessionstart,
)
from conformance.plugin.fixtures import (
    conformance_bundled_server,
    conformance_client,
    conformance_context,
    conformance_profile,
    conformance_runner,
    conformance_seed,
    conformance_trust_anchor,
    conformance_utf8_trust_anchor,
)
from conformance.plugin.options import SEED, pytest_addoption
from conformance.plugin.ordering import pytest_collection_modifyitems
from conformance.plugin.reporting import (
    pytest_report_teststatus,
    pytest_runtest_makereport,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_unconfigure,
)

__all__ = [
    "SCENARIO_MARKER",
    "SEED",
    "ScenarioHooks",
    "conformance_bundled_server",
    "conformance_client",
    "conformance_context",
    "conformance_profile",
    "conformance_runner",
    "conformance_seed",
    "conformance_trust_anchor",
    "conformance_utf8_trust_anchor",
    "pytest_addhooks",
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_conformance_scenarios",
    "pytest_load_initial_conftests",
    "pytest_pycollect_makeitem",
    "pytest_report_header",
    "pytest_report_teststatus",
    "pytest_runtest_makereport",
    "pytest_sessionfinish",
    "pytest_sessionstart",
    "pytest_terminal_summary",
    "pytest_unconfigure",
]
