"""Rule scenarios: one per row of the rule table (``schemas/rules.json``) and operation it lists,
``<op>-<row id>-rejected`` or ``-holds``.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.generate._common import Context, params, scenario_id
from conformance.generate.variants import base_variant
from conformance.scenario import Scenario

__all__ = ["generate"]


def generate(context: Context) -> Iterator[Scenario]:
    """One scenario per (rule row, listed operation)."""
    for rule in context.contract.rules:
        for operation_id in rule.operations:
            op = context.contract.operations[operation_id]
            requirement = context.contract.requirement(rule.id, operation_id)
            expect = requirement.expected
            outcome = "rejected" if expect.rejects else "holds"
            answer = "/".join(map(str, rule.expected_status))
            code = f" {rule.expected_code}" if rule.expected_code else ""
            precondition = f" Given {rule.precondition}." if rule.precondition else ""
            yield Scenario(
                id=scenario_id(op.id, rule.id, outcome),
                operation=op.id,
                rule=rule.id,
                spec=rule.spec,
                level=requirement.level,
                kind="rule",
                title=(
                    f"{op.id} {op.name}:{precondition} When we {rule.action}, "
                    f"the answer is {answer}{code}."
                ),
                expect=expect,
                variant=base_variant(op, context),
                params=params(
                    check=rule.check, precondition=rule.precondition or "", action=rule.action
                ),
                quotes=requirement.quotes,
                reading=requirement.reading,
                requirement=requirement.id,
            )
