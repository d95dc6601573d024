"""The simulated batch processing (spec 3: "five times a day"; spec 9 1.16.0).

Batch runs are moments of the server clock (``reference_server.model.clock.BATCH_RUN_TIMES``).
Before every contract operation the server catches up: each run that fell due since the last
catch-up is executed in order (:func:`catch_up`), so moving the clock forward a day means five
runs.
``POST /_control/batch`` executes one extra run at the current moment (:func:`run_batch`).

One run moves every non-periodic payment one step (``payment_status.batch_step``).
A payment reaching ACSC is booked: a sandbox account transaction on its debtor account, if that
account is a sandbox account (spec 4.3 E3: the list includes "those from sandbox payments").
"""

from __future__ import annotations

import uuid
import weakref
from dataclasses import replace
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

from reference_server.model import sandbox_data
from reference_server.model.clock import batch_runs_between, next_batch_run
from reference_server.model.payment_data import (
    BATCH_STATE,
    NCBCT,
    PAYMENTS,
    BatchState,
    Payment,
    Status,
)
from reference_server.model.payment_status import batch_step, move
from reference_server.model.store import Store
from reference_server.pipeline.validation import BANK_ZONE

if TYPE_CHECKING:
    from reference_server.api import ServerState

__all__ = [
    "BANK_TRANSACTION_CODES",
    "BatchResult",
    "book",
    "catch_up",
    "remittance_text",
    "run_batch",
    "sandbox_amount",
]

#: Statuses a batch run can still move (the rest are final or wait for SCA).
_MOVABLE = (Status.ACTC, Status.PDNG, Status.ACSP)

#: ISO 20022 bank transaction codes of a booked payment (4 to 14 characters, spec 2.8/2.9):
#: domain PMNT, family ICDT (issued credit transfers), sub-family DMCT domestic / XBCT cross-border.
BANK_TRANSACTION_CODES = {"domestic": "PMNT-ICDT-DMCT", "cross-border": "PMNT-ICDT-XBCT"}

_INT32_MAX = 2_147_483_647

#: One run's moves: (payment id, old status, new status).
BatchResult = list[tuple[str, str, str]]


def _movable(store: Store, *, periodic: bool = False) -> list[Payment]:
    """The payments a run can move: the non-periodic ones (``periodic``: those too)."""
    found: list[Payment] = []
    for status in _MOVABLE:
        found.extend(store.find(PAYMENTS, "status", status))
    return [payment for payment in found if periodic or not payment.periodic]


def run_batch(app: ServerState, moment: datetime) -> BatchResult:
    """One batch run at ``moment``: every non-periodic payment moves one step (spec 3: "The
    sandbox advances payments (except periodic ones)"); with the fault ``batch-advances-periodic``
    the periodic ones move too."""
    store = app.store
    run_day = moment.astimezone(BANK_ZONE).date()
    periodic = app.faulty("batch-advances-periodic")
    moves: BatchResult = []
    with store.atomic():
        for payment in _movable(store, periodic=periodic):
            new_status = batch_step(payment, run_day, periodic=periodic)
            if new_status is None:
                continue
            moved = move(store, payment, new_status, moment)
            if new_status == Status.ACSC:
                book(store, moved, run_day.isoformat())
            moves.append((payment.id, payment.status, new_status))
    if moves:
        app.logger.info("batch run at %s moved %d payment(s)", moment.isoformat(), len(moves))
    return moves


#: Per store, after a catch-up that found nothing due: (the batch state's ``Store.version``
#: when it was read, its last run, the next run after it). While the version is unchanged and the
#: clock is in [last run, next run), nothing can be due, so the hook on every request answers
#: without a query. The version is read before the record, so a write in between makes the
#: entry stale at once; a clock moved back before the last run, or past the next run, takes the
#: full path (which writes the record, changing the version).
_QUIET: weakref.WeakKeyDictionary[Store, tuple[tuple[int, int], datetime, datetime]] = (
    weakref.WeakKeyDictionary()
)


