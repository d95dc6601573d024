"""Sandbox card accounts and card transactions: SCA, E10, E5, E4 (spec 2.9, spec 4.3 E4/E5/E10).

A card transaction is *pending* while it is not invoiced (``invoiced`` "false") and *booked* once
invoiced ("true"): spec 2.9 gives pending entries as strings and every creation item a booking
date, so the invoiced flag is what tells them apart (assumption); a pending entry is shown as its
``cardTransactionId``. E4 shows only transactions created through E5 (spec 4.3 E4).
Both E4 and E5 honour ``x-accept-fix: cardaccount-switch-originalamount-and-transactionamount``
(spec 9): booked items show ``originalAmount`` and ``transactionAmount`` swapped.
"""

from __future__ import annotations

from typing import Any

from reference_server.api import ApiError, Call, Response
from reference_server.model import sandbox_data as data
from reference_server.model.store import Store
from reference_server.resources._common import owner_by_number, require, sandbox_id
from reference_server.views import sandbox_views as views
from reference_server.views import versioning

__all__ = [
    "OPERATIONS",
    "create_card_account",
    "create_card_transactions",
    "get_card_account",
    "list_card_transactions",
]


def _card_view(store: Store, card: data.CardAccount) -> dict[str, Any]:
    return views.card_account(card, store.children(data.CARD_TRANSACTIONS, card.id))


def _accept_fix(call: Call) -> frozenset[str]:
    """The request's ``x-accept-fix`` values (spec 9); E4 and E5 act on
    ``cardaccount-switch-originalamount-and-transactionamount``."""
    return versioning.parse_accept_fix(call.header("x-accept-fix"))


def create_card_account(call: Call) -> Response:
    """SCA: POST /v1/sandbox/card-accounts; the owner is named by ``customerNumber``."""
    store = call.app.store
    body = call.body
    # the body's own demand before its owner is looked up: a body short of a field is refused
    # for that, whoever it names (conformance discover reads the field from the refusal)
    if "status" not in body and call.app.reads("card-account-status-required"):
        raise ApiError(
            400, "FORMAT_ERROR", "status is required (enabled or disabled)", path="status"
        )
    with store.atomic():
        customer = owner_by_number(store, body["customerNumber"])
        number = store.next_number("cardId", start=1)
        card = data.CardAccount(
            id=sandbox_id(call.app),
            customer_id=customer.id,
            masked_pan=body["maskedPan"],
            currency=body["currency"],
            credit_limit=body["creditLimit"]["amount"],
            credit_limit_currency=body["creditLimit"]["currency"],
            card_id=f"{number:010d}",
            card_id_vno="1",
            account_number=body["accountNumber"],
            expiry=body["expiry"],
            name=body["name"],
            product=body["product"],
            status=body.get("status", "enabled"),
        )
        store.add(data.CARD_ACCOUNTS, card)
    return Response.json(201, _card_view(store, card))


def get_card_account(call: Call) -> Response:
    """E10: GET /v1/sandbox/card-accounts/{mockCardAccountId}."""
    store = call.app.store
    card = require(call, data.CARD_ACCOUNTS, call.path_params["mockCardAccountId"], "card account")
    return Response.json(200, _card_view(store, card))


def create_card_transactions(call: Call) -> Response:
    """E5: POST /v1/sandbox/card-accounts/{mockCardAccountId}/transactions (array body).

    ``cardTransactionId`` must be new on the card account (it names pending entries).
    Answers 201 with the created transactions in the card transactions shape.
    """
    store = call.app.store
    with store.atomic():
        card = require(
            call, data.CARD_ACCOUNTS, call.path_params["mockCardAccountId"], "card account"
        )
        known = {
            item.card_transaction_id for item in store.children(data.CARD_TRANSACTIONS, card.id)
        }
        for index, item in enumerate(call.body):
            if call.app.reads("max35-identifiers") and len(item["cardTransactionId"]) > 35:
                raise ApiError(
                    400,
                    "FORMAT_ERROR",
                    "cardTransactionId is longer than 35 characters",
                    path=f"{index}/cardTransactionId",
                )
            if item["cardTransactionId"] in known:
                raise ApiError(
                    400,
                    "FORMAT_ERROR",
                    f"cardTransactionId {item['cardTransactionId']!r} is used twice on this card",
                    path=f"{index}/cardTransactionId",
                )
            known.add(item["cardTransactionId"])
        created = [
            store.add(
                data.CARD_TRANSACTIONS,
                data.CardTransaction(
                    id=data.new_id(),
                    card_account_id=card.id,
                    card_transaction_id=item["cardTransactionId"],
                    booking_date=item["bookingDate"],
                    invoiced=item["invoiced"] == "true",
                    data=item,
                ),
            )
            for item in call.body
        ]
    # Spec 4.3 E5 shows the body, not the status: 201, or 200 read permissively.
    status = 200 if call.app.reads("unshown-success-statuses") else 201
    return Response.json(status, views.card_transactions(card, created, fixes=_accept_fix(call)))


def list_card_transactions(call: Call) -> Response:
    """E4: GET /v1/sandbox/card-accounts/{mockCardAccountId}/transactions?bookingStatus=..."""
    store = call.app.store
    card = require(call, data.CARD_ACCOUNTS, call.path_params["mockCardAccountId"], "card account")
    status = call.query["bookingStatus"]
    chosen = views.select(
        (
            item
            for item in store.children(data.CARD_TRANSACTIONS, card.id)
            if (item.pending and status in ("pending", "both"))
            or (not item.pending and status in ("booked", "both"))
        ),
        lambda item: item.booking_date,
        call.query,
    )
    return Response.json(
        200,
        views.card_transactions(
            card,
            chosen,
            booked=status in ("booked", "both"),
            pending=status in ("pending", "both"),
            fixes=_accept_fix(call),
        ),
    )


OPERATIONS = {
    "SCA": create_card_account,
    "E10": get_card_account,
    "E5": create_card_transactions,
    "E4": list_card_transactions,
}
