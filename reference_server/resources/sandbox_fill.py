"""Sandbox data fill: SDF, POST /v1/sandbox/data-fill (spec 9, release 1.16.0), and the
platform's sandbox reset SI, POST /v1/sandbox/initialize (optional), which puts the same set back
as its default customers.

Puts a fixed, documented data set in place so that a TPP can rely on it: the same ids, customer
numbers, account numbers and national identity numbers on every server and every call. Calling it
again resets exactly that set (records created on its accounts are dropped with them) and leaves
all other data alone, so that parallel scenarios do not disturb each other. Dates are relative to
the bank's today (transactions lie 1 to 60 days in the past, spec 4.3 E5/E7). The set is listed in
``reference_server/assumptions.md`` ("Data fill").
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from conformance.contract.identifiers import bban_to_iban, generate_bban, generate_national_id
from reference_server.api import Call, Response
from reference_server.model import sandbox_data as data
from reference_server.model.store import Store
from reference_server.pipeline.validation import now_at_bank
from reference_server.services.private_engagement import PRIVATE_LIMIT, PRIVATE_ROLES
from reference_server.views import sandbox_views as views

__all__ = [
    "FILL_CUSTOMER_NUMBERS",
    "OPERATIONS",
    "FillSet",
    "build_fill",
    "data_fill",
    "fill_id",
    "sandbox_initialize",
]

_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://psd2-conformance.invalid/sandbox-fill")


def fill_id(name: str) -> str:
    """The fixed id of a data-fill record (a UUID, stable across servers and runs)."""
    return str(uuid.uuid5(_NAMESPACE, name))


def _bban(name: str) -> str:
    return generate_bban(random.Random(f"sandbox-fill-bban-{name}"))


def _national_id(name: str) -> str:
    return generate_national_id(random.Random(f"sandbox-fill-person-{name}"))


#: Customer numbers of the data fill; SCU refuses them so the fill can always recreate them.
FILL_CUSTOMER_NUMBERS = frozenset({"10000001", "10000002", "10000003"})


@dataclass(frozen=True)
class FillSet:
    customers: tuple[data.Customer, ...]
    agreements: tuple[data.Agreement, ...]
    accounts: tuple[data.Account, ...]
    engagements: tuple[data.Engagement, ...]
    transactions: tuple[data.AccountTransaction, ...]
    card_accounts: tuple[data.CardAccount, ...]
    card_transactions: tuple[data.CardTransaction, ...]


def _nok(amount: int, kind: str) -> data.Balance:
    return data.Balance(amount, "NOK", kind)


def _transaction(
    key: str,
    account: data.Account,
    owner_name: str,
    today: date,
    days_ago: int,
    amount: int,
    creditor: str,
    text: str,
    code: str = "PMNT-ICDT-DMCT",
) -> data.AccountTransaction:
    booking = (today - timedelta(days=days_ago)).isoformat()
    creditor_bban = _bban(f"creditor-{creditor}")
    item: dict[str, Any] = {
        "amount": amount,
        "currency": account.currency,
        "valueDate": booking,
        "bookingDate": booking,
        "remittanceInformationUnstructured": text,
        "creditorName": creditor,
        "creditorAccount": {"iban": bban_to_iban(creditor_bban), "bban": creditor_bban},
        "debtorName": owner_name,
        "debtorAccount": {"iban": account.iban, "bban": account.bban},
        "bankTransactionCode": code,
        "ultimateDebtor": owner_name,
        "ultimateCreditor": creditor,
        "purposeCode": "OTHR",
        "creditorId": f"NO{creditor_bban}",
    }
    return data.AccountTransaction(fill_id(f"transaction/{key}"), account.id, booking, item)


def _card_transaction(
    key: str,
    card: data.CardAccount,
    today: date,
    days_ago: int,
    amount: int,
    merchant: str,
    *,
    invoiced: bool,
) -> data.CardTransaction:
    day = (today - timedelta(days=days_ago)).isoformat()
    card_transaction_id = f"CT-{key}"
    item: dict[str, Any] = {
        "cardTransactionId": card_transaction_id,
        "terminalId": f"T{days_ago:04d}",
        "bookingDate": day,
        "transactionDate": day,
        "transactionAmount": {"currency": "NOK", "amount": amount},
        "originalAmount": {"currency": "NOK", "amount": amount},
        "merchantCategoryCode": "5411",
        "cardAcceptorId": f"MERCHANT-{key}",
        "maskedPan": card.masked_pan,
        "transactionDetails": merchant,
        "proprietaryBankTransactionCode": "PURCHASE",
        "invoiced": "true" if invoiced else "false",
        "markupFee": {"currency": "NOK", "amount": 0},
        "markupFeePercentage": "0",
        "cardAcceptorAddress": {
            "street": "Karl Johans gate",
            "buildingNumber": "1",
            "postalCode": "0154",
            "city": "Oslo",
            "country": "NO",
        },
    }
    return data.CardTransaction(
        fill_id(f"card-transaction/{key}"), card.id, card_transaction_id, day, invoiced, item
    )


def build_fill(today: date) -> FillSet:
    """The data set, with dates relative to ``today`` (the bank's date)."""
    kari = data.Customer(
        fill_id("customer/kari"), "10000001", data.PRIVATE, "Kari Nordmann", _national_id("kari")
    )
    ola = data.Customer(
        fill_id("customer/ola"), "10000002", data.PRIVATE, "Ola Nordmann", _national_id("ola")
    )
    corp = data.Customer(
        fill_id("customer/corporation"), "10000003", data.CORPORATE, "Nordmann Consulting AS"
    )
    kari_agreement = data.Agreement(
        fill_id("agreement/kari"), "Kari Nordmann (private)", holder=kari.id
    )
    ola_agreement = data.Agreement(
        fill_id("agreement/ola"), "Ola Nordmann (private)", holder=ola.id
    )
    corp_agreement = data.Agreement(
        fill_id("agreement/corporation"), "Nordmann Consulting AS (corporate)", owner=corp.id
    )
    kari_account = _account("kari", kari, "Kari sin brukskonto", "CACC", 0, 25_000)
    ola_account = _account("ola", ola, "Ola sin sparekonto", "SVGS", 0, 100_000)
    corp_account = _account("corporation", corp, "Driftskonto", "CACC", 50_000, 1_500_000)
    engagements = (
        _engagement("kari", kari_agreement, kari, kari_account, PRIVATE_ROLES, PRIVATE_LIMIT),
        _engagement("ola", ola_agreement, ola, ola_account, PRIVATE_ROLES, PRIVATE_LIMIT),
        _engagement(
            "ola-corporation",
            corp_agreement,
            ola,
            corp_account,
            ("VIEW", "REGISTER", "APPROVE"),
            100_000,
        ),
    )
    card = _card(kari, kari_account)
    return FillSet(
        customers=(kari, ola, corp),
        agreements=(kari_agreement, ola_agreement, corp_agreement),
        accounts=(kari_account, ola_account, corp_account),
        engagements=engagements,
        transactions=_transactions(
            today, (kari, ola, corp), (kari_account, ola_account, corp_account)
        ),
        card_accounts=(card,),
        card_transactions=(
            _card_transaction("kari-1", card, today, 3, 459, "Narvesen", invoiced=True),
            _card_transaction("kari-2", card, today, 12, 1_299, "Elkjøp", invoiced=True),
            _card_transaction("kari-3", card, today, 1, 189, "Vinmonopolet", invoiced=False),
        ),
    )


def _account(
    key: str, owner: data.Customer, name: str, kind: str, credit: int, balance: int
) -> data.Account:
    """A NOK account of the set: a current account (CACC) or a savings account."""
    bban = _bban(key)
    return data.Account(
        id=fill_id(f"account/{key}"),
        customer_id=owner.id,
        customer_number=owner.customer_number,
        name=name,
        bban=bban,
        iban=bban_to_iban(bban),
        currency="NOK",
        product="Brukskonto" if kind == "CACC" else "Sparekonto",
        cash_account_type=kind,
        credit_line=credit,
        balances=(_nok(balance, "closingBooked"), _nok(balance, "expected")),
    )


def _engagement(
    key: str,
    agreement: data.Agreement,
    psu: data.Customer,
    target: data.Account,
    roles: tuple[str, ...],
    limit: int,
) -> data.Engagement:
    """``psu`` engaged on ``target`` in ``agreement`` with ``roles``, one limit for both."""
    return data.Engagement(
        id=fill_id(f"engagement/{key}"),
        agreement_id=agreement.id,
        customer=psu.id,
        customer_id=psu.id,
        account_id=target.id,
        roles=roles,
        register_limit=limit,
        approval_limit=limit,
        name=target.name,
    )


def _transactions(
    today: date,
    customers: tuple[data.Customer, data.Customer, data.Customer],
    accounts: tuple[data.Account, data.Account, data.Account],
) -> tuple[data.AccountTransaction, ...]:
    """The booked transactions of the three accounts (Kari's, Ola's, the corporation's)."""
    kari, ola, corp = customers
    kari_account, ola_account, corp_account = accounts
    return (
        _transaction("kari-1", kari_account, kari.name, today, 2, 349, "Rema 1000", "Dagligvarer"),
        _transaction(
            "kari-2", kari_account, kari.name, today, 9, 12_500, "Boligutleie AS", "Husleie"
        ),
        _transaction("kari-3", kari_account, kari.name, today, 35, 899, "Hafslund Strøm", "Strøm"),
        _transaction("ola-1", ola_account, ola.name, today, 5, 2_000, "Kari Nordmann", "Gave"),
        _transaction(
            "ola-2", ola_account, ola.name, today, 60, 5_000, "Fondshandel ASA", "Fondssparing"
        ),
        _transaction(
            "corporation-1",
            corp_account,
            corp.name,
            today,
            1,
            45_000,
            "Kontorbygg Eiendom AS",
            "Husleie kontor",
        ),
        _transaction(
            "corporation-2",
            corp_account,
            corp.name,
            today,
            4,
            7_800,
            "Regnskapshuset AS",
            "Regnskap",
        ),
        _transaction(
            "corporation-3",
            corp_account,
            corp.name,
            today,
            20,
            120_000,
            "Ola Nordmann",
            "Lønn",
            "PMNT-ICDT-SALA",
        ),
    )


def _card(owner: data.Customer, account: data.Account) -> data.CardAccount:
    """Kari's Visa card account, settled from her current account."""
    return data.CardAccount(
        id=fill_id("card-account/kari"),
        customer_id=owner.id,
        masked_pan="492500******1234",
        currency="NOK",
        credit_limit=50_000,
        credit_limit_currency="NOK",
        card_id="9000000001",
        card_id_vno="1",
        account_number=account.bban,
        expiry="2029-12",
        name="Kari Nordmann",
        product="Visa Classic",
        status="enabled",
    )


def apply_fill(store: Store, fill: FillSet, *, keep_added: bool = False) -> None:
    """Remove the set (and what hangs below its accounts, cards and agreements), then add it;
    ``keep_added`` (the fault ``sandbox-initialize-keeps-changes``) only puts the set back."""
    with store.atomic():
        for account in () if keep_added else fill.accounts:
            for item in store.children(data.ACCOUNT_TRANSACTIONS, account.id):
                store.delete(data.ACCOUNT_TRANSACTIONS, item.id)
        for card in () if keep_added else fill.card_accounts:
            for card_item in store.children(data.CARD_TRANSACTIONS, card.id):
                store.delete(data.CARD_TRANSACTIONS, card_item.id)
        for agreement in () if keep_added else fill.agreements:
            for engagement in store.children(data.ENGAGEMENTS, agreement.id):
                store.delete(data.ENGAGEMENTS, engagement.id)
        groups: tuple[tuple[Any, tuple[Any, ...]], ...] = (
            (data.CUSTOMERS, fill.customers),
            (data.AGREEMENTS, fill.agreements),
            (data.ACCOUNTS, fill.accounts),
            (data.ENGAGEMENTS, fill.engagements),
            (data.ACCOUNT_TRANSACTIONS, fill.transactions),
            (data.CARD_ACCOUNTS, fill.card_accounts),
            (data.CARD_TRANSACTIONS, fill.card_transactions),
        )
        for table, records in groups:
            for record in records:
                store.put(table, record)


def data_fill(call: Call) -> Response:
    """SDF: POST /v1/sandbox/data-fill → 201 with the ids of the set."""
    fill = build_fill(now_at_bank(call.app).date())
    apply_fill(call.app.store, fill)
    return Response.json(
        201,
        {
            "customers": [item.id for item in fill.customers],
            "accounts": [item.id for item in fill.accounts],
            "cardAccounts": [item.id for item in fill.card_accounts],
            "agreements": [item.id for item in fill.agreements],
        },
    )


def sandbox_initialize(call: Call) -> Response:
    """SI: POST /v1/sandbox/initialize (the platform's sandbox reset, optional) → 201 with the
    default customers, as E9 lists them. The default customers are the data fill's: the set is
    put back as new (what was added on its accounts, cards and agreements goes); other data stays,
    since the run's parallel scenarios share this sandbox (assumptions.md, "Data fill").
    The fault ``sandbox-initialize-keeps-changes`` puts the set back and keeps what was added."""
    fill = build_fill(now_at_bank(call.app).date())
    store = call.app.store
    apply_fill(store, fill, keep_added=call.app.faulty("sandbox-initialize-keeps-changes"))
    return Response.json(201, [views.customer(store, customer) for customer in fill.customers])


OPERATIONS = {"SDF": data_fill, "SI": sandbox_initialize}
