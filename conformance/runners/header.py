"""Header scenarios (spec 4.2, spec 7 rules 3 and 7): a required header left out, a header with
a malformed value, a corporate PSU without PSU-Corporate-ID.

The base request carries every header spec 4.2 requires; the scenario's mutation removes one or
sets a value that breaks its format (``types/headers.json``). With ``params["psu"] == "corporate"``
the request is first made for the worker's corporate PSU (PSU-Context CORPORATE with its
PSU-Corporate-ID), so that removing PSU-Corporate-ID leaves a corporate user without it. A
header the profile's ``[required_headers]`` does not require of the operation (where the spec
does not show the set) makes its missing-header scenario not applicable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.bankside.request import apply_mutation
from conformance.checks import NotApplicable
from conformance.operations import base_request
from conformance.runners.judging import judge
from conformance.scenario import scenario_seed

if TYPE_CHECKING:
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["run"]


def run(scenario: Scenario, ctx: RunContext) -> None:
    _check_required_here(scenario, ctx)
    seed = scenario_seed(ctx.seed, scenario.id)
    request = base_request(ctx, scenario.operation, scenario.variant, seed)
    if scenario.param("psu") == "corporate":
        request = request.as_psu(ctx.data.psu("CORPORATE"))
    if scenario.mutation is None:
        raise ValueError(f"header scenario {scenario.id} has no mutation")
    judge(apply_mutation(request, scenario.mutation).send(ctx), scenario, ctx)


def _check_required_here(scenario: Scenario, ctx: RunContext) -> None:
    """NotApplicable for a missing-header scenario of a header the contract assumes required
    and the profile's ``[required_headers]`` for the operation leaves out (the corporate rule's
    PSU-Corporate-ID is spec 7 rule 3's, not the set's: it is always judged)."""
    mutation = scenario.mutation
    chosen = ctx.profile.required_headers.get(scenario.operation)
    if (
        chosen is None
        or mutation is None
        or mutation.target != "header"
        or mutation.action != "remove"
        or scenario.param("psu") == "corporate"
    ):
        return
    name = str(mutation.pointer[0]).lower()
    operation = ctx.contract.operations[scenario.operation]
    assumed = {header.lower() for header in operation.required_headers}
    if name in assumed and name not in {header.lower() for header in chosen}:
        raise NotApplicable(
            f"the profile's [required_headers] {scenario.operation} does not require "
            f"{mutation.pointer[0]} (the spec does not show the set)"
        )
