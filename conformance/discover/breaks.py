"""Discovery never legalises a break (issue 42): what the bank answered that breaks a stated
rule of the spec is a finding of the draft, never a key of the profile written as the bank's
choice (:func:`findings`). Two kinds are seen while probing: a header spec 4.2 lists as optional
on an operation whose header set the spec shows, refused when left out (the prober sent it and
asked again, :attr:`~conformance.discover.probe.Prober.taught`); and a ``tppMessages`` code of a
payment answer outside spec 7's list."""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.discover.evidence import describe
from conformance.discover.header_sets import assumed_set
from conformance.discover.probe import document_of

if TYPE_CHECKING:
    from conformance.discover.probe import Prober

__all__ = ["findings"]

#: Spec 7's list of the codes allowed in ``tppMessages[].code`` of payment responses.
_CODES = {
    "$ref": "https://psd2-conformance.invalid/schemas/types/common.json#/$defs/TppMessageCode"
}


def findings(prober: Prober) -> list[str]:
    """One line per break seen (module docstring), each with the exchange that shows it."""
    contract = prober.contract
    lines: list[str] = []
    for op_id, taught in prober.taught.items():
        operation = contract.operations[op_id]
        if assumed_set(operation):
            continue  # the spec shows no set there: the bank's set is drafted
        for header, refusal in taught.items():
            lines.append(
                f"{op_id} was refused without {header}, which spec 4.2 lists as optional where "
                f"it shows {op_id}'s header set (not written into [required_headers]): "
                f"{describe(refusal)}"
            )
    allowed = frozenset(str(code) for code in contract.resolve(_CODES).get("enum", ()))
    said: set[tuple[str, str]] = set()
    for op_id, exchange in prober.seen:
        if contract.operations[op_id].family != "payments" or not allowed:
            continue
        for item in document_of(exchange).get("tppMessages") or ():
            code = item.get("code") if isinstance(item, dict) else None
            if isinstance(code, str) and code not in allowed and (op_id, code) not in said:
                said.add((op_id, code))
                lines.append(
                    f"{op_id} answered tppMessages code {code}, outside spec 7's list of the "
                    f"codes of payment responses: {describe(exchange)}"
                )
    return lines
