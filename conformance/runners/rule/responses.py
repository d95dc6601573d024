"""Rule checks of the response headers a certifier checks (rules.json ``RH-*``; spec 4.2 shows
request headers only, so each rests on our reading and is graded should, unless the bank promises
the header: ``[response_headers] promised``). The same headers are judged in every positive and
flow scenario (``conformance.runners.response_headers``); a row's own scenario judges its one
header on the operation's valid request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.checks import NotApplicable
from conformance.runners.response_headers import (
    LOCATION_RULE,
    REQUEST_ID_RULE,
    SCA_APPROACH_RULE,
    judge_response_headers,
)
from conformance.runners.rule.common import expect_success, rule_request

if TYPE_CHECKING:
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["check_location_on_creation", "check_request_id_echoed", "check_sca_approach_named"]


def _judged(scenario: Scenario, ctx: RunContext, seed: int, rule_id: str) -> None:
    request = rule_request(scenario, ctx, seed)
    exchange = request.send(ctx)
    expect_success(exchange, scenario, ctx)
    if rule_id == LOCATION_RULE and exchange.status != 201:
        raise NotApplicable(
            f"{scenario.operation} answered {exchange.status} (spec 5 item 6's form of the "
            "success), not 201: no created resource to name in Location"
        )
    judge_response_headers(exchange, request.operation, ctx, only=rule_id)


def check_request_id_echoed(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The answer to the operation's valid request carries the request's X-Request-ID."""
    _judged(scenario, ctx, seed, REQUEST_ID_RULE)


def check_location_on_creation(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The 201 of the operation's valid request names the created resource in Location."""
    _judged(scenario, ctx, seed, LOCATION_RULE)


def check_sca_approach_named(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The answer of the operation's valid request names the profile's SCA approach in
    ASPSP-SCA-Approach."""
    _judged(scenario, ctx, seed, SCA_APPROACH_RULE)
