"""How a traffic finding is graded, by the rule a suite run grades by (issue 19): must where the
spec states the requirement, quoting it; should where it rests on a reading, naming it.

The grades come from the contract's data, the same the scenarios are generated from: the quotes
of ``schemas/quotes.json`` by label, a rule row's, a flow row's and an operation's grade
(``conformance.contract.requirements``), a schema's ``x-quotes``, ``x-assumed`` and
``x-readings`` (``conformance.contract.annotations``), and a check's failure (a
:class:`~conformance.checks.ReadingFailure` is a should with its reading). So a finding of the
proxy and the failure of a scenario that breaks the same rule have one grade.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.checks import ReadingFailure
from conformance.contract.requirements import Grade, grade
from conformance.report.verdicts import Finding

if TYPE_CHECKING:
    from conformance.checks import ConformanceFailure

__all__ = ["grade_failure", "graded_finding"]


def graded_finding(
    side: str, grade_: Grade, rule: str, title: str, spec: str, place: str = ""
) -> Finding:
    """A traffic finding of ``side`` (the TPP's request or the bank's answer) with its grade."""
    return Finding(
        grade_.level,
        title,
        spec,
        reading=grade_.reading,
        quotes=grade_.quotes,
        side=side,
        rule=rule,
        place=place,
    )


def grade_failure(failure: ConformanceFailure) -> Grade:
    """A check's failure graded by what it states: a :class:`ReadingFailure` is should with its
    reading; any other is must with the quotes the check named (a scenario's failure of the same
    check is graded so too, ``conformance.findings``)."""
    if isinstance(failure, ReadingFailure):
        return grade(stated=False, reading=failure.reading)
    return grade(stated=True, quotes=failure.quotes)
