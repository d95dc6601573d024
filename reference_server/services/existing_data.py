"""The data a production-like bank already holds, as its profile lists it (``sandbox = false``):
the server playing that bank (``--profile``) starts with it, and again after every reset.

A target without the sandbox API cannot be asked to create customers, accounts or consents
(spec 4.3: "the sandbox operations ... do not belong to the production interface"), so the
profile names what exists: the private PSU (``[psu.private]``), the accounts of the consent and
their transactions (``[production]``), the debtor account of payments (``[payments]``). The server
makes exactly those, under exactly those ids, so that a run with that profile meets them as it
would at the bank: the PSU a sandbox customer with its customerNumber (spec 5 item 7), the first
account the debtor account, the consent valid and covering every listed account (spec 8), the
transactions booked on the first account a few days ago. The states the profile's ``[prepared]``
table names come with them (``prepared_states``).
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from conformance.contract.identifiers import bban_to_iban, generate_bban
from reference_server.model import sandbox_data as data
from reference_server.model.payment_data import CONSENTS, Consent, ConsentStatus
from reference_server.services.prepared_states import seed_prepared
from reference_server.services.private_engagement import engage_private_account

if TYPE_CHECKING:
    from reference_server.api import ServerState
    from reference_server.model.store import Store

__all__ = ["seed"]

#: The balance every existing account starts with (minor units, NOK 100 000.00).
_OPENING_BALANCE = 10_000_000
#: How long the existing consent stays valid from the server's start (spec 8: at most 90 days of
#: history without a new SCA; the consent itself is renewed every 180 days).
_CONSENT_DAYS = 89


def seed(app: ServerState) -> None:
    """Create the bank's existing data (nothing without it); a reset hook calls it again."""
    existing = app.bank.existing
    if existing is None:
        return
    store = app.store
    today = app.clock.today()
    with store.atomic():
        customer = _customer(store, existing.psu_id, existing.customer_number, existing.national_id)
        if existing.second is not None:
            _customer(store, *existing.second, None, name="Second Existing Customer")
        accounts = [
            _account(customer, account_id, existing.debtor_bban if index == 0 else None)
            for index, account_id in enumerate(existing.account_ids)
        ]
        for account in accounts:
            store.add(data.ACCOUNTS, account)
            engage_private_account(store, customer, account)
        if accounts:
            for index, transaction_id in enumerate(existing.transaction_ids):
                booked = (today - timedelta(days=3 + index)).isoformat()
                _book(store, accounts[0], transaction_id, booked, index)
        seed_prepared(
            app,
            existing,
            customer,
            lambda account_id: _account(customer, account_id, None),
            lambda account, transaction_id, booked: _book(store, account, transaction_id, booked),
        )
        if existing.consent_id is not None:
            now = app.clock.now().isoformat()
            references = [{"iban": account.iban} for account in accounts]
            store.add(
                CONSENTS,
                Consent(
                    id=existing.consent_id,
                    psu_key=customer.id,
                    customer_id=customer.id,
                    access={"accounts": references, "transactions": references},
                    valid_until=(today + timedelta(days=_CONSENT_DAYS)).isoformat(),
                    recurring=True,
                    frequency_per_day=4,
                    status=ConsentStatus.VALID,
                    created_at=now,
                    authorised_at=now,
                    account_ids=tuple(account.id for account in accounts),
                    tpp_id=existing.tpp_certificate
                    if app.reads("ownership-per-certificate")
                    else existing.tpp_id,
                ),
            )


def _book(
    store: Store, account: data.Account, transaction_id: str, booked: str, index: int = 0
) -> None:
    """A booked incoming transfer on ``account``."""
    data.add_account_transaction(
        store,
        data.AccountTransaction(
            id=transaction_id,
            account_id=account.id,
            booking_date=booked,
            data=_transaction(account, booked, index),
        ),
    )


def _customer(
    store: Store,
    psu_id: str,
    customer_number: str,
    national_id: str | None,
    *,
    name: str = "Existing Customer",
) -> data.Customer:
    """A private customer with its private agreement (as SCU makes one)."""
    customer = data.Customer(
        id=psu_id,
        customer_number=customer_number,
        customer_type=data.PRIVATE,
        name=name,
        national_id=national_id,
    )
    store.add(data.CUSTOMERS, customer)
    store.add(
        data.AGREEMENTS,
        data.Agreement(id=f"{customer.id}-private", name=f"{name} (private)", holder=customer.id),
    )
    return customer


def _account(customer: data.Customer, account_id: str, bban: str | None) -> data.Account:
    """An existing NOK current account; its BBAN the profile's, else one drawn from its id."""
    chosen = bban or generate_bban(random.Random(f"existing:{account_id}"))
    return data.Account(
        id=account_id,
        customer_id=customer.id,
        customer_number=customer.customer_number,
        name="Existing current account",
        bban=chosen,
        iban=bban_to_iban(chosen),
        currency="NOK",
        product="Current account",
        cash_account_type="CACC",
        credit_line=0,
        balances=(data.Balance(_OPENING_BALANCE, "NOK", "closingBooked"),),
    )


def _transaction(account: data.Account, booked: str, index: int) -> dict[str, Any]:
    """An incoming transfer to ``account`` (the stored fields of a spec 2.9 transaction)."""
    creditor = {"iban": account.iban, "bban": account.bban}
    other = generate_bban(random.Random(f"existing-debtor:{account.id}:{index}"))
    return {
        "amount": 125_000 + index,
        "currency": "NOK",
        "valueDate": booked,
        "bookingDate": booked,
        "remittanceInformationUnstructured": f"Existing transfer {index + 1}",
        "creditorName": "Existing Customer",
        "creditorAccount": creditor,
        "debtorName": "Existing Payer",
        "debtorAccount": {"iban": bban_to_iban(other), "bban": other},
        "bankTransactionCode": "PMNT-RCDT-DMCT",
        "ultimateDebtor": "Existing Payer",
        "ultimateCreditor": "Existing Customer",
        "purposeCode": "OTHR",
        "creditorId": "",
    }
