"""The operations interface.md neither shows nor names (``Operation.unnamed``: BR, BS, PCA,
SI), judged as the bank's own promise (``[operations] promised``, issue 29 item 3).

Generation grades every scenario on such an operation should (``conformance.generate``): that
the bank offers it at all rests on the contract's assumption. Where the bank promises it, what
would be must were the operation the spec's is must for that bank, and every report names the
promise instead of a quote: a failure of a scenario whose quoted sentence holds for every
operation (its signature, its headers), a positive scenario's or a flow step's answer that is
no success at all (the status; bodies of these operations are readings anyway, should). Where
it does not, a flow step on one that fails ends the scenario at should, even in a must flow:
the rule the flow judges could not be judged through an operation the bank never promised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from conformance.checks import ConformanceFailure, SetUpFailure
from conformance.findings import ShouldFindings, end_at_should

if TYPE_CHECKING:
    from conformance.contract import Operation
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["judge_step", "keep_promise"]


def _stated_tier(failure: ConformanceFailure) -> bool:
    """Whether ``failure`` is a must-tier one (not a reading, a should finding or a set-up)."""
    return not (
        failure.reading or failure.promise or isinstance(failure, ShouldFindings | SetUpFailure)
    )


def keep_promise(failure: ConformanceFailure, scenario: Scenario, ctx: RunContext) -> None:
    """Name the bank's promise on ``failure`` of ``scenario`` where it broke one: the scenario is
    on an operation the bank promised, and would be must were that operation the spec's (it
    quotes a sentence that holds for every operation) or is its positive scenario."""
    operation = ctx.contract.operations.get(scenario.operation)
    if operation is None or not _stated_tier(failure):
        return
    if scenario.level == "should" and (scenario.quotes or scenario.kind == "positive"):
        failure.promise = ctx.profile.operation_promises.promise(operation)


def judge_step(ctx: RunContext, operation: Operation, judge: Callable[[], object]) -> None:
    """Run ``judge`` on the answer of a flow step to ``operation``. On an unnamed operation a
    must-tier failure is the bank's broken promise where it promised it, else it ends the
    scenario at should (:func:`conformance.findings.end_at_should`)."""
    if not operation.unnamed:
        judge()
        return
    try:
        judge()
    except ConformanceFailure as failure:
        if not _stated_tier(failure):
            raise
        promise = ctx.profile.operation_promises.promise(operation)
        if promise:
            failure.promise = promise
            raise
        end_at_should(failure, operation.unnamed_reading)
