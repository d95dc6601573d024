"""The parts of a target profile that are tables of their own: the PSUs of the test environment
(spec 5 items 5 and 7), existing production data (spec 4.3 E8), how SCA is completed (spec 5
item 6), the states a bank prepared for a run (``[prepared]``) and the commands it runs for the
suite (``[hooks]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

__all__ = [
    "AGREEMENT_OWNERS",
    "SCA_APPROACHES",
    "SCA_MODES",
    "SCA_STARTS",
    "AgreementOwner",
    "CorporatePsu",
    "Hooks",
    "PaymentAccounts",
    "PreparedStates",
    "PrivatePsu",
    "ProductionData",
    "ScaApproach",
    "ScaMode",
    "ScaSettings",
    "ScaStart",
]

#: How the SCA redirect of spec 5 item 6 is completed (see ``conformance.bankside.sca``).
ScaMode = Literal["reference", "manual", "command"]
SCA_MODES: tuple[ScaMode, ...] = get_args(ScaMode)
#: Where a single payment's SCA starts: the authorisation operation (PA, which the spec only
#: implies), or the payment creation's own answer (spec 5 item 6: "the 401 answer carries
#: ``_links.scaRedirect``").
#: ``psu-context``: the creation starts it when PSU-Context asks for single-SCA initiation
#: (spec 4.2), so the suite sends PSU-Context on every payment it creates.
ScaStart = Literal["authorisation", "creation", "psu-context"]
SCA_STARTS: tuple[ScaStart, ...] = get_args(ScaStart)
#: How the PSU authenticates: sent to ``scaRedirect`` (spec 5 item 6), or in the bank's app while
#: the TPP polls ``scaStatus`` (decoupled, as BankID often is; not what spec 5 item 6 states), or
#: to the bank's OAuth 2.0 authorisation server that ``_links.scaOAuth`` describes (the TPP then
#: exchanges the code for a token; Berlin Group's OAuth SCA approach, not spec 5 item 6 either).
ScaApproach = Literal["redirect", "decoupled", "oauth"]
SCA_APPROACHES: tuple[ScaApproach, ...] = get_args(ScaApproach)
#: Which identifier of a customer a sandbox agreement's ``owner`` names (``[setup]
#: agreement_owner``; spec 2.9 leaves its form open).
AgreementOwner = Literal["customerId", "customerNumber"]
AGREEMENT_OWNERS: tuple[AgreementOwner, ...] = get_args(AgreementOwner)


@dataclass(frozen=True)
class PrivatePsu:
    """A private PSU of the target's test environment (spec 5 items 5 and 7)."""

    psu_id: str | None = None
    national_id: str | None = None
    customer_number: str | None = None


@dataclass(frozen=True)
class CorporatePsu:
    """A corporate PSU: spec 5 item 5 ("corporate users also pass PSU-Corporate-ID")."""

    psu_id: str | None = None
    corporate_id: str | None = None
    customer_number: str | None = None


@dataclass(frozen=True)
class ProductionData:
    """Existing production resources for targets without a sandbox to create them (spec 4.3 E8).

    ``transaction_ids`` are transactions of the first of ``account_ids``, as taken from the
    account transactions list (spec 4.3 E8: "taken from the list result").
    """

    consent_id: str | None = None
    account_ids: tuple[str, ...] = ()
    transaction_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class PaymentAccounts:
    """``[payments]``: the accounts payments use where the run cannot create its own (a target
    without the sandbox): the PSU's debtor account and a domestic creditor (Norwegian BBANs,
    spec 2.7 ``debtorAccount``/``creditorAccount``)."""

    debtor_bban: str | None = None
    creditor_bban: str | None = None


@dataclass(frozen=True)
class ScaSettings:
    """How SCA goes at this bank and how the suite gets past it (spec 5 item 6).

    ``mode`` is who acts as the PSU (``command`` gets the link); ``start`` where a single
    payment's SCA starts; ``approach`` redirect or decoupled, where the suite polls the
    ``scaStatus`` link every ``poll_interval`` seconds until FINALISED or FAILED, at most
    ``poll_timeout`` seconds.
    """

    mode: ScaMode = "reference"
    command: str | None = None
    start: ScaStart = "authorisation"
    approach: ScaApproach = "redirect"
    poll_interval: float = 2.0
    poll_timeout: float = 120.0

    @property
    def decoupled(self) -> bool:
        return self.approach == "decoupled"

    @property
    def oauth(self) -> bool:
        """The PSU authorises at the bank's OAuth server (``_links.scaOAuth``)."""
        return self.approach == "oauth"

    @property
    def starts_at_creation(self) -> bool:
        """The payment creation's answer carries the SCA link (asked for, or always)."""
        return self.start in ("creation", "psu-context")


@dataclass(frozen=True)
class PreparedStates:
    """``[prepared]``: states the bank prepared for the run, which only time or the bank's
    backend bring about, so that the rules stated for them are judged off the reference server
    (whose controls reach them there; docs/reference/profile.md gives each key its spec sentence).

    - ``pending_payment_id`` (product ``pending_payment_product``, ``ndct`` or ``ncbct``): a
      single payment of the private PSU in status PDNG (spec 7 rule 6);
    - ``aged_consent_id``: a valid consent of the private PSU authorised more than 90 days and
      less than 180 days ago, whose accounts no newer consent covers (spec 8, E8);
    - ``renewal_due_consent_id``: a consent whose SCA is more than 180 days old (spec 8), with
      ``renewal_due_account_id`` and ``renewal_due_transaction_id`` for AT and E8;
    - ``closed_account_consent_id``, ``closed_account_id``: a consent on an account since closed
      (spec 7 rule 8);
    - ``changed_basket_id``, ``changed_basket_payment_ids``: a signing basket of the private
      PSU one of whose payments the bank rejected or cancelled after the basket was made, read
      with the basket status operation (BS) instead of a basket the run changes itself
      (spec 2.4). The key ``basket_status_path`` of this table is read as ``[paths] BS``.
    """

    pending_payment_id: str | None = None
    pending_payment_product: str = "ndct"
    aged_consent_id: str | None = None
    renewal_due_consent_id: str | None = None
    renewal_due_account_id: str | None = None
    renewal_due_transaction_id: str | None = None
    closed_account_consent_id: str | None = None
    closed_account_id: str | None = None
    changed_basket_id: str | None = None
    changed_basket_payment_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hooks:
    """``[hooks]``: commands the suite runs at the bank's side.

    ``batch``: triggers the bank's batch processing run, or waits until one has run (spec 3:
    "a simulated batch processing run five times a day"), and exits 0 when it has; it is given
    ``batch_timeout`` seconds (the deadline) and the target's URL in ``CONFORMANCE_TARGET``.
    """

    batch: tuple[str, ...] = ()
    batch_timeout: float = 600.0
