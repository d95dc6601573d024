"""Request bodies for the sandbox operations, valid by default; tests change one field."""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

from conformance.contract.identifiers import bban_to_iban, generate_bban

_RNG = random.Random("reference-server-tests")


def account_numbers() -> tuple[str, str]:
    """A fresh (bban, iban) pair: valid Norwegian numbers, distinct within the test run."""
    bban = generate_bban(_RNG)
    return bban, bban_to_iban(bban)


def days_ago(days: int) -> str:
    return (date.today() - timedelta(days=days)).isoformat()


def customer(kind: str = "PRIVATE", name: str = "Test Person", **extra: Any) -> dict[str, Any]:
    return {"customerType": kind, "customerName": name, **extra}


def account(customer_number: str, **extra: Any) -> dict[str, Any]:
    bban, iban = account_numbers()
    return {
        "customerNumber": customer_number,
        "accountName": "Brukskonto",
        "bban": bban,
        "iban": iban,
        "currency": "NOK",
        "product": "Brukskonto",
        "cashAccountType": "CACC",
        "creditLine": 0,
        **extra,
    }


def account_transaction(debtor: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    """An E7 item whose debtor is the account ``debtor`` (a SandboxAccount document)."""
    creditor_bban, creditor_iban = account_numbers()
    return {
        "amount": 250,
        "currency": "NOK",
        "valueDate": days_ago(3),
        "bookingDate": days_ago(4),
        "remittanceInformationUnstructured": "Faktura 123",
        "creditorName": "Butikken AS",
        "creditorAccount": {"iban": creditor_iban, "bban": creditor_bban},
        "debtorName": "Test Person",
        "debtorAccount": {"iban": debtor["iban"], "bban": debtor["bban"]},
        "bankTransactionCode": "PMNT-ICDT",
        "ultimateDebtor": "Test Person",
        "ultimateCreditor": "Butikken AS",
        "purposeCode": "OTHR",
        "creditorId": "NO123",
        **extra,
    }


def card_account(customer_number: str, **extra: Any) -> dict[str, Any]:
    return {
        "customerNumber": customer_number,
        "maskedPan": "492500******9999",
        "currency": "NOK",
        "creditLimit": {"currency": "NOK", "amount": 20000},
        "name": "Test Person",
        "product": "Visa",
        "accountNumber": "12345678903",
        "expiry": "2030-01",
        **extra,
    }


def card_transaction(
    transaction_id: str, *, invoiced: bool = True, booked_days_ago: int = 2, **extra: Any
) -> dict[str, Any]:
    return {
        "cardTransactionId": transaction_id,
        "terminalId": "T1",
        "bookingDate": days_ago(booked_days_ago),
        "transactionDate": days_ago(booked_days_ago),
        "transactionAmount": {"currency": "NOK", "amount": 150},
        "originalAmount": {"currency": "NOK", "amount": 150},
        "merchantCategoryCode": "5411",
        "cardAcceptorId": "M1",
        "maskedPan": "492500******9999",
        "transactionDetails": "Kiosk",
        "proprietaryBankTransactionCode": "PURCHASE",
        "invoiced": "true" if invoiced else "false",
        "markupFee": {"currency": "NOK", "amount": 0},
        "markupFeePercentage": "0",
        "cardAcceptorAddress": {"city": "Oslo", "country": "NO"},
        **extra,
    }


def engagement(
    customer: str, iban: str, roles: tuple[str, ...] = ("VIEW", "REGISTER")
) -> dict[str, Any]:
    return {
        "customer": customer,
        "account": {"iban": iban},
        "roles": list(roles),
        "registerLimit": 10000,
        "approvalLimit": 5000,
    }
