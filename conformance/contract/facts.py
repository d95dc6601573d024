"""The spec's small facts, each written once and read by all three sides: the scenarios
(``conformance.generate``, ``conformance.runners``), the traffic judge (``conformance.traffic``)
and the reference server.

A fact here is a short set, table or function the spec states (or the suite reads where it is
silent, said so beside it) that more than one side needs: the PSD2 role per family (the table is
data, ``schemas/families.json``, loaded once), the families whose errors carry ``tppMessages``,
spec 3's payment statuses and spec 2.4's basket worst case, the operations whose error answers
spec 7 shows, the broken bodies the suite sends and the judge recognises, and the statuses and
code of a refused signature or certificate. A test (``tests/repo/test_one_home.py``) finds no second
definition of any of them in the tree.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from conformance._data import data_directory

__all__ = [
    "AUTH_REJECTION_STATUSES",
    "AUTH_TPP_CODE",
    "BASKET_LISTED",
    "BODY_CASES",
    "BODY_LIMIT_BYTES",
    "ERRORS_SHOWN",
    "FIELD_KINDS",
    "NOT_ACCEPTED",
    "PAYMENT_STATUSES",
    "PAYMENT_STYLE_FAMILIES",
    "REJECTED",
    "ROLE_OF_FAMILY",
    "STATUS_SHOWN",
    "BodyCase",
    "basket_worst_status",
    "body_case",
    "field_kind",
]


def _roles() -> Mapping[str, str]:
    """``schemas/families.json``'s role table, read once when this module is imported."""
    path = data_directory("schemas") / "families.json"
    table = json.loads(path.read_text("utf-8"))["roles"]
    return MappingProxyType({str(family): str(role) for family, role in table.items()})


#: The PSD2 role a certificate must carry, when it carries roles at all, per operation family
#: (``schemas/families.json``; spec 5 states none: our reading).
ROLE_OF_FAMILY: Mapping[str, str] = _roles()


def _field_kinds() -> Mapping[str, str]:
    """``schemas/families.json``'s kinds of value, read once when this module is imported."""
    path = data_directory("schemas") / "families.json"
    table = json.loads(path.read_text("utf-8"))["fieldKinds"]
    return MappingProxyType({str(name): str(kind) for name, kind in table.items()})


#: Kinds of value several body fields share (``schemas/families.json``): a field's name
#: (``iban``), or an object's name and ``.*`` for its members (``creditorAddress.*``) → the kind
#: in words. Spec 8 bounds ``bban`` and ``iban`` once for every account reference; spec 2.7
#: shows the creditor address's parts in one row.
FIELD_KINDS: Mapping[str, str] = _field_kinds()


def field_kind(names: Iterable[str]) -> str:
    """The key of :data:`FIELD_KINDS` a body field belongs to, given its names from the top
    (``["creditorAccount", "iban"]`` → ``iban``; ``["creditorAddress", "street"]`` →
    ``creditorAddress.*``), or "" for a field of no shared kind."""
    path = list(names)
    if path and path[-1] in FIELD_KINDS:
        return path[-1]
    for name in reversed(path[:-1]):
        if f"{name}.*" in FIELD_KINDS:
            return f"{name}.*"
    return ""


#: Families whose error bodies may carry ``tppMessages`` (spec 2.6, spec 7 code list), and
#: whose schema export names the payment error body. The code list is stated for "payment
#: responses" only; on baskets it is our reading.
PAYMENT_STYLE_FAMILIES = frozenset({"payments", "baskets"})

