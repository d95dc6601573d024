"""Norwegian identifiers: generated values round-trip through stdnum; KID check digits by hand."""

from __future__ import annotations

import random

import pytest
from stdnum import bic as stdnum_bic
from stdnum import iban as stdnum_iban
from stdnum import luhn
from stdnum.no import fodselsnummer, kontonr, orgnr
from stdnum.no import iban as stdnum_no_iban

from conformance.contract import identifiers as ids

SEEDS = range(40)


def rngs() -> list[random.Random]:
    return [random.Random(seed) for seed in SEEDS]


# --- account numbers and IBANs -------------------------------------------------------------


def test_generated_bbans_are_valid_for_stdnum() -> None:
    for rng in rngs():
        bban = ids.generate_bban(rng)
        assert len(bban) == 11 and bban.isdigit()
        assert kontonr.validate(bban) == bban
        assert ids.is_valid_bban(bban)


def test_generated_ibans_embed_a_valid_bban() -> None:
    for rng in rngs():
        iban = ids.generate_iban(rng)
        assert iban.startswith("NO") and len(iban) == 15
        assert stdnum_no_iban.validate(iban) == iban
        assert ids.is_valid_bban(stdnum_no_iban.to_kontonr(iban))
        assert ids.is_valid_iban(iban)
        assert ids.is_valid_norwegian_iban(iban)


def test_bban_to_iban_matches_the_published_example() -> None:
    # stdnum's documented pair: account 8601 11 17947 is IBAN NO93 8601 1117 947.
    assert ids.bban_to_iban("86011117947") == "NO9386011117947"


@pytest.mark.parametrize(
    "value",
    [
        "86011117949",  # wrong MOD11 check digit (7 is right)
        "8601.11.17947",  # printed form with separators, not the electronic form
        "4090403",  # 7-digit postgiro number: stdnum accepts it, a request BBAN is 11 digits
        "860111179470",  # 12 digits
        "",
    ],
)
def test_invalid_bbans_are_refused(value: str) -> None:
    assert not ids.is_valid_bban(value)


def test_bban_to_iban_refuses_an_invalid_bban() -> None:
    with pytest.raises(ValueError, match="not a valid Norwegian account number"):
        ids.bban_to_iban("86011117949")


@pytest.mark.parametrize(
    "value",
    [
        "NO9286011117947",  # wrong IBAN check digits
        "NO2386011117946",  # IBAN check digits right, embedded account check digit wrong
        "NO93 8601 1117 947",  # paper format with spaces
    ],
)
def test_invalid_ibans_are_refused(value: str) -> None:
    assert not ids.is_valid_norwegian_iban(value)


def test_foreign_ibans_are_valid_ibans_but_not_norwegian() -> None:
    assert ids.is_valid_iban("DE89370400440532013000")
    assert not ids.is_valid_norwegian_iban("DE89370400440532013000")


# --- national identity and D-numbers ------------------------------------------------------------


def test_generated_national_ids_are_valid_for_stdnum() -> None:
    for rng in rngs():
        number = ids.generate_national_id(rng)
        assert fodselsnummer.validate(number) == number
        assert int(number[:2]) <= 31
        assert ids.is_valid_national_id(number)


def test_generated_d_numbers_are_valid_for_stdnum_and_add_40_to_the_day() -> None:
    for rng in rngs():
        number = ids.generate_national_id(rng, d_number=True)
        assert 41 <= int(number[:2]) <= 71
        assert fodselsnummer.validate(number) == number
        assert ids.is_valid_national_id(number)


def test_known_national_id_and_d_number_are_valid() -> None:
    # stdnum's documented example: 151086 95088 (born 15 October 1986).
    assert ids.is_valid_national_id("15108695088")
    # The D-number of the same birth date and individual number: day 15 + 40 = 55.
    # k1 weights 3,7,6,1,8,9,4,5,2 over 5,5,1,0,8,6,9,5,0 -> 235; 235 mod 11 = 4; 11 - 4 = 7.
    # k2 weights 5,4,3,2,7,6,5,4,3,2 over 5,5,1,0,8,6,9,5,0,7 -> 219; 219 mod 11 = 10; 11 - 10 = 1.
    assert ids.is_valid_national_id("55108695071")


