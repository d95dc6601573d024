"""A deliberate fault: the rule it breaks and the scenarios that must then fail."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

__all__ = ["Fault", "UnknownFaultError"]


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
    - ``session_operations``: more operations whose scenarios of ``rules`` fail where the played
      bank binds the consent to the TPP session (``[consent] model = "first-access"``): E8 then
      finds the consent by the session, not by the PSU it names.
    - ``seen_through_pa``: scenarios that see the fault only in PA's answer, not expected to
      fail where the played bank starts every payment's SCA at its creation.
    - ``fields``: of the scenarios that break one field on purpose (a constraint or header
      mutation), only those at these fields (``PSU-ID``; body fields as a JSON pointer without the
      leading slash, ``instructedAmount/amount``). Rule-table scenarios change no single field and
      are not narrowed by it.
    - ``scenarios``: single scenario ids, over and above those of ``rules``, where the other
      scenarios of their rule cannot see the fault (a basket whose payments all share one status
      has the same best and worst case).
    - ``level``: ``must`` when the fault breaks a sentence of the spec, so that a run against it
      fails at default strictness (the self-check runs it without ``--strict``); ``should`` when
      it breaks only our reading (the security group, a reading the spec leaves open), so that
      only ``--strict`` makes its run fail (the self-check runs it with ``--strict``).
    - ``run_options``: options of ``conformance run`` its scenarios need to be judged at all
      (``--tls``: the checks of the TLS client certificate need mutual TLS); the self-check
      runs the fault with them.
    """

    name: str
    rule: str
    description: str
    rules: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    session_operations: tuple[str, ...] = ()
    #: Scenarios that see the fault only in the answer of PA (a payment's authorisation
    #: started), which a bank that starts every payment's SCA at its creation (``[sca] start =
    #: "creation"``) never gives: not expected to fail there.
    seen_through_pa: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    level: str = "must"
    run_options: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.level not in ("must", "should"):
            raise ValueError(f"fault {self.name}: level {self.level!r} is not must or should")

    def breaks(
        self,
        scenario_id: str,
        rule: str,
        operation: str,
        field: str | None = None,
        *,
        first_access: bool = False,
        sca_at_creation: bool = False,
    ) -> bool:
        """Whether the scenario (its id, rule id, operation and mutated field, if any) must fail
        while this fault is on; ``first_access``: at a bank that binds the consent to the TPP
        session (``session_operations``); ``sca_at_creation``: at a bank that starts every
        payment's SCA at its creation (``seen_through_pa``)."""
        if sca_at_creation and scenario_id in self.seen_through_pa:
            return False
        if scenario_id in self.scenarios:
            return True
        if not any(fnmatchcase(rule, pattern) for pattern in self.rules):
            return False
        operations = (*self.operations, *(self.session_operations if first_access else ()))
        if self.operations and operation not in operations:
            return False
        return not (self.fields and field is not None and field not in self.fields)


class UnknownFaultError(ValueError):
    """A fault name that is not in the registry."""
