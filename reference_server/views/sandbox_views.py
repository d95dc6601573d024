"""Sandbox records shown as the spec 2.9 JSON documents, and the E3/E4 list filters.

One function per resource shape, so that every operation answering with that shape (creation,
read, list, data fill) shows it the same way. Links are relative to the base URL (spec 2.1 Link:
``href`` and ``verbs``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from reference_server.model import sandbox_data as data
from reference_server.model.sandbox_data import (
    Account,
    AccountTransaction,
    Agreement,
    CardAccount,
    CardTransaction,
    Customer,
    Engagement,
)
from reference_server.model.store import Store
from reference_server.views import versioning

__all__ = [
    "account",
    "account_transaction",
    "agreement",
    "card_account",
    "card_transactions",
    "customer",
    "engagement",
    "link",
    "select",
]

BASE = "/v1/sandbox"

T = TypeVar("T")


def link(href: str, *verbs: str) -> dict[str, Any]:
    """Spec 2.1 Link."""
    return {"href": href, "verbs": list(verbs or ("GET",))}


def account_path(account_id: str) -> str:
    return f"{BASE}/accounts/{account_id}"


def account(record: Account) -> dict[str, Any]:
    """Spec 2.9 sandbox account."""
    return {
        "id": record.id,
        "customerNumber": record.customer_number,
        "accountName": record.name,
        "bban": record.bban,
        "iban": record.iban,
        "currency": record.currency,
        "product": record.product,
        "cashAccountType": record.cash_account_type,
        "creditLine": record.credit_line,
        "balances": [balance.to_json() for balance in record.balances],
        "_links": {
            "self": link(account_path(record.id)),
            "transactions": link(f"{account_path(record.id)}/transactions", "GET", "POST"),
        },
    }


def account_transaction(record: AccountTransaction) -> dict[str, Any]:
    """Spec 2.9 sandbox account transaction: the stored data fields, ``id`` and ``_links``."""
    shown = {name: value for name, value in record.data.items() if name != "creditorId"}
    return {
        "id": record.id,
        **shown,
        "_links": {
            "self": link(f"{account_path(record.account_id)}/transactions/{record.id}"),
        },
    }


def engagement(record: Engagement, account_record: Account | None) -> dict[str, Any]:
    """Spec 2.9 sandbox engagement (E6 answer, E13), with its ``id`` and ``self`` link added."""
    return {
        "id": record.id,
        "customer": record.customer,
        "account": {"iban": account_record.iban if account_record else ""},
        "roles": list(record.roles),
        "registerLimit": record.register_limit,
        "approvalLimit": record.approval_limit,
        "_links": {
            "self": link(f"{BASE}/agreements/{record.agreement_id}/engagements/{record.id}"),
        },
    }


def agreement(store: Store, record: Agreement) -> dict[str, Any]:
    """Spec 2.9 sandbox agreement with its engagement items (E14, SAG)."""
    items = []
    for item in store.children(data.ENGAGEMENTS, record.id):
        account_record = store.get(data.ACCOUNTS, item.account_id)
        shown: dict[str, Any] = {"id": item.id, "customer": item.customer}
        if item.name is not None:
            shown["name"] = item.name
        shown.update(
            {
                "account": {
                    "bban": account_record.bban if account_record else "",
                    "iban": account_record.iban if account_record else "",
                },
                "roles": list(item.roles),
                "accessRights": item.access_rights,
                "paymentRights": item.payment_rights,
                "transferRights": item.transfer_rights,
                "registerLimit": item.register_limit,
                "approvalLimit": item.approval_limit,
            }
        )
        items.append(shown)
    document: dict[str, Any] = {"id": record.id, "name": record.name}
    if record.owner is not None:
        document["owner"] = record.owner_number or record.owner
    document["engagements"] = items
    document["_links"] = _agreement_links(record)
    return document


def _agreement_links(record: Agreement) -> dict[str, Any]:
    path = f"{BASE}/agreements/{record.id}"
    return {"self": link(path), "engagements": link(f"{path}/engagements", "POST")}


def customer(
    store: Store, record: Customer, *, with_accounts: bool = True, with_agreements: bool = True
) -> dict[str, Any]:
    """Spec 2.9 sandbox customer; the lists stay present (required) but empty when not asked."""
    agreements = []
    if with_agreements:
        for item in data.agreements_of_customer(store, record.id):
            engagements = [e.id for e in store.children(data.ENGAGEMENTS, item.id)]
            agreements.append(_agreement_item(item, engagements))
    accounts = (
        [item.id for item in store.children(data.ACCOUNTS, record.id)] if with_accounts else []
    )
    card_accounts = (
        [item.id for item in store.children(data.CARD_ACCOUNTS, record.id)] if with_accounts else []
    )
    return _customer_document(record, agreements, accounts, card_accounts)


def _agreement_item(item: Agreement, engagements: list[str]) -> dict[str, Any]:
    return {
        "id": item.id,
        "name": item.name,
        "engagements": engagements,
        "_links": _agreement_links(item),
    }


def _customer_document(
    record: Customer,
    agreements: list[dict[str, Any]],
    accounts: list[str],
    card_accounts: list[str],
) -> dict[str, Any]:
    return {
        "customerId": record.id,
        "customerNumber": record.customer_number,
        "customerType": record.customer_type,
        "customerName": record.name,
        "agreements": agreements,
        "accounts": accounts,
        "cardAccounts": card_accounts,
        "_links": {"self": link(f"{BASE}/customers")},
    }


def customers(
    store: Store, *, with_accounts: bool = True, with_agreements: bool = True
) -> list[dict[str, Any]]:
    """Every sandbox customer as :func:`customer` shows it (E9), from one read of each kind
    instead of a few reads per customer: the sandbox grows by hundreds of customers in a run
    (a scenario makes its own), and the list shows every one of them."""
    agreements = store.all(data.AGREEMENTS) if with_agreements else []
    engagements = store.all(data.ENGAGEMENTS) if with_agreements else []
    agreement_by_id = {item.id: item for item in agreements}
    owned = _by(agreements, lambda item: item.parent_id)
    engaged = _by(engagements, lambda item: item.customer_id)
    in_agreement = _by(engagements, lambda item: item.parent_id)
    accounts = _by(store.all(data.ACCOUNTS), lambda item: item.parent_id) if with_accounts else {}
    cards = _by(store.all(data.CARD_ACCOUNTS), lambda item: item.parent_id) if with_accounts else {}
    shown = []
    for record in store.all(data.CUSTOMERS):
        # as data.agreements_of_customer: owned or held, then engaged in, without repeats
        its = {item.id: item for item in owned.get(record.id, ())}
        for engagement in engaged.get(record.id, ()):
            agreement = agreement_by_id.get(engagement.agreement_id)
            if agreement is not None:
                its.setdefault(agreement.id, agreement)
        listed = [
            _agreement_item(item, [e.id for e in in_agreement.get(item.id, ())])
            for item in its.values()
        ]
        shown.append(
            _customer_document(
                record,
                listed,
                [item.id for item in accounts.get(record.id, ())],
                [item.id for item in cards.get(record.id, ())],
            )
        )
    return shown


def _by(items: Iterable[T], key: Callable[[T], str | None]) -> dict[str | None, list[T]]:
    """``items`` grouped by ``key``, each group in the items' order."""
    grouped: dict[str | None, list[T]] = {}
    for item in items:
        grouped.setdefault(key(item), []).append(item)
    return grouped


