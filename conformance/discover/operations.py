"""Which operations exist (``[operations] unsupported``, ``sandbox``): a route that exists
answers a method it does not take with 405 (its ``Allow`` naming the methods it takes), and its
own method with anything but 404 (400, 401, 403: the request reached it); a route that does not
exist answers 404 to both. A 404 to the own method of a path naming a resource (a payment id no
bank holds) tells nothing by itself: without a 405 the operation stays undecided."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from conformance.discover.evidence import Decision, decided, undecided
from conformance.discover.probe import NOBODY, interface_answer

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
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True)
class Existence:
    """What the probes of one operation showed: True (exists), False (absent), None (open)."""

    op_id: str
    exists: bool | None
    evidence: tuple[Exchange, ...]


def path_values(operation: Operation) -> dict[str, str]:
    """Every placeholder of the operation's path filled with a value no bank holds (NDCT for
    the payment product, which spec 4.1 states)."""
    names = _PLACEHOLDER.findall(operation.path)
    return {name: NDCT if name == "payment-product" else NOBODY for name in names}


def probe_operation(prober: Prober, operation: Operation, *, tells_405: bool) -> Existence:
    """The odd method first (405: exists, unless ``Allow`` leaves out the operation's method),
    then the operation's own method without a body (anything but 404 or a server error:
    exists; 404 on a path without a resource id: absent; on a path naming one, absent only at
    a bank that ``tells_405`` on the routes it has, where the odd method got 404 too). The
    operations of :data:`NEVER_SENT` get the odd method only."""
    values = path_values(operation)
    method = prober.profile.method_for(operation)
    odd = prober.request(operation.id, path_values=values, method=_ODD_METHOD)
    if odd is not None and odd.status == 405:
        allow = odd.response_header("allow")
        if allow is None or method in {m.strip().upper() for m in allow.split(",")}:
            return Existence(operation.id, True, (odd,))
    if operation.id in NEVER_SENT:
        return Existence(operation.id, None, () if odd is None else (odd,))
    own = prober.request(operation.id, path_values=values, body={} if method != "GET" else None)
    if own is None or not interface_answer(own):
        return Existence(operation.id, None, tuple(e for e in (odd, own) if e is not None))
    if own.status != 404:
        return Existence(operation.id, True, (own,))
    if values and not (tells_405 and odd is not None and odd.status == 404):
        return Existence(operation.id, None, (own,))
    return Existence(operation.id, False, tuple(e for e in (odd, own) if e is not None))


def decide_operations(prober: Prober) -> tuple[list[Decision], dict[str, bool | None]]:
    """``sandbox`` (false when no sandbox operation exists) and ``[operations] unsupported``
    (the others found absent; the contract's optional operations, SI, are off by default and
    not listed), and each operation's existence for the later decisions."""
    known = prober.request("AL", method=_ODD_METHOD)  # a route every bank has
    tells_405 = known is not None and known.status == 405
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
    if open_ones:
        evidence.append(f"not told (a 404 for an id no bank holds): {', '.join(open_ones)}")
    if not absent:
        evidence.append("every other operation's route answered (405, 400, 401 or 403)")
    decisions.append(
        decided(("operations", "unsupported"), sorted(item.op_id for item in absent), *evidence)
    )
    return decisions, exists
