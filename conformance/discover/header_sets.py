"""Required header sets where the spec shows none (``[required_headers]``: the contract's
assumption topic ``required-headers``). For each such operation the bank offers, its request
(with ids no bank holds) is sent once without each header of the contract's assumed set: a
header the refusal names (``HTTP_HEADER_REQUIRED``, its ``tppMessages`` path or message) is
required; one whose absence the bank lets past (it answers as it does with every header: the
id unknown, the body refused for its fields) is not. Spec 5's signature headers are never left
out (a bank's set cannot drop them), and the sandbox's data fill and reset are never sent (a
request let past would put their data back)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from conformance.discover.evidence import Decision, decided, undecided
from conformance.discover.operations import NEVER_SENT, path_values
from conformance.discover.probe import document_of, interface_answer

if TYPE_CHECKING:
    from conformance.contract import Operation
    from conformance.discover.probe import Prober
    from conformance.exchange import Exchange

__all__ = ["decide_header_sets", "names_header"]

_SIGNATURE_HEADERS = frozenset({"signature", "tpp-signature-certificate", "digest"})


def names_header(exchange: Exchange, header: str) -> bool:
    """Whether a refusal (400, 401, 403: not a 404 for an unknown id) names ``header`` as what
    is wrong with the request."""
    if exchange.status not in (400, 401, 403):
        return False
    document = document_of(exchange)
    wanted = header.lower()
    for item in document.get("tppMessages") or ():
        if isinstance(item, Mapping) and str(item.get("path", "")).lower() == wanted:
            return True
    message = document.get("message")
    return isinstance(message, str) and wanted in message.lower()


def assumed_set(operation: Operation) -> bool:
    return any(item.topic == "required-headers" for item in operation.assumptions)


def _probe(prober: Prober, operation: Operation) -> Decision:
    key = ("required_headers", operation.id)
    default = tuple(operation.required_headers)
    values = path_values(operation)
    body: dict[str, object] | None = None if prober.profile.method_for(operation) == "GET" else {}
    required: list[str] = []
    evidence: list[Exchange | str] = []
    refusal: Exchange | None = None
    for header in default:
        if header.lower() in _SIGNATURE_HEADERS:
            required.append(header)
            continue
        answer = prober.request(operation.id, path_values=values, body=body, headers={header: None})
        if answer is None or not interface_answer(answer):
            why = f"the request without {header} got no answer of the interface"
            return undecided(key, default, why, *(() if answer is None else (answer,)))
        if names_header(answer, header):
            required.append(header)
            refusal = refusal or answer
        else:
            evidence.append(answer)
    if not evidence:
        evidence.append("every header of the contract's set was named when left out, as")
        evidence.extend(() if refusal is None else (refusal,))
    return decided(key, tuple(required), *evidence, default=default)


def decide_header_sets(
    prober: Prober, exists: Mapping[str, bool | None], *, first_access: bool
) -> list[Decision]:
    """One decision per operation with an assumed set that the bank offers (module
    docstring); under ``first-access`` the consent operations are not the bank's."""
    decisions = []
    for operation in prober.contract.operations.values():
        if not assumed_set(operation) or not exists.get(operation.id):
            continue
        if operation.id in NEVER_SENT:  # a request let past would fill or reset the sandbox
            continue
        if first_access and operation.family == "consents":
            continue
        decisions.append(_probe(prober, operation))
    return decisions
