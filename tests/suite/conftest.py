"""Fixtures of the runner tests: the reference server in-process (port 0, in a thread), a
:class:`RunContext` against it built the way the plugin builds one per worker, and servers
started with a deliberate fault for the tests that prove a scenario catches it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from conformance.bankside.client import TargetClient
from conformance.bankside.sca import ReferenceSca
from conformance.bankside.setup_data import DataFactory
from conformance.contract import Contract, load_contract
from conformance.generate import generate_scenarios
from conformance.profile import TargetProfile
from conformance.runners import RunContext
from conformance.scenario import Scenario
from reference_server.app import Application
from reference_server.transport.http import RunningServer, start

#: The run seed of these tests (any fixed value: data is seeded from it and the scenario id).
RUN_SEED = 20260129


@pytest.fixture(scope="session")
def contract() -> Contract:
    return load_contract()


@pytest.fixture(scope="session")
def scenarios(contract: Contract) -> dict[str, Scenario]:
    """The generated scenarios by id (what the plugin parametrises with)."""
    return {scenario.id: scenario for scenario in generate_scenarios(contract)}


@pytest.fixture(scope="session")
def reference() -> Iterator[RunningServer]:
    """The faithful reference server with every resource module, for the whole session."""
    logging.getLogger("reference_server").setLevel(logging.CRITICAL)
    running = start(Application())
    yield running
    running.stop()


def build_context(
    contract: Contract, url: str, **profile_changes: Any
) -> tuple[RunContext, TargetClient]:
    """A run context against ``url`` (reference-server profile unless changed)."""
    profile = replace(
        TargetProfile(name="reference server", base_url=url, reference_server=True),
        **profile_changes,
    )
    client = TargetClient(url, verify=False, timeout=10.0)
    sca = ReferenceSca(client, profile.redirect_uri)
    data = DataFactory(contract, profile, client, run_seed=RUN_SEED, sca=sca)
    context = RunContext(
        contract=contract, profile=profile, client=client, seed=RUN_SEED, data=data, sca=sca
    )
    return context, client


@pytest.fixture(scope="session")
def session_context(contract: Contract, reference: RunningServer) -> Iterator[RunContext]:
    """One context per worker, as the plugin keeps one (its set-up data is cached)."""
    context, client = build_context(contract, reference.url)
    yield context
    client.close()


@pytest.fixture
def context(session_context: RunContext) -> RunContext:
    """The worker's context with its exchanges cleared, as the plugin does per scenario."""
    session_context.exchanges.clear()
    return session_context


@pytest.fixture
def context_for(
    contract: Contract, reference: RunningServer
) -> Iterator[Callable[..., RunContext]]:
    """A context with a changed profile (sandbox = false, unsupported operations, ...)."""
    clients: list[TargetClient] = []

    def make(**profile_changes: Any) -> RunContext:
        context, client = build_context(contract, reference.url, **profile_changes)
        clients.append(client)
        return context

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def faulty(contract: Contract) -> Iterator[Callable[..., RunContext]]:
    """A reference server with deliberate faults switched on, and a context against it."""
    started: list[tuple[RunningServer, TargetClient]] = []

    def make(*faults: str, **app_options: Any) -> RunContext:
        running = start(Application(faults=faults, **app_options))
        context, client = build_context(contract, running.url)
        started.append((running, client))
        return context

    yield make
    for running, client in started:
        client.close()
        running.stop()
