"""What the rule checks share: the success half of a rule, the base request, body edits, sending and
judging, and the reference server controls some rows need.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import OperationRequest
from conformance.findings import at_should
from conformance.operations import base_request
from conformance.runners.judging import judge, judge_expectation, success_of

if TYPE_CHECKING:
    from conformance.bankside.setup_data import Consent
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario


#: One signature for every rule check: the scenario, the run context, the scenario's seed.
RuleCheck = Callable[["Scenario", "RunContext", int], None]


def expect_success(
    exchange: Exchange, scenario: Scenario, ctx: RunContext, *, reading: str = ""
) -> None:
    """The conforming half of a rule: the operation's documented success and response body
    (``success_of``: the SCA redirect form too). With ``reading`` the half rests on our reading
    of the spec (a bank may refuse the request for another reason): a should finding."""
    operation = ctx.contract.operations[scenario.operation]

    def judged() -> None:
        judge_expectation(
            exchange, success_of(operation), operation, ctx.contract, spec=scenario.spec
        )

    if reading:
        at_should(judged, reading=reading)
    else:
        judged()


def rule_request(scenario: Scenario, ctx: RunContext, seed: int) -> OperationRequest:
    return base_request(ctx, scenario.operation, scenario.variant, seed)


def changed_body(request: OperationRequest, change: Callable[[Any], None]) -> OperationRequest:
    """The request with its body changed in a copy by ``change``."""
    body = copy.deepcopy(request.body)
    change(body)
    return request.with_body(body)


def set_at(body: Any, pointer: tuple[str | int, ...], value: Any) -> None:
    node = body
    for part in pointer[:-1]:
        node = node[part]
    node[pointer[-1]] = value


def send_and_judge(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    exchange = request.send(ctx)
    judge(exchange, scenario, ctx)
    return exchange


def send_expecting_success(
    scenario: Scenario, ctx: RunContext, request: OperationRequest, *, reading: str = ""
) -> Exchange:
    exchange = request.send(ctx)
    expect_success(exchange, scenario, ctx, reading=reading)
    return exchange


def age_consent(ctx: RunContext, consent: Consent, days: int, why: str) -> None:
    """The consent ``days`` older on the reference server: its SCA moved back (spec 8 ages).

    A consent given at the first account access is named by its TPP session, which the control
    takes as well. Only this consent ages: moving the server's clock instead would age the
    consents of the scenarios other workers run meanwhile on the same server (a flaky
    CONSENT_EXPIRED there).
    """
    ctx.data.control(
        "POST", f"/_control/consents/{consent.consent_id}/age", {"days": days}, what=why
    )
