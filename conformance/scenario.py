"""What one conformance scenario is (a frozen value: the request, the requirement, the answer due),
and the seeds of its data: the run's (``--seed``, :func:`run_seed`) and each scenario's
(:func:`scenario_seed`).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conformance.contract.requirements import AnswerDue
from conformance.errors import ConformanceError

__all__ = [
    "ACTIONS",
    "CERTIFICATE_RULES",
    "DEFAULT_SEED",
    "KINDS",
    "LEVELS",
    "SECURITY_RULES",
    "TARGETS",
    "FrozenObject",
    "Mutation",
    "Scenario",
    "freeze",
    "parse_seed",
    "run_seed",
    "scenario_seed",
    "thaw",
]

#: The scenario kinds: each is a generation module of ``generate`` and a runner of ``runners``
#: of the same name.
KINDS = ("positive", "constraint", "header", "auth", "rule", "flow", "version", "robustness")
#: The security group's rules on certificates as banks and supervisors check them beyond spec 5:
#: revocation, the certificate's type, the QWAC's roles, the pairing of QWAC and seal.
CERTIFICATE_RULES = frozenset(
    {
        "AUTH-revoked-certificate",
        "AUTH-seal-is-qwac",
        "AUTH-qwac-missing-role",
        "AUTH-qwac-other-organisation",
    }
)
#: The rules of the security group (docs/explanation/security.md): what a bank's security review
#: asks and the spec does not state, graded should.
SECURITY_RULES = (
    frozenset(
        {
            "AUTH-other-tpp",
            "AUTH-other-psu",
            "AUTH-replay",
            "AUTH-date-far-past",
            "AUTH-date-far-future",
            "AUTH-expired-certificate",
            "AUTH-certificate-other-ca",
        }
    )
    | CERTIFICATE_RULES
)
#: ``must``: the spec states it; ``should``: inferred from a convention where the spec is silent.
LEVELS = ("must", "should")
#: Where a :class:`Mutation` applies.
TARGETS = ("body", "query", "path", "header")
#: What a :class:`Mutation` does at its pointer.
#:
#: * ``remove``: delete the member (body), the parameter or the header;
#: * ``set``: put :attr:`Mutation.value` there, creating missing intermediate objects (body), or
#:   send it as the parameter's or header's text;
#: * ``resize``: make the array at the pointer hold ``value`` items, repeating its first item, or
#:   for identifiers that must be distinct (``paymentIds``) fresh ones the runner creates;
#: * ``duplicate``: append a copy of the array's first item (breaks ``uniqueItems``);
#: * ``set-alone``: ``set``, then keep only the item of the innermost array the pointer goes
#:   through (a value swept in one item is then in no other: a bank may refuse two balances of
#:   one ``balanceType``, and the spec states no such uniqueness either way).
ACTIONS = ("remove", "set", "resize", "duplicate", "set-alone")


@dataclass(frozen=True, slots=True)
class FrozenObject:
    """An immutable JSON object: its members as ``(name, value)`` pairs in their order."""

    items: tuple[tuple[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {name: thaw(value) for name, value in self.items}


def freeze(value: Any) -> Any:
    """The immutable form of a JSON value: lists become tuples, dicts :class:`FrozenObject`."""
    if isinstance(value, Mapping):
        return FrozenObject(tuple((str(name), freeze(item)) for name, item in value.items()))
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """The JSON form to send of a frozen value: tuples become lists, :class:`FrozenObject` dicts."""
    if isinstance(value, FrozenObject):
        return value.to_dict()
    if isinstance(value, tuple):
        return [thaw(item) for item in value]
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutation:
    """One change to a valid base request, breaking (or, in positive sweeps, exercising) one thing.

    ``pointer`` locates the change: JSON-pointer parts into the body (an array body's items start
    with an index: ``(0, "amount")``), or ``(name,)`` for a query or path parameter or a header.
    ``value`` is JSON-ready and immutable (see :func:`thaw`); for ``query``, ``path`` and
    ``header`` targets it is the exact text to send. ``keyword`` is the JSON Schema keyword broken
    (``maxLength``, ``enum``, ``required`` ...), or the keyword a positive sweep walks (``enum``).
    Keyword-only because ``keyword`` is required but follows the defaulted ``value``.
    """

    target: str
    pointer: tuple[str | int, ...]
    action: str
    value: Any = None
    keyword: str

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"mutation target {self.target!r} is not one of {TARGETS}")
        if self.action not in ACTIONS:
            raise ValueError(f"mutation action {self.action!r} is not one of {ACTIONS}")

    @property
    def json_value(self) -> Any:
        """:attr:`value` as it is sent (lists and dicts)."""
        return thaw(self.value)


@dataclass(frozen=True, slots=True)
class Scenario:
    """One generated test: a request (or flow) against one operation and the answer it requires.

    ``id`` is the pytest id, stable across runs and ending in the outcome (``-accepted``,
    ``-rejected``, ``-is-...``). ``rule`` is the requirement id (a ``rules.json`` row id, or a
    generated one: ``SCH-<keyword>``, ``HDR-...``, ``AUTH-<case>``, ``POS-<op>``, ``ROB-<case>``,
    ``VER-<value>``, ``STATE-...``); ``spec`` the spec part it comes from; ``level`` ``must`` or
    ``should``; ``kind`` the runner. ``variant`` names the base request a factory builds (empty:
    the operation's default). ``params`` are runner-specific and immutable; ``assumptions`` are the
    contract's assumption texts the verdict rests on.

    ``quotes`` are the labels of the spec's sentences that state the requirement (``quotes.json``;
    ``conformance.contract.quoted`` gives their text): every must scenario has at least one, and
    a must failure shows them. ``reading`` is, for a should scenario, the reading of the spec it
    rests on, which the reports show as "our reading: ...". ``requirement`` is the id of the
    contract's requirement (``Contract.requirement``) the scenario is graded by, "" where the
    generator still grades it itself; a constraint's is ``SCH-request`` where ``rule`` names the
    keyword, a flow's is the flow's name where ``rule`` is ``STATE-<name>``.
    """

    id: str
    operation: str
    rule: str
    spec: str
    level: str
    kind: str
    title: str
    expect: AnswerDue
    mutation: Mutation | None = None
    variant: str = ""
    params: tuple[tuple[str, Any], ...] = ()
    assumptions: tuple[str, ...] = ()
    quotes: tuple[str, ...] = ()
    reading: str = ""
    requirement: str = ""

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"{self.id}: level {self.level!r} is not one of {LEVELS}")
        if self.kind not in KINDS:
            raise ValueError(f"{self.id}: kind {self.kind!r} is not one of {KINDS}")

    def param(self, name: str, default: Any = None) -> Any:
        """The value of one of :attr:`params` (thawed to its JSON form), or ``default``."""
        for key, value in self.params:
            if key == name:
                return thaw(value)
        return default


def scenario_seed(run_seed: int, scenario_id: str) -> int:
    """The seed of one scenario's data: stable across runs, machines and xdist workers."""
    digest = hashlib.sha256(f"{run_seed}:{scenario_id}".encode()).hexdigest()
    return int(digest[:8], 16)


