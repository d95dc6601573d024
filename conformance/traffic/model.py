"""The judged exchange and its findings (``report.verdicts.Finding``, with its ``side``): which side
broke which rule, graded must or should."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from conformance.report.verdicts import Finding

if TYPE_CHECKING:
    from conformance.exchange import Exchange

__all__ = ["BANK", "SIDES", "TPP", "JudgedExchange"]

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


@dataclass(frozen=True)
class Refusal:
    """The answer a request that broke a rule is due: refused (a 4xx with the spec 7 body) at
    ``level``; with one of ``statuses`` and ``code`` where given, each must only when the spec
    states it (``status_stated``, ``code_stated``), should otherwise."""

    level: str
    statuses: tuple[int, ...] = ()
    code: str | None = None
    status_stated: bool = False
    code_stated: bool = False


@dataclass(frozen=True)
class GradedViolation:
    """A broken request rule graded: the TPP-side finding and the refusal the bank then owes
    (the rule's own :class:`~conformance.contract.violation.Violation`, or a rule of the judge's:
    the route, the query, the body, the traffic's state)."""

    finding: Finding
    refusal: Refusal
