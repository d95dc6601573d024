"""Sandbox accounts, balances and account transactions: SA, E12, E15, E7, E3, E11 (spec 2.9).

E7 refuses a transaction whose debtor is another account (spec 7 rule 5): every created
transaction is a movement out of the account itself, so its ``debtorAccount`` must be the account's
own iban and bban. The date rule of E7 (spec 4.3 E5/E7, spec 8) is a cross-field check run before
the handler. Accounts of a PRIVATE customer are engaged in the customer's private agreement with
full roles, so that the private PSU can give consent to them (assumption).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from reference_server.api import ApiError, Call, Response, TppMessage
from reference_server.model import sandbox_data as data
from reference_server.pipeline.due import due, refuse, unknown_id
from reference_server.resources._common import (
    one_balance_per_type,
    owner_by_number,
    require,
    sandbox_id,
)
from reference_server.services.private_engagement import engage_private_account
from reference_server.views import sandbox_views as views

__all__ = [
    "OPERATIONS",
    "change_balances",
    "create_account",
    "create_transactions",
    "get_account",
    "get_transaction",
    "list_transactions",
]


def create_account(call: Call) -> Response:
    """SA: POST /v1/sandbox/accounts; the owner is named by ``customerNumber``."""
    store = call.app.store
    body = call.body
    with store.atomic():
        customer = owner_by_number(store, body["customerNumber"])
        one_balance_per_type(call.app, body.get("balances", ()), "balances/")
        for field, lookup in (("bban", data.account_by_bban), ("iban", data.account_by_iban)):
            if lookup(store, body[field]) is not None:
                raise ApiError(
                    400,
                    "FORMAT_ERROR",
                    f"an account with {field} {body[field]} exists already",
                    path=field,
                )
        account = data.Account(
            id=sandbox_id(call.app),
            customer_id=customer.id,
            customer_number=customer.customer_number,
            name=body["accountName"],
            bban=body["bban"],
            iban=body["iban"],
            currency=body["currency"],
            product=body["product"],
            cash_account_type=body["cashAccountType"],
            credit_line=body["creditLine"],
            balances=tuple(data.Balance.from_json(item) for item in body.get("balances", ())),
        )
        store.add(data.ACCOUNTS, account)
        if not customer.corporate:
            engage_private_account(store, customer, account)
    return Response.json(201, views.account(account))


def get_account(call: Call) -> Response:
    """E12: GET /v1/sandbox/accounts/{mockAccountId}, an array of one account (spec 2.9)."""
    account = require(call, data.ACCOUNTS, call.path_params["mockAccountId"], "account")
    return Response.json(200, [views.account(account)])


def change_balances(call: Call) -> Response:
    """E15: PUT /v1/sandbox/accounts/{mockAccountId}/balances.

    Each item replaces the account's balance of the same ``balanceType``; types not sent are
    kept (assumption: "change account balance"). Answers 200 with the account.
    """
    store = call.app.store
    with store.atomic():
        account = require(call, data.ACCOUNTS, call.path_params["mockAccountId"], "account")
        one_balance_per_type(call.app, call.body, "")
        changes = {item.balance_type: item for item in map(data.Balance.from_json, call.body)}
        kept = [item for item in account.balances if item.balance_type not in changes]
        updated = replace(account, balances=(*kept, *changes.values()))
        store.put(data.ACCOUNTS, updated)
    if call.app.reads("unshown-success-statuses"):  # "response body: not shown"
        return Response.json(200, [item.to_json() for item in changes.values()])
    return Response.json(200, views.account(updated))


def _foreign_debtor(account: data.Account, item: Mapping[str, Any]) -> bool:
    debtor = item.get("debtorAccount") or {}
    return debtor.get("iban") != account.iban or debtor.get("bban") != account.bban


#: Spec 7 rule 5: a sandbox transaction's debtorAccount is its own account (``rules.json``).
_FOREIGN_DEBTOR = "ERR-5-foreign-debtor-account"


def create_transactions(call: Call) -> Response:
    """E7: POST /v1/sandbox/accounts/{mockAccountId}/transactions (array body).

    Answers 201 with the created transactions (their ids are needed for E11; the spec shows no
    body, assumption).
    """
    store = call.app.store
    with store.atomic():
        account = require(call, data.ACCOUNTS, call.path_params["mockAccountId"], "account")
        foreign = [index for index, item in enumerate(call.body) if _foreign_debtor(account, item)]
        if foreign and not call.app.faulty("accept-foreign-debtor"):
            text = (
                "the debtorAccount is another account: a sandbox transaction is created on "
                "its own debtor account (spec 7 rule 5)"
            )
            raise refuse(
                due(call.app.contract, _FOREIGN_DEBTOR, call.operation),
                text,
                code="FORMAT_ERROR",
                status=400,
                path=f"{foreign[0]}/debtorAccount",
                messages=[TppMessage("FORMAT_ERROR", text, f"{i}/debtorAccount") for i in foreign],
            )
        created = [
            data.add_account_transaction(
                store,
                data.AccountTransaction(
                    id=data.new_id(),
                    account_id=account.id,
                    booking_date=item["bookingDate"],
                    data=item,
                ),
            )
            for item in call.body
        ]
    return Response.json(201, [views.account_transaction(item) for item in created])


def list_transactions(call: Call) -> Response:
    """E3: GET /v1/sandbox/accounts/{mockAccountId}/transactions (E7's and sandbox payments')."""
    store = call.app.store
    account = require(call, data.ACCOUNTS, call.path_params["mockAccountId"], "account")
    chosen = views.select(
        store.children(data.ACCOUNT_TRANSACTIONS, account.id),
        lambda item: item.booking_date,
        call.query,
    )
    listed = [views.account_transaction(item) for item in chosen]
    if call.app.faulty("unstable-transaction-ids"):
        suffix = uuid.uuid4().hex[:8]
        listed = [{**item, "id": f"{item['id']}-{suffix}"} for item in listed]
    return Response.json(200, listed)


def get_transaction(call: Call) -> Response:
    """E11: GET /v1/sandbox/accounts/{mockAccountId}/transactions/{mockTransactionId}."""
    store = call.app.store
    account = require(call, data.ACCOUNTS, call.path_params["mockAccountId"], "account")
    transaction = store.get(data.ACCOUNT_TRANSACTIONS, call.path_params["mockTransactionId"])
    if transaction is None or transaction.account_id != account.id:
        raise unknown_id(
            call.app.contract,
            call.operation,
            f"account {account.id} has no transaction {call.path_params['mockTransactionId']!r}",
        )
    return Response.json(200, views.account_transaction(transaction))


OPERATIONS = {
    "SA": create_account,
    "E12": get_account,
    "E15": change_balances,
    "E7": create_transactions,
    "E3": list_transactions,
    "E11": get_transaction,
}
