"""How a traffic finding is graded, by the rule a suite run grades by (issue 19): must where the
spec states the requirement, quoting it; should where it rests on a reading, naming it.

The grades come from the contract's data, the same the scenarios are generated from: the quotes
of ``schemas/quotes.json`` by label, a rule row's ``quotes`` and ``reading`` (per operation where
the row names one), a flow row's (``flows.json``), a schema's ``x-quotes``, ``x-assumed`` and
``x-readings`` (``conformance.contract.annotations``), an operation's ``assumptions`` by topic,
and a check's failure (a :class:`~conformance.checks.ReadingFailure` is a should with its
reading). So a finding of the proxy and the failure of a scenario that breaks the same rule have
one grade.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from conformance.checks import ReadingFailure
from conformance.contract import said_of

if TYPE_CHECKING:
    from conformance.checks import ConformanceFailure
    from conformance.contract import Contract, Operation, Rule

__all__ = [
    "Grade",
    "grade",
    "grade_failure",
    "grade_flow",
    "grade_operation",
    "grade_rule",
    "is_spec_operation",
    "quote_text",
]

MUST: Final = "must"
SHOULD: Final = "should"


def quote_text(labels: Iterable[str]) -> str:
    """The quotes of ``labels`` as a report shows them: ``spec 7 rule 2: "When a KID ..."``,
    each sentence once, as plain text, naming its own spec part ("" for none)."""
    return said_of(labels)


@dataclass(frozen=True)
class Grade:
    """A finding's tier: ``level`` must or should; ``quotes`` the labels of the spec's sentences
    that state a must (``quotes.json``); ``basis`` the reading a should rests on."""

    level: str
    quotes: tuple[str, ...] = ()
    basis: str = ""


def grade(*, stated: bool, quotes: Iterable[str] = (), reading: str = "") -> Grade:
    """The one decision: a requirement the spec states is must, with its quotes; anything else
    is should, naming the reading it rests on (and quoting nothing, as a should scenario)."""
    if stated:
        return Grade(MUST, tuple(quotes))
    return Grade(SHOULD, basis=reading or "the contract's reading of the spec")


def grade_failure(failure: ConformanceFailure) -> Grade:
    """A check's failure as the suite grades it: a :class:`ReadingFailure` is should with its
    reading; any other is must with the quotes the check named."""
    if isinstance(failure, ReadingFailure):
        return grade(stated=False, reading=failure.reading)
    return grade(stated=True, quotes=failure.quotes)


_OPERATION_OF_SPEC = re.compile(r"^E[0-9]+$")


def is_spec_operation(operation: Operation) -> bool:
    """Whether the spec defines the operation (E1 … E18) rather than only naming or implying it."""
    return bool(_OPERATION_OF_SPEC.match(operation.id))


def grade_operation(operation: Operation, *topics: str, quotes: Iterable[str] = ()) -> Grade:
    """A requirement on ``operation`` that rests on what the contract says of it: should when the
    operation is one the spec only names, or when it carries an assumption on one of ``topics``
    (``required-headers``, ``request``, ``response``, ``status``, ``path``); must otherwise."""
    if not is_spec_operation(operation):
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
