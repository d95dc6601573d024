"""The fields the sandbox creations require beyond the suite's (``[setup] templates``; spec
4.1: the sandbox creations' "request and response shapes: not shown"), read from the bank's 400
answers without making anything.

Two probes per creation the bank offers: an empty body, whose refusal names the fields the bank
requires (``tppMessages`` paths, "'x' is a required property"); and, for the creations whose
owner is named in the body (an account, a card account), the suite's own body for an owner no
bank holds, refused for a field the suite leaves out before (or instead of) the unknown owner.
A field named there that the suite's body lacks goes into that creation's template, with the
first value the contract's schema allows for it (its ``const``, ``default`` or first ``enum``
value); a field the contract does not know is left for the reader (``null``, a comment says
so). A refusal that names a field of the suite's body as one the bank does not take ("iban:
unknown field", "Additional properties are not allowed ('iban' was unexpected)") teaches the
opposite: the template sets it to ``null``, which removes it from the suite's body
(:mod:`conformance.profile.templates`), and the body is sent again without it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from conformance.discover.evidence import Decision, decided, describe, undecided
from conformance.discover.probe import document_of
from conformance.generate import factories

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.discover.probe import Prober
    from conformance.exchange import Exchange

__all__ = ["CREATIONS", "decide_templates", "named_fields", "unknown_fields"]

_KEY = ("setup", "templates")
_NOBODY_CUSTOMER = "00000000"
_SEED = 31
_REQUIRED = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)' is a required property")
#: How many times one creation is sent again with a field its refusal named.
_ROUNDS = 4
#: A field named by a path: "iban", "/iban" (a JSON pointer), "$.iban" (a JSONPath).
_PATH_FIELD = re.compile(r"^(?:/|\$\.)?([A-Za-z_][A-Za-z0-9_]*)$")
#: A message naming a required field: "iban is required", "$.iban: is required".
_IS_REQUIRED = re.compile(r"^(?:\$\.|/)?([A-Za-z_][A-Za-z0-9_]*):? (?:is|are) required\b")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
#: How a refusal says a field is one the bank does not take: "iban: unknown field", "unknown
#: field 'iban'", "field iban is not allowed", and jsonschema's additionalProperties message.
_UNKNOWN = (
    re.compile(  # not "body: unknown member 'iban'", which names the field after it
        rf"\b({_NAME}): (?:unknown|unexpected|unrecognized|not allowed)"
        r"(?! (?:field|property|key|member)s?:? ['\"`]?[A-Za-z_])",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?:unknown|unexpected|unrecognized) (?:field|property|key|member)s?:? "
        rf"['\"`]?({_NAME})",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?:field|property) ['\"`]?({_NAME})['\"`]? is (?:not allowed|unknown|unexpected)",
        re.IGNORECASE,
    ),
)
_ADDITIONAL = re.compile(r"Additional properties are not allowed \((.*?) (?:was|were) unexpected")
_QUOTED = re.compile(rf"'({_NAME})'")

#: The suite's body of each top-level sandbox creation, for an owner no bank holds (None: the
#: creation names no owner in its body, so its own body would make something).
CREATIONS: Mapping[str, Callable[[], dict[str, Any]] | None] = {
    "SCU": None,
    "SA": lambda: factories.sandbox_account_create(_SEED, _NOBODY_CUSTOMER),
    "SCA": lambda: factories.sandbox_card_account_create(_SEED, _NOBODY_CUSTOMER),
    "SAG": None,
}
#: The suite's own body keys per creation (what "beyond ours" is measured against).
_OURS: Mapping[str, Callable[[], Mapping[str, Any]]] = {
    "SCU": lambda: factories.sandbox_customer_create(_SEED),
    "SA": lambda: factories.sandbox_account_create(_SEED, _NOBODY_CUSTOMER),
    "SCA": lambda: factories.sandbox_card_account_create(_SEED, _NOBODY_CUSTOMER),
    "SAG": lambda: factories.sandbox_agreement_create(_SEED, None),
}


def named_fields(exchange: Exchange) -> list[str]:
    """The body fields a 400 answer names: its ``tppMessages`` paths and the required
    properties its message lists."""
    if exchange.status != 400:
        return []
    document = document_of(exchange)
    found: list[str] = []
    items = [document, *(item for item in document.get("tppMessages") or () if item)]
    for item in items:  # the error body's own path, and each tppMessages entry's
        if isinstance(item, Mapping) and isinstance(item.get("path"), str):
            matched = _PATH_FIELD.match(item["path"])
            if matched:
                found.append(matched.group(1))
    message = document.get("message")
    if isinstance(message, str):
        found.extend(_REQUIRED.findall(message))
        matched = _IS_REQUIRED.match(message)
        if matched:
            found.append(matched.group(1))
    return list(dict.fromkeys(found))


def unknown_fields(exchange: Exchange) -> list[str]:
    """The body fields a 400 answer names as ones the bank does not take (its message, and the
    texts of its ``tppMessages``, with their paths)."""
    if exchange.status != 400:
        return []
    found: list[str] = []
    for text, at in _refusal_texts(document_of(exchange)):
        for pattern in _UNKNOWN:
            found.extend(pattern.findall(text))
        for listed in _ADDITIONAL.findall(text):
            found.extend(_QUOTED.findall(listed))
        if at is not None and re.search(r"\b(?:unknown|unexpected|not allowed)\b", text, re.I):
            found.append(at)
    return list(dict.fromkeys(found))


def _refusal_texts(document: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """A refusal's texts, each with the field its ``tppMessages`` path names (else None)."""
    texts: list[tuple[str, str | None]] = []
    if isinstance(document.get("message"), str):
        texts.append((document["message"], None))
    for item in document.get("tppMessages") or ():
        if isinstance(item, Mapping):
            path = item.get("path")
            matched = _PATH_FIELD.match(path) if isinstance(path, str) else None
            for word in ("text", "message"):
                if isinstance(item.get(word), str):
                    texts.append((item[word], matched.group(1) if matched else None))
    return texts


