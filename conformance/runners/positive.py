"""Positive scenarios (spec 4.3): a valid request is answered with the documented success.

The base request of the scenario's variant is built (set-up data through the sandbox), the
scenario's mutation applied when it sweeps a value the spec lists (an enum value, a boolean query
parameter), sent once, and judged: status, JSON body, documented response schema, and a JSON
Content-Type on a body (spec 4.2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.checks import check_json_content_type
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
    if scenario.mutation is not None:
        request = apply_mutation(request, scenario.mutation)
    exchange = request.send(ctx)
    judge(exchange, scenario, ctx)
    check_json_content_type(exchange)
