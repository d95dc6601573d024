"""What a bank chose where the spec leaves the choice open, as its profile says it: static headers
an API gateway wants on every request (spec 4.2 lists the interface's headers and forbids no
others), the bank's names of query parameters, and waivers (scenarios the bank team has accepted
not to meet, each with its reason).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from conformance.profile.toml_table import Table

if TYPE_CHECKING:
    from conformance.contract import Operation

__all__ = [
    "ENV_PREFIX",
    "Waiver",
    "check_static_header",
    "read_product_ids",
    "read_query_names",
    "read_required_headers",
    "read_waivers",
]


@dataclass(frozen=True)
class Waiver:
    """Scenarios the bank team waives, with the reason every report shows (``[[waivers]]``):
    ``scenarios`` are ids or ``fnmatch`` patterns (``E17-header-*``)."""

    scenarios: tuple[str, ...]
    reason: str

    def covers(self, scenario_id: str) -> bool:
        return any(fnmatch.fnmatchcase(scenario_id, pattern) for pattern in self.scenarios)


#: A header value read from the environment: ``env:NAME``.
ENV_PREFIX = "env:"
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: Headers the suite makes itself (spec 4.2, spec 5), which a static header may not replace.
_OWN_HEADERS = frozenset(
    {
        "date",
        "digest",
        "signature",
        "tpp-signature-certificate",
        "x-request-id",
        "content-type",
        "content-length",
        "host",
        "psu-id",
        "psu-ip-address",
        "psu-user-agent",
        "consent-id",
    }
)


def check_static_header(table: Table, name: str) -> str:
    """``[headers] Name = "value"``: a header name (RFC 9110 token) the suite does not send
    itself, and a non-empty value (``env:NAME`` for one read from the environment)."""
    value = table.get(name, str, "")
    if not _TOKEN.fullmatch(name):
        raise table.error(name, "is not a valid header name")
    if name.lower() in _OWN_HEADERS:
        raise table.error(name, "is a header the suite sets itself (spec 4.2, spec 5)")
    if value.startswith(ENV_PREFIX) and not value.removeprefix(ENV_PREFIX).strip():
        raise table.error(name, "names no environment variable after env:")
    return value


def read_query_names(
    query: Table, op_id: str, operations: Mapping[str, Operation]
) -> Mapping[str, str]:
    """``[query.AT] fromDate = "dateFrom"``: the bank's names of an operation's query parameters.
    Only where the spec does not name them: spec 4.3 names the query parameters of its own
    operations (E1-E18: E3's fromDate, E9's withAccounts, ...); those of the operations it only
    references (AT, PS, ...) are the contract's assumptions."""
    operation = operations.get(op_id)
    if operation is None:
        raise query.error(op_id, "is not an operation id of the contract")
    if operation.numbered:
        raise query.error(
            op_id, "names query parameters the spec states (spec 4.3); only assumed names differ"
        )
    table = query.table(op_id)
    known = {parameter.name for parameter in operation.query_parameters}
    names: dict[str, str] = {}
    for name in table.names():
        value = table.get(name, str, "")
        if name not in known:
            listed = ", ".join(sorted(known))
            raise table.error(name, f"is not a query parameter of {op_id} (it has: {listed})")
        if not re.fullmatch(r"[A-Za-z0-9._~-]+", value):
            raise table.error(name, f"must be a plain query parameter name, not {value!r}")
        names[name] = value
    table.finish()
    return MappingProxyType(names)


#: Headers spec 5 requires wherever a request is signed; a bank's set cannot drop them.
_SIGNATURE_HEADERS = frozenset({"signature", "tpp-signature-certificate", "digest"})


def read_required_headers(
    top: Table, operations: Mapping[str, Operation]
) -> Mapping[str, tuple[str, ...]]:
    """``[required_headers] PA = ["X-Request-ID", ...]``: the bank's required header set of an
    operation whose set the spec does not show (the contract's assumption topic
    ``required-headers``: an operation only referenced, or a row "as" another). Each name is one
    the operation lists (required or optional); spec 5's signature headers stay required."""
    table = top.table("required_headers")
    chosen: dict[str, tuple[str, ...]] = {}
    for op_id in table.names():
        operation = operations.get(op_id)
        if operation is None:
            raise table.error(op_id, "is not an operation id of the contract")
        if not any(item.topic == "required-headers" for item in operation.assumptions):
            raise table.error(
                op_id, "has a required header set the spec states (spec 4.2); it cannot change"
            )
        listed = {n.lower(): n for n in (*operation.required_headers, *operation.optional_headers)}
        names = table.strings(op_id) or ()
        unknown = [name for name in names if name.lower() not in listed]
        if unknown:
            raise table.error(op_id, f"names {unknown[0]!r}, which {op_id} does not list")
        kept = {name.lower() for name in names}
        dropped = [
            name
            for name in operation.required_headers
            if name.lower() in _SIGNATURE_HEADERS and name.lower() not in kept
        ]
        if dropped:
            raise table.error(op_id, f"drops {dropped[0]}, which spec 5 requires")
        chosen[op_id] = tuple(listed[name.lower()] for name in names)
    table.finish()
    return MappingProxyType(chosen)


def read_product_ids(top: Table, operations: Mapping[str, Operation]) -> Mapping[str, str]:
    """``[product_ids] ncbct = "..."``: the bank's product identifier of NCBCT, the one the spec
    leaves open (spec 4.1: "The NCBCT product identifier: not shown"); NDCT's is stated
    ("norwegian-domestic-credit-transfers"), so it cannot change. Keyed by the contract's id."""
    table = top.table("product_ids")
    chosen: dict[str, str] = {}
    for product in table.names():
        if product != "ncbct":
            raise table.error(
                product,
                "cannot change: spec 4.1 states the NDCT identifier (only ncbct is open)"
                if product in ("ndct", "periodic-ndct")
                else "is not a product (only ncbct's identifier is open)",
            )
        value = table.get(product, str, "")
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", value):
            raise table.error(product, f"must be a lower-case path segment, not {value!r}")
        contract_id = operations["E18"].fixed_path_values["payment-product"]
        chosen[str(contract_id)] = value
    table.finish()
    return MappingProxyType(chosen)


def read_waivers(top: Table) -> tuple[Waiver, ...]:
    """``[[waivers]]``: each with ``scenarios`` (ids or patterns) and a ``reason``."""
    entries = top.tables("waivers")
    waivers = []
    for table in entries:
        scenarios = table.strings("scenarios")
        if not scenarios:
            raise table.error("scenarios", "is required: the scenario ids or patterns waived")
        reason = table.optional_str("reason")
        if reason is None:
            raise table.error("reason", "is required: every report shows why a scenario is waived")
        table.finish()
        waivers.append(Waiver(tuple(scenarios), reason))
    return tuple(waivers)
