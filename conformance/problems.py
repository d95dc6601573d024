"""What a check found wrong, as one :class:`Problem`: the check, the place, the kind of value that
broke it, and the exact place and value in words; and the cause id that groups the failures
sharing a problem across operations and scenarios.

A target that breaks one rule everywhere (codes outside spec 7's list in every payment error
body, say) fails dozens of scenarios for one reason. The reports list that reason once, with
the scenarios it covers: the failures are grouped by :func:`cause_id`, made of the check's id,
the place normalised (array indices as ``[*]``) and the kind of value (a JSON Schema keyword, a
status); the value itself is left out, so ``'CERTIFICATE_INVALID'`` in one scenario and
``'SIGNATURE_INVALID'`` in the next are one cause. A problem that only says the scenario's own
requirement did not hold (a status) is grouped per requirement too.

An acceptance (a request the spec says is refused came back 2xx) is grouped by what the request
broke (:class:`Breach`): the place (a body field, a query or path parameter, a header) and the
rule (a JSON Schema keyword, a rule in a few words), and for a body field or parameter the family
of operations it belongs to. So a payment's ``creditorName`` of 71 characters accepted by E16,
E17 and E18, whether a schema scenario or a rule row sent it, is one cause that names the field;
a header is the interface's (spec 4.2 and spec 5 give every operation one set), so a PSU-ID whose
format is never checked is one cause across every family.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jsonschema import ValidationError

from conformance.contract.facts import field_kind

if TYPE_CHECKING:
    from conformance.scenario import Mutation

__all__ = [
    "ACCEPTED",
    "SHOWN_PLACES",
    "Breach",
    "Problem",
    "body_breach",
    "breach_of_mutation",
    "cause_id",
    "listed_details",
    "normalised_place",
    "schema_problems",
    "unique_problems",
]

#: How many places and values a message names before saying "and N more".
SHOWN_PLACES = 5
#: The longest value a detail quotes (longer ones are cut with "…").
_VALUE_CHARS = 60
#: How many allowed values an enum detail lists when its schema does not describe them.
_ENUM_SHOWN = 6
_INDEX = re.compile(r"\[[0-9]+\]")
#: :attr:`Problem.check` of an acceptance: a request due a refusal was answered 2xx.
ACCEPTED = "accepted"
#: :attr:`Problem.kind` of an acceptance, whatever the 2xx (201 on a creation, 200 on a read).
ACCEPTED_KIND = "2xx"


@dataclass(frozen=True)
class Problem:
    """One thing a check found wrong.

    ``check``: which check found it (``schema``, ``status``, ``json-body``, ...); ``place``:
    where, as found (``tppMessages[0].code``; a header name; ``HTTP status``); ``kind``: the
    kind of value that broke it (the JSON Schema keyword, the status received); ``detail``: the
    exact place and value in words (```tppMessages[0].code` is 'X', not one of ...``).
    ``per_requirement``: the problem says only that the scenario's own requirement did not hold,
    so it is one cause per requirement (rule id), not one across requirements.
    """

    check: str
    place: str
    kind: str
    detail: str
    per_requirement: bool = False

    def signature(self, rule: str, broken: str = "") -> str:
        """What failures sharing this cause have in common (readable; :func:`cause_id`):
        ``broken`` is :meth:`Breach.key` of what the request broke, which replaces ``rule`` for
        an acceptance."""
        parts = [self.check, normalised_place(self.place), self.kind]
        if self.check == ACCEPTED and broken:
            parts.append(broken)
        elif self.per_requirement:
            parts.append(rule)
        return "|".join(parts)


def cause_id(problem: Problem, rule: str, broken: str = "") -> str:
    """The stable id of ``problem``'s cause (``cause-`` and 8 hex digits of its signature), the
    same in every worker and every run; ``rule``: the requirement of the scenario it was found
    in, part of the cause only for a :attr:`Problem.per_requirement` problem; ``broken``: what
    the request broke (:meth:`Breach.key`), which groups an acceptance instead of ``rule``."""
    digest = hashlib.sha256(problem.signature(rule, broken).encode("utf-8")).hexdigest()
    return f"cause-{digest[:8]}"


@dataclass(frozen=True)
class Breach:
    """What a request broke on purpose: ``target`` (``body``, ``query``, ``path`` or
    ``header``), ``place`` (a body field's dotted path such as ``creditorAccount.bban``, a
    parameter's or header's name) and ``rule`` (a JSON Schema keyword such as ``maxLength``, or a
    rule of the spec in a few words: ``clock skew``); ``detail`` says how, for people only
    (``71 characters``), never part of the cause."""

    target: str
    place: str
    rule: str
    detail: str = ""

    def key(self, family: str) -> str:
        """The break, as causes group it: a header is the interface's (``header psu-id|format``);
        a body field or a parameter belongs to its ``family`` of operations
        (``payments|body creditorName|maxLength``). A body field of a kind several fields share
        (``contract.facts.FIELD_KINDS``: an IBAN, a creditor address part) is grouped by that
        kind, so one rule broken on it in several fields of a family is one cause
        (``payments|body kind iban|maxLength`` for ``creditorAccount.iban`` and
        ``debtorAccount.iban``)."""
        if self.target == "header":
            return f"header {self.place.lower()}|{self.rule}"
        kind = field_kind(_INDEX.sub("", self.place).split(".")) if self.target == "body" else ""
        if kind:
            return f"{family}|{self.target} kind {kind}|{self.rule}"
        return f"{family}|{self.target} {normalised_place(self.place)}|{self.rule}"

    def words(self) -> str:
        """```creditorName` (body) breaks maxLength (71 characters)``: what a cause names."""
        how = f" ({self.detail})" if self.detail else ""
        return f"`{self.place}` ({self.target}) breaks {self.rule}{how}"


def body_breach(pointer: Iterable[str | int], rule: str, detail: str = "") -> Breach:
    """A body field's :class:`Breach`, its place written as a schema error's (``[0].iban``)."""
    return Breach("body", _place(pointer), rule, detail)


def breach_of_mutation(mutation: Mutation | None) -> Breach | None:
    """What a scenario's one change breaks: its place and keyword (None: no change, or one of
    a positive sweep)."""
    if mutation is None or not mutation.keyword:
        return None
    value = mutation.json_value
    detail = ""
    if mutation.keyword in ("maxLength", "minLength") and isinstance(value, str):
        detail = f"{len(value)} characters"
    elif mutation.action == "remove":
        detail = "left out"
    if mutation.target == "body":
        return body_breach(mutation.pointer, mutation.keyword, detail)
    place = str(mutation.pointer[0]) if mutation.pointer else ""
    return Breach(mutation.target, place, mutation.keyword, detail)


def normalised_place(place: str) -> str:
    """``tppMessages[0].code`` → ``tppMessages[*].code``: array indices do not make a cause."""
    return _INDEX.sub("[*]", place)


def unique_problems(problems: Iterable[Problem], rule: str = "") -> tuple[Problem, ...]:
    """The first problem of each signature, in order (two message items with the same wrong
    code are one problem of the answer)."""
    seen: set[str] = set()
    kept: list[Problem] = []
    for problem in problems:
        key = problem.signature(rule)
        if key not in seen:
            seen.add(key)
            kept.append(problem)
    return tuple(kept)


def listed_details(problems: Sequence[Problem]) -> str:
    """The problems' details joined, the first :data:`SHOWN_PLACES` of them and "and N more"."""
    shown = "; ".join(problem.detail for problem in problems[:SHOWN_PLACES])
    more = len(problems) - SHOWN_PLACES
    return shown + (f"; and {more} more" if more > 0 else "")


