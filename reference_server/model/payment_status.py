"""How payment and basket statuses move (spec 2.4, spec 3) — the rules in one place.

Payment statuses (spec 3 lists them, "transitions: not shown"; the moves are choices recorded in
``assumptions.md``)::

    RCVD --SCA finalised--> ACTC --batch--> ACSP --batch--> ACSC (booked on the debtor account)
                             |                ^
                             +--batch--> PDNG-+ (requestedExecutionDate still ahead; the batch
                                                 of that date moves it on)
    RCVD --SCA failed or cancelled by the PSU--> RJCT
    RCVD, ACTC --PC--> CANC                     (PDNG refuses, spec 7 rule 6)
    ACTC --PC--> ACTC, cancellation requested --PCA, SCA approved--> CANC
                                                (where the bank asks a cancellation of an
                                                 authorised payment to be authorised; the batch
                                                 holds such a payment back meanwhile)

Periodic payments stop at ACTC: the batch does not advance them (spec 3). One batch run moves a
payment one step, so the suite can stop at every status.

The basket status is computed on every read from its payments (spec 2.4: "the worst case among
all payments in the basket"), never stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import date, datetime

from conformance.contract.facts import basket_worst_status
from reference_server.model.payment_data import PAYMENTS, Payment, Status
from reference_server.model.store import Store

__all__ = [
    "basket_status",
    "batch_step",
    "move",
]


def basket_status(payment_statuses: Iterable[str], *, best_case: bool = False) -> str:
    """The basket ``transactionStatus`` for its payments' statuses (spec 2.4): the worst case
    (``conformance.contract.facts.basket_worst_status``; a basket of no payments reads RCVD).
    ``best_case`` is the ``basket-best-case`` fault: the best payment decides, ACTC before RCVD
    before RJCT."""
    statuses = tuple(payment_statuses)
    if best_case and statuses:
        alone = {basket_worst_status((status,)) for status in statuses}
        for candidate in ("ACTC", "RCVD", "RJCT"):
            if candidate in alone:
                return candidate
    return basket_worst_status(statuses)


def move(store: Store, payment: Payment, status: str, moment: datetime) -> Payment:
    """Store ``payment`` with its new ``status`` (and when it changed)."""
    updated = replace(payment, status=status, status_changed_at=moment.isoformat())
    store.put(PAYMENTS, updated)
    return updated


def batch_step(payment: Payment, run_day: date, *, periodic: bool = False) -> str | None:
    """The status one batch run on ``run_day`` gives ``payment``, or None if it stays.

    ACTC goes to PDNG while its requested execution date lies after the run's day, else to ACSP;
    PDNG goes to ACSP on or after that date; ACSP goes to ACSC. Periodic payments stay (spec 3),
    unless ``periodic`` (the fault ``batch-advances-periodic``) moves them like the others, and
    so does a payment whose cancellation waits for its SCA (PCA): the bank holds it back until
    the PSU decides.
    """
    if (payment.periodic and not periodic) or payment.cancellation_requested:
        return None
    due = payment.execution_date
    if payment.status == Status.ACTC:
        return Status.PDNG if due is not None and due > run_day else Status.ACSP
    if payment.status == Status.PDNG:
        return Status.ACSP if due is None or due <= run_day else None
    if payment.status == Status.ACSP:
        return Status.ACSC
    return None
