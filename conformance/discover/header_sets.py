"""Required header sets where the spec shows none (``[required_headers]``: the contract's
assumption topic ``required-headers``). For each such operation the bank offers, its request
(with ids no bank holds) is sent twice without each header of the contract's assumed set (two
answers that differ decide nothing: security-5.md M14): a
header the refusal names (``HTTP_HEADER_REQUIRED``, its ``tppMessages`` path or message) is
required; one whose absence the bank lets past (it answers as it does with every header: the
id unknown, the body refused for its fields) is not. Spec 5's signature headers are never left
out (a bank's set cannot drop them), and the sandbox's data fill and reset are never sent (a
request let past would put their data back)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from conformance.discover.evidence import Decision, decided, describe, undecided
from conformance.discover.operations import NEVER_SENT, path_values
from conformance.discover.probe import interface_answer
from conformance.discover.query_names import required_query
from conformance.discover.refusals import names_header, tpp_refused

if TYPE_CHECKING:
    from conformance.contract import Operation
    from conformance.discover.probe import Prober
    from conformance.exchange import Exchange

__all__ = ["decide_header_sets", "names_header"]

_SIGNATURE_HEADERS = frozenset({"signature", "tpp-signature-certificate", "digest"})


def assumed_set(operation: Operation) -> bool:
    return any(item.topic == "required-headers" for item in operation.assumptions)


def _probe(prober: Prober, operation: Operation) -> Decision:
    """The operation's set: each header the suite sends (its contract's set and the headers of
    its nearest stated operation, ``also_sent``) left out once; a header the refusal names is
    required, one whose absence is let past is not; a header a refusal taught the prober
    (:attr:`~conformance.discover.probe.Prober.taught`) is required too. The ``also_sent``
    headers the bank requires are sent by the suite anyway: they are written into the set only
    where it differs from the contract's (which stops the suite sending ``also_sent``)."""
    key = ("required_headers", operation.id)
    default = tuple(operation.required_headers)
    values = path_values(operation)
    body: dict[str, object] | None = None if prober.profile.method_for(operation) == "GET" else {}
    query = required_query(prober, operation.id)
    required: list[str] = []
    also: list[str] = []
    evidence: list[Exchange | str] = []
    sent = [*default, *(h for h in operation.also_sent if h.lower() not in _lower(default))]
    for header in sent:
        if header.lower() in _SIGNATURE_HEADERS:
            required.append(header)
            continue
        changes = len(prober.changed.get(operation.id, ()))
        answer = prober.request(
            operation.id, path_values=values, query=query, body=body, headers={header: None},
            repeat=True,
        )  # fmt: skip
        if answer is None and len(prober.changed.get(operation.id, ())) > changes:
            why = f"the answers without {header} changed between two probes"
            return undecided(key, default, why, prober.changed[operation.id][-1])
        if answer is None or not interface_answer(answer) or tpp_refused(answer):
            why = f"the request without {header} got no answer about the request"
            return undecided(key, default, why, *(() if answer is None else (answer,)))
        if names_header(answer, header):
            (required if header in default else also).append(header)
            evidence.append(f"without {header}: {describe(answer)}")
        else:
            evidence.append(f"let past without {header}: {describe(answer)}")
    for header, refusal in prober.taught.get(operation.id, {}).items():
        if header.lower() not in _lower(required):
            required.append(header)
            evidence.append(f"{header} taught by: {describe(refusal)}")
    if _lower(required) != _lower(default):
        required.extend(also)
    return decided(key, tuple(required), *evidence, default=default)


def _lower(names: tuple[str, ...] | list[str]) -> frozenset[str]:
    return frozenset(name.lower() for name in names)


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
