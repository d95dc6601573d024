"""The registry of deliberate faults.

Each fault breaks exactly one rule of the spec on purpose; the self-check (``conformance
selfcheck``) runs the suite against the server started with ``--fault NAME`` and requires that
exactly the scenarios of that rule fail. The table is data: name → the rule (spec part) it breaks,
for people, what the server then does wrong, and which scenarios must then fail, for the
self-check (:meth:`Fault.breaks`). A fault is switched on at start-up and checked where the rule
is enforced with ``if call.app.faulty("name"): ...``. The rows live by side: ``core``,
``payments``, ``certificates``, ``consents`` (the consent lifecycle) and ``headers`` (the
response headers a certifier checks); ``model`` holds :class:`Fault` (its grade, the scenarios it
breaks, the ``run_options`` its self-check run needs, such as ``--tls``).

``faulty()`` raises for a name the table does not know, and a test reads every ``faulty("...")``
literal of the server against the table, so a misspelt check cannot silently never fire.
``python -m reference_server --list-faults`` prints the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from reference_server.faults.certificates import CERTIFICATE_FAULTS
from reference_server.faults.consents import CONSENT_FAULTS
from reference_server.faults.core import CORE_FAULTS
from reference_server.faults.headers import HEADER_FAULTS
from reference_server.faults.model import Fault, UnknownFaultError
from reference_server.faults.payments import PAYMENT_FAULTS

__all__ = ["FAULTS", "Fault", "UnknownFaultError", "check_names"]


def _merge(*groups: Iterable[Fault]) -> Mapping[str, Fault]:
    table: dict[str, Fault] = {}
    for group in groups:
        for fault in group:
            if fault.name in table:
                raise ValueError(f"fault {fault.name!r} is registered twice")
            table[fault.name] = fault
    return MappingProxyType(dict(sorted(table.items())))


#: Every fault, by name (immutable).
FAULTS: Mapping[str, Fault] = _merge(
    CORE_FAULTS, PAYMENT_FAULTS, CERTIFICATE_FAULTS, CONSENT_FAULTS, HEADER_FAULTS
)


def check_names(names: Iterable[str]) -> frozenset[str]:
    """The given fault names as a set; raises :class:`UnknownFaultError` for an unknown one."""
    chosen = frozenset(names)
    unknown = sorted(chosen - FAULTS.keys())
    if unknown:
        raise UnknownFaultError(f"unknown fault(s): {', '.join(unknown)} (see --list-faults)")
    return chosen