#: Spec 3's payment statuses (quote ``3-payment-statuses``): any other is an unknown status.
PAYMENT_STATUSES = frozenset(
    {"ACCP", "ACSC", "ACSP", "ACTC", "ACWC", "ACWP", "RCVD", "PDNG", "RJCT", "CANC", "PART"}
)
#: The payment statuses in which a payment has not been accepted (received, rejected,
#: cancelled); the rest of spec 3's list counts as accepted (technically accepted or beyond).
NOT_ACCEPTED = frozenset({"RCVD", "RJCT", "CANC"})
#: The payment statuses that count as rejected for a basket (a cancelled payment will not be
#: executed either).
REJECTED = frozenset({"RJCT", "CANC"})
#: The payment statuses spec 2.4's list of basket statuses names too (PATC is a basket's only).
BASKET_LISTED = frozenset({"RCVD", "ACTC", "RJCT"})


def basket_worst_status(statuses: Iterable[str]) -> str:
    """The basket status for its payments' statuses (spec 2.4 "worst case"): RJCT if any is
    rejected or cancelled, RCVD if none is accepted (a basket of no payments too), ACTC if all
    are, PATC (partially accepted) otherwise. A status outside :data:`NOT_ACCEPTED` counts as
    accepted."""
    listed = tuple(statuses)
    if any(status in REJECTED for status in listed):
        return "RJCT"
    accepted = [status not in NOT_ACCEPTED for status in listed]
    if accepted and all(accepted):
        return "ACTC"
    return "PATC" if any(accepted) else "RCVD"


#: Statuses accepted for a refused signature or certificate: the spec shows none (spec 5, 7).
AUTH_REJECTION_STATUSES = (400, 401, 403)
#: Code in ``tppMessages`` of a payment operation's answer to a rejected signature or
#: certificate: spec 7 lists no authentication code, FORBIDDEN is the closest of its list (our
#: reading, ``reference_server/assumptions.md``).
AUTH_TPP_CODE = "FORBIDDEN"

#: Payment operations whose format errors the spec shows as 400 (spec 7, E17 row: "400 (for
#: example FORMAT_ERROR)"): the status is stated there, the code an example.
STATUS_SHOWN = frozenset({"E17"})
#: Operations whose error answers the spec shows (spec 7: "Error body (all operations that show
#: one)"; E2 and E17 have rows of statuses, E16 "Error responses listed in part 7", E18 is the
#: same product family). The others' errors are "not shown" (spec 7): their body is our reading.
ERRORS_SHOWN = frozenset({"E2", "E16", "E17", "E18"})


@dataclass(frozen=True)
class BodyCase:
    """A broken body: id slug, rule ``ROB-<name>``, what is sent, accepted statuses; the quotes
    that state its refusal (must: a 4xx with a JSON body, the status chosen), or the reading
    it rests on (should)."""

    name: str
    what: str
    statuses: tuple[int, ...]
    quotes: tuple[str, ...] = ()
    reading: str = ""


#: The largest body that is not oversized (the ``oversized-body`` case: more than 1 MiB).
BODY_LIMIT_BYTES = 1024 * 1024
#: Spec introduction: "Request and response bodies are JSON."
_JSON = ("intro-json",)
#: The broken bodies the suite's robustness scenarios send and the traffic judge recognises.
BODY_CASES: tuple[BodyCase, ...] = (
    BodyCase("malformed-json", "a body that is not valid JSON", (400,), quotes=_JSON),
    BodyCase(
        "empty-body",
        "an empty body",
        (400,),
        reading="a request that needs a body and sends none is refused with the spec 7 body",
    ),
    BodyCase(
        "wrong-content-type",
        "a JSON body sent as text/plain",
        (400, 415),
        reading="a JSON body declared as text/plain is refused; spec 4.2 makes Content-Type an "
        "optional header and states no refusal",
    ),
    BodyCase("invalid-utf8", "a body with bytes that are not UTF-8", (400,), quotes=_JSON),
    BodyCase(
        "oversized-body",
        "a JSON body of more than 1 MiB",
        (400, 413),
        reading="a body of more than 1 MiB is refused with a 4xx; the spec states no size limit",
    ),
)


def body_case(name: str) -> BodyCase:
    """The broken-body case called ``name``; a name none has raises ``KeyError``."""
    for case in BODY_CASES:
        if case.name == name:
            return case
    raise KeyError(name)
