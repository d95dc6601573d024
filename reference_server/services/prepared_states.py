"""The states a production-like bank prepared for a run, as its profile's ``[prepared]`` table names
them: the server playing that bank (``--profile``) holds them from its start and again after every
reset, under the profile's ids, so that a run with that profile judges the rules stated for them
off the reference server's controls, as it would at the bank.

- ``pending_payment_id``: a single payment of the PSU in PDNG, its requested execution date two
  months ahead (spec 3: a batch run leaves it there; spec 7 rule 6: its deletion is refused);
- ``aged_consent_id``: a valid consent authorised 91 days ago on an account of its own with one
  booked transaction (spec 8: E8 without PSU-IP-Address refuses it; AL and AT still serve it);
- ``renewal_due_consent_id``: a consent whose SCA is 181 days old (spec 8: every account access
  refuses it), on ``renewal_due_account_id`` with ``renewal_due_transaction_id``;
- ``closed_account_consent_id``: a consent on ``closed_account_id``, an account that does not
  exist (spec 7 rule 8: the account list is empty, not 404);
- ``changed_basket_id``: a signing basket of ``changed_basket_payment_ids``, the first of them
  cancelled after the basket was made, the others received (spec 2.4: the basket reads RJCT).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from reference_server.model import sandbox_data as data
from reference_server.model.payment_data import (
    BASKETS,
    CONSENTS,
    NCBCT,
    NDCT,
    PAYMENTS,
    Basket,
    Consent,
    ConsentStatus,
    Payment,
    PaymentKind,
    Status,
)
from reference_server.services.private_engagement import engage_private_account

if TYPE_CHECKING:
    from collections.abc import Callable

    from conformance.profile import PreparedStates
    from reference_server.api import ServerState
    from reference_server.model.bank_style import ExistingData

__all__ = ["seed_prepared"]

#: How old the prepared consents are (spec 8: 90 days for E8 without the PSU, 180 for SCA).
_AGED = timedelta(days=91)
_RENEWAL_DUE = timedelta(days=181)
#: A valid consent's validUntil, from today (the prepared consents' own age aside).
_VALID_FOR = timedelta(days=89)
#: How far ahead the pending payment's execution date lies (a batch run keeps it PDNG).
_PENDING_AHEAD = timedelta(days=60)
#: The creditor of the prepared payments (a valid Norwegian BBAN).
_CREDITOR_BBAN = "86011117947"


def seed_prepared(
    app: ServerState,
    existing: ExistingData,
    customer: data.Customer,
    account_of: Callable[[str], data.Account],
    booked_on: Callable[[data.Account, str, str], None],
) -> None:
    """Create the prepared states (inside the caller's transaction); ``account_of`` makes an
    account of the customer for an id, ``booked_on`` books a transaction (account, id, booking
    date) on it: the existing data's own makers."""
    prepared = existing.prepared
    store = app.store
    now = app.clock.now()
    debtor = existing.debtor_bban or _CREDITOR_BBAN
    if prepared.pending_payment_id is not None:
        product = NCBCT if prepared.pending_payment_product == "ncbct" else NDCT
        body = _payment_body(debtor, now + _PENDING_AHEAD, "Prepared pending payment")
        store.add(
            PAYMENTS,
            _payment(prepared.pending_payment_id, product, body, Status.PDNG, existing, now),
        )
    consents = _consents(prepared, now)
    for consent_id, (age, account_id, transaction_id) in consents.items():
        account_ids: tuple[str, ...] = ()
        if account_id is not None:
            account = account_of(account_id)
            store.add(data.ACCOUNTS, account)
            engage_private_account(store, customer, account)
            if transaction_id is not None:
                booked_on(account, transaction_id, (now - timedelta(days=2)).date().isoformat())
            account_ids = (account.id,)
        elif consent_id == prepared.closed_account_consent_id:
            account_ids = (prepared.closed_account_id or "",)
        store.add(CONSENTS, _consent(consent_id, customer, account_ids, now - age, now, existing))
    if prepared.changed_basket_id is not None:
        _basket(app, prepared, existing, debtor, now)


def _consents(
    prepared: PreparedStates, now: datetime
) -> dict[str, tuple[timedelta, str | None, str | None]]:
    """consent id → (its age, its account id, a transaction id), for the prepared consents."""
    found: dict[str, tuple[timedelta, str | None, str | None]] = {}
    if prepared.aged_consent_id is not None:
        own = prepared.aged_consent_id
        found[own] = (_AGED, f"{own}-account", f"{own}-transaction")
    if prepared.renewal_due_consent_id is not None:
        own = prepared.renewal_due_consent_id
        found[own] = (
            _RENEWAL_DUE,
            prepared.renewal_due_account_id or f"{own}-account",
            prepared.renewal_due_transaction_id or f"{own}-transaction",
        )
    if prepared.closed_account_consent_id is not None:
        found[prepared.closed_account_consent_id] = (timedelta(days=1), None, None)
    return found


def _consent(
    consent_id: str,
    customer: data.Customer,
    account_ids: tuple[str, ...],
    authorised: datetime,
    now: datetime,
    existing: ExistingData,
) -> Consent:
    return Consent(
        id=consent_id,
        psu_key=customer.id,
        customer_id=customer.id,
        access={"accounts": [], "transactions": []},
        valid_until=(now + _VALID_FOR).date().isoformat(),
        recurring=True,
        frequency_per_day=4,
        status=ConsentStatus.VALID,
        created_at=authorised.isoformat(),
        authorised_at=authorised.isoformat(),
        account_ids=account_ids,
        tpp_id=existing.tpp_id,
    )


def _payment_body(debtor: str, execution: datetime, text: str) -> dict[str, Any]:
    return {
        "instructedAmount": {"amount": "250.00", "currency": "NOK"},
        "debtorAccount": {"bban": debtor},
        "creditorAccount": {"bban": _CREDITOR_BBAN},
        "creditorName": "Prepared Creditor",
        "requestedExecutionDate": execution.date().isoformat(),
        "remittanceInformationUnstructured": text,
    }


def _payment(
    payment_id: str,
    product: str,
    body: dict[str, Any],
    status: str,
    existing: ExistingData,
    now: datetime,
    basket_id: str | None = None,
) -> Payment:
    moment = now.isoformat()
    return Payment(
        id=payment_id,
        product=product,
        kind=PaymentKind.SINGLE,
        request=body,
        status=status,
        psu_key=existing.psu_id,
        customer_id=existing.psu_id,
        created_at=moment,
        status_changed_at=moment,
        basket_id=basket_id,
        tpp_id=existing.tpp_id,
    )


def _basket(
    app: ServerState, prepared: PreparedStates, existing: ExistingData, debtor: str, now: datetime
) -> None:
    """The basket and its payments: the first cancelled after the basket was made."""
    basket_id = prepared.changed_basket_id or ""
    store = app.store
    for index, payment_id in enumerate(prepared.changed_basket_payment_ids):
        body = _payment_body(debtor, now + timedelta(days=7), f"Prepared basket payment {index}")
        status = Status.CANC if index == 0 else Status.RCVD
        store.add(PAYMENTS, _payment(payment_id, NDCT, body, status, existing, now, basket_id))
    store.add(
        BASKETS,
        Basket(
            id=basket_id,
            payment_ids=prepared.changed_basket_payment_ids,
            psu_key=existing.psu_id,
            created_at=now.isoformat(),
            tpp_id=existing.tpp_id,
        ),
    )
