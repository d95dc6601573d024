"""What set-up creates: customers, accounts, card accounts, engagements, consents, payments,
baskets (frozen records), and the payment product of each creating operation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from conformance.bankside.request import Psu
from conformance.profile import PAYMENT_SERVICE, PERIODIC_SERVICE

if TYPE_CHECKING:
    from conformance.exchange import Exchange

CustomerType = Literal["PRIVATE", "CORPORATE"]

#: The header a consent given at the first account access is bound by (spec 4.2: "TPP session
#: identifier").
SESSION_HEADER = "TPP-Session-ID"
#: The status of a TPP session's first account access at such a bank (spec 5 item 6: "the 401
#: answer carries `_links.scaRedirect`").
FIRST_ACCESS_STATUS = 401

#: The payment product of the paths of PS, PC and PA, per creating operation (operations/PS.json:
#: a periodic payment is reached under the NDCT product).
NDCT_PRODUCT = "norwegian-domestic-credit-transfers"
PRODUCT_OF_OPERATION: Mapping[str, str] = MappingProxyType(
    {
        "E16": NDCT_PRODUCT,
        "E17": NDCT_PRODUCT,
        "E18": "norwegian-cross-border-credit-transfers",
    }
)


# --- what is created ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Customer:
    """A sandbox customer (spec 2.9): its ``customer_id`` is its PSU-ID on the reference server,
    its ``customer_number`` the SCA identifier (spec 5 item 7)."""

    customer_id: str
    customer_number: str | None
    customer_type: str
    name: str = ""
    national_id: str | None = None
    corporate_id: str | None = None

    @property
    def psu(self) -> Psu:
        """The PSU headers of this customer (a corporate one with its PSU-Corporate-ID)."""
        return Psu(
            psu_id=self.customer_id,
            customer_number=self.customer_number,
            corporate_id=self.corporate_id,
            corporate=self.customer_type == "CORPORATE",
            national_id=self.national_id,
        )


@dataclass(frozen=True)
class Account:
    """A sandbox account and the ids of the transactions created on it (E7)."""

    id: str
    iban: str
    bban: str
    currency: str
    owner: Customer
    transaction_ids: tuple[str, ...] = ()
    document: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class CardAccount:
    """A sandbox card account with the card transactions created on it (E5)."""

    id: str
    masked_pan: str
    currency: str
    owner: Customer
    booked_ids: tuple[str, ...] = ()
    pending_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Agreement:
    """A corporate agreement (SAG) owned by ``owner``, with ``owner``'s ``account`` and the
    private ``member`` PSU an engagement (E6) may show it to: what one engagement needs."""

    agreement_id: str
    owner: Customer
    member: Customer
    account: Account


@dataclass(frozen=True)
class Engagement:
    """A corporate agreement (SAG) owned by ``owner`` with an engagement (E6) giving ``member``
    access to ``account`` (roles REGISTER and VIEW, spec 4.3 E6)."""

    agreement_id: str
    engagement_id: str
    owner: Customer
    member: Customer
    account: Account


@dataclass(frozen=True)
class Consent:
    """An account-information consent confirmed through SCA, and what it gives access to:
    ``account_id`` (an AL resourceId) and ``transaction_id`` (from AT, for E8).

    ``consent_id`` is how the bank knows the consent: its Consent-ID, or, for a bank whose
    consent is given at the first account access (``[consent] model = "first-access"``,
    ``bound_to_session``), the TPP-Session-ID of the session it is bound to.
    """

    consent_id: str
    psu: Psu
    account_id: str | None = None
    transaction_id: str | None = None
    sandbox_account: Account | None = None
    bound_to_session: bool = False

    @property
    def access_headers(self) -> dict[str, str]:
        """The headers that name the consent on AL, AT and E8: Consent-ID, or the TPP-Session-ID
        of the session it is bound to. Spec 4.2 shows E8's header set without Consent-ID and
        does not say how the consent is passed: a bank that finds it by the PSU and the account
        ignores the header, and one that wants it (NextGenPSD2's Consent-ID) gets it."""
        if self.bound_to_session:
            return {SESSION_HEADER: self.consent_id}
        return {"Consent-ID": self.consent_id}


@dataclass(frozen=True)
class Payment:
    """A payment created with E16, E17 or E18; ``product`` is the product of its PS/PC/PA path."""

    payment_id: str
    operation: str
    product: str
    psu: Psu
    status: str
    body: Mapping[str, Any] = field(default_factory=dict, compare=False)
    #: The link the SCA step takes from the creation answer (a bank that starts SCA there), and
    #: that answer.
    sca_link: str | None = None
    created: Exchange | None = field(default=None, compare=False)

    @property
    def path_values(self) -> dict[str, str]:
        """The path values of PS, PC and PA for this payment: its product and id, and its
        service, which picks the profile's periodic template (``[paths]``)."""
        return {
            "payment-product": self.product,
            "payment-id": self.payment_id,
            PAYMENT_SERVICE: PERIODIC_SERVICE if self.operation == "E17" else "payments",
        }


@dataclass(frozen=True)
class Basket:
    """A signing basket (E1) and the payments in it."""

    basket_id: str
    payment_ids: tuple[str, ...]
    psu: Psu
    status: str
