"""The judged exchange and its findings (``report.verdicts.Finding``, with its ``side``): which side
broke which rule, graded must or should."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from conformance.contract.requirements import (
    BODY_SCHEMA_ERROR,
    CHOSEN_STATUS,
    AnswerDue,
    answer_due,
)
from conformance.report.verdicts import Finding

if TYPE_CHECKING:
    from conformance.exchange import Exchange

__all__ = ["BANK", "SIDES", "TPP", "GradedViolation", "JudgedExchange", "chosen_refusal"]

#: The TPP broke the rule with its request.
TPP: Final = "TPP"
#: The bank broke the rule with its answer.
BANK: Final = "bank"
SIDES: Final = (TPP, BANK)


@dataclass(frozen=True)
class JudgedExchange:
    """One exchange with its verdict: the operation it was routed to (None: none of the
    contract's) and its findings; ``skipped`` says why it was not judged (outside ``/v1``, no
    answer from the target), else ""."""

    index: int
    exchange: Exchange
    operation: str | None
    findings: tuple[Finding, ...] = ()
    skipped: str = ""
    #: What of the exchange the session did not keep (a body past
    #: :data:`conformance.traffic.session.KEPT_BODY`), said in the reports; "" when kept whole.
    cut: str = ""

    @property
    def must(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level == "must")

    @property
    def should(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level == "should")

    def sides(self) -> tuple[str, ...]:
        """The sides that broke a rule here, TPP first."""
        found = {finding.side for finding in self.findings}
        return tuple(side for side in SIDES if side in found)


def chosen_refusal(statuses: Iterable[int] = (), code: str | None = None) -> AnswerDue:
    """The refusal a request that broke a rule is due where the spec states only that it is
    refused: a 4xx with the spec 7 body, with one of ``statuses`` (any 4xx when empty) and
    ``code`` where given, each the suite's choice (should)."""
    return answer_due(tuple(statuses), code, BODY_SCHEMA_ERROR, CHOSEN_STATUS)


@dataclass(frozen=True)
class GradedViolation:
    """A broken request rule graded: the TPP-side finding and the answer the bank then owes,
    ``due`` (the rule's own :class:`~conformance.contract.violation.Violation`, or a rule of the
    judge's: the route, the query, the body, the traffic's state). A refusal at all is due at
    :attr:`refused_at`: the finding's level unless ``refusal_level`` says another."""

    finding: Finding
    due: AnswerDue
    refusal_level: str = ""

    @property
    def refused_at(self) -> str:
        """The level at which a refusal (a 4xx with the spec 7 body) is due."""
        return self.refusal_level or self.finding.level
