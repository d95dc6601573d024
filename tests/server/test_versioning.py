"""``x-accept-fix`` (spec 9, spec 4.2, spec 8 account name): parsing, each value's effect, and the
deprecated ``remittanceInformationStructured`` still accepted."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from conformance.contract import Contract
from conformance.generate import factories
from reference_server.views import versioning
from reference_server.views.versioning import (
    AMOUNT_AS_STRING,
    CARD_SWITCH_AMOUNTS,
    CASH_ACCOUNT_TYPE_ISO,
    LONGER_NAME,
)
from server import bodies
from server import payment_support as support
from server.payment_support import World

LONG_NAME = "Felleskonto for husholdning og ferie, Kari og Ola Nordmann, Oslo sentrum"[:70]


# -- pure functions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, set()),
        ("", set()),
        ("amount-as-string", {AMOUNT_AS_STRING}),
        ("longer-name, cash-account-type-iso", {LONGER_NAME, CASH_ACCOUNT_TYPE_ISO}),
        ("LONGER-NAME", {LONGER_NAME}),
        ("no-such-fix,longer-name", {LONGER_NAME}),
        ("no-such-fix", set()),
    ],
)
def test_accept_fix_values_are_parsed_and_unknown_ones_ignored(
    header: str | None, expected: set[str]
) -> None:
    assert versioning.parse_accept_fix(header) == expected


def test_account_name_is_35_characters_unless_longer_name() -> None:
    assert len(LONG_NAME) == 70
    assert versioning.account_name(LONG_NAME, frozenset()) == LONG_NAME[:35]
    assert versioning.account_name(LONG_NAME, frozenset({LONGER_NAME})) == LONG_NAME


def test_cash_account_type_is_iso_only_with_the_fix() -> None:
    assert versioning.cash_account_type("SVGS", frozenset({CASH_ACCOUNT_TYPE_ISO})) == "SVGS"
    assert versioning.cash_account_type("SVGS", frozenset()) == "SAVINGS"


@pytest.mark.parametrize(
    ("value", "currency", "text"),
    [
        (Decimal("-250"), "NOK", "-250.00"),
        (Decimal("1200"), "JPY", "1200"),
        (Decimal("1.25"), "KWD", "1.250"),
        (Decimal("0.005"), "NOK", "0.01"),
    ],
)
def test_amounts_are_strings_with_the_currency_minor_units(
    contract: Contract, value: Decimal, currency: str, text: str
) -> None:
    assert versioning.amount_string(value, currency, contract.minor_units) == text


def test_card_amounts_switch_only_with_the_fix() -> None:
    item: dict[str, Any] = {
        "cardTransactionId": "c1",
        "transactionAmount": {"currency": "NOK", "amount": 100},
        "originalAmount": {"currency": "EUR", "amount": 9},
    }
    switched = versioning.card_transaction(item, frozenset({CARD_SWITCH_AMOUNTS}))
    assert switched["transactionAmount"] == {"currency": "EUR", "amount": 9}
    assert switched["originalAmount"] == {"currency": "NOK", "amount": 100}
    assert versioning.card_transaction(item, frozenset()) == item
    assert item["transactionAmount"]["currency"] == "NOK"  # the input is not changed


# -- through HTTP --------------------------------------------------------------------------------


@pytest.fixture
def consented(world: World) -> tuple[support.Psu, str]:
    """A PSU whose account has a 70-character name and SVGS type, and a valid consent on it."""
    made = world.client.post(
        "/v1/sandbox/customers", json={"customerType": "PRIVATE", "customerName": "Kari"}
    ).json()
    account = world.client.post(
        "/v1/sandbox/accounts",
        json=bodies.account(made["customerNumber"], accountName=LONG_NAME, cashAccountType="SVGS"),
    ).json()
    psu = support.Psu(made["customerId"], made["customerNumber"], "Kari", account)
    body = factories.consent_request(world.seed(), [psu.iban])
    consent_id = world.client.post(
        "/v1/consents", json=body, headers={"PSU-ID": psu.customer_id}
    ).json()["consentId"]
    started = world.client.post(
        f"/v1/consents/{consent_id}/authorisations", headers={"PSU-ID": psu.customer_id}
    ).json()
    world.approve(started["_links"]["scaRedirect"]["href"], psu)
    return psu, consent_id


def listed_account(world: World, consent_id: str, fix: str) -> dict:
    """The one account AL lists, its body checked against the contract with the schema variants
    of the ``x-accept-fix`` values sent (``x-acceptFixVariants`` of ``operations/AL.json``)."""
    answer = world.unchecked.get(
        "/v1/accounts", headers={"Consent-ID": consent_id, "x-accept-fix": fix}
    )
    assert answer.status_code == 200, answer.text
    answered = world.contract.operations["AL"].responses[200].schema
    assert answered is not None
    schema = world.contract.resolve(answered)
    item_schema = schema["properties"]["accounts"]["items"]
    fixes = versioning.parse_accept_fix(fix)
    (account,) = answer.json()["accounts"]
    for name, value in account.items():
        property_schema = item_schema["properties"].get(name, {})
        variants = property_schema.get("x-acceptFixVariants", {})
        chosen = next((variants[f] for f in sorted(fixes) if f in variants), property_schema)
        errors = list(world.contract.validator(chosen).iter_errors(value))
        assert not errors, f"{name}: {errors[0].message}"
    return account


def test_account_list_name_follows_longer_name(
    world: World, consented: tuple[support.Psu, str]
) -> None:
    _, consent_id = consented
    assert listed_account(world, consent_id, "amount-as-string")["name"] == LONG_NAME[:35]
    both = listed_account(world, consent_id, "amount-as-string,longer-name")
    assert both["name"] == LONG_NAME


def test_account_list_cash_account_type_follows_the_iso_fix(
    world: World, consented: tuple[support.Psu, str]
) -> None:
    _, consent_id = consented
    assert listed_account(world, consent_id, "amount-as-string")["cashAccountType"] == "SAVINGS"
    iso = listed_account(world, consent_id, "cash-account-type-iso")
    assert iso["cashAccountType"] == "SVGS"


def test_unknown_fix_value_changes_nothing(
    world: World, consented: tuple[support.Psu, str]
) -> None:
    _, consent_id = consented
    plain = listed_account(world, consent_id, "amount-as-string")
    assert listed_account(world, consent_id, "some-future-fix") == plain


def test_deprecated_structured_remittance_is_still_accepted_and_booked(world: World) -> None:
    psu = world.new_psu()
    body = world.ndct_body(psu)
    del body["remittanceInformationUnstructured"]
    body["remittanceInformationStructured"] = {"reference": "REF-7", "referenceType": "SCOR"}
    answer = world.create("E16", body, psu)
    assert answer.status_code == 201, answer.text
    payment_id = answer.json()["paymentId"]
    world.authorised(psu, payment_id)
    world.run_batch()
    world.run_batch()
    booked = world.client.get(f"/v1/sandbox/accounts/{psu.account['id']}/transactions").json()
    assert [item["remittanceInformationUnstructured"] for item in booked] == ["REF-7"]
