"""The registry of deliberate faults (DESIGN.md "Self-check").

Each fault breaks exactly one rule of the spec on purpose; the self-check runs the suite against
the server started with ``--fault NAME`` and requires that the suite notices. The table is data:
name → the rule (spec part) it breaks and what the server then does wrong. A fault is switched on
at start-up and checked where the rule is enforced with ``if call.app.faulty("name"): ...``.

The payment side keeps its own rows in ``reference_server.faults_payments`` (merged here), so that
the two halves of the server are edited independently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["FAULTS", "Fault", "UnknownFaultError", "check_names"]


@dataclass(frozen=True)
class Fault:
    """One deliberate deviation: ``rule`` names the spec part (and rule id) it breaks."""

    name: str
    rule: str
    description: str


_CORE_FAULTS: tuple[Fault, ...] = (
    Fault(
        "skip-digest-check",
        "spec 4.2 Digest / spec 5 part 4",
        "accepts a Digest header that does not match the body",
    ),
    Fault(
        "accept-any-signature",
        "spec 5 part 2",
        "accepts a Signature whose value does not verify with the certificate",
    ),
    Fault(
        "ignore-required-header",
        "spec 4.2 required headers",
        "does not refuse a request that lacks a required header",
    ),
    Fault(
        "accept-keyid-mismatch",
        "spec 5 part 2 keyId",
        "accepts a keyId whose serial or CA does not match the certificate",
    ),
    Fault(
        "ignore-headers-list",
        "spec 5 part 2 headers",
        "accepts a signed headers list that leaves out a present header it must cover",
    ),
    Fault("no-limit-minimum", "spec 8 limit / spec 4.3 E3, E4", "accepts limit=0 on E3 and E4"),
    Fault(
        "accept-future-sandbox-dates",
        "spec 4.3 E5, E7 / spec 8 sandbox transaction rule",
        "accepts sandbox transactions booked or valued in the future",
    ),
    Fault(
        "accept-foreign-debtor",
        "spec 7 rule 5",
        "accepts a sandbox transaction whose debtor is another account",
    ),
    Fault(
        "accept-invalid-customer-type",
        "spec 7 rule 7",
        "accepts a sandbox customer whose customerType is not PRIVATE or CORPORATE",
    ),
    Fault(
        "html-errors",
        "spec 7 error body",
        "answers errors with an HTML page instead of the JSON error body",
    ),
    Fault(
        "corporate-without-id-accepted",
        "spec 7 rule 3",
        "accepts a request of a corporate PSU that does not send PSU-Corporate-ID",
    ),
    Fault(
        "no-psu-id-format-check",
        "spec 7 rule 7 / spec 4.2 PSU-ID",
        "accepts a PSU-ID that is not a UUID",
    ),
)


def _merge(*groups: Iterable[Fault]) -> Mapping[str, Fault]:
    table: dict[str, Fault] = {}
    for group in groups:
        for fault in group:
            if fault.name in table:
                raise ValueError(f"fault {fault.name!r} is registered twice")
            table[fault.name] = fault
    return MappingProxyType(dict(sorted(table.items())))


def _payment_faults() -> tuple[Fault, ...]:
    from reference_server.faults_payments import PAYMENT_FAULTS

    return tuple(PAYMENT_FAULTS)


#: Every fault, by name (immutable).
FAULTS: Mapping[str, Fault] = _merge(_CORE_FAULTS, _payment_faults())


class UnknownFaultError(ValueError):
    """A ``--fault`` name that is not in :data:`FAULTS`."""


def check_names(names: Iterable[str]) -> frozenset[str]:
    """The given fault names as a set; raises :class:`UnknownFaultError` for an unknown one."""
    chosen = frozenset(names)
    unknown = sorted(chosen - FAULTS.keys())
    if unknown:
        raise UnknownFaultError(f"unknown fault(s): {', '.join(unknown)} (see --list-faults)")
    return chosen
