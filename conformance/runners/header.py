"""Header scenarios (spec 4.2, spec 7 rules 3 and 7): a required header left out, a header with
a malformed value, a corporate PSU without PSU-Corporate-ID.

The base request carries every header spec 4.2 requires; the scenario's mutation removes one or
sets a value that breaks its format (``types/headers.json``). With ``params["psu"] == "corporate"``
the request is first made for the worker's corporate PSU (PSU-Context CORPORATE with its
PSU-Corporate-ID), so that removing PSU-Corporate-ID leaves a corporate user without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.runners.base_requests import base_request
from conformance.runners.verdict import judge
from conformance.scenario import scenario_seed
from conformance.target.request import apply_mutation

if TYPE_CHECKING:
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["run"]


def run(scenario: Scenario, ctx: RunContext) -> None:
    seed = scenario_seed(ctx.seed, scenario.id)
    request = base_request(ctx, scenario.operation, scenario.variant, seed)
    if scenario.param("psu") == "corporate":
        request = request.as_psu(ctx.data.psu("CORPORATE"))
    if scenario.mutation is None:
        raise ValueError(f"header scenario {scenario.id} has no mutation")
    judge(apply_mutation(request, scenario.mutation).send(ctx), scenario, ctx)
