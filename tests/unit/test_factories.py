"""Factories: deterministic from a seed, valid against the contract and the cross-field rules."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pytest
from stdnum import luhn

from conformance.contract import identifiers as ids
from conformance.contract.crossfield import CheckContext, checks_for
from conformance.errors import ContractError
from conformance.generate import factories as f

TODAY = date(2026, 1, 29)
# ISO 4217 minor units of the currencies used where these tests must not depend on the contract
# loader; the factories themselves read load_contract().minor_units when none is passed.
MINOR_UNITS = {"NOK": 2, "EUR": 2, "JPY": 0, "KWD": 3}

ACCOUNT = {"iban": "NO9386011117947", "bban": "86011117947", "currency": "NOK"}

#: One call per factory, by seed; the operation whose request schema the value must satisfy.
FACTORIES: dict[str, tuple[str, Callable[[int], Any]]] = {
    "ndct_payment": ("E16", lambda s: f.ndct_payment(s, minor_units=MINOR_UNITS)),
    "ndct_payment-unstructured": (
        "E16",
        lambda s: f.ndct_payment(s, kid=False, minor_units=MINOR_UNITS),
    ),
    "ndct_payment-mod11-eur": (
        "E16",
        lambda s: f.ndct_payment(s, currency="EUR", kid_algorithm="MOD11", minor_units=MINOR_UNITS),
    ),
    "periodic_payment": (
        "E17",
        lambda s: f.periodic_payment(s, today=TODAY, minor_units=MINOR_UNITS),
    ),
    "periodic_payment-monthly-variable": (
        "E17",
        lambda s: f.periodic_payment(
            s, today=TODAY, frequency="MonthlyVariable", minor_units=MINOR_UNITS
        ),
    ),
    "ncbct_payment": ("E18", lambda s: f.ncbct_payment(s, minor_units=MINOR_UNITS)),
    "ncbct_payment-bban": (
        "E18",
        lambda s: f.ncbct_payment(s, creditor_bban=True, minor_units=MINOR_UNITS),
    ),
    "ncbct_payment-small": (
        "E18",
        lambda s: f.ncbct_payment(s, regulatory=False, minor_units=MINOR_UNITS),
    ),
    "consent_request": ("CC", lambda s: f.consent_request(s, [ACCOUNT["iban"]])),
    "consent_request-bank-offered": (
        "CC",
        lambda s: f.consent_request(s, [ACCOUNT["iban"]], model="bank-offered"),
    ),
    "consent_request-global": (
        "CC",
        lambda s: f.consent_request(s, [ACCOUNT["iban"]], model="global"),
    ),
    "sandbox_customer_create-private": ("SCU", lambda s: f.sandbox_customer_create(s)),
    "sandbox_customer_create-corporate": (
        "SCU",
        lambda s: f.sandbox_customer_create(s, "CORPORATE"),
    ),
    "sandbox_account_create": ("SA", lambda s: f.sandbox_account_create(s, "10000001")),
    "sandbox_card_account_create": (
        "SCA",
        lambda s: f.sandbox_card_account_create(s, "10000001"),
    ),
    "sandbox_agreement_create": ("SAG", lambda s: f.sandbox_agreement_create(s, "customer-1")),
    "sandbox_engagement": (
        "E6",
        lambda s: f.sandbox_engagement(s, "customer-2", ACCOUNT["iban"]),
    ),
    "sandbox_account_transactions": (
        "E7",
        lambda s: f.sandbox_account_transactions(s, ACCOUNT, 3, today=TODAY),
    ),
    "sandbox_card_transactions": (
        "E5",
        lambda s: f.sandbox_card_transactions(s, "545454******5454", 3, today=TODAY),
    ),
    "balance_update": ("E15", lambda s: f.balance_update(s, "NOK")),
    "psu_headers": ("", lambda s: f.psu_headers(s)),
    "psu_headers-corporate": ("", lambda s: f.psu_headers(s, corporate=True)),
}

# Factories whose value does not depend on the seed by design.
SEED_FREE = {"consent_request", "consent_request-bank-offered", "consent_request-global"}


@pytest.fixture(scope="module")
def contract() -> Any:
    from conformance.contract import load_contract

    try:
        return load_contract()
    except ContractError as error:  # pragma: no cover - only while schemas/ is incomplete
        pytest.skip(f"contract not loadable yet: {error}")


# --- determinism -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_same_seed_gives_identical_values(name: str) -> None:
    _, make = FACTORIES[name]
    assert make(7) == make(7)


@pytest.mark.parametrize("name", sorted(set(FACTORIES) - SEED_FREE))
def test_different_seeds_give_different_values(name: str) -> None:
    _, make = FACTORIES[name]
    assert make(7) != make(8)


def test_factories_leave_the_global_random_state_alone() -> None:
    random.seed(99)
    state = random.getstate()
    for _, make in FACTORIES.values():
        make(3)
    assert random.getstate() == state


def test_same_seed_in_two_factories_draws_independent_data() -> None:
    ndct = f.ndct_payment(1, minor_units=MINOR_UNITS)
    periodic = f.periodic_payment(1, today=TODAY, minor_units=MINOR_UNITS)
    assert ndct["debtorAccount"]["bban"] != periodic["debtorAccount"]["bban"]


# --- validity against the contract -----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(n for n, (op, _) in FACTORIES.items() if op))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bodies_validate_against_the_request_schema(contract: Any, name: str, seed: int) -> None:
    operation_id, make = FACTORIES[name]
    value = make(seed)
    schema = contract.operations[operation_id].request_schema
    errors = [error.message for error in contract.validator(schema).iter_errors(value)]
    assert errors == []


@pytest.mark.parametrize("name", sorted(n for n, (op, _) in FACTORIES.items() if op))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bodies_break_no_cross_field_rule(contract: Any, name: str, seed: int) -> None:
    operation_id, make = FACTORIES[name]
    context = CheckContext.at(datetime(2026, 1, 29, 12, 0), contract.minor_units)
    value = make(seed)
    assert [v for check in checks_for(operation_id) for v in check(value, context)] == []


@pytest.mark.parametrize("corporate", [False, True])
def test_psu_headers_validate_against_the_header_schemas(contract: Any, corporate: bool) -> None:
    for name, value in f.psu_headers(5, corporate=corporate).items():
        errors = list(contract.validator(contract.header_schema(name)).iter_errors(value))
        assert errors == [], name


def test_payment_factories_read_minor_units_from_the_contract(contract: Any) -> None:
    assert f.ndct_payment(1, currency="KWD", amount=Decimal("2.5"))["instructedAmount"] == {
        "amount": "2.500",
        "currency": "KWD",
    }


# --- what the bodies contain -----------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["MOD10", "MOD11"])
def test_ndct_kid_has_the_requested_algorithm(algorithm: ids.KidAlgorithm) -> None:
    body = f.ndct_payment(4, kid_algorithm=algorithm, minor_units=MINOR_UNITS)
    (item,) = body["remittanceInformationStructuredArray"]
    assert item["referenceType"] == "KID"
    reference = item["reference"]
    if algorithm == "MOD10":
        assert luhn.is_valid(reference)
    else:
        assert ids.kid_mod11_check_character(reference[:-1]) == reference[-1]
    assert "remittanceInformationUnstructured" not in body


def test_ndct_uses_given_accounts_and_valid_generated_ones() -> None:
    body = f.ndct_payment(2, debtor_bban="86011117947", minor_units=MINOR_UNITS)
    assert body["debtorAccount"] == {"bban": "86011117947", "currency": "NOK"}
    assert ids.is_valid_bban(body["creditorAccount"]["bban"])
    assert "creditorAgent" not in body


def test_ndct_to_a_currency_account_names_the_creditor_bic() -> None:
    body = f.ndct_payment(2, currency="EUR", minor_units=MINOR_UNITS)
    assert ids.is_valid_bic(body["creditorAgent"])


@pytest.mark.parametrize(
    ("amount", "currency", "expected"),
    [
        (Decimal("100"), "NOK", "100.00"),
        (100, "JPY", "100"),
        ("1.234", "KWD", "1.234"),
        (Decimal("0.5"), "EUR", "0.50"),
    ],
)
def test_amounts_carry_exactly_the_minor_units(amount: Any, currency: str, expected: str) -> None:
    body = f.ndct_payment(1, amount=amount, currency=currency, minor_units=MINOR_UNITS)
    assert body["instructedAmount"] == {"amount": expected, "currency": currency}


def test_format_amount_refuses_to_round() -> None:
    with pytest.raises(ValueError, match="more fraction digits"):
        f.format_amount(Decimal("100.5"), "JPY", MINOR_UNITS)


def test_ncbct_defaults_to_a_reportable_amount_with_reporting() -> None:
    body = f.ncbct_payment(1, minor_units=MINOR_UNITS)
    assert Decimal(body["instructedAmount"]["amount"]) >= 100_000
    assert body["regulatoryReportingCode"] and body["regulatoryReportingInformation"]
    assert ids.is_valid_iban(body["creditorAccount"]["iban"])


def test_ncbct_without_reporting_stays_below_the_threshold() -> None:
    for seed in range(20):
        body = f.ncbct_payment(seed, regulatory=False, minor_units=MINOR_UNITS)
        assert Decimal(body["instructedAmount"]["amount"]) < 100_000
        assert "regulatoryReportingCode" not in body


def test_ncbct_with_a_creditor_bban_names_the_creditor_agent() -> None:
    body = f.ncbct_payment(1, creditor_bban=True, minor_units=MINOR_UNITS)
    assert set(body["creditorAccount"]) == {"bban", "currency"}
    assert ids.is_valid_bic(body["creditorAgent"])


def test_periodic_monthly_variable_lists_distinct_months() -> None:
    body = f.periodic_payment(3, today=TODAY, frequency="MonthlyVariable", minor_units=MINOR_UNITS)
    months = body["monthsOfExecution"]
    assert len(months) == len(set(months)) == 3
    assert body["startDate"] == "2026-02-05"
    plain = f.periodic_payment(3, today=TODAY, minor_units=MINOR_UNITS)
    assert "monthsOfExecution" not in plain


def test_account_transactions_debit_the_account_itself_in_the_past() -> None:
    items = f.sandbox_account_transactions(1, ACCOUNT, 5, today=TODAY)
    assert len(items) == 5
    for item in items:
        assert item["debtorAccount"] == {"iban": ACCOUNT["iban"], "bban": ACCOUNT["bban"]}
        booking = date.fromisoformat(item["bookingDate"])
        value = date.fromisoformat(item["valueDate"])
        assert booking <= value <= date(2026, 1, 27)


def test_card_transactions_are_booked_on_their_past_transaction_day() -> None:
    for item in f.sandbox_card_transactions(1, "545454******5454", 5, today=TODAY):
        assert item["bookingDate"] == item["transactionDate"] <= "2026-01-27"
        assert item["maskedPan"] == "545454******5454"


def test_private_customer_carries_a_valid_national_id() -> None:
    body = f.sandbox_customer_create(1)
    assert ids.is_valid_national_id(body["nationalIdentityNumber"])
    assert "customerNumber" not in body
    assert f.sandbox_customer_create(1, customer_number="42")["customerNumber"] == "42"


def test_sandbox_account_iban_matches_its_bban() -> None:
    body = f.sandbox_account_create(1, "10000001")
    assert body["iban"] == ids.bban_to_iban(body["bban"])


def test_engagement_defaults_to_the_roles_needed_for_consent() -> None:
    assert f.sandbox_engagement(1, "c", ACCOUNT["iban"])["roles"] == ["REGISTER", "VIEW"]


def test_private_agreement_has_no_owner() -> None:
    assert "owner" not in f.sandbox_agreement_create(1, None)


def test_psu_headers_carry_a_version_4_uuid_and_a_corporate_id_for_corporates() -> None:
    private = f.psu_headers(1)
    assert uuid.UUID(private["PSU-ID"]).version == 4
    assert private["PSU-Context"] == "PRIVATE" and "PSU-Corporate-ID" not in private
    corporate = f.psu_headers(1, corporate=True)
    assert corporate["PSU-Context"] == "CORPORATE"
    assert ids.is_valid_organisation_number(corporate["PSU-Corporate-ID"])


def test_signing_basket_lists_the_payment_ids() -> None:
    assert f.signing_basket(iter(["p1", "p2"])) == {"paymentIds": ["p1", "p2"]}


def test_output_does_not_depend_on_call_order() -> None:
    """The process shares one Faker (speed); each factory reseeds it, so order cannot leak in."""
    first = f.ndct_payment(5)
    f.sandbox_customer_create(9)
    f.psu_headers(3)
    assert f.ndct_payment(5) == first


def test_a_consent_body_is_the_banks_model() -> None:
    iban = ACCOUNT["iban"]
    detailed = f.consent_request(1, [iban])["access"]
    assert detailed["accounts"] == detailed["transactions"] == [{"iban": iban}]
    offered = f.consent_request(1, [iban], model="bank-offered")["access"]
    assert offered == {"accounts": [], "balances": [], "transactions": []}
    assert f.consent_request(1, [iban], model="global")["access"] == {"allPsd2": "allAccounts"}