def card_account(record: CardAccount, transactions: Sequence[CardTransaction]) -> dict[str, Any]:
    """Spec 2.9 card account, wrapped in ``cardAccount``. Balances follow the transactions in the
    card's currency: closingBooked = −(booked), expected = −(booked + pending) (assumption)."""
    booked = sum(
        _amount(item)
        for item in transactions
        if not item.pending and _currency(item) == record.currency
    )
    every = sum(_amount(item) for item in transactions if _currency(item) == record.currency)
    path = f"{BASE}/card-accounts/{record.id}"
    return {
        "cardAccount": {
            "resourceId": record.id,
            "maskedPan": record.masked_pan,
            "currency": record.currency,
            "creditLimit": {
                "currency": record.credit_limit_currency,
                "amount": record.credit_limit,
            },
            "balances": [
                _balance(-booked, record.currency, "closingBooked"),
                _balance(-every, record.currency, "expected"),
            ],
            "cardId": record.card_id,
            "cardIdVNo": record.card_id_vno,
            "accountNumber": record.account_number,
            "expiry": record.expiry,
            "name": record.name,
            "product": record.product,
            "status": record.status,
            "_links": {
                "self": link(path),
                "transactions": link(f"{path}/transactions", "GET", "POST"),
            },
        }
    }


def _amount(item: CardTransaction) -> int:
    return int(item.data.get("transactionAmount", {}).get("amount", 0))


def _currency(item: CardTransaction) -> str | None:
    currency = item.data.get("transactionAmount", {}).get("currency")
    return currency if isinstance(currency, str) else None


def _balance(amount: int, currency: str, kind: str) -> dict[str, Any]:
    clamped = max(-(2**31), min(2**31 - 1, amount))
    return {"balanceAmount": {"currency": currency, "amount": clamped}, "balanceType": kind}


def card_transactions(
    record: CardAccount,
    transactions: Iterable[CardTransaction],
    *,
    booked: bool = True,
    pending: bool = True,
    fixes: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Spec 2.9 card transactions: booked items in full, pending ones as their
    ``cardTransactionId`` strings; a list not asked for (E4 ``bookingStatus``) is left out.

    ``fixes`` are the request's ``x-accept-fix`` values (spec 9): with
    ``cardaccount-switch-originalamount-and-transactionamount`` each booked item shows its two
    amounts the other way round (``versioning.card_transaction``); the stored item is unchanged.
    """
    items = list(transactions)
    shown: dict[str, Any] = {}
    if booked:
        shown["booked"] = [
            versioning.card_transaction(item.data, fixes) for item in items if not item.pending
        ]
    if pending:
        shown["pending"] = [item.card_transaction_id for item in items if item.pending]
    return {"cardAccount": {"maskedPan": record.masked_pan}, "cardTransactions": shown}


def select(
    items: Iterable[T],
    booking_date: Callable[[T], str],
    query: Mapping[str, Any],
) -> list[T]:
    """E3/E4 filters (spec 4.3 E3): ``fromDate``/``toDate`` inclusive on the booking date, then
    ``offset`` items skipped and at most ``limit`` returned, in booking-date order."""
    start = query.get("fromDate")
    end = query.get("toDate")
    chosen = [
        item
        for item in items
        if (start is None or booking_date(item) >= start)
        and (end is None or booking_date(item) <= end)
    ]
    chosen.sort(key=booking_date)
    offset = int(query.get("offset") or 0)
    limit = query.get("limit")
    chosen = chosen[offset:]
    return chosen if limit is None else chosen[: int(limit)]
