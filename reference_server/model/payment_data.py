"""Typed records of the payment side: payments, signing baskets, authorisations, consents.

Each record is a frozen dataclass stored through :mod:`reference_server.model.store` (one
``Table`` per kind, kinds prefixed ``payments.``). The records hold what the server needs to
answer later requests and to move statuses (spec 3): a payment keeps the request body it was
created with, so that a logical duplicate (spec 4.3 E16 ``allowLogicalDuplicate``) can be
recognised and a booked payment can become a sandbox account transaction (spec 4.3 E3).

The status vocabularies are spec 2.4–2.6 and spec 3; which moves happen when is a choice listed in
``assumptions.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

from reference_server.model.records import DocRecord
from reference_server.model.store import Store, Table

__all__ = [
    "AUTHORISATIONS",
    "BASKETS",
    "BATCH_STATE",
    "CONSENTS",
    "NCBCT",
    "NDCT",
    "PAYMENTS",
    "Authorisation",
    "Basket",
    "BatchState",
    "Consent",
    "ConsentStatus",
    "Payment",
    "PaymentKind",
    "ScaStatus",
    "Status",
    "SubjectKind",
    "payments_of_basket",
]

#: Payment product identifiers (spec 4.1; the NCBCT one is assumed, see ``operations/E18.json``).
NDCT = "norwegian-domestic-credit-transfers"
NCBCT = "norwegian-cross-border-credit-transfers"


class PaymentKind:
    """What was created: a single payment (E16 NDCT, E18 NCBCT) or a periodic one (E17)."""

    SINGLE = "single"
    PERIODIC = "periodic"


class Status:
    """Payment ``transactionStatus`` values the server uses (spec 2.6, spec 3)."""

    RCVD = "RCVD"  # received, not yet authorised
    ACTC = "ACTC"  # SCA finalised, technically accepted
    PDNG = "PDNG"  # waiting for its requested execution date (a batch run put it there)
    ACSP = "ACSP"  # in settlement (one batch run after ACTC or PDNG)
    ACSC = "ACSC"  # settled and booked on the debtor account (one batch run after ACSP)
    RJCT = "RJCT"  # SCA failed or cancelled by the PSU
    CANC = "CANC"  # cancelled by the TPP (PC)

    #: Statuses a payment can be cancelled from (spec 7 rule 6: not PDNG).
    CANCELLABLE = frozenset({RCVD, ACTC})
    #: Cancellable statuses of an authorised payment: its cancellation needs SCA where the bank
    #: asks for it (``[cancellation] sca``).
    AUTHORISED = frozenset({ACTC})


class ScaStatus:
    """Authorisation ``scaStatus`` values the server uses (spec 2.5, spec 3)."""

    RECEIVED = "RECEIVED"  # started for a PSU the sandbox does not know: identify first
    STARTED = "STARTED"  # spec 3: starting the basket authorisation returns STARTED
    FINALISED = "FINALISED"
    FAILED = "FAILED"

    OPEN = frozenset({RECEIVED, STARTED})


class ConsentStatus:
    """Consent ``consentStatus`` values the server uses (NextGenPSD2, ``common.json``)."""

    RECEIVED = "received"
    VALID = "valid"
    REJECTED = "rejected"
    EXPIRED = "expired"
    #: Deleted by the TPP (CD): gives access to nothing.
    TERMINATED = "terminatedByTpp"


@dataclass(frozen=True)
class Payment(DocRecord):
    """A payment created with E16, E17 or E18.

    ``product`` is the product of the path the payment is reached under (PS, PC, PA): NDCT for
    NDCT and periodic payments, NCBCT for NCBCT (``operations/PS.json``). ``request`` is the body
    as sent. ``psu_key`` identifies the PSU who created it (PSU-ID, else X-PSU-IDENTITY).
    """

    id: str
    product: str
    kind: str
    request: Mapping[str, Any]
    status: str
    psu_key: str | None
    customer_id: str | None
    created_at: str
    status_changed_at: str
    basket_id: str | None = None
    transaction_id: str | None = None  # the sandbox account transaction booked at ACSC
    #: What a logical duplicate shares (``resources.payments.duplicate_key``); single payments
    #: only, and None on payments stored before the key existed.
    duplicate_key: str | None = None
    #: The TPP that created it (``ownership.tpp_of``); None: stored before owners were kept.
    tpp_id: str | None = None
    #: PC asked to cancel it while it was authorised, and the bank wants that cancellation
    #: authorised (PCA, then SCA) before the payment is cancelled.
    cancellation_requested: bool = False

    @property
    def parent_id(self) -> str | None:
        return self.basket_id

    @property
    def periodic(self) -> bool:
        return self.kind == PaymentKind.PERIODIC

    @property
    def amount(self) -> Decimal:
        return Decimal(str(self.request["instructedAmount"]["amount"]))

    @property
    def currency(self) -> str:
        return str(self.request["instructedAmount"]["currency"])

    @property
    def execution_date(self) -> date | None:
        """``requestedExecutionDate`` of a single payment, ``startDate`` of a periodic one."""
        key = "startDate" if self.periodic else "requestedExecutionDate"
        value = self.request.get(key)
        return date.fromisoformat(value) if isinstance(value, str) else None

    @property
    def debtor_account(self) -> Mapping[str, Any]:
        account = self.request.get("debtorAccount")
        return account if isinstance(account, Mapping) else {}


@dataclass(frozen=True)
class Basket(DocRecord):
    """A signing basket (E1): the payments it groups, in the order given."""

    id: str
    payment_ids: tuple[str, ...]
    psu_key: str | None
    created_at: str
    tpp_id: str | None = None

    @property
    def parent_id(self) -> str | None:
        return None


class SubjectKind:
    """What an authorisation authorises."""

    BASKET = "basket"
    PAYMENT = "payment"
    CONSENT = "consent"
    #: The cancellation of an authorised payment (PCA): approved, the payment is cancelled.
    CANCELLATION = "cancellation"


@dataclass(frozen=True)
class Authorisation(DocRecord):
    """One SCA by redirect (spec 5 item 6) for a basket (E2), a payment (PA, or implicitly at
    creation) or a consent (CA). ``customer_id`` is the sandbox customer expected at the SCA page
    (None: the PSU was not known and identifies there). ``redirect_uri`` is the TPP-Redirect-URI
    the flow returns to, ``nok_redirect_uri`` the TPP-Nok-Redirect-URI a failed one returns to."""

    id: str
    subject_kind: str
    subject_id: str
    status: str
    psu_key: str | None
    customer_id: str | None
    redirect_uri: str | None
    created_at: str
    updated_at: str
    #: TPP-Nok-Redirect-URI, where a failed SCA returns when the TPP asked (None: it returns to
    #: ``redirect_uri``).
    nok_redirect_uri: str | None = None

    @property
    def parent_id(self) -> str | None:
        return self.subject_id


@dataclass(frozen=True)
class Consent(DocRecord):
    """An account-information consent (CC; spec 8 presupposes it, NextGenPSD2 shape assumed).

    ``account_ids`` are the sandbox accounts it covers, fixed when the PSU authorises it (the
    accounts offered for consent, spec 4.3 E6, that the request names). ``authorised_at`` is the
    moment of the SCA: spec 8's consent age and SCA renewal count from it.
    """

    id: str
    psu_key: str | None
    customer_id: str | None
    access: Mapping[str, Any]
    valid_until: str
    recurring: bool
    frequency_per_day: int
    status: str
    created_at: str
    authorised_at: str | None = None
    account_ids: tuple[str, ...] = field(default=())
    tpp_id: str | None = None
    #: The TPP-Session-ID it is bound to: a consent given at the session's first account access
    #: (a played bank's ``[consent] model = "first-access"``); None for a consent created (CC).
    session_id: str | None = None

    @property
    def parent_id(self) -> str | None:
        return self.customer_id


@dataclass(frozen=True)
class BatchState(DocRecord):
    """When the simulated batch (spec 3) last caught up with the clock; one record, id ``batch``."""

    last_run: str
    id: str = "batch"

    @property
    def parent_id(self) -> str | None:
        return None

    def to_doc(self) -> dict[str, Any]:
        """Explicit: the stored document puts ``id`` first, unlike the field order."""
        return {"id": self.id, "lastRun": self.last_run}


PAYMENTS: Table[Payment] = Table("payments.payment", Payment)
BASKETS: Table[Basket] = Table("payments.basket", Basket)
AUTHORISATIONS: Table[Authorisation] = Table("payments.authorisation", Authorisation)
CONSENTS: Table[Consent] = Table("payments.consent", Consent)
BATCH_STATE: Table[BatchState] = Table("payments.batch-state", BatchState)


def payments_of_basket(store: Store, basket: Basket) -> list[Payment]:
    """The basket's payments in the basket's order (a payment deleted meanwhile is left out)."""
    found = (store.get(PAYMENTS, payment_id) for payment_id in basket.payment_ids)
    return [payment for payment in found if payment is not None]