def catch_up(app: ServerState) -> int:
    """Execute every batch run that fell due since the last catch-up; the number executed.

    The first call after a reset only records the moment (no history to catch up on). When the
    clock was moved back, the record follows it back, so the runs ahead happen again as the clock
    moves forward. Runs stop early once no payment can move any more. The record is written only
    when a run fell due (at most five times a day), not on every request.
    """
    store = app.store
    now = app.clock.now()
    quiet = _QUIET.get(store)
    version = store.version(BATCH_STATE)  # read before the record, see _QUIET
    if quiet is not None and quiet[0] == version and quiet[1] <= now < quiet[2]:
        return 0  # the common case, known without reading the store
    state = store.get(BATCH_STATE, BatchState.id)
    if state is not None:
        last = datetime.fromisoformat(state.last_run)
        if last <= now and not batch_runs_between(last, now):
            _QUIET[store] = (version, last, next_batch_run(last))
            return 0  # the common case: nothing fell due, nothing to write
    with store.atomic():
        state = store.get(BATCH_STATE, BatchState.id)
        if state is None:
            store.put(BATCH_STATE, BatchState(now.isoformat()))
            return 0
        last = datetime.fromisoformat(state.last_run)
        if now < last:
            store.put(BATCH_STATE, BatchState(now.isoformat()))
            return 0
        runs = batch_runs_between(last, now)
        executed = 0
        for run in runs:
            if not _movable(store):
                break
            run_batch(app, run)
            executed += 1
        if runs:
            store.put(BATCH_STATE, BatchState(runs[-1].isoformat()))
    return executed


def sandbox_amount(amount: Decimal) -> int:
    """A payment amount as a sandbox amount (int32 in whole currency units, spec 2.1; half-up
    rounding; capped at the int32 maximum)."""
    whole = int(amount.to_integral_value(rounding=ROUND_HALF_UP))
    return min(whole, _INT32_MAX)


def remittance_text(request: dict[str, Any] | Any) -> str:
    """The payment's remittance as one line: the unstructured text, else the structured
    references (the array, or the deprecated single item, spec 9) joined by spaces."""
    unstructured = request.get("remittanceInformationUnstructured")
    if isinstance(unstructured, str) and unstructured:
        return unstructured
    items = list(request.get("remittanceInformationStructuredArray") or ())
    single = request.get("remittanceInformationStructured")
    if isinstance(single, dict):
        items.append(single)
    references = [str(item.get("reference", "")) for item in items if isinstance(item, dict)]
    return " ".join(reference for reference in references if reference)[:140]


def _debtor_sandbox_account(store: Store, payment: Payment) -> sandbox_data.Account | None:
    debtor = payment.debtor_account
    if isinstance(debtor.get("bban"), str):
        found = sandbox_data.account_by_bban(store, debtor["bban"])
        if found is not None:
            return found
    if isinstance(debtor.get("iban"), str):
        return sandbox_data.account_by_iban(store, debtor["iban"])
    return None


def book(store: Store, payment: Payment, day: str) -> str | None:
    """Book a settled payment on its sandbox debtor account; the transaction id (None when the
    debtor account is not a sandbox account, e.g. a card account reference)."""
    account = _debtor_sandbox_account(store, payment)
    if account is None:
        return None
    owner = store.get(sandbox_data.CUSTOMERS, account.customer_id)
    request = payment.request
    creditor = request.get("creditorAccount") or {}
    domestic = payment.product != NCBCT
    data = {
        "amount": sandbox_amount(payment.amount),
        "currency": payment.currency,
        "valueDate": day,
        "bookingDate": day,
        "remittanceInformationUnstructured": remittance_text(request),
        "creditorName": str(request.get("creditorName", "")),
        "creditorAccount": {
            "iban": str(creditor.get("iban", "")),
            "bban": str(creditor.get("bban", "")),
        },
        "debtorName": owner.name if owner is not None else "",
        "debtorAccount": {"iban": account.iban, "bban": account.bban},
        "bankTransactionCode": BANK_TRANSACTION_CODES["domestic" if domestic else "cross-border"],
        "ultimateDebtor": str(request.get("ultimateDebtor", "")),
        "ultimateCreditor": "",
        "purposeCode": str(request.get("purposeCode", "OTHR")),
        "creditorId": "",
        "endToEndId": payment.id.replace("-", "")[:35],
        "paymentId": payment.id,
    }
    transaction = sandbox_data.AccountTransaction(
        id=str(uuid.uuid4()), account_id=account.id, booking_date=day, data=data
    )
    sandbox_data.add_account_transaction(store, transaction)
    store.put(PAYMENTS, replace(payment, transaction_id=transaction.id))
    return transaction.id
