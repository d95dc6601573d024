"""The bank's names of the query parameters whose names the spec does not state (``[query]``;
spec 4.3 names those of E1-E18 only): the account transactions' dates, ``fromDate`` and
``toDate`` in the contract, ``dateFrom`` and ``dateTo`` in NextGenPSD2 (issue 42).

Each candidate name is sent alone with a value that is no date, for an account the bank holds
(the sandbox's first, else one made for the probe with a customer of its own: both kept, as
the sandbox API deletes neither): the name the bank reads is refused (400, naming it, or the
only one of the candidates refused); a name it does not read is ignored. When no candidate, or
more than one, is refused, the name stays undecided (the contract's)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from conformance.discover.evidence import Decision, decided, undecided
from conformance.discover.probe import NOBODY, document_of
from conformance.generate import factories

if TYPE_CHECKING:
    from conformance.discover.probe import Prober
    from conformance.exchange import Exchange

__all__ = ["CANDIDATES", "decide_query_names", "required_query"]

#: Per operation and parameter, the names banks give it beside the contract's.
CANDIDATES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "AT": {"fromDate": ("dateFrom",), "toDate": ("dateTo",)},
}
#: A value no date parameter takes.
_NO_DATE = "not-a-date"
_SEED = 31


def _names(exchange: Exchange, name: str) -> bool:
    """Whether a 400 names the query parameter ``name`` (its ``tppMessages`` path, its
    ``path`` or its message)."""
    if exchange.status != 400:
        return False
    document = document_of(exchange)
    paths = [document.get("path")]
    paths.extend(
        item.get("path") for item in document.get("tppMessages") or () if isinstance(item, dict)
    )
    if name in paths:
        return True
    message = document.get("message")
    return isinstance(message, str) and re.search(rf"\b{re.escape(name)}\b", message) is not None


def _account_id(prober: Prober, exists: Mapping[str, bool | None]) -> str | None:
    """An account the sandbox holds: the first the customer list shows, else one made for the
    probe for the first customer listed (or one made for it), noted as kept; None when there is
    none to have."""
    listed = document_list(prober.request("E9")) if exists.get("E9") else []
    owner: str | None = None
    for customer in listed:
        if not isinstance(customer, dict):
            continue
        for account in customer.get("accounts") or ():
            account_id = _id_of(account)
            if account_id is not None:
                return account_id
        if owner is None and isinstance(customer.get("customerNumber"), str):
            owner = str(customer["customerNumber"])
    if not exists.get("SA"):
        return None
    if owner is None and exists.get("SCU"):
        made_customer = prober.new_customer("to own the account AT's query names are probed on")
        owner = None if made_customer is None else made_customer.customer_number
    if owner is None:
        return None
    templates = prober.profile.setup_templates.get("SA", {})
    body = {**factories.sandbox_account_create(_SEED, owner), **templates}
    made = prober.request("SA", body=body)
    document = document_of(made)
    account_id = _id_of(document.get("account", document))
    if made is None or made.status not in (200, 201) or account_id is None:
        return None
    prober.notes.append(
        f"sandbox account {account_id}: made to learn the names of AT's query parameters, kept "
        "(the sandbox API has no operation that deletes one)"
    )
    return account_id


def _id_of(account: Any) -> str | None:
    """A sandbox account's id: the item itself (a list of ids), or its ``resourceId`` or
    ``id`` (spec 2.9 shows neither the list's nor the creation's shape)."""
    if isinstance(account, str) and account:
        return account
    if isinstance(account, dict):
        for name in ("resourceId", "id"):
            if isinstance(account.get(name), str):
                return str(account[name])
    return None


def document_list(exchange: Exchange | None) -> list[Any]:
    """The answer's JSON array, or an empty one."""
    if exchange is None or exchange.status != 200:
        return []
    try:
        document = json.loads(exchange.response_body or b"null")
    except ValueError:
        return []
    return document if isinstance(document, list) else []


def decide_query_names(prober: Prober, exists: Mapping[str, bool | None]) -> list[Decision]:
    """One decision per parameter of :data:`CANDIDATES` of an operation the bank offers
    (module docstring)."""
    decisions: list[Decision] = []
    given = prober.profile.query_names
    prober.adopt(query_names={})  # each candidate sent under its own name
    try:
        for op_id, parameters in CANDIDATES.items():
            if not exists.get(op_id):
                continue
            account = _account_id(prober, exists) or NOBODY
            for name, others in parameters.items():
                decisions.append(_decide(prober, op_id, {"id": account}, name, others))
    finally:
        prober.adopt(query_names=given)
    return decisions


def required_query(prober: Prober, op_id: str) -> dict[str, str]:
    """The operation's required query parameters, each with the first value its schema's
    ``enum`` allows (AT's bookingStatus), so that the candidate is the only thing refused."""
    found: dict[str, str] = {}
    for parameter in prober.contract.operations[op_id].query_parameters:
        enum = parameter.schema.get("enum")
        if parameter.required and isinstance(enum, list) and enum:
            found[parameter.name] = str(enum[0])
    return found


def _decide(
    prober: Prober, op_id: str, values: dict[str, str], name: str, others: tuple[str, ...]
) -> Decision:
    key = ("query", op_id, name)
    answers: dict[str, Exchange] = {}
    required = required_query(prober, op_id)
    for candidate in (name, *others):
        query = {**required, candidate: _NO_DATE}
        changes = len(prober.changed.get(op_id, ()))
        answer = prober.request(op_id, path_values=values, query=query, repeat=True)
        if answer is None and len(prober.changed.get(op_id, ())) > changes:
            why = f"the answers with {candidate} changed between two probes"
            return undecided(key, name, why, prober.changed[op_id][-1])
        if answer is not None:
            answers[candidate] = answer
    named = [c for c, answer in answers.items() if _names(answer, c)]
    refused = [c for c, answer in answers.items() if answer.status == 400]
    chosen = named if len(named) == 1 else refused if len(refused) == 1 else []
    if not chosen:
        why = (
            "no candidate's malformed value was refused"
            if not refused
            else f"more than one candidate was refused ({', '.join(refused)})"
        )
        return undecided(key, name, why, *answers.values())
    others_seen = [answer for c, answer in answers.items() if c != chosen[0]]
    return decided(key, chosen[0], answers[chosen[0]], *others_seen, default=name)
