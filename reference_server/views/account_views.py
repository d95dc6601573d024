"""Production views of sandbox records: the account (AL) and the transaction (spec 2.8; AT, E8).

The production interface shows the same accounts and transactions as the sandbox (spec 4.3 E3:
"including those from sandbox payments"), in its own shapes. Choices (``assumptions.md``):

- a sandbox amount (int32, spec 2.1) is in whole units of its currency; it is shown as a string
  with the currency's minor units (spec 2.1), negative when the account is the transaction's
  debtor (every E7 transaction and every booked payment is: spec 7 rule 5);
- fields spec 2.8 says the implementation does not offer (``creditorId``, ``ultimateCreditor``,
  ``ultimateDebtor``) are left out, as are empty strings and values outside spec 2.8's bounds;
- ``_links.transactionDetails`` (spec 2.8: "only in a corporate context") is added when the request
  has PSU-Context CORPORATE.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from reference_server.model.sandbox_data import Account, AccountTransaction
from reference_server.views.versioning import account_name, amount_string, cash_account_type

__all__ = ["account_item", "account_path", "account_reference", "transaction_details"]


def account_path(account_id: str) -> str:
    return f"/v1/accounts/{account_id}"


def account_reference(account: Account) -> dict[str, str]:
    """``{iban, bban, currency}`` (``common.json`` AccountReference)."""
    return {"iban": account.iban, "bban": account.bban, "currency": account.currency}


def account_item(account: Account, fixes: frozenset[str]) -> dict[str, Any]:
    """One entry of the AL ``accounts`` list; ``name`` and ``cashAccountType`` follow
    ``x-accept-fix`` (spec 8, spec 9)."""
    return {
        "resourceId": account.id,
        **account_reference(account),
        "name": account_name(account.name, fixes),
        "product": account.product,
        "cashAccountType": cash_account_type(account.cash_account_type, fixes),
        "_links": {
            "transactions": {
                "href": f"{account_path(account.id)}/transactions?bookingStatus=both",
                "verbs": ["GET"],
            }
        },
    }


def _reference(value: Any) -> dict[str, str] | None:
    if not isinstance(value, Mapping):
        return None
    reference = {
        key: str(value[key])
        for key, limit in (("bban", 30), ("iban", 34))
        if isinstance(value.get(key), str) and 0 < len(value[key]) <= limit
    }
    return reference or None


def _is_debtor(account: Account, data: Mapping[str, Any]) -> bool:
    debtor = data.get("debtorAccount")
    if not isinstance(debtor, Mapping):
        return False
    return debtor.get("bban") == account.bban or debtor.get("iban") == account.iban


def _text(data: Mapping[str, Any], name: str, limit: int, minimum: int = 1) -> str | None:
    value = data.get(name)
    if isinstance(value, str) and minimum <= len(value) <= limit:
        return value
    return None


def transaction_details(
    account: Account,
    transaction: AccountTransaction,
    minor_units: Mapping[str, int],
    *,
    corporate: bool = False,
) -> dict[str, Any]:
    """A sandbox account transaction as the spec 2.8 transaction object."""
    data = transaction.data
    currency = str(data.get("currency", account.currency))
    raw = data.get("amount")
    amount = Decimal(raw) if isinstance(raw, int) and not isinstance(raw, bool) else Decimal(0)
    if _is_debtor(account, data):
        amount = -abs(amount)
    details: dict[str, Any] = {
        "transactionId": transaction.id,
        "bookingDate": transaction.booking_date,
        "transactionAmount": {
            "amount": amount_string(amount, currency, minor_units),
            "currency": currency,
        },
    }
    if isinstance(data.get("valueDate"), str):
        details["valueDate"] = data["valueDate"]
    for name, limit, minimum in (
        ("endToEndId", 35, 1),
        ("creditorName", 70, 1),
        ("debtorName", 70, 1),
        ("remittanceInformationUnstructured", 140, 1),
        ("bankTransactionCode", 14, 4),
        ("purposeCode", 4, 1),
    ):
        value = _text(data, name, limit, minimum)
        if value is not None:
            details[name] = value
    for name in ("creditorAccount", "debtorAccount"):
        reference = _reference(data.get(name))
        if reference is not None:
            details[name] = reference
    if corporate:
        details["_links"] = {
            "transactionDetails": {
                "href": f"{account_path(account.id)}/transactions/{transaction.id}",
                "verbs": ["GET"],
            }
        }
    return details
