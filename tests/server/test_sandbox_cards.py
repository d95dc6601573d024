"""SCA, E10, E5, E4 (spec 2.9, spec 4.3 E4/E5/E10, spec 8) through signed HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from server import bodies


@pytest.fixture
def card(client: httpx.Client) -> dict:
    customer = client.post("/v1/sandbox/customers", json=bodies.customer()).json()
    response = client.post(
        "/v1/sandbox/card-accounts", json=bodies.card_account(customer["customerNumber"])
    )
    assert response.status_code == 201, response.text
    return response.json()["cardAccount"]


def path(card: dict) -> str:
    return f"/v1/sandbox/card-accounts/{card['resourceId']}"


def add(client: httpx.Client, card: dict, *items: dict) -> httpx.Response:
    return client.post(f"{path(card)}/transactions", json=list(items))


def test_card_account_is_created_enabled_and_read_back(client: httpx.Client, card: dict) -> None:
    assert card["status"] == "enabled"
    assert card["maskedPan"] == "492500******9999"
    read = client.get(path(card))
    assert read.status_code == 200
    assert read.json() == {"cardAccount": card}


def test_card_account_needs_an_existing_customer(client: httpx.Client) -> None:
    response = client.post("/v1/sandbox/card-accounts", json=bodies.card_account("404"))
    assert response.status_code == 400


def test_card_account_status_is_validated(client: httpx.Client) -> None:
    customer = client.post("/v1/sandbox/customers", json=bodies.customer()).json()
    body = bodies.card_account(customer["customerNumber"], status="lost")
    assert client.post("/v1/sandbox/card-accounts", json=body).status_code == 400


def test_unknown_card_account_is_404(client: httpx.Client) -> None:
    assert client.get("/v1/sandbox/card-accounts/nope").status_code == 404
    response = client.get("/v1/sandbox/card-accounts/nope/transactions?bookingStatus=both")
    assert response.status_code == 404


def test_created_transactions_are_answered_booked_and_pending(
    client: httpx.Client, card: dict
) -> None:
    response = add(
        client,
        card,
        bodies.card_transaction("A", invoiced=True),
        bodies.card_transaction("B", invoiced=False),
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["cardAccount"] == {"maskedPan": card["maskedPan"]}
    assert [item["cardTransactionId"] for item in body["cardTransactions"]["booked"]] == ["A"]
    assert body["cardTransactions"]["pending"] == ["B"]


@pytest.fixture
def card_history(client: httpx.Client, card: dict) -> None:
    response = add(
        client,
        card,
        bodies.card_transaction("B1", booked_days_ago=9),
        bodies.card_transaction("P1", invoiced=False, booked_days_ago=5),
        bodies.card_transaction("B2", booked_days_ago=3),
        bodies.card_transaction("P2", invoiced=False, booked_days_ago=1),
    )
    assert response.status_code == 201


def listed(client: httpx.Client, card: dict, **query: Any) -> dict:
    response = client.get(f"{path(card)}/transactions", params=query)
    assert response.status_code == 200, response.text
    return response.json()["cardTransactions"]


@pytest.mark.usefixtures("card_history")
def test_booking_status_selects_the_lists(client: httpx.Client, card: dict) -> None:
    booked = listed(client, card, bookingStatus="booked")
    assert [item["cardTransactionId"] for item in booked["booked"]] == ["B1", "B2"]
    assert "pending" not in booked
    assert listed(client, card, bookingStatus="pending") == {"pending": ["P1", "P2"]}
    both = listed(client, card, bookingStatus="both")
    assert len(both["booked"]) == 2 and both["pending"] == ["P1", "P2"]


@pytest.mark.usefixtures("card_history")
def test_card_filters_and_paging(client: httpx.Client, card: dict) -> None:
    recent = listed(client, card, bookingStatus="both", fromDate=bodies.days_ago(5))
    assert [item["cardTransactionId"] for item in recent["booked"]] == ["B2"]
    assert recent["pending"] == ["P1", "P2"]
    page = listed(client, card, bookingStatus="both", offset=1, limit=2)
    assert [item["cardTransactionId"] for item in page["booked"]] == ["B2"]
    assert page["pending"] == ["P1"]
    old = listed(client, card, bookingStatus="booked", toDate=bodies.days_ago(9))
    assert [item["cardTransactionId"] for item in old["booked"]] == ["B1"]


@pytest.mark.usefixtures("card_history")
def test_card_balances_follow_the_transactions(client: httpx.Client, card: dict) -> None:
    balances = client.get(path(card)).json()["cardAccount"]["balances"]
    amounts = {item["balanceType"]: item["balanceAmount"]["amount"] for item in balances}
    assert amounts == {"closingBooked": -300, "expected": -600}


@pytest.mark.parametrize(
    "query",
    [{}, {"bookingStatus": "all"}, {"bookingStatus": "both", "limit": "0"}],
    ids=["missing", "unknown", "limit-0"],
)
def test_bad_card_queries_are_400(client: httpx.Client, card: dict, query: dict) -> None:
    response = client.get(f"{path(card)}/transactions", params=query)
    assert response.status_code == 400
    expected = "QUERY_PARAMETER_REQUIRED" if not query else "FORMAT_ERROR"
    assert response.json()["code"] == expected


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        (
            {"bookingDate": bodies.days_ago(-2), "transactionDate": bodies.days_ago(1)},
            "bookingDate",
        ),
        ({"transactionDate": bodies.days_ago(-2)}, "transactionDate"),
        ({"bookingDate": bodies.days_ago(4), "transactionDate": bodies.days_ago(3)}, None),
        ({"bookingDate": bodies.days_ago(2), "transactionDate": bodies.days_ago(3)}, "bookingDate"),
    ],
    ids=["booking-future", "transaction-future", "ordered-ok", "booking-after-transaction"],
)
def test_card_transaction_dates(
    client: httpx.Client, card: dict, changes: dict, field: str | None
) -> None:
    """Spec 4.3 E5: dates before now, booking not after the transaction (value) date."""
    response = add(client, card, bodies.card_transaction("D", **changes))
    if field is None:
        assert response.status_code == 201
    else:
        assert response.status_code == 400
        assert field in response.json()["message"]


@pytest.mark.parametrize(
    "changes",
    [
        {"invoiced": True},
        {"invoiced": "yes"},
        {"transactionAmount": {"currency": "NOK", "amount": 1.5}},
        {"cardAcceptorAddress": {"city": "Oslo"}},
        {"cardAcceptorAddress": {"country": "NO", "street": "x" * 71}},
        {"currencyExchange": {"sourceCurrency": "EUR"}},
    ],
)
def test_card_transaction_fields_are_validated(
    client: httpx.Client, card: dict, changes: dict
) -> None:
    item = {**bodies.card_transaction("V"), **changes}
    assert add(client, card, item).status_code == 400


def test_card_transaction_ids_are_unique_per_card(client: httpx.Client, card: dict) -> None:
    assert add(client, card, bodies.card_transaction("U")).status_code == 201
    assert add(client, card, bodies.card_transaction("U")).status_code == 400
    twice = add(client, card, bodies.card_transaction("W"), bodies.card_transaction("W"))
    assert twice.status_code == 400


SWITCH = "cardaccount-switch-originalamount-and-transactionamount"


def _amounts(item: dict) -> tuple[int, int]:
    return item["transactionAmount"]["amount"], item["originalAmount"]["amount"]


@pytest.mark.parametrize(
    ("accept_fix", "switched"),
    [
        (None, False),
        ("amount-as-string", False),
        (SWITCH, True),
        (f"longer-name, {SWITCH.upper()}", True),
    ],
)
def test_accept_fix_switches_the_card_amounts(
    client: httpx.Client, card: dict, accept_fix: str | None, switched: bool
) -> None:
    """Spec 9: with ``cardaccount-switch-originalamount-and-transactionamount`` E5 and E4 show
    the two amounts of a booked card transaction the other way round; without it as created."""
    headers = {"x-accept-fix": accept_fix} if accept_fix else {}
    item = bodies.card_transaction(
        "CT-1",
        transactionAmount={"currency": "NOK", "amount": 150},
        originalAmount={"currency": "NOK", "amount": 14},
    )
    pending = bodies.card_transaction("CT-2", invoiced=False)
    expected = (14, 150) if switched else (150, 14)
    created = client.post(f"{path(card)}/transactions", json=[item, pending], headers=headers)
    assert created.status_code == 201, created.text
    assert [_amounts(booked) for booked in created.json()["cardTransactions"]["booked"]] == [
        expected
    ]
    listed = client.get(f"{path(card)}/transactions?bookingStatus=both", headers=headers)
    assert listed.status_code == 200, listed.text
    transactions = listed.json()["cardTransactions"]
    assert [_amounts(booked) for booked in transactions["booked"]] == [expected]
    assert transactions["pending"] == ["CT-2"]
    # The stored transaction is untouched: a read without the value shows it as created.
    plain = client.get(f"{path(card)}/transactions?bookingStatus=booked").json()
    assert [_amounts(booked) for booked in plain["cardTransactions"]["booked"]] == [(150, 14)]
