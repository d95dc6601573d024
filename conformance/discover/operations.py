"""Which operations exist (``[operations] unsupported``, ``sandbox``), from agreeing evidence
(issue 42): an operation is offered when its answers show it (a 2xx, or a refusal in spec 7's
error form about the request, never one of the TPP's certificate or signature) and not offered
on a 405 or 501 to its own method or a 404 for its path; when its answers disagree, it is
undecided, with both exchanges. Each deciding request goes twice, and one whose two answers
differ tells nothing (security-5.md M14). A route that exists answers a method it does not take (the
odd method) with 405, its ``Allow`` naming the methods it takes; a bank that answers 405 on a
path no bank has, too, tells nothing by it. A 404 naming an unknown resource (a payment id no
bank holds) tells nothing by itself."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conformance.discover.evidence import Decision, decided, describe, undecided
from conformance.discover.probe import NOBODY, document_of, interface_answer
from conformance.discover.refusals import tpp_refused

if TYPE_CHECKING:
    from conformance.contract import Operation
    from conformance.discover.probe import Prober
    from conformance.exchange import Exchange

__all__ = ["Existence", "decide_operations", "probe_operation"]

#: Operations whose own request is never sent, whatever its body: the sandbox's data fill and
#: reset put data back (a reset may drop what others made). Their existence is told by the odd
#: method alone.
NEVER_SENT = frozenset({"SDF", "SI"})
#: A method no operation of the contract takes: its answer tells whether the route exists.
_ODD_METHOD = "PATCH"
#: The NDCT product identifier, stated by spec 4.1 (the only product whose id cannot change).
NDCT = "norwegian-domestic-credit-transfers"
#: A path no bank has: a bank answering the odd method there with 405 answers it everywhere.
_NOWHERE = "/v1/discover-nowhere-0000"
#: The codes of a 404 that names an unknown resource (the request), not an unknown path.
_UNKNOWN_RESOURCE = frozenset({"RESOURCE_UNKNOWN", "PRODUCT_UNKNOWN", "CONSENT_UNKNOWN"})
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True)
class Existence:
    """What the probes of one operation showed: True (exists), False (absent), None (open)."""

    op_id: str
    exists: bool | None
    evidence: tuple[Exchange, ...]
    #: The answers told, and told otherwise (then ``exists`` is None, with both exchanges).
    disagree: bool = False


def path_values(operation: Operation) -> dict[str, str]:
    """Every placeholder of the operation's path filled with a value no bank holds (NDCT for
    the payment product, which spec 4.1 states)."""
    names = _PLACEHOLDER.findall(operation.path)
    return {name: NDCT if name == "payment-product" else NOBODY for name in names}


def _own_says(answer: Exchange, has_id: bool) -> bool | None:
    """What the operation's own request's answer says of it: a 2xx, or a refusal in spec 7's
    error form about the request (not the TPP's certificate or signature), offers it; a 405 or
    501, or a 404 for a path without a resource id (or one not in the error form), does not; a
    404 naming an unknown resource, a 5xx or a page tells nothing."""
    if not interface_answer(answer) or tpp_refused(answer):
        return None
    if 200 <= answer.status < 300:
        return True
    if answer.status in (405, 501):
        return False
    document = document_of(answer)
    error_form = isinstance(document.get("code"), str) or bool(document.get("tppMessages"))
    if answer.status == 404:
        if not has_id:
            return False
        if not error_form or document.get("code") in _UNKNOWN_RESOURCE:
            return None  # the id no bank holds, or a 404 that says nothing more
        return False
    return True if error_form and 400 <= answer.status < 500 else None


def _odd_says(odd: Exchange | None, method: str, tells_405: bool) -> bool | None:
    """What the odd method's answer says: 405 naming the operation's method (or naming none)
    offers it, one naming others does not; a 404 at a bank that ``tells_405`` does not;
    anything else tells nothing."""
    if odd is None:
        return None
    if odd.status == 405 and tells_405:
        allow = odd.response_header("allow")
        return allow is None or method in {m.strip().upper() for m in allow.split(",")}
    if odd.status == 404 and tells_405:
        return False
    return None


def probe_operation(prober: Prober, operation: Operation, *, tells_405: bool) -> Existence:
    """Whether the bank offers ``operation``, from agreeing evidence: the odd method's answer
    (:func:`_odd_says`) and the own method's without a body (:func:`_own_says`); when both tell
    and disagree, open, with both exchanges. The operations of :data:`NEVER_SENT` get the odd
    method only."""
    values = path_values(operation)
    method = prober.profile.method_for(operation)
    odd = prober.request(operation.id, path_values=values, method=_ODD_METHOD, repeat=True)
    by_odd = _odd_says(odd, method, tells_405)
    if operation.id in NEVER_SENT:
        return Existence(operation.id, by_odd, () if odd is None else (odd,))
    own = prober.request(
        operation.id, path_values=values, body={} if method != "GET" else None, repeat=True
    )
    by_own = None if own is None else _own_says(own, bool(values))
    seen = tuple(e for e in (odd, own) if e is not None)
    if by_own is None:
        if by_odd is None:
            return Existence(operation.id, None, seen)
        return Existence(operation.id, by_odd, seen if odd is None else (odd,))
    if by_odd is not None and by_odd != by_own:
        return Existence(operation.id, None, seen, disagree=True)
    return Existence(operation.id, by_own, (own,) if own is not None else seen)


def decide_operations(prober: Prober) -> tuple[list[Decision], dict[str, bool | None]]:
    """``sandbox`` (false when no sandbox operation exists) and ``[operations] unsupported``
    (the others found absent; the contract's optional operations, SI, are off by default and
    not listed), and each operation's existence for the later decisions."""
    known = prober.request("AL", method=_ODD_METHOD, repeat=True)  # a route every bank has
    nowhere = prober.request("AL", method=_ODD_METHOD, path=_NOWHERE, repeat=True)  # none has
    tells_405 = known is not None and known.status == 405
    tells_405 = tells_405 and nowhere is not None and nowhere.status != 405
    found = {
        operation.id: probe_operation(prober, operation, tells_405=tells_405)
        for operation in prober.contract.operations.values()
    }
    exists = {op_id: item.exists for op_id, item in found.items()}
    sandbox_ops = [
        op
        for op in prober.contract.operations.values()
        if op.family == "sandbox" and not op.optional
    ]
    decisions: list[Decision] = []
    sandbox_known = [found[op.id] for op in sandbox_ops if found[op.id].exists is not None]
    if not sandbox_known:
        decisions.append(undecided(("sandbox",), True, "no sandbox operation's probe told"))
        has_sandbox = True
    else:
        has_sandbox = any(item.exists for item in sandbox_known)
        witness = next(
            (item for item in sandbox_known if item.exists == has_sandbox), sandbox_known[0]
        )
        decisions.append(decided(("sandbox",), has_sandbox, *witness.evidence))
    absent = [
        item
        for op_id, item in found.items()
        if item.exists is False
        and not prober.contract.operations[op_id].optional
        and (has_sandbox or prober.contract.operations[op_id].family != "sandbox")
    ]
    open_ones = sorted(op_id for op_id, item in found.items() if item.exists is None)
    evidence: list[Exchange | str] = [e for item in absent for e in item.evidence]
    for item in found.values():
        if item.disagree:
            shown = "; ".join(describe(e) for e in item.evidence)
            evidence.append(f"{item.op_id} undecided, its answers disagree: {shown}")
    for op_id in open_ones:
        for line in prober.changed.get(op_id, ()):
            evidence.append(f"{op_id} undecided, its {line}")
    if open_ones:
        why = "an id no bank holds, answers that disagree or that changed between probes"
        evidence.append(f"not told ({why}): {', '.join(open_ones)}")
    if not absent:
        evidence.append("every other operation's route answered (405, 400, 401 or 403)")
    decisions.append(
        decided(("operations", "unsupported"), sorted(item.op_id for item in absent), *evidence)
    )
    return decisions, exists
