"""The permissive reading (``--permissive``): the places where the spec can be read two ways and
the bundled server plays the stricter one, each with the more lenient behaviour a bank may
equally choose.

Every row is a plain, documented behaviour of the server, not a fault: a bank that behaves so
conforms to the spec's words (``assumptions.md``, "The permissive reading", quotes the sentence
that allows each). ``--permissive`` switches all of them on at once; a stage asks
``app.permissive("name")`` where the row applies, and a name the table does not know raises, as
``app.faulty`` does, so a misspelt check cannot silently never apply.

A run of the suite against the permissive server may fail no must requirement: a must failure
there is a requirement that rests on a reading rather than on a sentence of the spec.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["READINGS", "Reading", "check_readings"]


@dataclass(frozen=True)
class Reading:
    """One place read permissively: its name, the spec part, what the bundled server does and
    what the permissive server does instead."""

    name: str
    spec: str
    faithful: str
    permissive: str


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
        )
    }
)


def check_readings(names: Iterable[str]) -> frozenset[str]:
    """The given reading names as a set; a ``ValueError`` for one the table does not know."""
    chosen = frozenset(names)
    unknown = sorted(chosen - READINGS.keys())
    if unknown:
        raise ValueError(f"unknown permissive reading(s): {', '.join(unknown)}")
    return chosen
