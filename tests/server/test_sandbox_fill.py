"""SDF, the sandbox data fill (spec 9 1.16.0): a fixed, documented, repeatable set."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import httpx

from conformance.contract.identifiers import is_valid_bban, is_valid_national_id
from conformance.generate import factories
from reference_server.resources.sandbox_fill import build_fill, fill_id


def test_fill_creates_the_documented_set(client: httpx.Client) -> None:
    response = client.post("/v1/sandbox/data-fill")
    assert response.status_code == 201
    ids = response.json()
    assert ids["customers"] == [
        fill_id("customer/kari"),
        fill_id("customer/ola"),
        fill_id("customer/corporation"),
    ]
    assert len(ids["accounts"]) == 3 and len(ids["cardAccounts"]) == 1
    customers = {c["customerNumber"]: c for c in client.get("/v1/sandbox/customers").json()}
    assert sorted(customers) == ["10000001", "10000002", "10000003"]
    assert customers["10000003"]["customerType"] == "CORPORATE"
    for account_id in ids["accounts"]:
        assert client.get(f"/v1/sandbox/accounts/{account_id}").status_code == 200
        assert client.get(f"/v1/sandbox/accounts/{account_id}/transactions").json()
    card = ids["cardAccounts"][0]
    both = client.get(f"/v1/sandbox/card-accounts/{card}/transactions?bookingStatus=both").json()
    assert len(both["cardTransactions"]["booked"]) == 2
    assert len(both["cardTransactions"]["pending"]) == 1


def test_member_psu_is_engaged_with_register_and_view(client: httpx.Client) -> None:
    client.post("/v1/sandbox/data-fill")
    corporate = client.get(f"/v1/sandbox/agreements/{fill_id('agreement/corporation')}").json()
    (engagement,) = corporate["engagements"]
    assert engagement["customer"] == fill_id("customer/ola")
    assert {"REGISTER", "VIEW"} <= set(engagement["roles"])
    assert corporate["owner"] == fill_id("customer/corporation")


def test_fill_again_resets_its_set_and_keeps_other_data(client: httpx.Client) -> None:
    ids = client.post("/v1/sandbox/data-fill").json()
    account = client.get(f"/v1/sandbox/accounts/{ids['accounts'][0]}").json()[0]
    before = client.get(f"/v1/sandbox/accounts/{account['id']}/transactions").json()
    client.put(
        f"/v1/sandbox/accounts/{account['id']}/balances",
        json=[{"balanceAmount": {"currency": "NOK", "amount": 1}, "balanceType": "expected"}],
    )
    other = client.post(
        "/v1/sandbox/customers", json={"customerType": "PRIVATE", "customerName": "Other"}
    ).json()
    assert client.post("/v1/sandbox/data-fill").json() == ids
    assert client.get(f"/v1/sandbox/accounts/{account['id']}").json()[0] == account
    assert client.get(f"/v1/sandbox/accounts/{account['id']}/transactions").json() == before
    listed = [c["customerId"] for c in client.get("/v1/sandbox/customers").json()]
    assert other["customerId"] in listed and len(listed) == 4


def test_fill_is_deterministic_and_valid() -> None:
    first, second = build_fill(date(2026, 1, 29)), build_fill(date(2026, 1, 29))
    assert first == second
    for account in first.accounts:
        assert is_valid_bban(account.bban)
    for customer in first.customers:
        if customer.national_id is not None:
            assert is_valid_national_id(customer.national_id)
    for transaction in first.transactions:
        assert transaction.booking_date < "2026-01-29"


def _added_then_reset(client: httpx.Client) -> list[object]:
    """SI, a transaction added to the first default account, SI again: what E3 lists then."""
    customers = client.post("/v1/sandbox/initialize").json()
    account_id = next(c["accounts"][0] for c in customers if c["accounts"])
    account = client.get(f"/v1/sandbox/accounts/{account_id}").json()[0]
    reference = {name: account[name] for name in ("iban", "bban", "currency")}
    (item,) = factories.sandbox_account_transactions(7, reference, 1, today=date.today())
    added = client.post(f"/v1/sandbox/accounts/{account_id}/transactions", json=[item])
    assert added.status_code == 201, added.text
    client.post("/v1/sandbox/initialize")
    listed = client.get(f"/v1/sandbox/accounts/{account_id}/transactions").json()
    text = item["remittanceInformationUnstructured"]
    return [t for t in listed if t.get("remittanceInformationUnstructured") == text]


def test_the_reset_answers_the_default_customers_as_new(client: httpx.Client) -> None:
    response = client.post("/v1/sandbox/initialize")
    assert response.status_code == 201
    numbers = sorted(customer["customerNumber"] for customer in response.json())
    assert numbers == ["10000001", "10000002", "10000003"]
    assert _added_then_reset(client) == []


def test_the_reset_fault_keeps_what_was_added(
    faulty_server: Callable[..., tuple[object, httpx.Client]],
) -> None:
    _, client = faulty_server("sandbox-initialize-keeps-changes")
    assert len(_added_then_reset(client)) == 1
