"""The judged exchange and its findings: which side broke which rule, graded must or should."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from conformance.traffic.grading import quote_text

if TYPE_CHECKING:
    from conformance.exchange import Exchange

__all__ = ["BANK", "SIDES", "TPP", "JudgedExchange", "TrafficFinding"]

#: The TPP broke the rule with its request.
TPP: Final = "TPP"
#: The bank broke the rule with its answer.
BANK: Final = "bank"
SIDES: Final = (TPP, BANK)


@dataclass(frozen=True)
class TrafficFinding:
    """One broken rule in one exchange.

    ``side`` is who broke it (:data:`TPP`: its request; :data:`BANK`: its answer); ``rule`` a
    stable requirement id (``TPP-signature-digest``, ``ERR-2-kid-invalid``, ``BANK-status``);
    ``level`` must or should (``conformance.traffic.grading``); ``place`` where exactly (a header
    name, a JSON pointer into the body, ``status``); ``quotes`` the labels of the sentences of
    interface.md that state a must (``schemas/quotes.json``; :attr:`quote` is their text);
    ``basis`` the reading a should rests on.
    """

    side: str
    rule: str
    level: str
    title: str
    spec: str
    place: str = ""
    quotes: tuple[str, ...] = ()
    basis: str = ""

    @property
    def quote(self) -> str:
        """The quoted sentences, each naming its spec part ("" for none)."""
        return quote_text(self.quotes)

    def line(self) -> str:
        """``TPP must TPP-signature-digest at Digest: ...``: the finding in one line."""
        where = f" at {self.place}" if self.place else ""
        return f"{self.side} {self.level} {self.rule}{where}: {self.title}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "side": self.side,
            "rule": self.rule,
            "level": self.level,
            "title": self.title,
            "spec": self.spec,
            "place": self.place,
            "quotes": list(self.quotes),
            "quote": self.quote,
            "basis": self.basis,
        }


@dataclass(frozen=True)
class JudgedExchange:
    """One exchange with its verdict: the operation it was routed to (None: none of the
    contract's) and its findings; ``skipped`` says why it was not judged (outside ``/v1``, no
    answer from the target), else ""."""

    index: int
    exchange: Exchange
    operation: str | None
    findings: tuple[TrafficFinding, ...] = ()
    skipped: str = ""

    @property
    def must(self) -> tuple[TrafficFinding, ...]:
        return tuple(f for f in self.findings if f.level == "must")

    @property
    def should(self) -> tuple[TrafficFinding, ...]:
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

    finding: TrafficFinding
    refusal: Refusal
