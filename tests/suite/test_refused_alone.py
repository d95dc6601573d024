"""Refused scenarios share the data they would make for themselves (issue 45 item 4).

A scenario that sends one request every acceptable answer refuses (a constraint, header,
robustness or refused auth case) changes nothing at a bank that conforms, so the customer,
account, agreement or payment it would make for itself (issue 29: resources of its own) is the
worker's, shared with the other refused scenarios of its operation. Whatever ends one of them
otherwise (the bank accepted it, a should finding, a blocked set-up) makes that data anew for
the next, so no wrong acceptance reaches another scenario's precondition; positive scenarios,
flows, rules and replays keep data of their own.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.checks import ConformanceFailure
from conformance.exchange import Exchange
from conformance.runners import RunContext, refused_alone, run_scenario
from conformance.scenario import Scenario


def _engaged(context: RunContext, scenario: Scenario) -> tuple[str, list[Exchange]]:
    """Run ``scenario`` (an E6 one); the agreement its engagement went to, and its exchanges."""
    context.exchanges.clear()
    try:
        run_scenario(scenario, context)
    finally:
        exchanges = list(context.exchanges)
    (engaged,) = [e for e in exchanges if e.url.endswith("/engagements")]
    return engaged.url, exchanges


def test_which_scenarios_share(scenarios: dict[str, Scenario]) -> None:
    assert refused_alone(scenarios["E6-registerLimit-required-rejected"])
    assert refused_alone(scenarios["E6-header-X-Request-ID-missing-rejected"])
    assert refused_alone(scenarios["PCA-header-X-Request-ID-missing-rejected"])
    assert not refused_alone(scenarios["E6-minimal-request-accepted"])
    replays = [s for s in scenarios.values() if s.param("case") == "replay"]
    assert replays
    assert not any(refused_alone(scenario) for scenario in replays)
    accepted_auth = [s for s in scenarios.values() if s.kind == "auth" and not s.expect.rejects]
    assert accepted_auth
    assert not any(refused_alone(scenario) for scenario in accepted_auth)


def test_refused_scenarios_of_an_operation_share_their_agreement(
    scenarios: dict[str, Scenario], faulty: Callable[..., RunContext]
) -> None:
    context = faulty()  # a server of its own: the data made here never meets the session's
    first, made = _engaged(context, scenarios["E6-registerLimit-required-rejected"])
    second, reused = _engaged(context, scenarios["E6-approvalLimit-required-rejected"])
    third, _ = _engaged(context, scenarios["E6-header-X-Request-ID-missing-rejected"])
    assert first == second == third
    assert len(made) > 1  # the agreement, its owner, account and member were made once
    assert [e.method for e in reused] == ["POST"]
    own, _ = _engaged(context, scenarios["E6-minimal-request-accepted"])
    assert own != first  # a positive scenario engages on an agreement of its own


def test_a_wrong_acceptance_makes_the_shared_data_anew(
    scenarios: dict[str, Scenario], faulty: Callable[..., RunContext]
) -> None:
    context = faulty("ignore-required-header")
    before, _ = _engaged(context, scenarios["E6-registerLimit-required-rejected"])
    with pytest.raises(ConformanceFailure):  # accepted: an engagement on the shared agreement
        _engaged(context, scenarios["E6-header-X-Request-ID-missing-rejected"])
    after, made = _engaged(context, scenarios["E6-approvalLimit-required-rejected"])
    assert after != before
    assert len(made) > 1


def test_refused_pca_scenarios_share_a_payment_while_its_status_holds(
    scenarios: dict[str, Scenario], faulty: Callable[..., RunContext]
) -> None:
    context = faulty()  # a server of its own: the data made here never meets the session's
    started: list[str] = []
    for scenario_id in (
        "PCA-header-X-Request-ID-missing-rejected",
        "PCA-header-PSU-ID-format-not-a-uuid-rejected",
    ):
        context.exchanges.clear()
        run_scenario(scenarios[scenario_id], context)
        started += [e.url for e in context.exchanges if "cancellation-authorisations" in e.url]
        last = [e.method for e in context.exchanges]
    assert len(started) == 2
    assert started[0] == started[1]
    assert last == ["GET", "POST"]  # the status read (PS), then PCA


def test_a_shared_datum_no_longer_as_made_is_made_anew(
    context_for: Callable[..., RunContext],
) -> None:
    data = context_for().data
    made: list[int] = []

    def make(seed: int) -> int:
        made.append(seed)
        return seed

    with data.refused_alone("E7"):
        first = data.own(1, "counter", make, still=lambda datum, fresh: True)
    with data.refused_alone("E7"):
        again = data.own(2, "counter", make, still=lambda datum, fresh: True)
    with data.refused_alone("E7"):
        changed = data.own(3, "counter", make, still=lambda datum, fresh: fresh)
    assert first == again != changed
    assert len(made) == 2
    assert data.own(4, "counter", make) == 4  # outside: the scenario's own


def test_a_shared_datum_older_than_its_age_is_made_anew(
    context_for: Callable[..., RunContext],
) -> None:
    data = context_for().data  # makes nothing at the server
    made: list[int] = []

    def make(seed: int) -> int:
        made.append(seed)
        return seed

    for _ in range(2):
        with data.refused_alone("PA"):
            data.own(1, "young", make, max_age=60.0)
        with data.refused_alone("PA"):
            data.own(1, "old", make, max_age=0.0)
    assert len(made) == 3  # "young" once, "old" twice
