"""Scenarios against the reference server playing the demanding reading (``--demanding``), with
the demanding profile (``profiles/reference-server-demanding.toml``), as ``conformance run
--demanding`` runs them (issue 29 items 1, 2 and 4):

- every positive scenario and flow that creates or changes sandbox data makes the customer,
  account, agreement or payment it uses, so a bank that refuses a second engagement of one
  customer and account on one agreement, or two balances of one type, fails none of them;
- a bank whose payment's SCA starts at its creation is never asked to start it again: PA's
  success scenarios are not applicable there, its refusals are still judged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from conformance.bankside.client import TargetClient
from conformance.bankside.sca import ReferenceSca
from conformance.bankside.setup_data import DataFactory
from conformance.checks import NotApplicable
from conformance.contract import Contract
from conformance.profile import DEMANDING_PROFILE, load_profile
from conformance.runners import RunContext, run_scenario
from conformance.scenario import Scenario
from reference_server.app import Application
from reference_server.model.bank_style import style_of
from reference_server.transport.http import RunningServer, start
from suite.conftest import RUN_SEED

#: The scenarios a demanding bank failed while they shared data or swept one item of two.
_CHANGED = (
    "E6-complete-request-accepted",
    "E6-minimal-request-accepted",
    "E6-roles-OWNER-accepted",
    "E6-roles-VIEW-accepted",
    "E13-created-engagement-reads-back",
    "E14-corporate-agreement-reads-back",
    "E15-0.balanceType-expected-accepted",
    "E15-0.balanceType-closingBooked-accepted",
    "SA-balances.0.balanceType-expected-accepted",
    "SCA-minimal-request-accepted",
    "E10-created-card-account-reads-back",
    "E5-minimal-request-accepted",
    "E7-minimal-request-accepted",
    "PCA-norwegian-domestic-credit-transfers-accepted",
)


@pytest.fixture
def demanding(contract: Contract) -> Iterator[RunContext]:
    """A reference server playing every demand, and a context with the demanding profile (a
    fresh server each: a scenario run twice with one seed makes the same data twice)."""
    played = load_profile(DEMANDING_PROFILE)
    running: RunningServer = start(Application(bank=style_of(played)))
    profile = replace(played, base_url=running.url)
    client = TargetClient(running.url, verify=False, timeout=10.0)
    sca = ReferenceSca(client, profile.redirect_uri)
    data = DataFactory(contract, profile, client, run_seed=RUN_SEED, sca=sca)
    yield RunContext(
        contract=contract, profile=profile, client=client, seed=RUN_SEED, data=data, sca=sca
    )
    client.close()
    running.stop()


@pytest.mark.parametrize("scenario_id", _CHANGED)
def test_a_scenario_of_its_own_data_passes_against_the_demanding_server(
    scenarios: dict[str, Scenario], demanding: RunContext, scenario_id: str
) -> None:
    run_scenario(scenarios[scenario_id], demanding)  # raises on a failure


def test_an_e6_scenario_engages_on_an_agreement_of_its_own(
    scenarios: dict[str, Scenario], demanding: RunContext
) -> None:
    agreements = set()
    for scenario_id in ("E6-minimal-request-accepted", "E6-complete-request-accepted"):
        demanding.exchanges.clear()
        run_scenario(scenarios[scenario_id], demanding)
        (engaged,) = [e for e in demanding.exchanges if e.url.endswith("/engagements")]
        agreements.add(engaged.url)
    assert len(agreements) == 2


def test_pa_success_is_not_judged_where_sca_starts_at_creation(
    scenarios: dict[str, Scenario], demanding: RunContext
) -> None:
    for scenario_id in (
        "PA-auth-rfc2047-signature-accepted",
        "PA-norwegian-domestic-credit-transfers-accepted",
        "PA-RH-request-id-echoed-holds",
        "PA-payment-authorisation-is-started",
    ):
        with pytest.raises(NotApplicable, match=r'\[sca\] start = "creation"'):
            run_scenario(scenarios[scenario_id], demanding)
    refusals = [
        s
        for s in scenarios.values()
        if s.operation == "PA" and s.kind == "header" and s.expect.statuses == (400,)
    ]
    assert refusals
    run_scenario(refusals[0], demanding)  # a refusal is still judged (and passes)
