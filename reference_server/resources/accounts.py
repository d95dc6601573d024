"""Production account information: account list (AL), account transactions (AT) and transaction
details (E8) — spec 2.8, 4.3 E8, 7 rule 8, 8, 9.

All three read through a consent (:mod:`reference_server.services.consent_access`). Rules
enforced here:

- spec 7 rule 8: an account the consent covers that no longer exists is left out of AL (an empty
  list, not 404); ``DELETE /_control/accounts/{accountId}`` (reference-server only) removes an
  account so the rule can be exercised — the interface itself has no such operation;
- spec 8: AT pages hold 200 transactions when no pagination parameter is sent, and its pagination
  links carry ``limit=200``; history reaches back 90 days (no operation gives a fresh SCA to reach
  further); E8 without PSU-IP-Address: 4 calls a day, consent at most 90 days old;
- spec 9 ``x-accept-fix``: longer-name and cash-account-type-iso in AL
  (:mod:`reference_server.views.versioning`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any
from urllib.parse import urlencode

from reference_server.api import Call, Response, Route
from reference_server.model import sandbox_data
from reference_server.model.payment_data import PAYMENTS, Payment, Status
from reference_server.pipeline.due import due, refuse, unknown_id
from reference_server.pipeline.validation import BANK_ZONE
from reference_server.services.consent_access import check_unattended_access, consent_for
from reference_server.services.payment_batch import remittance_text
from reference_server.views.account_views import (
    account_item,
    account_path,
    account_reference,
    transaction_details,
)
from reference_server.views.versioning import amount_string, parse_accept_fix

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "HISTORY_WITHOUT_SCA",
    "OPERATIONS",
    "ROUTES",
    "delete_account",
    "list_accounts",
    "list_transactions",
    "transaction_detail",
]

#: Spec 8: page size when no pagination parameter is sent, and in pagination links.
DEFAULT_PAGE_SIZE = 200
#: The ``page-size-100`` fault's page size.
FAULTY_PAGE_SIZE = 100
#: Spec 8: transaction history served without SCA.
HISTORY_WITHOUT_SCA = timedelta(days=90)

#: Payment statuses shown as pending transactions of their debtor account (accepted, not booked).
_PENDING = frozenset({Status.ACTC, Status.PDNG, Status.ACSP})
#: Spec 7 rule 8: an account of the consent that is gone is left out of AL (the fault
#: ``account-gone-404`` answers 404 instead).
_ACCOUNT_GONE = "ERR-8-consent-account-gone-empty-list"


def _fixes(call: Call) -> frozenset[str]:
    return parse_accept_fix(call.header("x-accept-fix"))


def _account(call: Call) -> sandbox_data.Account:
    account_id = call.path_params["id"]
    account = call.app.store.get(sandbox_data.ACCOUNTS, account_id)
    if account is None:
        raise unknown_id(call.app.contract, call.operation, f"no account {account_id!r}", path="id")
    return account


def list_accounts(call: Call) -> Response:
    """AL: ``{accounts: [...]}``, the consent's accounts that still exist (spec 7 rule 8)."""
    store = call.app.store
    consent = consent_for(call, None)
    accounts = []
    for account_id in consent.account_ids:
        account = store.get(sandbox_data.ACCOUNTS, account_id)
        if account is None:
            if call.app.faulty("account-gone-404"):
                raise refuse(
                    due(call.app.contract, _ACCOUNT_GONE, call.operation),
                    f"account {account_id} no longer exists",
                    code="RESOURCE_UNKNOWN",
                    fault_status=404,
                )
            continue
        accounts.append(account_item(account, _fixes(call)))
    return Response.json(200, {"accounts": accounts})


def _page_size(call: Call) -> int:
    return FAULTY_PAGE_SIZE if call.app.faulty("page-size-100") else DEFAULT_PAGE_SIZE


def _page_link(call: Call, offset: int, limit: int) -> dict[str, Any]:
    query: dict[str, Any] = {"bookingStatus": call.query.get("bookingStatus", "both")}
    for name in ("fromDate", "toDate"):
        if name in call.query:
            query[name] = call.query[name]
    query.update(offset=offset, limit=limit)
    href = f"{account_path(call.path_params['id'])}/transactions?{urlencode(query)}"
    return {"href": href, "verbs": ["GET"]}