@pytest.mark.parametrize(
    "value",
    [
        "15108695077",  # wrong check digits
        "55108695072",  # D-number with a wrong second check digit
        "151086 95088",  # separator
        "1510869508",  # 10 digits
        "15508695088",  # H-number form (month + 40): not allowed by spec 4.2
    ],
)
def test_invalid_national_ids_are_refused(value: str) -> None:
    assert not ids.is_valid_national_id(value)


def test_generators_depend_only_on_the_given_rng() -> None:
    random.seed(1)
    first = ids.generate_national_id(random.Random(7))
    random.seed(2)
    second = ids.generate_national_id(random.Random(7))
    assert first == second
    assert ids.generate_bban(random.Random(7)) == ids.generate_bban(random.Random(7))
    assert ids.generate_bban(random.Random(7)) != ids.generate_bban(random.Random(8))


@pytest.mark.parametrize(
    ("value", "masked"),
    [("15108695088", "*********88"), ("ab", "**"), ("", ""), ("123", "*23")],
)
def test_mask_identity_keeps_only_the_last_two_characters(value: str, masked: str) -> None:
    assert ids.mask_identity(value) == masked


# --- organisation numbers --------------------------------------------------------------------


def test_generated_organisation_numbers_are_valid_for_stdnum() -> None:
    for rng in rngs():
        number = ids.generate_organisation_number(rng)
        assert orgnr.validate(number) == number
        assert number[0] in "89"
        assert ids.is_valid_organisation_number(number)


def test_organisation_number_check_digit() -> None:
    assert ids.is_valid_organisation_number("988077917")  # stdnum's documented example
    assert not ids.is_valid_organisation_number("988077918")
    assert not ids.is_valid_organisation_number("988 077 917")


# --- BICs ----------------------------------------------------------------------------------


def test_every_known_bic_fits_the_spec_pattern_and_stdnum() -> None:
    for country, bics in ids.KNOWN_BICS.items():
        for bic in bics:
            assert ids.BIC_PATTERN.match(bic), bic
            assert stdnum_bic.validate(bic) == bic
            assert bic[4:6] == country


@pytest.mark.parametrize("country", ["NO", "SE", "PL", "JP"])
def test_generated_bics_are_valid_for_the_country(country: str) -> None:
    for rng in rngs():
        bic = ids.generate_bic(rng, country=country)
        assert ids.is_valid_bic(bic), bic
        assert bic[4:6] == country


@pytest.mark.parametrize(
    "value",
    [
        "DNBANOKKX",  # 9 characters
        "DNBANOKKXX",  # 10 characters: the spec's unanchored pattern would accept it
        "DNBANO1K",  # location code starts with 1 (spec: [A-Z2-9])
        "DNBANOKO",  # location code ends with O (spec: [A-NP-Z0-9])
        "dnbanokk",  # lower case
        "DNBAQQKK",  # QQ is not a country
    ],
)
def test_invalid_bics_are_refused(value: str) -> None:
    assert not ids.is_valid_bic(value)


def test_generate_bic_refuses_a_malformed_country() -> None:
    with pytest.raises(ValueError, match="country"):
        ids.generate_bic(random.Random(1), country="Norway")


# --- KID ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kid", "algorithm"),
    [
        # MOD10 (Luhn) over 1234: from the right 4*2=8, 3, 2*2=4, 1 -> 16; (10 - 6) % 10 = 4.
        ("12344", "MOD10"),
        # MOD10 over 123456789: 9*2=18->9, 8, 7*2=14->5, 6, 5*2=10->1, 4, 3*2=6, 2, 1*2=2 -> 43;
        # (10 - 3) % 10 = 7.
        ("1234567897", "MOD10"),
        # MOD11 over 1234: weights 2,3,4,5 from the right: 8 + 9 + 8 + 5 = 30; 30 mod 11 = 8;
        # 11 - 8 = 3. (MOD10 would give 4, so only MOD11 fits.)
        ("12343", "MOD11"),
        # MOD11 over 7654321: weights 2,3,4,5,6,7,2 from the right (the weights wrap):
        # 1*2 + 2*3 + 3*4 + 4*5 + 5*6 + 6*7 + 7*2 = 126; 126 mod 11 = 5; 11 - 5 = 6.
        # (MOD10 would give 4.)
        ("76543216", "MOD11"),
        # MOD11 over 143: 3*2 + 4*3 + 1*4 = 22; 22 mod 11 = 0 -> check digit 0 (11 -> 0).
        # (MOD10 would give 8.)
        ("1430", "MOD11"),
        # MOD11 over 6: 6*2 = 12; 12 mod 11 = 1; 11 - 1 = 10 -> check character "-".
        ("6-", "MOD11"),
        # Both fit 00; MOD10 is reported first.
        ("00", "MOD10"),
    ],
)
def test_known_good_kids(kid: str, algorithm: str) -> None:
    assert ids.kid_algorithm(kid) == algorithm
    assert ids.is_valid_kid(kid)


