"""Rule scenarios: one per row of the rule table and operation it lists (``schemas/rules.json``).

``params["check"]`` is the row's ``check`` name;
:data:`~conformance.runners.rule.checks.RULE_CHECKS` maps it to the function that builds the row's
situation and judges the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.runners.rule.checks import RULE_CHECKS
from conformance.scenario import scenario_seed

if TYPE_CHECKING:
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["run"]


def run(scenario: Scenario, ctx: RunContext) -> None:
    name = str(scenario.param("check", ""))
    try:
        check = RULE_CHECKS[name]
    except KeyError:
        raise ValueError(
            f"rule scenario {scenario.id} names the check {name!r}, which no rule check implements"
        ) from None
    check(scenario, ctx, scenario_seed(ctx.seed, scenario.id))
