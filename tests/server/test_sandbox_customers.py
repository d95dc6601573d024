"""SCU and E9 (spec 2.9, spec 4.3 E9, spec 7 rule 7) through real signed HTTP."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from server import bodies


def create_customer(client: httpx.Client, **kwargs: Any) -> dict:
    response = client.post("/v1/sandbox/customers", json=bodies.customer(**kwargs))
    assert response.status_code == 201, response.text
    return response.json()


def test_private_customer_is_created_with_its_private_agreement(client: httpx.Client) -> None:
    customer = create_customer(client, name="Per Hansen")
    assert customer["customerType"] == "PRIVATE"
    assert customer["customerName"] == "Per Hansen"
    assert uuid.UUID(customer["customerId"])  # the PSU-ID of the customer
    assert customer["customerNumber"].isdigit()
    assert len(customer["agreements"]) == 1
    assert customer["accounts"] == [] and customer["cardAccounts"] == []


def test_corporate_customer_gets_no_agreement(client: httpx.Client) -> None:
    customer = create_customer(client, kind="CORPORATE", name="Firma AS")
    assert customer["customerType"] == "CORPORATE"
    assert customer["agreements"] == []


def test_customer_numbers_are_assigned_uniquely(client: httpx.Client) -> None:
    numbers = {create_customer(client)["customerNumber"] for _ in range(3)}
    assert len(numbers) == 3


def test_customer_number_sent_is_kept_and_must_be_unique(client: httpx.Client) -> None:
    assert create_customer(client, customerNumber="777")["customerNumber"] == "777"
    again = client.post("/v1/sandbox/customers", json=bodies.customer(customerNumber="777"))
    assert again.status_code == 400
    assert again.json()["code"] == "FORMAT_ERROR"


def test_data_fill_customer_numbers_are_reserved(client: httpx.Client) -> None:
    response = client.post("/v1/sandbox/customers", json=bodies.customer(customerNumber="10000001"))
    assert response.status_code == 400


@pytest.mark.parametrize("kind", ["BUSINESS", "private", ""])
def test_invalid_customer_type_is_a_validation_error(client: httpx.Client, kind: str) -> None:
    """Spec 7 rule 7."""
    response = client.post("/v1/sandbox/customers", json=bodies.customer(kind=kind))
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "FORMAT_ERROR"
    assert "customerType" in body["message"]


def test_missing_customer_name_is_rejected(client: httpx.Client) -> None:
    response = client.post("/v1/sandbox/customers", json={"customerType": "PRIVATE"})
    assert response.status_code == 400
    assert "customerName" in response.json()["message"]


def test_national_identity_number_must_be_valid(client: httpx.Client) -> None:
    response = client.post(
        "/v1/sandbox/customers", json=bodies.customer(nationalIdentityNumber="12345678901")
    )
    assert response.status_code == 400
    assert response.json()["code"] == "FORMAT_ERROR"


def test_list_shows_accounts_and_agreements_by_default(client: httpx.Client) -> None:
    customer = create_customer(client)
    account = client.post(
        "/v1/sandbox/accounts", json=bodies.account(customer["customerNumber"])
    ).json()
    listed = client.get("/v1/sandbox/customers")
    assert listed.status_code == 200
    (shown,) = [c for c in listed.json() if c["customerId"] == customer["customerId"]]
    assert shown["accounts"] == [account["id"]]
    assert len(shown["agreements"]) == 1
    assert len(shown["agreements"][0]["engagements"]) == 1  # the account, engaged privately


@pytest.mark.parametrize(
    ("query", "accounts", "agreements"),
    [
        ({"withAccounts": "false"}, False, True),
        ({"withAgreements": "false"}, True, False),
        ({"withAccounts": "false", "withAgreements": "false"}, False, False),
        ({"withAccounts": "true", "withAgreements": "true"}, True, True),
    ],
)
def test_list_flags_leave_the_required_lists_empty(
    client: httpx.Client, query: dict[str, str], accounts: bool, agreements: bool
) -> None:
    customer = create_customer(client)
    client.post("/v1/sandbox/accounts", json=bodies.account(customer["customerNumber"]))
    (shown,) = client.get("/v1/sandbox/customers", params=query).json()
    assert bool(shown["accounts"]) is accounts
    assert bool(shown["agreements"]) is agreements


@pytest.mark.parametrize("value", ["yes", "1", "TRUE", ""])
def test_list_flag_must_be_a_boolean(client: httpx.Client, value: str) -> None:
    response = client.get("/v1/sandbox/customers", params={"withAccounts": value})
    assert response.status_code == 400
    assert response.json()["code"] == "FORMAT_ERROR"


def test_list_is_empty_after_reset(client: httpx.Client) -> None:
    assert client.get("/v1/sandbox/customers").json() == []