@pytest.mark.parametrize(
    "kid",
    [
        "12345",  # 1234 needs 4 (MOD10) or 3 (MOD11)
        "1234567898",  # 123456789 needs 7 (MOD10) or 2 (MOD11: 174 mod 11 = 9; 11 - 9 = 2)
        "61",  # MOD11 remainder 1 needs "-", MOD10 needs 4
        "12-4",  # hyphen anywhere but last
        "1235-",  # hyphen where MOD11 of 1235 is 11 - (5*2+3*3+2*4+1*5 = 32 mod 11 = 10) = 1
        "1",  # shorter than 2
        "1" * 25 + "1",  # longer than 25
        "12A44",  # letters
        "",
    ],
)
def test_known_bad_kids(kid: str) -> None:
    assert ids.kid_algorithm(kid) is None
    assert not ids.is_valid_kid(kid)


def test_mod11_check_character_refuses_non_digits() -> None:
    with pytest.raises(ValueError, match="digits only"):
        ids.kid_mod11_check_character("12a")


@pytest.mark.parametrize("length", [2, 10, 25])
def test_generated_mod10_kids_pass_stdnum_luhn(length: int) -> None:
    for rng in rngs():
        kid = ids.generate_kid(rng, length=length, algorithm="MOD10")
        assert len(kid) == length and kid.isdigit() and kid[0] != "0"
        assert luhn.is_valid(kid)
        assert ids.is_valid_kid(kid)


@pytest.mark.parametrize("length", [2, 10, 25])
def test_generated_mod11_kids_have_the_mod11_check_digit(length: int) -> None:
    for rng in rngs():
        kid = ids.generate_kid(rng, length=length, algorithm="MOD11")
        assert len(kid) == length and kid.isdigit()
        weights = [2 + index % 6 for index in range(length - 1)]
        total = sum(w * int(d) for w, d in zip(weights, reversed(kid[:-1]), strict=True))
        assert (total + int(kid[-1])) % 11 == 0  # MOD11 with the check digit weighted 1
        assert ids.is_valid_kid(kid)


@pytest.mark.parametrize(("length", "algorithm"), [(1, "MOD10"), (26, "MOD11"), (10, "MOD97")])
def test_generate_kid_refuses_bad_arguments(length: int, algorithm: str) -> None:
    with pytest.raises(ValueError):
        ids.generate_kid(random.Random(1), length=length, algorithm=algorithm)  # type: ignore[arg-type]


@pytest.mark.parametrize("country", ["DE", "SE", "DK", "FI", "GB", "PL"])
def test_generated_foreign_ibans_are_valid_for_stdnum(country: str) -> None:
    for rng in rngs():
        iban = ids.generate_iban(rng, country=country)
        assert iban.startswith(country)
        assert stdnum_iban.validate(iban) == iban
        assert not ids.is_valid_norwegian_iban(iban)


def test_generate_iban_refuses_an_unknown_country() -> None:
    with pytest.raises(ValueError, match="no IBAN format known"):
        ids.generate_iban(random.Random(1), country="XX")


# --- payment cards --------------------------------------------------------------------------


def test_masked_pans_keep_six_and_four_digits_of_a_luhn_valid_pan() -> None:
    for rng in rngs():
        masked = ids.generate_masked_pan(rng)
        assert len(masked) == 16 and masked[6:12] == "******"
        assert masked[:6].isdigit() and masked[12:].isdigit()
        assert 51 <= int(masked[:2]) <= 55
