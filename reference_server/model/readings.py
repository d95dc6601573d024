"""The readings the bundled server may play: each place where the spec can be read two ways or is
silent, with what the bundled server does there and what it plays instead.

Which readings a server plays is data of the bank it plays: a target profile's ``readings`` key
(``conformance serve --profile FILE``, ``conformance run --play FILE``), checked here by name
when the server starts. Two profiles extend the bundled server's with every reading of one
direction (:data:`DIRECTIONS`):

- :data:`LENIENT`, ``profiles/reference-server-permissive.toml`` (``--permissive``): the more
  lenient behaviour a bank may equally choose where the spec can be read two ways
  (``assumptions.md``, "The permissive reading", quotes the sentence that allows each). A run of
  the suite against it may fail no must requirement: a must failure there is a requirement that
  rests on a reading rather than on a sentence of the spec.
- :data:`STRICT`, ``profiles/reference-server-demanding.toml`` (``--demanding``): the stricter
  behaviour a bank may equally choose where the spec is silent: it refuses more, requires more or
  answers in another form (``assumptions.md``, "The demanding reading", names the silence each
  rests on). Where a reading needs the suite to be told (SCA started at creation, a set-up field
  of the bank's own) a key of that profile says it (:attr:`Reading.profile_key`).

A reading's direction is the profile that plays it (:func:`of_direction`), written nowhere else.
Every row is a plain, documented behaviour of the server, not a fault (faults break the spec and
stay apart, ``reference_server.faults``). A stage asks ``app.reads("name")`` where the row
applies, and a name the table does not know raises, as ``app.faulty`` does, so a misspelt check
cannot silently never apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Final

from conformance.profile import DEMANDING_PROFILE, PERMISSIVE_PROFILE, load_profile

__all__ = [
    "DIRECTIONS",
    "LENIENT",
    "READINGS",
    "STRICT",
    "Direction",
    "Reading",
    "check_readings",
    "direction_of",
    "of_direction",
]

#: The permissive direction: more lenient than the bundled server (``--permissive``).
LENIENT: Final = "lenient"
#: The demanding direction: stricter than the bundled server (``--demanding``).
STRICT: Final = "strict"


@dataclass(frozen=True)
class Direction:
    """How a direction is switched on and named: its flag (a shorthand for playing its profile),
    its word ("permissive"), where in the spec its readings are ("can be read two ways"), what it
    plays (for a flag's help), the profile that plays it (the suite runs with the same) and its
    heading in ``assumptions.md``."""

    flag: str
    word: str
    where: str
    plays: str
    profile: Path

    @property
    def shown(self) -> str:
        """Its profile as the project names it (``profiles/...``)."""
        return f"profiles/{self.profile.name}"

    @property
    def heading(self) -> str:
        """Its section of ``assumptions.md``."""
        return f"The {self.word} reading"


DIRECTIONS: Mapping[str, Direction] = MappingProxyType(
    {
        LENIENT: Direction(
            "--permissive",
            "permissive",
            "the spec can be read two ways",
            "empty header values, 18-digit amounts, past execution dates, ownership per "
            "certificate, SCA answered 401, minimal error bodies, certificates not validated, "
            "and the rest",
            PERMISSIVE_PROFILE,
        ),
        STRICT: Direction(
            "--demanding",
            "demanding",
            "the spec is silent",
            "one engagement per customer and account, one balance per type, a card account's "
            "status required, an owner read back as its customer number, numeric sandbox ids, "
            "SCA started at every payment creation, and the rest",
            DEMANDING_PROFILE,
        ),
    }
)


@dataclass(frozen=True)
class Reading:
    """One place read another way than the bundled server reads it: its name, the spec part,
    what the bundled server does, what the server playing it does instead and the profile key
    that tells the suite (None: none needed, the suite must take it as it is). Its direction is
    the profile that plays it (:func:`direction_of`)."""

    name: str
    spec: str
    faithful: str
    played: str
    profile_key: str | None = None


READINGS: Mapping[str, Reading] = MappingProxyType(
    {
        reading.name: reading
        for reading in (
            Reading(
                "empty-header-values",
                "spec 4.2",
                "an empty X-Request-ID, x-accept-fix, TPP-Session-ID or PSU-Corporate-ID is "
                "refused (missing, or shorter than 1)",
                "an empty value is a value: a required header sent empty is present, and no "
                "header whose type is a plain string is refused for being empty",
            ),
            Reading(
                "amount-18-digits",
                "spec 2.1",
                "a payment amount has at most 13 integer digits (DECIMAL(18,5))",
                "at most 18 digits in all, at most 5 of them after the point (14 to 18 integer "
                "digits accepted)",
            ),
            Reading(
                "past-execution-dates",
                "spec 2.7, spec 7",
                "a requestedExecutionDate or startDate before the bank's today is refused "
                "(EXECUTION_DATE_INVALID)",
                "accepted",
            ),
            Reading(
                "ownership-per-certificate",
                "spec 5 item 1",
                "a payment, basket or consent belongs to the organisation its certificate names",
                "it belongs to the certificate that created it (issuer and serial number)",
            ),
            Reading(
                "no-tpp-messages",
                "spec 2.6, spec 7",
                "error answers of payment operations carry tppMessages",
                "no tppMessages in the error answers of E16-E18, PS, PC and PA",
            ),
            Reading(
                "sca-by-401",
                "spec 5 item 6, spec 7 (E2, E17 rows)",
                "payment creation and every authorisation start answer 201",
                "every payment creation starts its SCA and answers 401 with the payment and "
                "_links.scaRedirect; every authorisation start (E2, PA, PCA, CA) answers 401 with "
                "_links.scaRedirect",
            ),
            Reading(
                "duplicates-allowed-by-default",
                "spec 4.3 E16, E18",
                "a logical duplicate is refused unless allowLogicalDuplicate=true",
                "a logical duplicate is refused only with allowLogicalDuplicate=false",
            ),
            Reading(
                "kid-unchecked",
                "spec 7 rule 2, spec 2.7",
                "a KID must carry a MOD10 or MOD11 check digit; a blank one is KID_MISSING",
                "any non-empty KID reference is accepted (an empty one is still refused)",
            ),
            Reading(
                "day-of-execution-by-pattern",
                "spec 2.7",
                "dayOfExecution must be 1 to 31",
                "dayOfExecution must match its pattern only (00 and 32 accepted)",
            ),
            Reading(
                "end-before-start",
                "spec 2.7",
                "a periodic endDate before its startDate is refused",
                "accepted",
            ),
            Reading(
                "basket-authorised-again",
                "spec 4.3 E2, spec 7 (E2 row)",
                "a basket whose SCA finished, or with no payment left in RCVD, is blocked",
                "a basket starts another authorisation unless every payment of it is "
                "cancelled or rejected",
            ),
            Reading(
                "certificates-unvalidated",
                "spec 5 items 1, 2",
                "an expired certificate, or one of a CA not trusted (--trust), is refused",
                "a request whose signature verifies with the certificate it sends authenticates",
            ),
            Reading(
                "tpp-header-values",
                "spec 4.2",
                "TPP-Redirect-URI must be an absolute URI; TPP-Redirect-Preferred true or false",
                "any TPP-Redirect-URI; a TPP-Redirect-Preferred other than false means the "
                "default (true)",
            ),
            Reading(
                "psu-headers-on-named-operations",
                "spec 4.1, spec 4.2, spec 7 rule 7",
                "PSU-ID, PSU-Device-ID, PSU-Context and PSU-HTTP-Method are validated on every "
                "operation",
                "not validated on the operations spec 4.2 shows no header set for (PSU-ID stays "
                "validated on the sandbox operations, spec 7 rule 7)",
            ),
            Reading(
                "lenient-list-parameters",
                "spec 4.3 E3, E4; spec 4.1 (AT)",
                "a negative E3/E4 offset and every malformed AT query parameter are refused",
                "a negative offset reads as 0; AT's parameters are taken when they make sense "
                "and ignored otherwise (bookingStatus: both)",
            ),
            Reading(
                "lenient-sandbox-transactions",
                "spec 2.9, spec 4.3 E5, E7",
                "E7 items need an ISO 4217 currency and calendar dates; E5's transactionDate "
                "follows the value-date rule",
                "E7 currency and dates are any strings (a date that is no calendar date escapes "
                "the date rule); E5's transactionDate is not a value date",
            ),
            Reading(
                "minimal-error-bodies",
                "spec 7",
                "every error answer carries the spec 7 body (id, system, status, code, message)",
                "E1, E2 and E16-E18 answer code and message; every other operation message only",
            ),
            Reading(
                "unshown-success-statuses",
                "spec 4.3 E5, E6, E15; spec 4.1 (PC)",
                "E5 and E6 answer 201, E15 the updated account, PC 204",
                "E5 and E6 answer 200, E15 200 with the balances stored, PC 200 with the status",
            ),
            Reading(
                "details-without-transaction-id",
                "spec 2.8",
                "transaction details carry transactionId",
                "transaction details leave transactionId out",
            ),
            Reading(
                "basket-own-codes",
                "spec 7",
                "tppMessages of E1 and E2 errors carry a code of spec 7's payment list",
                "they carry the basket's own code (RESOURCE_BLOCKED, REFERENCE_MIX_INVALID)",
            ),
            Reading(
                "one-engagement-per-account",
                "spec 4.3 E6",
                "any number of engagements for one customer and account on one agreement",
                "a second engagement for the same customer and account on one agreement is "
                "answered 409 (CONFLICT)",
            ),
            Reading(
                "one-balance-per-type",
                "spec 2.1, spec 4.3 E15",
                "an account creation (SA) or balance change (E15) may carry two balances of one "
                "balanceType (the later one wins)",
                "two items of one balanceType in one body are refused (400 FORMAT_ERROR)",
            ),
            Reading(
                "card-account-status-required",
                "spec 4.1 (the sandbox creations' shapes: not shown)",
                "a card account creation (SCA) without status is enabled",
                "SCA requires status (a field the contract's shape leaves optional)",
                "[setup] templates (SCA.json gives status)",
            ),
            Reading(
                "owner-as-customer-number",
                "spec 2.9 (agreement owner: optional, its form not shown)",
                "an agreement's owner is taken as the customer's id or number and reads back "
                "as the customer id",
                "it is taken as the owner's customerNumber only (a customer id: 400 FORMAT_ERROR) "
                "and reads back as that (SAG, E14), as an independent implementation chose",
                '[setup] agreement_owner = "customerNumber"',
            ),
            Reading(
                "numeric-sandbox-ids",
                "spec 2.9, spec 4.3 (ids: strings, their form not shown)",
                "sandbox accounts, card accounts, agreements and engagements have UUIDs",
                "they have numeric ids of 12 digits",
            ),
            Reading(
                "unshown-header-sets-as-nearest",
                "spec 4.2 (the header sets of AL, AT, BR, BS, CD, CG, CS, PC and PS: not shown)",
                "an operation whose header set the spec does not show requires only X-Request-ID "
                "and the signature headers",
                "it also requires the TPP headers its nearest stated operation requires "
                "(x-accept-fix, TPP-Session-ID and TPP-Redirect-URI on the account list as on "
                "E8), as four independent implementations chose",
            ),
            Reading(
                "max35-identifiers",
                "spec 2.9 (the card transaction id: a string without a stated bound)",
                "a card transaction id of any length",
                "a card transaction id over 35 characters (ISO 20022 Max35Text) is refused "
                "(400 FORMAT_ERROR), as an independent implementation chose",
            ),
            Reading(
                "basket-payment-not-cancellable",
                "spec 2.4, spec 4.1 (PC on a payment inside a signing basket: not stated)",
                "a payment in a signing basket is cancelled as any other (PC)",
                "PC on a payment that is in a signing basket is refused (400 RESOURCE_BLOCKED, "
                "a code spec 7 lists for E2), as an independent implementation chose",
            ),
            Reading(
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


@cache
def of_direction(direction: str) -> frozenset[str]:
    """The names of every reading in ``direction``: those its profile plays (what its flag
    switches on), each checked to be a row of the table."""
    return check_readings(load_profile(DIRECTIONS[direction].profile).readings)


def direction_of(name: str) -> str | None:
    """The direction whose profile plays the reading ``name`` (None: neither)."""
    return next((key for key in DIRECTIONS if name in of_direction(key)), None)


def check_readings(names: Iterable[str]) -> frozenset[str]:
    """The one name check: ``names`` as a set, each a reading of the table; a ``ValueError``
    for one the table does not know."""
    chosen = frozenset(names)
    unknown = sorted(chosen - READINGS.keys())
    if unknown:
        raise ValueError(
            f"unknown reading(s): {', '.join(unknown)} (reference_server/model/readings.py)"
        )
    return chosen
