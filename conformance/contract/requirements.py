"""What a requirement of the contract is graded: must with the spec's sentences that state it, or
should with the reading it rests on (DESIGN.md, "Verdicts"), decided here once from what the
contract carries, for every side that grades a break.

The grade comes from the contract's data: a rule row's ``quotes`` and ``reading`` (per operation
where the row names one), a flow row's (``flows.json``), and an operation's place in the spec (one
spec 4.1 numbers, :attr:`~conformance.contract.model.Operation.numbered`, or one it only names)
and its ``assumptions`` by topic. The traffic judge grades its findings by it
(``conformance.traffic.grading``).

The answer a requirement makes due is one value too, :class:`AnswerDue`: the statuses, the code,
which of them the spec states (must) and which the suite chose where the spec is silent (should),
and the body it is judged against. A scenario carries it as its ``expect``; the traffic judge
holds the answer to a request that broke a rule against it (``conformance.traffic.model``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from conformance.contract import said_of

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.contract.model import Operation, Rule

__all__ = [
    "BASKET_CODES_READING",
    "BODY_SCHEMA_ERROR",
    "BODY_SCHEMA_RESPONSE",
    "CHOSEN_CODE",
    "CHOSEN_CODE_READING",
    "CHOSEN_STATUS",
    "CHOSEN_STATUS_READING",
    "CODE",
    "ERROR_BODY_READING",
    "ERROR_FIELDS_READING",
    "MUST",
    "REFUSED",
    "SHOULD",
    "STATUS",
    "AnswerDue",
    "Grade",
    "Miss",
    "Requirement",
    "answer_due",
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

# The readings of an answer due where the spec shows less than the suite expects (spec 7):
#: The reading of an error body where the spec shows none.
ERROR_BODY_READING = (
    "every operation answers an error with the spec 7 error body; spec 7 shows it for E2, E16, "
    "E17 and E18 only ('Error responses of the remaining operations: not shown')"
)
#: The reading of the spec 7 body's required members (its table has no Required column).
ERROR_FIELDS_READING = (
    "an error body carries status and code: spec 7's table has no Required column (only "
    "'message' is said to be absent in some answers)"
)

#: The readings behind a chosen status or code (only a should finding).
CHOSEN_STATUS_READING = (
    "the spec states that the request is refused but shows no status; we expect this one"
)
CHOSEN_CODE_READING = "the spec shows no code for this refusal; we expect this one"
#: The reading of the spec 7 code list on basket answers (E1, E2).
BASKET_CODES_READING = (
    "spec 7's tppMessages code list ('of payment responses') applies to basket answers too; "
    "E2's own row shows RESOURCE_BLOCKED, which is not in it"
)


#: :attr:`AnswerDue.body`: validate against ``op.responses[status].schema``.
BODY_SCHEMA_RESPONSE: Final = "response"
#: :attr:`AnswerDue.body`: validate against the spec 7 error body (``errors.json``
#: ``ErrorResponse``), for answers the operation does not document (404 on an unknown path, 405).
BODY_SCHEMA_ERROR: Final = "error"

#: What of an answer the suite chose where the spec is silent, as ``rules.json``'s ``chosen``
#: says it (:func:`answer_due`): the code only, or the status and the code.
CHOSEN_CODE: Final = "code"
CHOSEN_STATUS: Final = "status"


@dataclass(frozen=True, slots=True)
class AnswerDue:
    """The answer a requirement makes due.

    ``statuses`` lists every acceptable HTTP status (empty: any refusal). ``code`` is the spec 7
    ``code`` (for payment operations it may instead appear in ``tppMessages[].code``) when one is
    due. ``status_stated`` and ``code_stated`` say whether the spec states the status and the
    code (judged at must) or the suite chose them where the spec is silent (judged at should,
    ``conformance.findings``; a refusal whose status is chosen is still a 4xx at must, never a
    2xx or a 5xx). ``body`` says what the answer body must validate against:
    :data:`BODY_SCHEMA_RESPONSE` (the operation's documented schema for the status received),
    :data:`BODY_SCHEMA_ERROR` (the spec 7 error body) or ``None`` (not checked by this answer;
    flows check each step).
    """

    statuses: tuple[int, ...] = ()
    code: str | None = None
    status_stated: bool = True
    code_stated: bool = True
    body: str | None = None

    @property
    def rejects(self) -> bool:
        """Whether every acceptable status is a client or server error (a negative scenario)."""
        return all(status >= 400 for status in self.statuses)

    def misses(self, status: int, codes: Collection[str]) -> tuple[Miss, ...]:
        """The one judge of a refusal against what is due, for the scenario runners
        (``runners.judging``) and the traffic judge (``traffic.answer_checks``): what of an answer
        with ``status`` and the error codes ``codes`` (``checks.error_codes``) is not due, in the
        order judged. :data:`REFUSED`: no 4xx, at the requirement's own level; :data:`STATUS`:
        none of ``statuses``; :data:`CODE`: not ``code``. Each is must where the spec states it
        (``stated``), should where the suite chose it; each side words its own failure."""
        found: list[Miss] = []
        if not 400 <= status < 500:
            found.append(Miss(REFUSED, stated=True))
        if self.statuses and status not in self.statuses:
            found.append(Miss(STATUS, stated=self.status_stated))
        if self.code is not None and self.code not in codes:
            found.append(Miss(CODE, stated=self.code_stated))
        return tuple(found)


#: The parts of a refusal :meth:`AnswerDue.misses` judges: a 4xx at all, the status, the code.
REFUSED: Final = "refused"
STATUS: Final = "status"
CODE: Final = "code"


@dataclass(frozen=True, slots=True)
class Miss:
    """A part of an answer that is not what is due (:data:`REFUSED`, :data:`STATUS` or
    :data:`CODE`): must when ``stated`` (the spec states it), should when the suite chose it."""

    part: str
    stated: bool


def answer_due(
    statuses: Iterable[int], code: str | None = None, body: str | None = None, chosen: str = ""
) -> AnswerDue:
    """The answer due with what the suite ``chosen`` (``rules.json``'s word): "" everything as
    stated, :data:`CHOSEN_CODE` the code only, :data:`CHOSEN_STATUS` the status and the code."""
    if chosen not in ("", CHOSEN_CODE, CHOSEN_STATUS):
        raise ValueError(f"chosen {chosen!r} is not one of '', {CHOSEN_CODE!r}, {CHOSEN_STATUS!r}")
    return AnswerDue(
        tuple(statuses),
        code,
        status_stated=chosen != CHOSEN_STATUS,
        code_stated=not chosen,
        body=body,
    )


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
    if not any(row.name == name for row in contract.flows):
        raise KeyError(f"no flow {name!r} in flows.json")
    return contract.requirement(name).grade


@dataclass(frozen=True, slots=True)
class Requirement:
    """One requirement of the contract, built once when it loads (``Contract.requirements``):
    ``id`` (a ``rules.json`` row, a ``flows.json`` flow, or one the contract's operations make:
    ``HDR-required``, ``HDR-format``, ``HDR-corporate-id``, ``SCH-request``, ``SCH-product``,
    ``ROB-<body case>``, ``SCA-link-at-creation``: ``conformance.contract.catalogue``), the
    operation it is judged on ("" for one judged on every operation alike), ``place`` (a header's
    name where the requirement is one per header), its ``spec`` part, its :class:`Grade` and the
    answer it makes due (``None`` where a flow's steps judge the answers). The scenario
    generators grade their scenarios by it and the traffic judge its findings, so the same
    break gets one grade on both sides."""

    id: str
    spec: str
    grade: Grade
    due: AnswerDue | None = None
    operation: str = ""
    place: str = ""

    @property
    def level(self) -> str:
        return self.grade.level

    @property
    def quotes(self) -> tuple[str, ...]:
        return self.grade.quotes

    @property
    def reading(self) -> str:
        return self.grade.reading

    @property
    def expected(self) -> AnswerDue:
        """The answer due (a flow's requirement has none: its steps judge each answer)."""
        if self.due is None:
            raise LookupError(f"{self.id}: a flow's steps judge its answers, none is due here")
        return self.due

    def at(self, *, reading: str = "", quotes: Iterable[str] = ()) -> Grade:
        """The grade of a break at one place of the schema (a constraint of a header, a body
        member or a query parameter): should with ``reading`` where the schema records one at
        the place (``x-assumed``, ``x-readings``), and with this requirement's own where it is a
        should (the operation or its request rests on a reading); else must with the place's
        ``quotes`` and the requirement's own."""
        if self.grade.level != MUST:
            texts = dict.fromkeys(text for text in (reading, self.grade.reading) if text)
            return Grade(self.grade.level, self.grade.quotes, "; ".join(texts))
        if reading:
            return grade(stated=False, reading=reading)
        return Grade(MUST, tuple(dict.fromkeys((*quotes, *self.grade.quotes))))


def on_unnamed(grade_: Grade, operation: Operation) -> Grade:
    """``grade_`` on ``operation``: on one interface.md neither shows nor names
    (``Operation.unnamed``) a must is should, resting on the reading that the bank offers the
    operation; it keeps its quotes, which bind where the bank promises the operation."""
    if not operation.unnamed or grade_.level != MUST:
        return grade_
    return Grade(SHOULD, grade_.quotes, operation.unnamed_reading)


def quote_text(labels: Iterable[str]) -> str:
    """The quotes of ``labels`` as a report shows them: ``spec 7 rule 2: "When a KID ..."``,
    each sentence once, as plain text, naming its own spec part ("" for none)."""
    return said_of(labels)
