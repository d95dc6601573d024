"""The states a bank prepared for the run (the profile's ``[prepared]``), as set-up data.

Some rules the spec states are about states only time or the bank's backend bring about: a
payment in PDNG (spec 7 rule 6), a consent older than 90 days or whose SCA is older than 180 days
(spec 8), a consent on an account since closed (spec 7 rule 8), a basket whose payment changed
state (spec 2.4). The reference server reaches them through its controls; at a bank the profile
names the ones the bank prepared. Each function here returns such a state, or raises
:class:`NotApplicable` with ``supply`` (the profile keys that would let the rule be judged), so the
reports list the scenario as not judged here; a prepared state that is not what the profile says
(the payment is no longer PDNG) is not judged either, with that reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.bankside.setup_data.records import PRODUCT_OF_OPERATION, Consent, Payment
from conformance.checks import NotApplicable, json_document
from conformance.profile import PRODUCT_OPERATIONS

if TYPE_CHECKING:
    from conformance.bankside.setup_data.payments import DataFactory

__all__ = [
    "AGED_CONSENT_SUPPLY",
    "CHANGED_BASKET_SUPPLY",
    "CLOSED_ACCOUNT_SUPPLY",
    "PENDING_PAYMENT_SUPPLY",
    "RENEWAL_DUE_SUPPLY",
    "aged_consent",
    "changed_basket",
    "closed_account",
    "pending_payment",
    "renewal_due_consent",
]

#: What the profile could supply, per prepared state (the reports' "not judged here" block).
PENDING_PAYMENT_SUPPLY = (
    "[prepared] pending_payment_id (a payment in PDNG), or [hooks] batch (the run then brings "
    "an authorised future-dated payment there)"
)
AGED_CONSENT_SUPPLY = "[prepared] aged_consent_id (a consent authorised more than 90 days ago)"
RENEWAL_DUE_SUPPLY = (
    "[prepared] renewal_due_consent_id (a consent whose SCA is more than 180 days old), with "
    "renewal_due_account_id and renewal_due_transaction_id for AT and E8"
)
CLOSED_ACCOUNT_SUPPLY = (
    "[prepared] closed_account_consent_id and closed_account_id (a consent on an account since "
    "closed)"
)
CHANGED_BASKET_SUPPLY = (
    "the basket status read BS (GET /v1/signing-baskets/{basketId}/status, or the bank's path "
    "as [paths] BS) among the operations it offers; the run then changes a basket's payment "
    "itself, or reads the basket [prepared] changed_basket_id names (one whose payment the bank "
    "rejected or cancelled)"
)


def pending_payment(data: DataFactory) -> Payment:
    """The prepared payment in PDNG, checked to read PDNG (PS) before it is used."""
    prepared = data.profile.prepared
    if prepared.pending_payment_id is None:
        raise NotApplicable(
            "the scenario needs a payment in status PDNG, which the run cannot bring about here "
            "(no reference server controls, no batch hook) and the profile names none",
            supply=PENDING_PAYMENT_SUPPLY,
        )
    op_id = PRODUCT_OPERATIONS[prepared.pending_payment_product]
    payment = Payment(
        payment_id=prepared.pending_payment_id,
        operation=op_id,
        product=PRODUCT_OF_OPERATION[op_id],
        psu=data.psu("PRIVATE"),
        status="PDNG",
    )
    status = data.payment_status(payment)
    reached = (
        (json_document(status) or {}).get("transactionStatus") if status.status == 200 else None
    )
    if reached != "PDNG":
        found = f"reads {reached}" if reached else f"is answered HTTP {status.status}"
        raise NotApplicable(
            f"the prepared payment {payment.payment_id} ([prepared] pending_payment_id) {found}, "
            "not PDNG: the bank is to prepare another",
            supply=PENDING_PAYMENT_SUPPLY,
        )
    return payment


def aged_consent(data: DataFactory) -> Consent:
    """The prepared consent older than 90 days, with an account and a booked transaction read
    through it (AL, AT: its SCA is younger than 180 days, so both serve it)."""
    consent_id = data.profile.prepared.aged_consent_id
    if consent_id is None:
        raise NotApplicable(
            "the scenario needs a consent more than 90 days old, which only the reference "
            "server's controls can age and the profile names none",
            supply=AGED_CONSENT_SUPPLY,
        )
    consent = data.first_transaction(data.known_consent(consent_id, data.psu("PRIVATE")))
    if consent.account_id is None or consent.transaction_id is None:
        raise NotApplicable(
            f"the prepared consent {consent_id} ([prepared] aged_consent_id) shows no account "
            "with a booked transaction to read (AL, AT)",
            supply=AGED_CONSENT_SUPPLY,
        )
    return consent


def renewal_due_consent(data: DataFactory, operation: str) -> Consent:
    """The prepared consent whose SCA is more than 180 days old, with the account (AT, E8) and
    the transaction (E8) the profile names for it."""
    prepared = data.profile.prepared
    consent_id = prepared.renewal_due_consent_id
    needs_account = operation in ("AT", "E8")
    needs_transaction = operation == "E8"
    if (
        consent_id is None
        or (needs_account and prepared.renewal_due_account_id is None)
        or (needs_transaction and prepared.renewal_due_transaction_id is None)
    ):
        raise NotApplicable(
            "the scenario needs a consent whose SCA is more than 180 days old"
            + (" and its account" if needs_account else "")
            + (" and a transaction" if needs_transaction else "")
            + ", which only the reference server's controls can age and the profile does not "
            "name",
            supply=RENEWAL_DUE_SUPPLY,
        )
    return data.known_consent(
        consent_id,
        data.psu("PRIVATE"),
        prepared.renewal_due_account_id,
        prepared.renewal_due_transaction_id,
    )


def closed_account(data: DataFactory) -> tuple[Consent, str]:
    """The prepared consent (the private PSU's) and the account of it that was closed since."""
    prepared = data.profile.prepared
    if prepared.closed_account_consent_id is None or prepared.closed_account_id is None:
        raise NotApplicable(
            "the scenario needs a consent on an account that no longer exists, which only the "
            "reference server's controls can delete and the profile names none",
            supply=CLOSED_ACCOUNT_SUPPLY,
        )
    consent = data.known_consent(prepared.closed_account_consent_id, data.psu("PRIVATE"))
    return consent, prepared.closed_account_id


def changed_basket(data: DataFactory) -> tuple[str, list[Payment]] | None:
    """The prepared basket whose payment changed state, with its payments (NDCT, the private
    PSU's), or None when the profile names none. It serves the scenario of the change its
    payment went through (RJCT: rejected, CANC: cancelled); the other changes a basket of its
    own."""
    prepared = data.profile.prepared
    if prepared.changed_basket_id is None:
        return None
    psu = data.psu("PRIVATE")
    payments = [
        Payment(payment_id, "E16", PRODUCT_OF_OPERATION["E16"], psu, "")
        for payment_id in prepared.changed_basket_payment_ids
    ]
    return prepared.changed_basket_id, payments
