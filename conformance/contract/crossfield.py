"""Cross-field rules of spec 2.7 and the sandbox date rule (spec 4.3 E5/E7, spec 8): one function
per rule, ``check(body, context) -> list[Violation]`` (``contract.violation``, the type the request
rules of ``request_rules`` return too), used by both the server and the suite.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from conformance.contract import Contract, load_contract
from conformance.contract.identifiers import is_valid_kid
from conformance.contract.violation import Violation

__all__ = [
    "CHECKS",
    "KID_REFERENCE_TYPES",
    "NCBCT_REGULATORY_THRESHOLD_NOK",
    "Check",
    "CheckContext",
    "Violation",
    "check_amount_fraction_digits",
    "check_creditor_agent_required_for_bban",
    "check_debtor_account_exactly_one",
    "check_duplicate_months_rejected",
    "check_kid_check_digit",
    "check_regulatory_reporting_threshold",
    "check_remittance_forms_exclusive",
    "check_sandbox_dates_rejected",
    "checks_for",
]

#: Spec 7 codes reported in ``tppMessages[].code`` by these checks.
FORMAT_ERROR = "FORMAT_ERROR"
KID_INVALID = "KID_INVALID"
KID_MISSING = "KID_MISSING"

#: spec 2.7 NCBCT, spec 8: regulatory reporting is required for transfers of NOK 100 000 or more.
NCBCT_REGULATORY_THRESHOLD_NOK = Decimal("100000")

#: ``referenceType`` values (compared case-insensitively) that make a structured remittance item a
#: Norwegian KID/OCR reference (spec 2.7: "An OCR/KID reference belongs in the structured array").
KID_REFERENCE_TYPES = frozenset({"KID", "OCR"})

_PLAIN_DECIMAL = re.compile(r"^-?[0-9]+(?:\.([0-9]+))?$")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckContext:
    """What a check may need besides the body; the same object is passed to every check.

    ``minor_units`` maps ISO 4217 codes to their minor units (``load_contract().minor_units``,
    from ``x-minorUnits`` in ``schemas/types/common.json``). ``today`` and ``now`` are the current
    date and time of the system whose rules are applied (a bank in Norway: Europe/Oslo). They are
    passed in, never read from the clock inside a check, so a check is a pure function and a test
    can pin the day. :meth:`at` derives ``today`` from ``now``.
    """

    minor_units: Mapping[str, int]
    today: date
    now: datetime
    #: The ``referenceType`` values (upper case) that mark a KID item; a bank may use another
    #: (ISO 20022 ``SCOR``: its profile's ``kid_reference_type``).
    kid_reference_types: frozenset[str] = KID_REFERENCE_TYPES

    def __post_init__(self) -> None:
        # A plain mapping is copied so that the context cannot change under a check; a
        # read-only view (the contract's own table) is kept as it is: copying its 160-odd
        # entries for every request the reference server checks would cost more than the checks.
        if not isinstance(self.minor_units, MappingProxyType):
            object.__setattr__(self, "minor_units", MappingProxyType(dict(self.minor_units)))

    @classmethod
    def at(
        cls,
        now: datetime,
        minor_units: Mapping[str, int],
        kid_reference_types: frozenset[str] = KID_REFERENCE_TYPES,
    ) -> CheckContext:
        """The context of the moment ``now`` (its own time zone decides the date)."""
        return cls(
            minor_units=minor_units,
            today=now.date(),
            now=now,
            kid_reference_types=kid_reference_types,
        )


#: The one signature every check has.
Check = Callable[[Any, CheckContext], list[Violation]]


def _pointer(*parts: str | int) -> str:
    """A JSON-pointer-like path (RFC 6901 escapes for ``~`` and ``/``), no leading slash."""
    return "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def _given(body: Mapping[str, Any], name: str) -> bool:
    """A field counts as given when it is in the body and is neither null nor an empty string."""
    value = body.get(name)
    return value is not None and value != ""


# --- spec 2.7 NDCT --------------------------------------------------------------------------


def check_remittance_forms_exclusive(body: Any, context: CheckContext) -> list[Violation]:
    """The unstructured and the structured-array remittance forms exclude each other (spec 2.7).

    Only the pair the spec names is checked: ``remittanceInformationUnstructured`` with
    ``remittanceInformationStructuredArray``. The deprecated single object
    ``remittanceInformationStructured`` is not part of that sentence, so combining it with the
    unstructured text is left alone.
    An empty array still counts as the structured form being sent.
    """
    if not isinstance(body, Mapping):
        return []
    both = ("remittanceInformationUnstructured", "remittanceInformationStructuredArray")
    if all(name in body for name in both):
        return [
            Violation(
                path="remittanceInformationUnstructured",
                code=FORMAT_ERROR,
                text=(
                    "remittanceInformationUnstructured and remittanceInformationStructuredArray "
                    "are mutually exclusive in one request (spec 2.7); a KID belongs in the "
                    "structured array"
                ),
            )
        ]
    return []


def check_debtor_account_exactly_one(body: Any, context: CheckContext) -> list[Violation]:
    """``debtorAccount`` holds exactly one of ``bban`` or ``other`` (spec 2.7 NDCT body).

    ``other`` is the card-account extension (``schemeNameProprietary`` creditCardAccount).
    A missing ``debtorAccount`` is left to the schema (it is required there).
    """
    if not isinstance(body, Mapping):
        return []
    account = body.get("debtorAccount")
    if not isinstance(account, Mapping):
        return []
    given = [name for name in ("bban", "other") if name in account]
    if len(given) == 1:
        return []
    found = "both" if given else "neither"
    return [
        Violation(
            path="debtorAccount",
            code=FORMAT_ERROR,
            text=f"debtorAccount must hold exactly one of bban or other, found {found} (spec 2.7)",
        )
    ]


def check_kid_check_digit(body: Any, context: CheckContext) -> list[Violation]:
    """A KID in a structured remittance item has a valid MOD10 or MOD11 check digit (spec 7 rule 2).

    Items are those of ``remittanceInformationStructuredArray`` and the deprecated single
    ``remittanceInformationStructured`` (spec 9 still lets a client send it). An item is a KID when
    its ``referenceType`` is one of ``context.kid_reference_types`` (KID or OCR unless the bank
    uses another), in any letter case. Items without a ``referenceType`` are
    not treated as KIDs, even when the reference is all digits: the spec gives no default type, and
    reading every numeric reference (an invoice number, say) as a KID would reject payments a bank
    accepts. A KID item whose reference is missing, null or blank is KID_MISSING; one whose check
    digit fits neither algorithm is KID_INVALID (both 400 since 1.7.0, spec 7 rule 2, spec 9).
    """
    if not isinstance(body, Mapping):
        return []
    violations: list[Violation] = []
    for path, item in _structured_items(body):
        reference_type = item.get("referenceType")
        kid_types = context.kid_reference_types
        if not (isinstance(reference_type, str) and reference_type.upper() in kid_types):
            continue
        reference = item.get("reference")
        if reference is None or (isinstance(reference, str) and not reference.strip()):
            violations.append(
                Violation(
                    path=_pointer(*path, "reference"),
                    code=KID_MISSING,
                    text=f"a {reference_type} item needs a non-empty reference (spec 7 rule 2)",
                )
            )
        elif isinstance(reference, str) and not is_valid_kid(reference):
            violations.append(
                Violation(
                    path=_pointer(*path, "reference"),
                    code=KID_INVALID,
                    text=(
                        f"KID {reference!r} has no valid MOD10 or MOD11 check digit, or is not "
                        "2-25 digits (spec 7 rule 2)"
                    ),
                )
            )
    return violations


def _structured_items(
    body: Mapping[str, Any],
) -> Iterator[tuple[tuple[str | int, ...], Mapping[str, Any]]]:
    array = body.get("remittanceInformationStructuredArray")
    if isinstance(array, Sequence) and not isinstance(array, str):
        for index, item in enumerate(array):
            if isinstance(item, Mapping):
                yield ("remittanceInformationStructuredArray", index), item
    single = body.get("remittanceInformationStructured")
    if isinstance(single, Mapping):
        yield ("remittanceInformationStructured",), single


# --- spec 2.1 amounts in payments -------------------------------------------------------------


def check_amount_fraction_digits(body: Any, context: CheckContext) -> list[Violation]:
    """An amount string has as many fraction digits as its currency's minor units (spec 2.1).

    Every object in the body that has a string ``amount`` and a string ``currency`` is an amount
    (``instructedAmount`` in requests, ``transactionFees`` in responses). NOK 100 is ``"100.00"``:
    ``"100"`` and ``"100.0"`` break the rule; JPY (0 minor units) is ``"100"``, never ``"100.5"``;
    KWD (3) is ``"1.234"``. Integer amounts (sandbox data, spec 2.1) and currencies missing from the
    minor-units table are the schema's business and are skipped, as is a string that is not a plain
    decimal number.
    """
    violations: list[Violation] = []
    for path, amount, currency in _amounts(body, (), []):
        digits = context.minor_units.get(currency)
        match = _PLAIN_DECIMAL.match(amount)
        if digits is None or match is None:
            continue
        fraction = len(match.group(1) or "")
        if fraction != digits:
            violations.append(
                Violation(
                    path=_pointer(*path, "amount"),
                    code=FORMAT_ERROR,
                    text=(
                        f"amount {amount!r} has {fraction} fraction digits; {currency} has "
                        f"{digits} minor units (ISO 4217), so it needs exactly {digits} (spec 2.1)"
                    ),
                )
            )
    return violations


#: JSON scalars: they hold no amount, so the walk does not descend into them (and does not pay
#: an abstract-base-class ``isinstance`` per leaf).
_LEAVES = (str, bytes, int, float, type(None))


def _amounts(
    node: Any, path: tuple[str | int, ...], found: list[tuple[tuple[str | int, ...], str, str]]
) -> list[tuple[tuple[str | int, ...], str, str]]:
    """Every (path, amount, currency) under ``node``, in document order, appended to ``found``
    (a list, not a generator: one frame per container instead of one per nesting level)."""
    if isinstance(node, Mapping):
        amount, currency = node.get("amount"), node.get("currency")
        if isinstance(amount, str) and isinstance(currency, str):
            found.append((path, amount, currency))
        for key, value in node.items():
            if not isinstance(value, _LEAVES):
                _amounts(value, (*path, str(key)), found)
    elif isinstance(node, Sequence) and not isinstance(node, str | bytes):
        for index, value in enumerate(node):
            if not isinstance(value, _LEAVES):
                _amounts(value, (*path, index), found)
    return found


# --- spec 2.7 NCBCT ---------------------------------------------------------------------------


def check_creditor_agent_required_for_bban(body: Any, context: CheckContext) -> list[Violation]:
    """``creditorAgent`` (a BIC) is required when ``creditorAccount`` is a BBAN (spec 2.7)."""
    if not isinstance(body, Mapping):
        return []
    account = body.get("creditorAccount")
    if not (isinstance(account, Mapping) and "bban" in account):
        return []
    if _given(body, "creditorAgent"):
        return []
    return [
        Violation(
            path="creditorAgent",
            code=FORMAT_ERROR,
            text="creditorAgent (BIC) is required when creditorAccount is given as bban (spec 2.7)",
        )
    ]


def check_regulatory_reporting_threshold(body: Any, context: CheckContext) -> list[Violation]:
    """Regulatory reporting code and information are required from NOK 100 000 (spec 2.7, spec 8).

    The threshold is inclusive ("NOK 100 000 or more") and compared as a ``Decimal``, so
    ``"100000.00"`` needs both fields and ``"99999.99"`` does not. The spec states the threshold
    in NOK only; an instructed amount in another currency is not converted (the spec names no rate
    source), so it never triggers this rule. This is our reading, recorded as such.
    """
    if not isinstance(body, Mapping):
        return []
    instructed = body.get("instructedAmount")
    if not isinstance(instructed, Mapping) or instructed.get("currency") != "NOK":
        return []
    raw = instructed.get("amount")
    if not isinstance(raw, str) or _PLAIN_DECIMAL.match(raw) is None:
        return []
    try:
        amount = Decimal(raw)
    except InvalidOperation:
        return []
    if amount < NCBCT_REGULATORY_THRESHOLD_NOK:
        return []
    return [
        Violation(
            path=name,
            code=FORMAT_ERROR,
            text=(
                f"{name} is required for transfers of NOK 100 000 or more; the instructed "
                f"amount is NOK {raw} (spec 2.7, spec 8)"
            ),
        )
        for name in ("regulatoryReportingCode", "regulatoryReportingInformation")
        if not _given(body, name)
    ]


# --- spec 2.7 periodic NDCT, spec 7 rule 4 ------------------------------------------------------


def check_duplicate_months_rejected(body: Any, context: CheckContext) -> list[Violation]:
    """The MonthlyVariable months list (``monthsOfExecution``) names no month twice (spec 7 rule 4).

    Spec 2.7 says of the list, without condition, that duplicates are rejected, so the list is
    checked whatever the ``frequency``. Each repeated month is reported once, at its second place.
    """
    if not isinstance(body, Mapping):
        return []
    months = body.get("monthsOfExecution")
    if not isinstance(months, Sequence) or isinstance(months, str):
        return []
    seen: set[int] = set()
    reported: set[int] = set()
    violations: list[Violation] = []
    for index, month in enumerate(months):
        if isinstance(month, bool) or not isinstance(month, int):
            continue
        if month in seen and month not in reported:
            reported.add(month)
            violations.append(
                Violation(
                    path=_pointer("monthsOfExecution", index),
                    code=FORMAT_ERROR,
                    text=f"month {month} is listed more than once (spec 2.7, spec 7 rule 4)",
                )
            )
        seen.add(month)
    return violations


# --- spec 4.3 E5/E7, spec 8: sandbox transaction dates ----------------------------------------

#: The value-date field of each sandbox creation item, read against ``bookingDate``. E7 items
#: carry ``valueDate`` literally. E5 card items have ``bookingDate`` and ``transactionDate`` and no
#: ``valueDate``, yet spec 4.3 E5 applies the value-date rule to them; the only other date of the
#: item is the transaction date, so it plays the value date (our reading, recorded as such and as
#: rule SB-dates-in-past-card-booking-after-transaction): a card item must not be booked after
#: its transaction date.
_VALUE_DATE_FIELDS = ("valueDate", "transactionDate")
_BOOKING_DATE_FIELD = "bookingDate"
#: The rows of ``rules.json`` the date check reports, which share it (a body rule names its row
#: where several rows share its check): a date not before now, by field; booking after value.
_DATE_ROWS = MappingProxyType(
    {
        _BOOKING_DATE_FIELD: "SB-dates-in-past-booking-future",
        "valueDate": "SB-dates-in-past-value-future",
        "transactionDate": "SB-dates-in-past-value-future",
    }
)
_AFTER_ROWS = MappingProxyType(
    {
        "valueDate": "SB-dates-in-past-booking-after-value",
        "transactionDate": "SB-dates-in-past-card-booking-after-transaction",
    }
)


def check_sandbox_dates_rejected(body: Any, context: CheckContext) -> list[Violation]:
    """Booking and value dates lie before now, and booking is not after value (spec 4.3 E5/E7, 8).

    The body is the array of E5 or E7 creation items; a single item object is read as a one-item
    array. A date is "before the current time" when it is not after ``context.today``: the day
    has begun, so today's date is already in the past; a date after today is not. (The suite
    never relies on today itself: its valid data lies days in the past, its invalid data days in
    the future, so a target reading the rule strictly still agrees.) Dates that do not parse are
    the schema's business and are skipped.
    """
    items: Sequence[Any]
    if isinstance(body, Mapping):
        items, prefix = [body], False
    elif isinstance(body, Sequence) and not isinstance(body, str):
        items, prefix = body, True
    else:
        return []
    violations: list[Violation] = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            continue
        base: tuple[int, ...] = (index,) if prefix else ()
        violations.extend(_check_item_dates(item, base, context.today))
    return violations


def _check_item_dates(
    item: Mapping[str, Any], base: tuple[int, ...], today: date
) -> list[Violation]:
    dates = {
        name: day
        for name in (_BOOKING_DATE_FIELD, *_VALUE_DATE_FIELDS)
        if (day := _parse_date(item.get(name))) is not None
    }
    violations = [
        Violation(
            path=_pointer(*base, name),
            code=FORMAT_ERROR,
            text=(
                f"{name} {day.isoformat()} is not before the current time "
                f"(today is {today.isoformat()}; spec 4.3 E5/E7, spec 8)"
            ),
            rule=_DATE_ROWS[name],
        )
        for name, day in dates.items()
        if day > today
    ]
    booking = dates.get(_BOOKING_DATE_FIELD)
    for value_name in _VALUE_DATE_FIELDS:
        value = dates.get(value_name)
        if booking is not None and value is not None and booking > value:
            violations.append(
                Violation(
                    path=_pointer(*base, _BOOKING_DATE_FIELD),
                    code=FORMAT_ERROR,
                    text=(
                        f"bookingDate {booking.isoformat()} is after {value_name} "
                        f"{value.isoformat()}; booking must not be after value (spec 4.3 E5/E7)"
                    ),
                    rule=_AFTER_ROWS[value_name],
                )
            )
    return violations


def _parse_date(value: Any) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


# --- registry ---------------------------------------------------------------------------------

#: Checks by the name the rule table's ``check`` column uses (immutable).
CHECKS: Mapping[str, Check] = MappingProxyType(
    {
        check.__name__: check
        for check in (
            check_remittance_forms_exclusive,
            check_debtor_account_exactly_one,
            check_creditor_agent_required_for_bban,
            check_regulatory_reporting_threshold,
            check_amount_fraction_digits,
            check_kid_check_digit,
            check_duplicate_months_rejected,
            check_sandbox_dates_rejected,
        )
    }
)


def checks_for(operation_id: str, contract: Contract | None = None) -> tuple[Check, ...]:
    """The checks that apply to the request body of an operation (E16, E17, E18, E5, E7).

    Read from the rule table of ``contract`` (default: :func:`~conformance.contract.load_contract`):
    every row whose ``check`` names a function of :data:`CHECKS` and whose ``operations`` list
    the operation contributes that check, in table order, once. Other operations get an empty
    tuple.
    """
    if contract is None:
        contract = load_contract()
    return _checks_for(contract, operation_id)


@lru_cache(maxsize=1024)
def _checks_for(contract: Contract, operation_id: str) -> tuple[Check, ...]:
    """:func:`checks_for`, cached per (contract, operation): the server asks on every request.

    Safe because a contract is read-only once loaded (its ``rules`` are a tuple of frozen rows)
    and :data:`CHECKS` is fixed; the key holds the contract object itself (hashed by identity),
    so another contract never sees this one's answer.
    """
    found: dict[str, Check] = {}
    for rule in contract.rules:
        check = CHECKS.get(rule.check)
        if check is not None and operation_id in rule.operations:
            found.setdefault(rule.check, check)
    return tuple(found.values())
