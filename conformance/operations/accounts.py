"""Account information and its consents (spec 4.3, spec 8; consents assumed NextGenPSD2;
contract families ``accounts`` and ``consents``): the parts of AL, AT, E8, CC, CS, CA, CG and CD,
and the typed requests the runners build of them.

Base request variants: ``""`` and, for CC, ``minimal`` (only the required members),
``complete`` and ``detailed-consent``. A consent body is the one of the bank's consent model
(``[consent] model``), except ``detailed-consent``: the base of the scenarios that break a member
of a named account reference, which only a detailed consent has.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import OperationRequest
from conformance.checks import NotApplicable
from conformance.generate import factories
from conformance.operations.minimal import Keep, variant_body
from conformance.operations.parts import NO_BODY, BuildContext, OperationParts

if TYPE_CHECKING:
    from conformance.bankside.request import Psu, Target
    from conformance.bankside.setup_data import Consent

__all__ = [
    "FAMILIES",
    "OPERATIONS",
    "account_list_request",
    "consent_authorisation_request",
    "consent_delete_request",
    "consent_read_request",
    "consented_transactions_request",
    "large_account_consent",
    "transaction_details_request",
]

#: The contract families this module holds.
FAMILIES = ("accounts", "consents")

#: Optional members a ``minimal`` consent keeps: an account reference without iban or bban names
#: nothing.
_CC_KEEP: Keep = (
    ("access",),
    ("access", "accounts"),
    ("access", "accounts", "iban"),
    ("access", "allPsd2"),
)
#: The base of the CC scenarios that break a member of a named account reference.
DETAILED_CONSENT = "detailed-consent"


# --- typed requests -----------------------------------------------------------------------------


def account_list_request(ctx: Target, consent: Consent) -> OperationRequest:
    """AL: the accounts ``consent`` gives access to, for its PSU (with its Consent-ID, or the
    TPP-Session-ID of a consent given at the first access)."""
    return OperationRequest.build(ctx, "AL", psu=consent.psu, headers=consent.access_headers)


def consented_transactions_request(ctx: Target, consent: Consent, **query: Any) -> OperationRequest:
    """AT for the consent's account, booked transactions, with the headers naming the consent
    (and ``query``)."""
    return OperationRequest.build(
        ctx,
        "AT",
        psu=consent.psu,
        path_values={"id": consent.account_id or ""},
        query={"bookingStatus": "booked", **query},
        headers=consent.access_headers,
    )


def transaction_details_request(ctx: Target, consent: Consent) -> OperationRequest:
    """E8: the consent's transaction on its account, the consent named as AL and AT name it
    (``Consent.access_headers``: its Consent-ID, or its TPP session for a consent given at the
    first access)."""
    return OperationRequest.build(
        ctx,
        "E8",
        psu=consent.psu,
        path_values={"id": consent.account_id or "", "transactionId": consent.transaction_id or ""},
        headers=consent.access_headers,
    )


def large_account_consent(ctx: BuildContext, transactions: int) -> Consent:
    """The worker's account with ``transactions`` booked transactions (more than a page: spec 8's
    page size is 200) and a consent on it, through the sandbox; shared per worker, since the
    scenarios using it only read it."""

    def make() -> Consent:
        seed = ctx.data.seed_for("large-account")
        account = ctx.data.new_account(seed, transactions=transactions)
        return ctx.data.new_consent(seed, account)

    return ctx.data.shared("large-account-consent", make)


def consent_authorisation_request(ctx: Target, psu: Psu, consent_id: str) -> OperationRequest:
    """CA: start the authorisation of the consent ``consent_id``."""
    return OperationRequest.build(ctx, "CA", psu=psu, path_values={"consentId": consent_id})


def consent_read_request(ctx: Target, psu: Psu, consent_id: str) -> OperationRequest:
    """CG: the consent ``consent_id`` (its access, status and validity)."""
    return OperationRequest.build(ctx, "CG", psu=psu, path_values={"consentId": consent_id})


def consent_delete_request(ctx: Target, psu: Psu, consent_id: str) -> OperationRequest:
    """CD: the TPP ends the consent ``consent_id`` (it then reads terminatedByTpp)."""
    return OperationRequest.build(ctx, "CD", psu=psu, path_values={"consentId": consent_id})


# --- builders -----------------------------------------------------------------------------------


def _transaction_details(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    """E8 for a transaction from the consented account list; with PSU-IP-Address, so the call
    does not count against the daily limit of spec 8."""
    consent = ctx.data.consent()
    if consent.account_id is None or consent.transaction_id is None:
        raise NotApplicable("the consented account shows no booked transaction to read (AT)")
    return transaction_details_request(ctx, consent)


def _account_list(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    return account_list_request(ctx, ctx.data.consent())


def _account_transactions(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    consent = ctx.data.consent()
    if consent.account_id is None:
        raise NotApplicable("the consent gives access to no account (AL)")
    return consented_transactions_request(ctx, consent)


def _consent_create(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    account = ctx.data.account()
    model = "detailed" if variant == DETAILED_CONSENT else ctx.profile.consent.model
    body = factories.consent_request(seed, [account.iban], model=model)
    return OperationRequest.build(
        ctx, "CC", psu=account.owner.psu, body=variant_body(ctx, "CC", variant, body, _CC_KEEP)
    )


def _consent_status(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    consent = ctx.data.consent()
    return OperationRequest.build(
        ctx, "CS", psu=consent.psu, path_values={"consentId": consent.consent_id}
    )


def _consent_authorisation(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    """CA for a fresh consent that has not been authorised yet."""
    consent_id, psu = ctx.data.own_recent(
        seed, "consent", lambda made: ctx.data.new_consent_request(made, ctx.data.account())
    )
    return consent_authorisation_request(ctx, psu, consent_id)


def _consent_read(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    consent = ctx.data.consent()
    return consent_read_request(ctx, consent.psu, consent.consent_id)


def _consent_delete(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    """CD for a fresh consent of its own (never the worker's shared one, which others use)."""
    consent_id, psu = ctx.data.own_recent(
        seed, "consent", lambda made: ctx.data.new_consent_request(made, ctx.data.account())
    )
    return consent_delete_request(ctx, psu, consent_id)


#: The parts of each operation of the family (immutable).
OPERATIONS: Mapping[str, OperationParts] = MappingProxyType(
    {
        "AL": OperationParts(_account_list, NO_BODY),
        "AT": OperationParts(_account_transactions, NO_BODY),
        "E8": OperationParts(_transaction_details, NO_BODY),
        "CC": OperationParts(
            _consent_create,
            lambda inputs: factories.consent_request(inputs.seed, [inputs.account["iban"]]),
            created_id="consentId",
        ),
        "CS": OperationParts(_consent_status, NO_BODY),
        "CA": OperationParts(_consent_authorisation, NO_BODY),
        "CG": OperationParts(_consent_read, NO_BODY),
        "CD": OperationParts(_consent_delete, NO_BODY),
    }
)
