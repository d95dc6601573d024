"""The demanding reading (``--demanding``): the places where the spec is silent and the bundled
server takes what the suite sends, each with the stricter behaviour a bank may equally choose:
it refuses more, requires more or answers in another form.

The mirror image of the permissive reading (``readings.py``). Every row is a plain, documented
behaviour of the server, not a fault: a bank that behaves so conforms to the spec's words
(``assumptions.md``, "The demanding reading", names the silence each rests on). ``--demanding``
switches all of them on at once; a handler asks ``app.demanding("name")`` where the row applies,
and a name the table does not know raises, as ``app.faulty`` does.

A run of the suite against the demanding server may fail no must requirement, and may block
nothing a profile key cannot unblock: the suite runs with the profile a bank of this kind would
write (``profiles/reference-server-demanding.toml``), so where a demand needs the suite to be told
(SCA started at creation, a set-up field of the bank's own) a profile key says it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["DEMANDS", "Demand", "check_demands"]


@dataclass(frozen=True)
class Demand:
    """One place read demandingly: its name, the spec part, what the bundled server does, what
    the demanding server does instead and the profile key that tells the suite (None: none
    needed, the suite must take it as it is)."""

    name: str
    spec: str
    faithful: str
    demanding: str
    profile_key: str | None = None


DEMANDS: Mapping[str, Demand] = MappingProxyType(
    {
        demand.name: demand
        for demand in (
            Demand(
                "one-engagement-per-account",
                "spec 4.3 E6",
                "any number of engagements for one customer and account on one agreement",
                "a second engagement for the same customer and account on one agreement is "
                "answered 409 (CONFLICT)",
            ),
            Demand(
                "one-balance-per-type",
                "spec 2.1, spec 4.3 E15",
                "an account creation (SA) or balance change (E15) may carry two balances of one "
                "balanceType (the later one wins)",
                "two items of one balanceType in one body are refused (400 FORMAT_ERROR)",
            ),
            Demand(
                "card-account-status-required",
                "spec 4.1 (the sandbox creations' shapes: not shown)",
                "a card account creation (SCA) without status is enabled",
                "SCA requires status (a field the contract's shape leaves optional)",
                "[setup] templates (SCA.json gives status)",
            ),
            Demand(
                "owner-as-customer-number",
                "spec 2.9 (agreement owner: optional, its form not shown)",
                "an agreement's owner is taken as the customer's id or number and reads back "
                "as the customer id",
                "it is taken as the owner's customerNumber only (a customer id: 400 FORMAT_ERROR) "
                "and reads back as that (SAG, E14), as an independent implementation chose",
                '[setup] agreement_owner = "customerNumber"',
            ),
            Demand(
                "numeric-sandbox-ids",
                "spec 2.9, spec 4.3 (ids: strings, their form not shown)",
                "sandbox accounts, card accounts, agreements and engagements have UUIDs",
                "they have numeric ids of 12 digits",
            ),
            Demand(
                "unshown-header-sets-as-nearest",
                "spec 4.2 (the header sets of AL, AT, BR, BS, CD, CG, CS, PC and PS: not shown)",
                "an operation whose header set the spec does not show requires only X-Request-ID "
                "and the signature headers",
                "it also requires the TPP headers its nearest stated operation requires "
                "(x-accept-fix, TPP-Session-ID and TPP-Redirect-URI on the account list as on "
                "E8), as four independent implementations chose",
            ),
            Demand(
                "max35-identifiers",
                "spec 2.9 (the card transaction id: a string without a stated bound)",
                "a card transaction id of any length",
                "a card transaction id over 35 characters (ISO 20022 Max35Text) is refused "
                "(400 FORMAT_ERROR), as an independent implementation chose",
            ),
            Demand(
                "basket-payment-not-cancellable",
                "spec 2.4, spec 4.1 (PC on a payment inside a signing basket: not stated)",
                "a payment in a signing basket is cancelled as any other (PC)",
                "PC on a payment that is in a signing basket is refused (400 RESOURCE_BLOCKED, "
                "a code spec 7 lists for E2), as an independent implementation chose",
            ),
            Demand(
                "sca-started-at-creation",
                "spec 5 item 6, spec 4.1 (PA: method and path not shown)",
                "a payment's SCA starts when PA asks for it (or at creation with PSU-Context)",
                "every payment creation starts its SCA (201 with _links.scaRedirect); PA on a "
                "payment whose authorisation started is answered 409 (already started)",
                '[sca] start = "creation"',
            ),
        )
    }
)


def check_demands(names: Iterable[str]) -> frozenset[str]:
    """The given demand names as a set; a ``ValueError`` for one the table does not know."""
    chosen = frozenset(names)
    unknown = sorted(chosen - DEMANDS.keys())
    if unknown:
        raise ValueError(f"unknown demanding reading(s): {', '.join(unknown)}")
    return chosen
