"""The registry of deliberate faults (DESIGN.md "Self-check").

Each fault breaks exactly one rule of the spec on purpose; the self-check (``conformance
selfcheck``) runs the suite against the server started with ``--fault NAME`` and requires that
exactly the scenarios of that rule fail. The table is data: name → the rule (spec part) it breaks,
for people, what the server then does wrong, and which scenarios must then fail, for the
self-check (:meth:`Fault.breaks`). A fault is switched on at start-up and checked where the rule
is enforced with ``if call.app.faulty("name"): ...``.

The payment side keeps its own rows in ``reference_server.faults_payments`` (merged here), so that
the two halves of the server are edited independently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from types import MappingProxyType

__all__ = ["FAULTS", "Fault", "UnknownFaultError", "check_names"]


@dataclass(frozen=True)
class Fault:
    """One deliberate deviation.

    ``rule`` names the spec part it breaks, for people (``--list-faults``). The other fields say
    the same for the self-check, in the suite's words: the scenarios that must fail while the
    fault is on, and no other (:meth:`breaks`).

    - ``rules``: the scenarios' rule ids (``AUTH-stale-digest``, ``ERR-1-reference-mix-invalid``);
      ``*`` matches any run of characters (``SB-dates-in-past-*``).
    - ``operations``: only the scenarios of these operations (none: every operation), where the
      fault breaks the rule on some operations only.
    - ``fields``: of the scenarios that break one field on purpose (a constraint or header
      mutation), only those at these fields (``PSU-ID``; body fields as a JSON pointer without the
      leading slash, ``instructedAmount/amount``). Rule-table scenarios change no single field and
      are not narrowed by it.
    - ``scenarios``: single scenario ids, over and above those of ``rules``, where the other
      scenarios of their rule cannot see the fault (a basket whose payments all share one status
      has the same best and worst case).
    """

    name: str
    rule: str
    description: str
    rules: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()

    def breaks(self, scenario_id: str, rule: str, operation: str, field: str | None = None) -> bool:
        """Whether the scenario (its id, rule id, operation and mutated field, if any) must fail
        while this fault is on."""
        if scenario_id in self.scenarios:
            return True
        if not any(fnmatchcase(rule, pattern) for pattern in self.rules):
            return False
        if self.operations and operation not in self.operations:
            return False
        return not (self.fields and field is not None and field not in self.fields)


#: Every rule whose scenarios meet an error answer of the faithful server on the way, which each
#: of them requires to be the spec 7 JSON body: ``html-errors`` breaks them all. Not among them:
#: ERR-8 (an empty list, no error) and VER-v1-prefix (a 404 outside the interface's ``/v1``).
_ERROR_ANSWER_RULES: tuple[str, ...] = (
    "AUTH-body-changed-after-signing",
    "AUTH-certificate-other-ca",
    "AUTH-expired-certificate",
    "AUTH-headers-list-incomplete",
    "AUTH-keyid-*",
    "AUTH-missing-role",
    "AUTH-no-*",
    "AUTH-stale-digest",
    "AUTH-wrong-*",
    "E-logical-duplicate-refused",
    "ERR-1-reference-mix-invalid",
    "ERR-2-*",
    "ERR-3-*",
    "ERR-4-*",
    "ERR-5-*",
    "ERR-6-*",
    "ERR-7-*",
    "HDR-*",
    "LIM-bank-transaction-code-length-request",
    "LIM-basket-max-10-payments",
    "LIM-bban-max-30",
    "LIM-creditor-name-max-70",
    "LIM-iban-max-34",
    "LIM-limit-at-least-1",
    "LIM-psu-message-max-512",
    "LIM-regulatory-reporting-nok-100000",
    "LIM-remittance-unstructured-*",
    "LIM-sca-renewal-180-days",
    "LIM-tpp-message-text-max-512",
    "LIM-transaction-details-*",
    "LIM-ultimate-debtor-max-70",
    "ROB-*",
    "SB-*",
    "SCH-*",
    "STATE-consent-needs-register-and-view",
    "XF-*",
)

_CORE_FAULTS: tuple[Fault, ...] = (
    Fault(
        "skip-digest-check",
        "spec 4.2 Digest / spec 5 part 4",
        "accepts a Digest header that does not match the body",
        rules=("AUTH-stale-digest", "AUTH-body-changed-after-signing"),
    ),
    Fault(
        "accept-any-signature",
        "spec 5 part 2",
        "accepts a Signature whose value does not verify with the certificate",
        rules=("AUTH-wrong-key",),
    ),
    Fault(
        "ignore-required-header",
        "spec 4.2 required headers",
        "does not refuse a request that lacks a required header",
        rules=("HDR-required",),
    ),
    Fault(
        "accept-keyid-mismatch",
        "spec 5 part 2 keyId",
        "accepts a keyId whose serial or CA does not match the certificate",
        rules=("AUTH-keyid-serial-mismatch", "AUTH-keyid-ca-mismatch"),
    ),
    Fault(
        "ignore-headers-list",
        "spec 5 part 2 headers",
        "accepts a signed headers list that leaves out a present header it must cover",
        rules=("AUTH-headers-list-incomplete",),
    ),
    Fault(
        "no-limit-minimum",
        "spec 8 limit / spec 4.3 E3, E4",
        "accepts limit=0 on E3 and E4",
        rules=("LIM-limit-at-least-1", "SCH-minimum"),
        operations=("E3", "E4"),
        fields=("limit",),
    ),
    Fault(
        "accept-future-sandbox-dates",
        "spec 4.3 E5, E7 / spec 8 sandbox transaction rule",
        "accepts sandbox transactions booked or valued in the future",
        rules=("SB-dates-in-past-*",),
    ),
    Fault(
        "accept-foreign-debtor",
        "spec 7 rule 5",
        "accepts a sandbox transaction whose debtor is another account",
        rules=("ERR-5-foreign-debtor-account",),
    ),
    Fault(
        "accept-invalid-customer-type",
        "spec 7 rule 7",
        "accepts a sandbox customer whose customerType is not PRIVATE or CORPORATE",
        rules=("ERR-7-customer-type-invalid", "SCH-enum", "SCH-type"),
        operations=("SCU",),
        fields=("customerType",),
    ),
    Fault(
        "html-errors",
        "spec 7 error body",
        "answers errors with an HTML page instead of the JSON error body",
        rules=_ERROR_ANSWER_RULES,
    ),
    Fault(
        "corporate-without-id-accepted",
        "spec 7 rule 3",
        "accepts a request of a corporate PSU that does not send PSU-Corporate-ID",
        rules=("ERR-3-corporate-without-corporate-id", "HDR-corporate-id"),
    ),
    Fault(
        "no-psu-id-format-check",
        "spec 7 rule 7 / spec 4.2 PSU-ID",
        "accepts a PSU-ID that is not a UUID",
        rules=("ERR-7-psu-id-malformed", "HDR-format"),
        fields=("PSU-ID",),
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
