"""Constraint scenarios (spec 2, spec 4.3): one schema constraint broken alone is rejected.

The valid base request gets the scenario's :class:`~conformance.scenario.Mutation` (body, query,
path or header) and must be answered as the expectation says: 400 with the spec 7 error body,
FORMAT_ERROR on payment operations (in ``code`` or ``tppMessages``). Growing ``paymentIds`` past
its ``maxItems`` (spec 8: at most 10 per basket) uses real payments created for the scenario, so
that the only thing wrong with the basket is its size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from conformance.bankside.request import apply_mutation
from conformance.operations import base_request
from conformance.runners.judging import judge
from conformance.scenario import scenario_seed

if TYPE_CHECKING:
    from conformance.bankside.request import OperationRequest
    from conformance.runners.context import RunContext
    from conformance.scenario import Mutation, Scenario

__all__ = ["run"]

#: Arrays whose items must be distinct resources of the target: item name → creating operation.
_FRESH_ITEMS = {"paymentIds": "E16"}


def run(scenario: Scenario, ctx: RunContext) -> None:
    seed = scenario_seed(ctx.seed, scenario.id)
    request = base_request(ctx, scenario.operation, scenario.variant, seed)
    mutation = scenario.mutation
    if mutation is None:
        raise ValueError(f"constraint scenario {scenario.id} has no mutation")
    fresh = _fresh_items(ctx, request, mutation, seed)
    judge(apply_mutation(request, mutation, fresh_items=fresh).send(ctx), scenario, ctx)


def _fresh_items(
    ctx: RunContext, request: OperationRequest, mutation: Mutation, seed: int
) -> list[Any]:
    """Created resources for a ``resize`` that grows an array of resource ids."""
    if mutation.target != "body" or mutation.action != "resize" or not mutation.pointer:
        return []
    creator = _FRESH_ITEMS.get(str(mutation.pointer[-1]))
    if creator is None or not isinstance(request.body, dict):
        return []
    current = request.body.get(str(mutation.pointer[-1])) or []
    missing = int(mutation.json_value) - len(current)
    if missing <= 0:
        return []
    return [payment.payment_id for payment in ctx.data.payments(seed + 1, missing, creator)]
