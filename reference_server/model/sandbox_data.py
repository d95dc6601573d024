"""Typed sandbox records (spec 2.9) and the queries the rest of the server asks of them.

The sandbox resources are customers (PRIVATE or CORPORATE), agreements with engagements (accounts
with privileges), accounts with transactions and balances, and card accounts with transactions.
The payment side reads them (which customer a PSU-ID is, which account a debtor bban names, which
accounts a PSU may give consent to) through the functions at the end of this module, never
through the store directly.

Identity choices (recorded in ``assumptions.md``): a customer's ``customerId`` is a UUID and is the
PSU-ID of that customer (spec 4.2 PSU-ID is a UUID); ``customerNumber`` is the SCA identifier
(spec 5 item 7); PSU-Corporate-ID is the id of a corporate agreement (spec 4.2 "PSU corporate
agreement identifier").
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reference_server.model.records import DocRecord, doc_key
from reference_server.model.store import Store, Table

__all__ = [
    "ACCOUNTS",
    "ACCOUNT_TRANSACTIONS",
    "AGREEMENTS",
    "CARD_ACCOUNTS",
    "CARD_TRANSACTIONS",
    "CONSENT_ROLES",
    "CORPORATE",
    "CUSTOMERS",
    "ENGAGEMENTS",
    "PRIVATE",
    "Account",
    "AccountTransaction",
    "Agreement",
    "Balance",
    "CardAccount",
    "CardTransaction",
    "Customer",
    "Engagement",
    "account_by_bban",
    "account_by_iban",
    "accounts_of_customer",
    "add_account_transaction",
    "agreements_of_customer",
    "consentable_accounts",
    "customer_by_national_id",
    "customer_by_number",
    "customer_for_psu",
    "engagements_of_customer",
    "is_corporate_psu",
    "new_id",
]

PRIVATE = "PRIVATE"
CORPORATE = "CORPORATE"

#: Roles an engagement needs to be offered for consent (spec 4.3 E6).
CONSENT_ROLES = frozenset({"REGISTER", "VIEW"})


def new_id() -> str:
    """A fresh resource id (a UUID: customers' ids double as PSU-IDs, spec 4.2)."""
    return str(uuid.uuid4())


@dataclass(frozen=True)
class Balance:
    """Spec 2.1 Balance: ``balanceAmount`` {currency, amount int32}, ``balanceType``."""

    amount: int
    currency: str
    balance_type: str

    def to_json(self) -> dict[str, Any]:
        return {
            "balanceAmount": {"currency": self.currency, "amount": self.amount},
            "balanceType": self.balance_type,
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> Balance:
        amount = document["balanceAmount"]
        return cls(int(amount["amount"]), str(amount["currency"]), str(document["balanceType"]))

    # Stored inside an account's document in its spec 2.1 shape (records.DocRecord uses these).
    to_doc = to_json
    from_doc = from_json


@dataclass(frozen=True)
class Customer(DocRecord):
    """A sandbox customer. ``id`` (a UUID) doubles as the customer's PSU-ID."""

    id: str
    customer_number: str
    customer_type: str
    name: str
    national_id: str | None = None

    @property
    def parent_id(self) -> str | None:
        return None

    @property
    def corporate(self) -> bool:
        return self.customer_type == CORPORATE


@dataclass(frozen=True)
class Agreement(DocRecord):
    """An agreement: ``owner`` is the corporation (corporate agreements, SAG); ``holder`` the
    private customer whose agreement was created with them (spec 2.9: owner is optional)."""

    id: str
    name: str
    owner: str | None = None
    holder: str | None = None
    #: How ``owner`` reads back when it is not the customer id (the demanding reading
    #: ``owner-as-customer-number``: the owner's customerNumber).
    owner_number: str | None = None

    @property
    def parent_id(self) -> str | None:
        return self.owner or self.holder

    @property
    def customer_id(self) -> str | None:
        """The customer the agreement belongs to (corporation or private holder)."""
        return self.owner or self.holder


@dataclass(frozen=True)
class Engagement(DocRecord):
    """An account with privileges inside an agreement (spec 2.9, spec 4.3 E6).

    ``customer`` is the value the TPP sent (a customerId or a customerNumber) and is shown back;
    ``customer_id`` is the customer it names: the PSU who sees the account during consent.
    """

    id: str
    agreement_id: str
    customer: str
    customer_id: str
    account_id: str
    roles: tuple[str, ...]
    register_limit: int
    approval_limit: int
    name: str | None = None

    @property
    def parent_id(self) -> str | None:
        return self.agreement_id

    @property
    def offered_for_consent(self) -> bool:
        """Spec 4.3 E6: an engagement needs both REGISTER and VIEW to be offered for consent."""
        return set(self.roles) >= CONSENT_ROLES

    @property
    def access_rights(self) -> bool:
        return bool({"VIEW", "OWNER"} & set(self.roles))

    @property
    def payment_rights(self) -> bool:
        return bool({"REGISTER", "APPROVE", "OWNER", "DISPOSAL"} & set(self.roles))

    @property
    def transfer_rights(self) -> bool:
        return bool({"INTERNAL_TRANSFER", "OWNER", "DISPOSAL"} & set(self.roles))


@dataclass(frozen=True)
class Account(DocRecord):
    """A sandbox account (spec 2.9), owned by one customer."""

    id: str
    customer_id: str
    customer_number: str
    name: str = field(metadata=doc_key("accountName"))
    bban: str
    iban: str
    currency: str
    product: str
    cash_account_type: str
    credit_line: int
    balances: tuple[Balance, ...] = ()

    @property
    def parent_id(self) -> str | None:
        return self.customer_id


@dataclass(frozen=True)
class AccountTransaction(DocRecord):
    """A sandbox account transaction. ``data`` holds the spec 2.9 data fields as created (E7) or
    booked by a sandbox payment; ``id`` and ``_links`` are added when it is shown."""

    id: str
    account_id: str
    booking_date: str  # ISO date, the E3 date filters apply to it
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def parent_id(self) -> str | None:
        return self.account_id


@dataclass(frozen=True)
class CardAccount(DocRecord):
    """A sandbox card account (spec 2.9), owned by one customer."""

    id: str
    customer_id: str
    masked_pan: str
    currency: str
    credit_limit: int
    credit_limit_currency: str
    card_id: str
    card_id_vno: str = field(metadata=doc_key("cardIdVNo"))
    account_number: str
    expiry: str
    name: str
    product: str
    status: str
    balances: tuple[Balance, ...] = ()

    @property
    def parent_id(self) -> str | None:
        return self.customer_id


@dataclass(frozen=True)
class CardTransaction(DocRecord):
    """A card transaction created with E5. ``invoiced`` false means pending (assumption)."""

    id: str
    card_account_id: str
    card_transaction_id: str
    booking_date: str
    invoiced: bool
    data: Mapping[str, Any] = field(default_factory=dict)

    @property
    def parent_id(self) -> str | None:
        return self.card_account_id

    @property
    def pending(self) -> bool:
        return not self.invoiced


CUSTOMERS: Table[Customer] = Table("sandbox.customer", Customer)
AGREEMENTS: Table[Agreement] = Table("sandbox.agreement", Agreement)
ENGAGEMENTS: Table[Engagement] = Table("sandbox.engagement", Engagement)
ACCOUNTS: Table[Account] = Table("sandbox.account", Account)
ACCOUNT_TRANSACTIONS: Table[AccountTransaction] = Table(
    "sandbox.account-transaction", AccountTransaction
)
CARD_ACCOUNTS: Table[CardAccount] = Table("sandbox.card-account", CardAccount)
CARD_TRANSACTIONS: Table[CardTransaction] = Table("sandbox.card-transaction", CardTransaction)


# -- queries ------------------------------------------------------------------------------------


def customer_for_psu(store: Store, psu_id: str) -> Customer | None:
    """The customer whose PSU-ID (= customerId) is ``psu_id``."""
    return store.get(CUSTOMERS, psu_id)


def customer_by_number(store: Store, customer_number: str) -> Customer | None:
    found = store.find(CUSTOMERS, "customerNumber", customer_number)
    return found[0] if found else None


def customer_by_national_id(store: Store, national_id: str) -> Customer | None:
    """The customer registered with this national identity or D-number (X-PSU-IDENTITY)."""
    found = store.find(CUSTOMERS, "nationalId", national_id)
    return found[0] if found else None


def account_by_bban(store: Store, bban: str) -> Account | None:
    found = store.find(ACCOUNTS, "bban", bban)
    return found[0] if found else None


def account_by_iban(store: Store, iban: str) -> Account | None:
    found = store.find(ACCOUNTS, "iban", iban)
    return found[0] if found else None


def accounts_of_customer(store: Store, customer_id: str) -> list[Account]:
    return store.children(ACCOUNTS, customer_id)


def agreements_of_customer(store: Store, customer_id: str) -> list[Agreement]:
    """Agreements the customer owns or holds, then those it is engaged in, without repeats."""
    agreements = {agreement.id: agreement for agreement in store.children(AGREEMENTS, customer_id)}
    for engagement in store.find(ENGAGEMENTS, "customerId", customer_id):
        if engagement.agreement_id not in agreements:
            agreement = store.get(AGREEMENTS, engagement.agreement_id)
            if agreement is not None:
                agreements[agreement.id] = agreement
    return list(agreements.values())


def engagements_of_customer(store: Store, customer_id: str) -> list[Engagement]:
    """Engagements naming the customer as the PSU who sees the account."""
    return store.find(ENGAGEMENTS, "customerId", customer_id)


def consentable_accounts(store: Store, customer_id: str) -> list[Account]:
    """Accounts offered to the PSU for consent (spec 4.3 E6): the PSU's own accounts when it is a
    private customer, and every account of an engagement naming the PSU with REGISTER and VIEW."""
    accounts: dict[str, Account] = {}
    customer = store.get(CUSTOMERS, customer_id)
    if customer is not None and not customer.corporate:
        accounts.update((account.id, account) for account in store.children(ACCOUNTS, customer_id))
    for engagement in engagements_of_customer(store, customer_id):
        if engagement.offered_for_consent and engagement.account_id not in accounts:
            account = store.get(ACCOUNTS, engagement.account_id)
            if account is not None:
                accounts[account.id] = account
    return list(accounts.values())


def is_corporate_psu(store: Store, psu_id: str) -> bool:
    """Whether the PSU-ID belongs to a CORPORATE sandbox customer (spec 7 rule 3; with
    ``PSU-Context: CORPORATE`` the other way a request is corporate)."""
    customer = store.get(CUSTOMERS, psu_id)
    return customer is not None and customer.corporate


def add_account_transaction(store: Store, transaction: AccountTransaction) -> AccountTransaction:
    """Book a transaction on an account (E7, and sandbox payments: spec 4.3 E3 lists both)."""
    return store.add(ACCOUNT_TRANSACTIONS, transaction)
