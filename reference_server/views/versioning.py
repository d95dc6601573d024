"""``x-accept-fix``: opt-in to a change before it becomes the default (spec 9, spec 4.2).

The header carries one or more values, comma-separated; each value switches one change on for that
request. Values the server does not know are ignored (a TPP may send a value from a later
release). The values of spec 9:

- ``amount-as-string``: amounts are strings with the currency's number of decimals. Spec 9 says
  this is the default since 1.7.6, so the server serialises production amounts (spec 2.8) that way
  with or without the value; sending it changes nothing (assumption).
- ``longer-name``: an account name up to 70 characters instead of 35 (spec 8, since 1.7.6).
- ``cash-account-type-iso``: the ISO 20022 ``cashAccountType`` code instead of the bank's own
  value (future breaking change, since 1.16.1).
- ``cardaccount-switch-originalamount-and-transactionamount``: card transactions show the two
  amounts the other way round (future breaking change, since 1.6.3).

Every function here is pure, so any resource module (the sandbox card transactions too) can call
it on the document it is about to send.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from types import MappingProxyType
from typing import Any

__all__ = [
    "AMOUNT_AS_STRING",
    "CARD_SWITCH_AMOUNTS",
    "CASH_ACCOUNT_TYPE_ISO",
    "DEFAULT_NAME_LENGTH",
    "KNOWN_FIXES",
    "LONGER_NAME",
    "LONGER_NAME_LENGTH",
    "account_name",
    "amount_string",
    "card_transaction",
    "cash_account_type",
    "parse_accept_fix",
    "switch_card_amounts",
]

AMOUNT_AS_STRING = "amount-as-string"
LONGER_NAME = "longer-name"
CASH_ACCOUNT_TYPE_ISO = "cash-account-type-iso"
CARD_SWITCH_AMOUNTS = "cardaccount-switch-originalamount-and-transactionamount"

#: The values spec 9 shows; anything else in the header is ignored.
KNOWN_FIXES = frozenset({AMOUNT_AS_STRING, LONGER_NAME, CASH_ACCOUNT_TYPE_ISO, CARD_SWITCH_AMOUNTS})

#: Account name length without / with ``longer-name`` (spec 8; 35 is NextGenPSD2's Max35Text,
#: assumed in ``operations/AL.json``).
DEFAULT_NAME_LENGTH = 35
LONGER_NAME_LENGTH = 70

#: The bank's own ``cashAccountType`` values, served unless ``cash-account-type-iso`` is sent
#: (spec 9 calls the ISO form a future breaking change, so the default is not ISO). The table is
#: a choice: one readable word per ISO 20022 code of spec 2.9.
BANK_CASH_ACCOUNT_TYPES: Mapping[str, str] = MappingProxyType(
    {
        "CACC": "CURRENT",
        "CASH": "CASH_PAYMENT",
        "CHAR": "CHARGES",
        "CISH": "CASH_INCOME",
        "COMM": "COMMISSION",
        "CPAC": "CLEARING",
        "LLSV": "LIMITED_LIQUIDITY_SAVINGS",
        "LOAN": "LOAN",
        "MGLD": "MARGINAL_LENDING",
        "MOMA": "MONEY_MARKET",
        "NREX": "NON_RESIDENT_EXTERNAL",
        "ODFT": "OVERDRAFT",
        "ONDP": "OVERNIGHT_DEPOSIT",
        "OTHR": "OTHER",
        "SACC": "SETTLEMENT",
        "SLRY": "SALARY",
        "SVGS": "SAVINGS",
        "TAXE": "TAX",
        "TRAN": "TRANSACTING",
        "TRAS": "CASH_TRADING",
    }
)


def parse_accept_fix(value: str | None) -> frozenset[str]:
    """The known values named in an ``x-accept-fix`` header (comma-separated, any case,
    surrounding blanks ignored); unknown values are dropped."""
    if not value:
        return frozenset()
    named = {part.strip().lower() for part in value.split(",")}
    return frozenset(named & KNOWN_FIXES)


def account_name(name: str, fixes: frozenset[str]) -> str:
    """The account name as served: cut to 35 characters, or to 70 with ``longer-name``."""
    limit = LONGER_NAME_LENGTH if LONGER_NAME in fixes else DEFAULT_NAME_LENGTH
    return name[:limit]


def cash_account_type(iso_code: str, fixes: frozenset[str]) -> str:
    """The ISO code with ``cash-account-type-iso``, else the bank's own value for it."""
    if CASH_ACCOUNT_TYPE_ISO in fixes:
        return iso_code
    return BANK_CASH_ACCOUNT_TYPES.get(iso_code, iso_code)


def amount_string(value: Decimal | int, currency: str, minor_units: Mapping[str, int]) -> str:
    """An amount as spec 2.1 writes it: a string with exactly the currency's minor units
    (``-500.00`` NOK, ``1200`` JPY, ``1.250`` KWD); half-up rounding when ``value`` has more."""
    digits = minor_units.get(currency, 2)
    quantum = Decimal(1).scaleb(-digits)
    rounded = Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP)
    return f"{rounded:.{digits}f}"


def switch_card_amounts(item: Mapping[str, Any]) -> dict[str, Any]:
    """A booked card transaction with ``originalAmount`` and ``transactionAmount`` swapped."""
    switched = dict(item)
    if "originalAmount" in item or "transactionAmount" in item:
        switched["originalAmount"] = item.get("transactionAmount")
        switched["transactionAmount"] = item.get("originalAmount")
        for key in ("originalAmount", "transactionAmount"):
            if switched[key] is None:
                del switched[key]
    return switched


def card_transaction(item: Mapping[str, Any], fixes: frozenset[str]) -> dict[str, Any]:
    """A booked card transaction as served under ``fixes`` (for the sandbox card resources)."""
    if CARD_SWITCH_AMOUNTS in fixes:
        return switch_card_amounts(item)
    return dict(item)
