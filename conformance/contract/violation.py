"""A broken rule, as both sides read it: the one :class:`Violation` type of the contract's rule
kernels, the spec 2.7 body rules (``crossfield``) and the request rules (``request_rules``).

A kernel only finds what is broken, where, and the answer then due; each side decides what to do
with it: the reference server answers it with its error (``reference_server.pipeline``), the
traffic judge grades it as a finding (``conformance.traffic.request_checks``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Violation"]


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule, located and coded as spec 7 would report it.

    ``path`` is where: a JSON-pointer-like location in the body without the leading slash
    (``instructedAmount/amount``, ``0/bookingDate`` for an item of an array body) for a body
    rule, a header's name for a request rule; ``code`` is the spec 7 code of the refusal (the
    reference server's choice where the spec names none); ``text`` says what is wrong in words a
    bank engineer can act on.

    A request rule also names itself (``rule``, the id its findings carry), the requirement of
    the contract it breaks (``requirement``, looked up on the operation at ``path``:
    ``catalogue.broken``; its :class:`~conformance.contract.requirements.AnswerDue` is the answer
    due, for the reference server and the traffic judge alike), the reference server's own status
    among those due (``status``), the spec part (``spec``) and the quotes that state the rule
    (``quotes``, labels of ``quotes.json``) or the reading it rests on (``reading``). A body rule
    leaves them empty: its row of ``rules.json`` says them.
    """

    path: str
    code: str
    text: str
    rule: str = ""
    requirement: str = ""
    status: int = 0
    spec: str = ""
    quotes: tuple[str, ...] = ()
    reading: str = ""
