"""Norwegian identifiers with correct check digits (account number, IBAN, national identity and
D-number, organisation number, BIC, KID MOD10/MOD11): seeded generators and strict validators,
through python-stdnum wherever it has the rule.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from datetime import date, timedelta
from types import MappingProxyType
from typing import Literal

from stdnum import bic as stdnum_bic
from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.no import fodselsnummer, kontonr, orgnr
from stdnum.no import iban as stdnum_no_iban

__all__ = [
    "BIC_PATTERN",
    "FOREIGN_IBAN_FORMATS",
    "KID_MAX_LENGTH",
    "KID_MIN_LENGTH",
    "KNOWN_BICS",
    "KidAlgorithm",
    "bban_to_iban",
    "generate_bban",
    "generate_bic",
    "generate_iban",
    "generate_kid",
    "generate_masked_pan",
    "generate_national_id",
    "generate_organisation_number",
    "is_valid_bban",
    "is_valid_bic",
    "is_valid_iban",
    "is_valid_kid",
    "is_valid_national_id",
    "is_valid_norwegian_iban",
    "is_valid_organisation_number",
    "kid_algorithm",
    "kid_mod11_check_character",
    "mask_identity",
]

KidAlgorithm = Literal["MOD10", "MOD11"]

#: spec 2.1 BicFiIdentifier, anchored at both ends here (the spec's pattern has no ``$``, so a
#: JSON Schema ``pattern`` would also accept trailing characters; a valid BIC has 8 or 11).
BIC_PATTERN = re.compile(r"^[A-Z]{6,6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3,3}){0,1}$")

#: Published BICs of real institutions, per country (8-character form plus some branch codes).
#: Used as creditor agents so that a target that checks BICs against a directory still accepts them.
KNOWN_BICS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "NO": (
            "DNBANOKK",
            "DNBANOKKXXX",
            "NDEANOKK",
            "HANDNOKK",
            "DABANO22",
            "SPRONO22",
            "ESSENOKX",
        ),
        "SE": ("ESSESESS", "HANDSESS", "NDEASESS", "SWEDSESS"),
        "DK": ("DABADKKK", "NDEADKKK"),
        "FI": ("NDEAFIHH", "OKOYFIHH"),
        "DE": ("DEUTDEFF", "COBADEFF"),
        "GB": ("BARCGB22", "NWBKGB2L"),
        "FR": ("BNPAFRPP",),
        "US": ("CHASUS33",),
    }
)

#: BBAN layouts from the SWIFT IBAN registry for a few creditor countries, as (length, kind)
#: pairs where kind ``n`` is a digit and ``a`` an upper-case letter.
FOREIGN_IBAN_FORMATS: Mapping[str, tuple[tuple[int, str], ...]] = MappingProxyType(
    {
        "DE": ((8, "n"), (10, "n")),
        "SE": ((3, "n"), (16, "n"), (1, "n")),
        "DK": ((4, "n"), (9, "n"), (1, "n")),
        "FI": ((3, "n"), (11, "n")),
        "GB": ((4, "a"), (6, "n"), (8, "n")),
        "PL": ((8, "n"), (16, "n")),
    }
)

#: KID length bounds of the Norwegian OCR/KID standard (Nets, now Mastercard Payment Services):
#: at most 25 digits including the check digit; at least one payload digit plus the check digit.
KID_MIN_LENGTH = 2
KID_MAX_LENGTH = 25

_DIGITS = "0123456789"
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_KID_FORM = re.compile(r"^[0-9]+-?$")

# Birth dates drawn for national identity numbers: adults with both 19xx and 20xx births, all in
# the past for any run date (stdnum rejects persons "not born yet").
_BIRTH_FIRST = date(1940, 1, 1)
_BIRTH_LAST = date(2005, 12, 31)


def _digits(rng: random.Random, count: int) -> str:
    return "".join(rng.choice(_DIGITS) for _ in range(count))


def _complete_with_check_digit(payload: str, is_valid: Callable[[str], bool]) -> str | None:
    """The payload plus the one check digit the stdnum validator accepts, or None if none does.

    For MOD11 schemes a payload whose check digit would be "10" has no valid completion.
    """
    for digit in _DIGITS:
        if is_valid(payload + digit):
            return payload + digit
    return None


# --- account numbers and IBANs (spec 2.7, 2.9) -------------------------------------------------


def generate_bban(rng: random.Random) -> str:
    """An 11-digit Norwegian account number (bank code, account group, number, MOD11 check digit).

    The bank code never starts with ``0000``: stdnum reads that prefix as the old postgiro code and
    strips it.
    """
    while True:
        payload = str(rng.randint(1000, 9999)) + _digits(rng, 6)
        bban = _complete_with_check_digit(payload, kontonr.is_valid)
        if bban is not None:
            return bban


def is_valid_bban(value: str) -> bool:
    """True for an 11-digit Norwegian account number with a correct MOD11 check digit.

    stdnum also accepts 7-digit postgiro numbers and separators; a BBAN in a request body is the
    11-digit electronic form only.
    """
    return len(value) == 11 and value.isdigit() and value.isascii() and kontonr.is_valid(value)


def bban_to_iban(bban: str) -> str:
    """The Norwegian IBAN (``NO`` + two ISO 7064 check digits + the BBAN) of an account number."""
    if not is_valid_bban(bban):
        raise ValueError(f"not a valid Norwegian account number: {bban!r}")
    return kontonr.to_iban(bban)


def generate_iban(rng: random.Random, *, country: str = "NO") -> str:
    """An IBAN of ``country``: Norwegian (15 characters, on :func:`generate_bban`) by default.

    Foreign IBANs (creditors of cross-border payments, spec 2.7 NCBCT) are drawn for the countries
    of :data:`FOREIGN_IBAN_FORMATS`, whose BBANs carry no national check digit that stdnum would
    test; the two ISO 7064 MOD 97-10 check digits come from stdnum.
    """
    if country == "NO":
        return bban_to_iban(generate_bban(rng))
    layout = FOREIGN_IBAN_FORMATS.get(country)
    if layout is None:
        raise ValueError(f"no IBAN format known for {country!r}; use one of {_iban_countries()}")
    bban = "".join(
        "".join(rng.choice(_UPPER if kind == "a" else _DIGITS) for _ in range(count))
        for count, kind in layout
    )
    iban = country + stdnum_iban.calc_check_digits(country + "00" + bban) + bban
    if not is_valid_iban(iban):  # pragma: no cover - a wrong row in FOREIGN_IBAN_FORMATS
        raise AssertionError(f"generated IBAN {iban} fails stdnum")
    return iban


def _iban_countries() -> str:
    return ", ".join(["NO", *FOREIGN_IBAN_FORMATS])


def is_valid_iban(value: str) -> bool:
    """True for an IBAN of any country in electronic form (no spaces), checked by stdnum."""
    return value == stdnum_iban.compact(value) and stdnum_iban.is_valid(value)


def is_valid_norwegian_iban(value: str) -> bool:
    """True for a Norwegian IBAN whose embedded account number also has a valid check digit."""
    return value == stdnum_iban.compact(value) and stdnum_no_iban.is_valid(value)


# --- national identity and D-numbers (spec 4.2 X-PSU-IDENTITY, spec 5 item 5) ----------------


def generate_national_id(rng: random.Random, *, d_number: bool = False) -> str:
    """An 11-digit national identity number (fødselsnummer), or a D-number when ``d_number``.

    Layout: DDMMYY, a 3-digit individual number whose range encodes the century (000-499 for
    1900-1999, 500-999 for 2000-2039), and two MOD11 check digits computed by stdnum. A D-number
    adds 40 to the day. Payloads whose check digit would be 10 have no valid number and are redrawn.
    """
    span = (_BIRTH_LAST - _BIRTH_FIRST).days
    while True:
        born = _BIRTH_FIRST + timedelta(days=rng.randint(0, span))
        individual = rng.randint(0, 499) if born.year < 2000 else rng.randint(500, 999)
        day = born.day + 40 if d_number else born.day
        payload = f"{day:02d}{born.month:02d}{born.year % 100:02d}{individual:03d}"
        first = fodselsnummer.calc_check_digit1(payload)
        if len(first) != 1:
            continue
        second = fodselsnummer.calc_check_digit2(payload + first)
        if len(second) != 1:
            continue
        number = payload + first + second
        if fodselsnummer.is_valid(number):
            return number


def is_valid_national_id(value: str) -> bool:
    """True for a national identity number or a D-number (day + 40), 11 digits, both check digits.

    stdnum's ``fodselsnummer`` accepts D-numbers itself (it subtracts 40 from the day before
    checking the date), so no separate D-number routine is needed. It also accepts H-numbers
    (month + 40), a health-sector auxiliary number; spec 4.2 allows only a "national identity or
    D-number" in X-PSU-IDENTITY, so H-numbers are refused here.
    """
    if not (len(value) == 11 and value.isdigit() and value.isascii()):
        return False
    if int(value[2:4]) > 40:
        return False
    return fodselsnummer.is_valid(value)


def mask_identity(value: str) -> str:
    """The value with every character but the last two replaced by ``*`` (``*********42``).

    Reports and logs must not carry a PSU's full identity number. The first six digits are the
    birth date (the identifying part) and are never kept; the last two are check digits, which
    say nothing about the person but let an engineer tell two masked values apart. Values of two
    characters or fewer are masked completely.
    """
    if len(value) <= 2:
        return "*" * len(value)
    return "*" * (len(value) - 2) + value[-2:]


# --- organisation numbers --------------------------------------------------------------------


def generate_organisation_number(rng: random.Random) -> str:
    """A 9-digit organisation number with a valid MOD11 check digit (issued ones start 8 or 9)."""
    while True:
        payload = rng.choice("89") + _digits(rng, 7)
        number = _complete_with_check_digit(payload, orgnr.is_valid)
        if number is not None:
            return number


def is_valid_organisation_number(value: str) -> bool:
    """True for a 9-digit organisation number with a correct check digit, no separators."""
    return len(value) == 9 and value.isdigit() and value.isascii() and orgnr.is_valid(value)


# --- BICs (spec 2.1 BicFiIdentifier) ------------------------------------------------------------


def generate_bic(rng: random.Random, *, country: str = "NO") -> str:
    """A BIC of ``country``: a real one from :data:`KNOWN_BICS` where the list has that country.

    For other countries a synthetic BIC is built (four letters, the country, a location code that
    fits the spec 2.1 pattern); it is well formed but belongs to no institution.
    """
    known = KNOWN_BICS.get(country)
    if known:
        return rng.choice(known)
    if not (len(country) == 2 and country.isalpha() and country.isupper()):
        raise ValueError(f"not an ISO 3166-1 alpha-2 country code: {country!r}")
    institution = "".join(rng.choice(_UPPER) for _ in range(4))
    location = rng.choice(_UPPER) + rng.choice(_UPPER.replace("O", "") + _DIGITS)
    return institution + country + location


def is_valid_bic(value: str) -> bool:
    """True for an 8- or 11-character BIC matching spec 2.1 with a known ISO country (stdnum)."""
    return bool(BIC_PATTERN.match(value)) and stdnum_bic.is_valid(value) and value.isascii()


# --- payment cards (spec 2.9 sandbox card accounts) --------------------------------------------


def generate_masked_pan(rng: random.Random) -> str:
    """A masked card number: the first 6 and last 4 digits of a Luhn-valid 16-digit PAN.

    The PAN is drawn in the Mastercard 51-55 range and completed with stdnum's Luhn check digit,
    then masked as cards are shown to TPPs (``545454******5454``); the full PAN is never returned.
    """
    payload = str(rng.randint(51, 55)) + _digits(rng, 13)
    pan = payload + luhn.calc_check_digit(payload)
    return pan[:6] + "******" + pan[-4:]


# --- KID / OCR references (spec 2.7, spec 7 rule 2) --------------------------------------------


def kid_mod11_check_character(payload: str) -> str:
    """The MOD11 check character of a KID payload: ``"0"``-``"9"``, or ``"-"``.

    stdnum has no KID module, and its MOD11 routines for other numbers use other weights, so this
    one rule is written here, following the Norwegian OCR/KID standard (Nets, now Mastercard
    Payment Services): multiply the payload digits by the weights 2, 3, 4, 5, 6, 7, 2, 3, ...
    starting with the rightmost digit, add the products, take the remainder modulo 11 and subtract
    it from 11. A result of 11 (remainder 0) gives check digit 0; a result of 10 (remainder 1) has
    no digit and the standard uses a hyphen ``-`` as the check character (KIDs ending in ``-`` are
    printed on Norwegian invoices and must be typed in as such).
    """
    if not (payload.isdigit() and payload.isascii()):
        raise ValueError(f"a KID payload is digits only: {payload!r}")
    total = sum(int(digit) * (2 + index % 6) for index, digit in enumerate(reversed(payload)))
    check = 11 - total % 11
    if check == 11:
        return "0"
    if check == 10:
        return "-"
    return str(check)


def _kid_has_form(value: str) -> bool:
    return (
        KID_MIN_LENGTH <= len(value) <= KID_MAX_LENGTH
        and value.isascii()
        and bool(_KID_FORM.match(value))
    )


def kid_algorithm(value: str) -> KidAlgorithm | None:
    """Which check-digit algorithm the KID satisfies: ``"MOD10"``, ``"MOD11"`` or None.

    A KID carries no marker of its algorithm (the payee agrees it with its bank), so a receiver
    can only test both. When both fit (for example ``"00"``), MOD10 is reported. A KID ending in
    ``-`` can only be MOD11. Values other than 2-25 digits (plus an optional final ``-``) fit none.
    """
    if not _kid_has_form(value):
        return None
    payload, check = value[:-1], value[-1]
    if check != "-" and luhn.is_valid(value):
        return "MOD10"
    if kid_mod11_check_character(payload) == check:
        return "MOD11"
    return None


def is_valid_kid(value: str) -> bool:
    """True when the KID has the standard form and a correct MOD10 or MOD11 check character."""
    return kid_algorithm(value) is not None


def generate_kid(rng: random.Random, *, length: int = 10, algorithm: KidAlgorithm = "MOD10") -> str:
    """A KID of ``length`` characters (2-25) whose last digit is the ``algorithm`` check digit.

    The payload never starts with 0 (systems that store a KID as a number would drop it), and MOD11
    payloads whose check character would be ``-`` are redrawn: a KID made of digits only is
    accepted under every reading of the standard.
    """
    if not KID_MIN_LENGTH <= length <= KID_MAX_LENGTH:
        raise ValueError(f"a KID has {KID_MIN_LENGTH} to {KID_MAX_LENGTH} digits, not {length}")
    if algorithm not in ("MOD10", "MOD11"):
        raise ValueError(f"unknown KID algorithm {algorithm!r}; use 'MOD10' or 'MOD11'")
    while True:
        payload = rng.choice(_DIGITS[1:]) + _digits(rng, length - 2)
        if algorithm == "MOD10":
            return payload + luhn.calc_check_digit(payload)
        check = kid_mod11_check_character(payload)
        if check != "-":
            return payload + check
