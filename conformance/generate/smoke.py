"""The smoke selection: one positive and one negative scenario per operation, for a first contact
with a target and for CI pre-checks (``conformance run --smoke``; the ``smoke`` marker).

Per operation of the scenarios given: the positive one is the operation's plain valid request
(``<op>-valid-request-accepted``, else its minimal, else its complete request, else its first
positive scenario by id): spec 4.3's request accepted with the documented answer. The negative
one is the same request without a Signature (``AUTH-no-signature``): spec 5 signs every request
and a bank must refuse an unsigned one, the same refusal for every operation. Pure: the
selection depends on the scenarios only, never on a target.
"""

from __future__ import annotations

from collections.abc import Iterable

from conformance.scenario import Scenario

__all__ = ["NEGATIVE_RULE", "SMOKE_MARKER", "smoke_selection"]

#: The marker of the smoke scenarios (``-m smoke``).
SMOKE_MARKER = "smoke"
#: The rule of the negative scenario per operation.
NEGATIVE_RULE = "AUTH-no-signature"
#: The positive scenario's id per operation, in the order preferred.
_POSITIVE_SUFFIXES = (
    "-valid-request-accepted",
    "-minimal-request-accepted",
    "-complete-request-accepted",
)


def smoke_selection(scenarios: Iterable[Scenario]) -> tuple[Scenario, ...]:
    """The smoke scenarios among ``scenarios``, in their order (at most two per operation)."""
    given = tuple(scenarios)
    chosen: set[str] = set()
    for operation in dict.fromkeys(scenario.operation for scenario in given):
        positives = [s for s in given if s.operation == operation and s.kind == "positive"]
        by_id = {s.id: s for s in positives}
        preferred = (by_id.get(f"{operation}{suffix}") for suffix in _POSITIVE_SUFFIXES)
        positive = next((s for s in preferred if s is not None), None)
        if positive is None and positives:
            positive = min(positives, key=lambda s: s.id)
        if positive is not None:
            chosen.add(positive.id)
        negative = next(
            (s for s in given if s.operation == operation and s.rule == NEGATIVE_RULE), None
        )
        if negative is not None:
            chosen.add(negative.id)
    return tuple(scenario for scenario in given if scenario.id in chosen)
