"""SA, E12, E15, E7, E3, E11 (spec 2.9, spec 4.3, spec 7 rule 5, spec 8) through signed HTTP."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from server import bodies


@pytest.fixture
def customer(client: httpx.Client) -> dict:
    return client.post("/v1/sandbox/customers", json=bodies.customer()).json()


@pytest.fixture
def account(client: httpx.Client, customer: dict) -> dict:
    response = client.post("/v1/sandbox/accounts", json=bodies.account(customer["customerNumber"]))
    assert response.status_code == 201, response.text
    return response.json()


def add_transactions(client: httpx.Client, account: dict, *items: dict) -> list[dict]:
    response = client.post(f"/v1/sandbox/accounts/{account['id']}/transactions", json=list(items))
    assert response.status_code == 201, response.text
    return response.json()


# -- SA / E12 -----------------------------------------------------------------------------------


def test_account_is_created_and_read_back_as_a_one_element_array(
    client: httpx.Client, account: dict, customer: dict
) -> None:
    assert account["customerNumber"] == customer["customerNumber"]
    read = client.get(f"/v1/sandbox/accounts/{account['id']}")
    assert read.status_code == 200
    assert read.json() == [account]
    assert account["_links"]["self"]["href"] == f"/v1/sandbox/accounts/{account['id']}"


def test_account_needs_an_existing_customer(client: httpx.Client) -> None:
    response = client.post("/v1/sandbox/accounts", json=bodies.account("99999999"))
    assert response.status_code == 400
    assert "customerNumber" in response.json()["message"]


def test_account_numbers_are_unique(client: httpx.Client, account: dict, customer: dict) -> None:
    again = bodies.account(customer["customerNumber"], bban=account["bban"])
    response = client.post("/v1/sandbox/accounts", json=again)
    assert response.status_code == 400


@pytest.mark.parametrize(
    ("field", "value"),
    [("bban", "1" * 31), ("iban", "NO" + "1" * 33), ("currency", "XYZ"), ("creditLine", 2**31)],
)
def test_account_fields_are_validated(
    client: httpx.Client, customer: dict, field: str, value: object
) -> None:
    """Spec 8: bban at most 30, iban at most 34; spec 2.2 currencies; int32."""
    body = bodies.account(customer["customerNumber"], **{field: value})
    response = client.post("/v1/sandbox/accounts", json=body)
    assert response.status_code == 400
    assert response.json()["message"].startswith(field)


def test_unknown_account_is_404(client: httpx.Client) -> None:
    response = client.get("/v1/sandbox/accounts/no-such-account")
    assert response.status_code == 404
    assert response.json()["code"] == "RESOURCE_UNKNOWN"


# -- E15 ----------------------------------------------------------------------------------------


def test_balances_are_changed_and_read_back(client: httpx.Client, account: dict) -> None:
    path = f"/v1/sandbox/accounts/{account['id']}"
    booked = {"balanceAmount": {"currency": "NOK", "amount": 1000}, "balanceType": "closingBooked"}
    expected = {"balanceAmount": {"currency": "NOK", "amount": 900}, "balanceType": "expected"}
    response = client.put(f"{path}/balances", json=[booked, expected])
    assert response.status_code == 200
    assert response.json()["balances"] == [booked, expected]
    newer = {"balanceAmount": {"currency": "NOK", "amount": 5}, "balanceType": "expected"}
    client.put(f"{path}/balances", json=[newer])
    (shown,) = client.get(path).json()
    assert shown["balances"] == [booked, newer]


@pytest.mark.parametrize(
    "item",
    [
        {"balanceAmount": {"currency": "NOK", "amount": "10"}, "balanceType": "expected"},
        {"balanceAmount": {"currency": "NOK", "amount": 10}, "balanceType": "interimBooked"},
        {"balanceAmount": {"currency": "NOK"}, "balanceType": "expected"},
    ],
)
def test_balance_items_are_validated(client: httpx.Client, account: dict, item: dict) -> None:
    response = client.put(f"/v1/sandbox/accounts/{account['id']}/balances", json=[item])
    assert response.status_code == 400


def test_balances_of_unknown_account_is_404(client: httpx.Client) -> None:
    assert client.put("/v1/sandbox/accounts/nope/balances", json=[]).status_code == 404


# -- E7 / E11 -----------------------------------------------------------------------------------


def test_transactions_are_created_and_read_one_by_one(client: httpx.Client, account: dict) -> None:
    created = add_transactions(
        client, account, bodies.account_transaction(account), bodies.account_transaction(account)
    )
    assert len(created) == 2
    for item in created:
        path = f"/v1/sandbox/accounts/{account['id']}/transactions/{item['id']}"
        read = client.get(path)
        assert read.status_code == 200
        assert read.json() == item
        assert item["_links"]["self"]["href"] == path
        assert "creditorId" not in item


def test_transaction_with_another_account_as_debtor_is_rejected(
    client: httpx.Client, account: dict, customer: dict
) -> None:
    """Spec 7 rule 5."""
    other = client.post(
        "/v1/sandbox/accounts", json=bodies.account(customer["customerNumber"])
    ).json()
    response = client.post(
        f"/v1/sandbox/accounts/{account['id']}/transactions",
        json=[bodies.account_transaction(account), bodies.account_transaction(other)],
    )
    assert response.status_code == 400
    assert response.json()["message"].endswith("(spec 7 rule 5)")
    assert client.get(f"/v1/sandbox/accounts/{account['id']}/transactions").json() == []


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"bookingDate": bodies.days_ago(-2), "valueDate": bodies.days_ago(-2)}, "bookingDate"),
        ({"valueDate": bodies.days_ago(-2)}, "valueDate"),
        ({"bookingDate": bodies.days_ago(2), "valueDate": bodies.days_ago(3)}, "bookingDate"),
    ],
    ids=["booking-future", "value-future", "booking-after-value"],
)
def test_transaction_dates_must_lie_in_the_past_in_order(
    client: httpx.Client, account: dict, changes: dict, field: str
) -> None:
    """Spec 4.3 E7, spec 8 sandbox transaction rule."""
    response = client.post(
        f"/v1/sandbox/accounts/{account['id']}/transactions",
        json=[bodies.account_transaction(account, **changes)],
    )
    assert response.status_code == 400
    assert response.json()["code"] == "FORMAT_ERROR"
    assert field in response.json()["message"]


@pytest.mark.parametrize("code", ["PMT", "P" * 15])
def test_bank_transaction_code_is_4_to_14_characters(
    client: httpx.Client, account: dict, code: str
) -> None:
    response = client.post(
        f"/v1/sandbox/accounts/{account['id']}/transactions",
        json=[bodies.account_transaction(account, bankTransactionCode=code)],
    )
    assert response.status_code == 400
    assert "bankTransactionCode" in response.json()["message"]


def test_transaction_item_missing_a_field_is_rejected(client: httpx.Client, account: dict) -> None:
    item = bodies.account_transaction(account)
    del item["creditorId"]
    response = client.post(f"/v1/sandbox/accounts/{account['id']}/transactions", json=[item])
    assert response.status_code == 400
    assert "creditorId" in response.json()["message"]


def test_transactions_body_must_be_an_array(client: httpx.Client, account: dict) -> None:
    response = client.post(
        f"/v1/sandbox/accounts/{account['id']}/transactions",
        json=bodies.account_transaction(account),
    )
    assert response.status_code == 400


def test_transaction_of_another_account_is_404(
    client: httpx.Client, account: dict, customer: dict
) -> None:
    other = client.post(
        "/v1/sandbox/accounts", json=bodies.account(customer["customerNumber"])
    ).json()
    (item,) = add_transactions(client, account, bodies.account_transaction(account))
    response = client.get(f"/v1/sandbox/accounts/{other['id']}/transactions/{item['id']}")
    assert response.status_code == 404
    assert client.post("/v1/sandbox/accounts/nope/transactions", json=[]).status_code == 404


# -- E3 -----------------------------------------------------------------------------------------


@pytest.fixture
def history(client: httpx.Client, account: dict) -> list[str]:
    """Five transactions booked 10, 8, 6, 4 and 2 days ago; their booking dates in order."""
    items = [
        bodies.account_transaction(
            account, bookingDate=bodies.days_ago(days), valueDate=bodies.days_ago(days)
        )
        for days in (6, 2, 10, 4, 8)
    ]
    add_transactions(client, account, *items)
    return sorted(item["bookingDate"] for item in items)


def booking_dates(client: httpx.Client, account: dict, **query: Any) -> list[str]:
    response = client.get(f"/v1/sandbox/accounts/{account['id']}/transactions", params=query)
    assert response.status_code == 200, response.text
    return [item["bookingDate"] for item in response.json()]


def test_list_is_in_booking_date_order(client: httpx.Client, account: dict, history: list) -> None:
    assert booking_dates(client, account) == history


def test_date_filters_are_inclusive(client: httpx.Client, account: dict, history: list) -> None:
    assert booking_dates(client, account, fromDate=history[1], toDate=history[3]) == history[1:4]
    assert booking_dates(client, account, fromDate=history[4]) == history[4:]
    assert booking_dates(client, account, toDate=history[0]) == history[:1]


def test_offset_and_limit_page_the_list(client: httpx.Client, account: dict, history: list) -> None:
    assert booking_dates(client, account, offset=1, limit=2) == history[1:3]
    assert booking_dates(client, account, offset=4, limit=10) == history[4:]
    assert booking_dates(client, account, offset=9) == []
    assert booking_dates(client, account, limit=1) == history[:1]


@pytest.mark.parametrize(
    "query",
    [
        {"limit": "0"},
        {"limit": "-1"},
        {"limit": "abc"},
        {"limit": "1.5"},
        {"offset": "-1"},
        {"offset": "x"},
        {"fromDate": "2026-13-01"},
        {"toDate": "yesterday"},
        {"limit": str(2**31)},
    ],
)
def test_bad_query_values_are_400(client: httpx.Client, account: dict, query: dict) -> None:
    """Spec 4.3 E3, spec 8 (limit at least 1)."""
    response = client.get(f"/v1/sandbox/accounts/{account['id']}/transactions", params=query)
    assert response.status_code == 400
    assert response.json()["code"] == "FORMAT_ERROR"
    assert next(iter(query)) in response.json()["message"]


def test_repeated_query_parameter_is_400(client: httpx.Client, account: dict) -> None:
    response = client.get(f"/v1/sandbox/accounts/{account['id']}/transactions?limit=1&limit=2")
    assert response.status_code == 400


def test_unknown_account_transactions_is_404(client: httpx.Client) -> None:
    assert client.get("/v1/sandbox/accounts/nope/transactions").status_code == 404


def test_today_is_a_valid_booking_date(client: httpx.Client, account: dict) -> None:
    today = date.today() - timedelta(days=1)
    item = bodies.account_transaction(
        account, bookingDate=today.isoformat(), valueDate=today.isoformat()
    )
    add_transactions(client, account, item)