def _pagination(call: Call, offset: int, limit: int, total: int) -> dict[str, Any]:
    last = max(0, ((total - 1) // limit) * limit) if total else 0
    links = {
        "self": _page_link(call, offset, limit),
        "first": _page_link(call, 0, limit),
        "last": _page_link(call, last, limit),
    }
    if offset + limit < total:
        # the fault paging-next-overlaps starts the next page on this page's last item
        overlap = 1 if call.app.faulty("paging-next-overlaps") else 0
        links["next"] = _page_link(call, offset + limit - overlap, limit)
    if offset > 0:
        links["previous"] = _page_link(call, max(0, offset - limit), limit)
    return links


def _pending_item(payment: Payment, minor_units: Mapping[str, int]) -> dict[str, Any]:
    request = payment.request
    item: dict[str, Any] = {
        "endToEndId": payment.id.replace("-", "")[:35],
        "transactionAmount": {
            "amount": amount_string(-payment.amount, payment.currency, minor_units),
            "currency": payment.currency,
        },
    }
    if isinstance(request.get("creditorName"), str):
        item["creditorName"] = request["creditorName"][:70]
    creditor = request.get("creditorAccount")
    if isinstance(creditor, Mapping):
        item["creditorAccount"] = {
            key: creditor[key] for key in ("bban", "iban", "currency") if key in creditor
        }
    remittance = remittance_text(request)
    if remittance:
        item["remittanceInformationUnstructured"] = remittance
    if payment.execution_date is not None:
        item["valueDate"] = payment.execution_date.isoformat()
    return item


def _pending(call: Call, account: sandbox_data.Account) -> list[dict[str, Any]]:
    """Accepted payments from the account not booked yet (they show as pending)."""
    store = call.app.store
    minor_units = call.app.contract.minor_units
    items = []
    for status in sorted(_PENDING):
        for payment in store.find(PAYMENTS, "status", status):
            debtor = payment.debtor_account
            if payment.periodic:
                continue
            if debtor.get("bban") == account.bban or debtor.get("iban") == account.iban:
                items.append(_pending_item(payment, minor_units))
    return items


def list_transactions(call: Call) -> Response:
    """AT: ``{account, transactions: {booked, pending, _links}}`` (NextGenPSD2 shape, assumed).

    Booked items are the sandbox account transactions (E7 and booked payments), newest first,
    within ``fromDate``/``toDate`` (inclusive, on bookingDate) and never older than 90 days
    (spec 8); ``offset``/``limit`` page them, 200 a page by default (spec 8).
    """
    account = _account(call)
    consent_for(call, account.id)
    query = call.query
    status = query.get("bookingStatus", "both")  # always given, unless read permissively
    today = call.app.clock.now().astimezone(BANK_ZONE).date()
    earliest = today - HISTORY_WITHOUT_SCA
    start = earliest
    if "fromDate" in query:
        start = max(date.fromisoformat(query["fromDate"]), earliest)
    end = date.fromisoformat(query["toDate"]) if "toDate" in query else None
    selected = [
        item
        for item in call.app.store.children(sandbox_data.ACCOUNT_TRANSACTIONS, account.id)
        if start.isoformat() <= item.booking_date
        and (end is None or item.booking_date <= end.isoformat())
    ]
    selected.sort(key=lambda item: item.booking_date, reverse=True)
    offset = int(query.get("offset", 0))
    limit = int(query.get("limit", _page_size(call)))
    page = selected[offset : offset + limit]
    minor_units = call.app.contract.minor_units
    corporate = (call.auth.psu_context or "").upper() == "CORPORATE"
    transactions: dict[str, Any] = {}
    if status != "pending":
        transactions["booked"] = [
            transaction_details(account, item, minor_units, corporate=corporate) for item in page
        ]
    if status != "booked":
        transactions["pending"] = _pending(call, account)
    transactions["_links"] = _pagination(call, offset, limit, len(selected))
    return Response.json(200, {"account": account_reference(account), "transactions": transactions})


def transaction_detail(call: Call) -> Response:
    """E8: ``{transactionsDetails: {...}}`` for a transaction of the account (spec 2.8), within
    the spec 8 limits for calls without the PSU."""
    account = _account(call)
    consent = consent_for(call, account.id, any_psu=True)
    check_unattended_access(call, consent)
    transaction_id = call.path_params["transactionId"]
    transaction = call.app.store.get(sandbox_data.ACCOUNT_TRANSACTIONS, transaction_id)
    if transaction is None or transaction.account_id != account.id:
        raise unknown_id(
            call.app.contract,
            call.operation,
            f"account {account.id} has no transaction {transaction_id!r}",
            path="transactionId",
        )
    corporate = (call.auth.psu_context or "").upper() == "CORPORATE"
    details = transaction_details(
        account, transaction, call.app.contract.minor_units, corporate=corporate
    )
    if call.app.reads("details-without-transaction-id"):  # spec 2.8: all optional
        del details["transactionId"]
    return Response.json(200, {"transactionsDetails": details})


def delete_account(call: Call) -> Response:
    """``DELETE /_control/accounts/{accountId}``: the account "no longer exists in the backend"
    (spec 7 rule 8). Its transactions go with it; consents keep naming it. 204, or 404."""
    store = call.app.store
    account_id = call.path_params["accountId"]
    with store.atomic():
        if store.get(sandbox_data.ACCOUNTS, account_id) is None:
            raise unknown_id(call.app.contract, call.operation, f"no account {account_id!r}")
        for item in store.children(sandbox_data.ACCOUNT_TRANSACTIONS, account_id):
            store.delete(sandbox_data.ACCOUNT_TRANSACTIONS, item.id)
        store.delete(sandbox_data.ACCOUNTS, account_id)
    return Response.empty(204)


OPERATIONS = {"AL": list_accounts, "AT": list_transactions, "E8": transaction_detail}

ROUTES = (Route("DELETE", "/_control/accounts/{accountId}", delete_account),)
