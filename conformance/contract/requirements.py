"""What a requirement of the contract is graded: must with the spec's sentences that state it, or
should with the reading it rests on (DESIGN.md, "Verdicts"), decided here once from what the
contract carries, for every side that grades a break.

The grade comes from the contract's data: a rule row's ``quotes`` and ``reading`` (per operation
where the row names one), a flow row's (``flows.json``), and an operation's place in the spec (one
spec 4.1 numbers, :attr:`~conformance.contract.model.Operation.numbered`, or one it only names)
and its ``assumptions`` by topic. The traffic judge grades its findings by it
(``conformance.traffic.grading``); the answer due and a requirement value are issue 39's next
steps.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from conformance.contract import quoted

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.contract.model import Operation, Rule

__all__ = [
    "MUST",
    "SHOULD",
    "Grade",
    "grade",
    "grade_flow",
    "grade_operation",
    "grade_rule",
    "quote_text",
]

MUST: Final = "must"
SHOULD: Final = "should"
#: The reading a should names when its source names none.
_DEFAULT_READING = "the contract's reading of the spec"


@dataclass(frozen=True, slots=True)
class Grade:
    """A requirement's tier: ``level`` must or should; ``quotes`` the labels of the spec's
    sentences that state a must (``quotes.json``); ``reading`` the reading a should rests on."""

    level: str
    quotes: tuple[str, ...] = ()
    reading: str = ""


def grade(*, stated: bool, quotes: Iterable[str] = (), reading: str = "") -> Grade:
    """The one decision: a requirement the spec states is must, with its quotes; anything else
    is should, naming the reading it rests on (and quoting nothing, as a should scenario)."""
    if stated:
        return Grade(MUST, tuple(quotes))
    return Grade(SHOULD, reading=reading or _DEFAULT_READING)


def grade_operation(operation: Operation, *topics: str, quotes: Iterable[str] = ()) -> Grade:
    """A requirement on ``operation`` that rests on what the contract says of it: should when the
    operation is one the spec only names, or when it carries an assumption on one of ``topics``
    (``required-headers``, ``request``, ``response``, ``status``, ``path``); must otherwise."""
    if not operation.numbered:
        return grade(
            stated=False,
            reading=f"{operation.id} is an operation the spec only names or implies; its "
            "shape is the contract's assumption",
        )
    assumed = [item for item in operation.assumptions if item.topic in topics]
    if assumed:
        return grade(
            stated=False,
            reading=f"rests on the contract's assumption ({assumed[0].topic}): {assumed[0].text}",
        )
    return grade(stated=True, quotes=quotes)


def grade_rule(rule: Rule, operation_id: str = "") -> Grade:
    """A rule row, on ``operation_id`` where given: must with the row's quotes, unless it rests
    on a reading (``stated: reading``, or a reading the row names for that operation)."""
    level = rule.level_on(operation_id) if operation_id else rule.level
    if level == MUST:
        return grade(stated=True, quotes=rule.quotes)
    reading = rule.reading_on(operation_id) if operation_id else rule.reading
    return grade(stated=False, reading=reading or f"{rule.id} rests on our reading of {rule.spec}")


def grade_flow(contract: Contract, name: str) -> Grade:
    """The requirement of the flows named ``name`` in ``flows.json`` (the suite's flow scenarios
    that judge the same outcome): must with their quotes, or should with their reading."""
    row = next((row for row in contract.flows if row.name == name), None)
    if row is None:
        raise KeyError(f"no flow {name!r} in flows.json")
    return grade(stated=row.level == MUST, quotes=row.quotes, reading=row.reading)


def quote_text(labels: Iterable[str]) -> str:
    """The quotes of ``labels`` as a report shows them: ``spec 7 rule 2: "When a KID ..."``,
    each naming its own spec part ("" for none)."""
    return " ".join(f'{quote.spec}: "{quote.text}"' for quote in quoted(labels))