# --- schema errors ------------------------------------------------------------------------------


def schema_problems(errors: Iterable[ValidationError]) -> tuple[Problem, ...]:
    """One problem per schema error, ordered by place, each naming its place and value."""
    ordered = sorted(errors, key=lambda error: (list(map(str, error.absolute_path)), error.message))
    return tuple(_schema_problem(error) for error in ordered)


def _place(path: Iterable[Any]) -> str:
    """A JSON path without ``$``: ``tppMessages[0].code``; the body itself is ``(the body)``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(the body)"


def _value(value: Any) -> str:
    """A value as a detail quotes it: strings in single quotes, the rest as JSON."""
    text = f"'{value}'" if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"


_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return "null"


def _enum_detail(place: str, error: ValidationError) -> str:
    allowed = error.validator_value if isinstance(error.validator_value, list) else []
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    described = str(schema.get("description", "")).strip().rstrip(".")
    if described:
        which = f"the {len(allowed)} values its schema allows ({described})"
    else:
        listed = ", ".join(str(item) for item in allowed[:_ENUM_SHOWN])
        which = f"{listed}, …" if len(allowed) > _ENUM_SHOWN else listed
    return f"`{place}` is {_value(error.instance)}, not one of {which}"


def _schema_problem(error: ValidationError) -> Problem:
    keyword = str(error.validator)
    place = _place(error.absolute_path)
    value = error.instance
    if keyword == "required" and isinstance(error.validator_value, list):
        missing = error.message.split("'")[1] if "'" in error.message else "a member"
        place = _place([*error.absolute_path, missing])
        detail = f"`{place}` is missing (required)"
    elif keyword == "enum":
        detail = _enum_detail(place, error)
    elif keyword == "const":
        detail = f"`{place}` is {_value(value)}, not {_value(error.validator_value)}"
    elif keyword == "type":
        wanted = error.validator_value
        names = wanted if isinstance(wanted, list) else [wanted]
        words = " or ".join(_TYPE_WORDS.get(str(name), str(name)) for name in names)
        detail = f"`{place}` is {_value(value)} ({_kind_of(value)}), not {words}"
    elif keyword in ("maxLength", "minLength") and isinstance(value, str):
        than = "more" if keyword == "maxLength" else "fewer"
        detail = (
            f"`{place}` has {len(value)} characters, {than} than {error.validator_value} "
            f"({_value(value)})"
        )
    elif keyword == "pattern":
        detail = f"`{place}` is {_value(value)}, which does not match {error.validator_value}"
    elif keyword == "format":
        detail = f"`{place}` is {_value(value)}, not a valid {error.validator_value}"
    elif keyword in ("maxItems", "minItems") and isinstance(value, list):
        than = "more" if keyword == "maxItems" else "fewer"
        detail = f"`{place}` has {len(value)} items, {than} than {error.validator_value}"
    else:
        detail = f"`{place}`: {_short_message(error.message)}"
    return Problem("schema", place, keyword, detail)


def _short_message(message: str) -> str:
    return message if len(message) <= 200 else message[:199] + "…"
