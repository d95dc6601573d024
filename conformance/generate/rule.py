"""Rule scenarios: one per row of the rule table (``schemas/rules.json``) and operation it lists,
``<op>-<row id>-rejected`` or ``-holds``.
"""

from __future__ import annotations

from collections.abc import Iterator

from conformance.contract import Rule
from conformance.contract.requirements import BODY_SCHEMA_RESPONSE, AnswerDue, answer_due
from conformance.generate._common import Context, params, rejection, scenario_id
from conformance.generate.variants import base_variant
from conformance.scenario import Scenario

__all__ = ["generate"]


def _expectation(context: Context, rule: Rule, operation_id: str) -> AnswerDue:
    op = context.contract.operations[operation_id]
    statuses = rule.expected_status
    if all(status >= 400 for status in statuses):
        return rejection(op, statuses, rule.expected_code, chosen=rule.chosen)
    documented = all(
        status in op.responses and op.responses[status].schema is not None for status in statuses
    )
    return answer_due(statuses, rule.expected_code, BODY_SCHEMA_RESPONSE if documented else None)


def generate(context: Context) -> Iterator[Scenario]:
    """One scenario per (rule row, listed operation)."""
    for rule in context.contract.rules:
        for operation_id in rule.operations:
            op = context.contract.operations[operation_id]
            expect = _expectation(context, rule, operation_id)
            outcome = "rejected" if expect.rejects else "holds"
            answer = "/".join(map(str, rule.expected_status))
            code = f" {rule.expected_code}" if rule.expected_code else ""
            precondition = f" Given {rule.precondition}." if rule.precondition else ""
            level = rule.level_on(op.id)
            yield Scenario(
                id=scenario_id(op.id, rule.id, outcome),
                operation=op.id,
                rule=rule.id,
                spec=rule.spec,
                level=level,
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
                quotes=rule.quotes if level == "must" else (),
                reading=rule.reading_on(op.id) if level == "should" else "",
            )