#: The default seed of a run against the bundled reference server (:func:`run_seed`): the date
#: of the spec release the suite checks (1.22.0, 2026-01-29), so that two bundled runs of the same
#: suite send the same data unless asked otherwise.
DEFAULT_SEED = 20260129


def parse_seed(text: str | int | None) -> int:
    """``None`` → :data:`DEFAULT_SEED`; ``"random"`` → a fresh one; else a whole number ≥ 0.

    A random seed is drawn once, in the process that starts the run, and handed to every xdist
    worker: the data of one run is reproducible from the seed the header and reports print.
    """
    if text is None:
        return DEFAULT_SEED
    if isinstance(text, int):
        value = text
    elif text.strip().lower() == "random":
        return secrets.randbelow(2**31)
    else:
        try:
            value = int(text.strip(), 10)
        except ValueError:
            raise ConformanceError(
                f"--seed must be a whole number or 'random', not {text!r}"
            ) from None
    if value < 0:
        raise ConformanceError(f"--seed must not be negative, not {value}")
    return value


def run_seed(text: str | int | None, *, bundled: bool) -> int:
    """The seed of a run: ``--seed`` when given (:func:`parse_seed`); else :data:`DEFAULT_SEED`
    for the bundled reference server, which starts empty on every run, and a random one for any
    other target.

    A target keeps what a run created (customers, accounts, payments), and the same seed creates
    the same things again, which the target rightly refuses (the account number exists, the
    payment is a logical duplicate): a second run with the first one's seed would fail in its
    set-up. The seed is printed either way; it reproduces a run's data on a target that does not
    hold that data yet (a fresh sandbox, or one reset by its data fill).
    """
    if text is None:
        return DEFAULT_SEED if bundled else parse_seed("random")
    return parse_seed(text)