def value_for(contract: Contract, op_id: str, name: str) -> Any:
    """The first value the contract's request schema allows for ``name``, else None."""
    schema = contract.operations[op_id].request_schema
    if schema is None:
        return None
    properties = contract.resolve(schema).get("properties", {})
    if name not in properties:
        return None
    field = contract.resolve(properties[name])
    for word in ("const", "default"):
        if word in field:
            return field[word]
    enum = field.get("enum")
    return enum[0] if enum else None


def decide_templates(prober: Prober, exists: Mapping[str, bool | None]) -> Decision:
    """``[setup] templates``: per creation, the fields beyond the suite's (module docstring);
    a refusal that names one teaches it, and the suite's set-up body is sent again with it
    until no refusal names another (:func:`_learn`). Decided as ``{}`` when none does."""
    templates: dict[str, dict[str, Any]] = {}
    evidence: list[Exchange | str] = []
    probed = 0
    for op_id, ours_for_nobody in CREATIONS.items():
        if not exists.get(op_id):
            continue
        fields: dict[str, Any] = {}
        removed: set[str] = set()
        firsts: list[Callable[[], dict[str, Any]]] = [dict]
        if ours_for_nobody is not None:
            firsts.append(ours_for_nobody)
        for first in firsts:
            probed += _learn(prober, op_id, first(), fields, evidence, removed)
        if fields:
            templates[op_id] = fields
    if not probed:
        return undecided(_KEY, None, "no sandbox creation answered")
    if not templates:
        evidence.append("no refusal of an empty or an owner-less body named a field beyond ours")
    return decided(_KEY, templates, *evidence)


def _learn(
    prober: Prober,
    op_id: str,
    body: dict[str, Any],
    fields: dict[str, Any],
    evidence: list[Exchange | str],
    removed: set[str],
) -> int:
    """Send ``body``; while the refusal names a field beyond the suite's and ``fields``, add it
    (its first value the contract allows), and while it names a field of the body as one the
    bank does not take, remove it (``null`` in ``fields``, its name in ``removed``); then send
    the suite's set-up body so changed (for an owner no bank holds where the body names one).
    How many answers came."""
    ours = set(_OURS[op_id]())
    setup = CREATIONS[op_id] or _OURS[op_id]
    answered = 0
    answer = prober.request(op_id, body=body)
    for _ in range(_ROUNDS):
        if answer is None:
            break
        answered += 1
        if answer.status in (200, 201):
            prober.notes.append(
                f"{describe(answer)}: made by the probe of {op_id}'s fields, kept (the sandbox "
                "API has no operation that deletes it)"
            )
            break
        beyond = [n for n in named_fields(answer) if n not in ours and n not in fields]
        refused = [n for n in unknown_fields(answer) if n in body and n not in fields]
        if not beyond and not refused:
            break
        if beyond:
            evidence.append(f"{', '.join(beyond)} taught by: {describe(answer)}")
        if refused:
            evidence.append(f"{', '.join(refused)} removed (null), taught by: {describe(answer)}")
        for name in beyond:
            fields[name] = value_for(prober.contract, op_id, name)
        removed.update(refused)
        fields.update(dict.fromkeys(refused))
        body = _with_fields(setup(), fields, removed)
        answer = prober.request(op_id, body=body)
    return answered


def _with_fields(
    body: Mapping[str, Any], fields: Mapping[str, Any], removed: set[str]
) -> dict[str, Any]:
    """The suite's set-up body with the learned fields: a removed one taken out (as the
    template's ``null`` does), every other one set."""
    merged = {key: value for key, value in body.items() if key not in removed}
    merged.update({key: value for key, value in fields.items() if key not in removed})
    return merged
