"""SCA by redirect (spec 5 items 6 and 7): starting an authorisation and what finishing it does.

An authorisation is started for a signing basket (E2), a single payment (PA, or implicitly at
creation when PSU-Context asks for single-SCA initiation, spec 4.2) or a consent (CA). The PSU is
sent to ``/sca/{authorisationId}`` (the ``scaRedirect`` link), identifies there with the sandbox
customer's ``customerNumber`` (spec 5 item 7) and approves or cancels; the flow then returns to
the TPP-Redirect-URI given when the authorisation started (a cancelled one to the
TPP-Nok-Redirect-URI, when the TPP gave one, with ``error=access_denied``).

Finishing moves everything the authorisation covers (spec 3): approved → the authorisation
FINALISED, its payments still RCVD become ACTC, a consent becomes valid, a payment whose
cancellation was authorised (PCA) becomes CANC; cancelled → FAILED, the payments still RCVD become
RJCT, a consent is rejected, a payment whose cancellation was not authorised stays as it was.
Payments that moved meanwhile (cancelled by the TPP, say) are left as they are.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from reference_server.api import ApiError, Call, Response
from reference_server.model import sandbox_data
from reference_server.model.payment_data import (
    AUTHORISATIONS,
    BASKETS,
    CONSENTS,
    PAYMENTS,
    Authorisation,
    Consent,
    ConsentStatus,
    Payment,
    ScaStatus,
    Status,
    SubjectKind,
    payments_of_basket,
)
from reference_server.model.payment_status import move
from reference_server.model.store import Store

if TYPE_CHECKING:
    from reference_server.api import ServerState

__all__ = [
    "OAUTH_METADATA",
    "SCA_PREFIX",
    "complete",
    "consent_accounts",
    "final_redirect",
    "oauth_redirect",
    "psu_key",
    "redirect_links",
    "sca_required_error",
    "sca_status_document",
    "start",
    "subject_payments",
    "unknown_psu_error",
]

#: Where the SCA pages live: outside ``/v1`` (reference-server only, unsigned).
SCA_PREFIX = "/sca"


def psu_key(call: Call) -> str | None:
    """Who the PSU is, as the request names it: PSU-ID, else X-PSU-IDENTITY (spec 5 item 5)."""
    return call.auth.psu_id or call.auth.psu_identity


def _link(href: str, *verbs: str) -> dict[str, Any]:
    return {"href": href, "verbs": list(verbs)}


def redirect_links(
    authorisation: Authorisation, *, decoupled: bool = False, oauth: bool = False
) -> dict[str, Any]:
    """``scaRedirect`` (the page, GET) and ``scaStatus`` (its status, GET). A bank with
    decoupled SCA (``--profile`` ``[sca] approach``) sends nobody to a page: only ``scaStatus``
    (the page stays, playing the bank's app). A bank with the OAuth SCA approach gives
    ``scaOAuth`` instead of ``scaRedirect``: its authorisation server's metadata (RFC 8414),
    whose authorisation endpoint is the same page."""
    page = f"{SCA_PREFIX}/{authorisation.id}"
    links = {"scaRedirect": _link(page, "GET"), "scaStatus": _link(f"{page}/status", "GET")}
    if decoupled or oauth:
        del links["scaRedirect"]
    if oauth:
        links["scaOAuth"] = _link(f"{page}/{OAUTH_METADATA}", "GET")
    return links


#: The last segment of an authorisation's OAuth server metadata (``scaOAuth``).
OAUTH_METADATA = "oauth-authorization-server"


def oauth_redirect(redirect_uri: str, **values: str) -> str:
    """``redirect_uri`` with the authorisation response's ``values`` (RFC 6749 4.1.2: ``code``
    and ``state``, or ``error`` and ``state``) added to its query."""
    parts = urlsplit(redirect_uri)
    extra = urlencode(values)
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def sca_status_document(
    authorisation: Authorisation,
    status: str | None = None,
    *,
    decoupled: bool = False,
    oauth: bool = False,
) -> dict[str, Any]:
    """The SCA status record (spec 2.5): ``scaStatus`` and ``_links`` with ``self`` (GET).

    The contract has no operation reading an authorisation, so ``self`` points at the
    reference-server route ``/sca/{authorisationId}/status`` (assumption).
    """
    links = redirect_links(authorisation, decoupled=decoupled, oauth=oauth)
    links["self"] = links["scaStatus"]
    return {
        "authorisationId": authorisation.id,
        "scaStatus": status or authorisation.status,
        "_links": links,
    }


def start(app: ServerState, call: Call, subject_kind: str, subject_id: str) -> Authorisation:
    """A new authorisation for the subject: STARTED when the PSU is a sandbox customer,
    RECEIVED when the PSU must first identify on the SCA page."""
    now = app.clock.now().isoformat()
    customer_id = call.auth.customer_id
    authorisation = Authorisation(
        id=str(uuid.uuid4()),
        subject_kind=subject_kind,
        subject_id=subject_id,
        status=ScaStatus.STARTED if customer_id is not None else ScaStatus.RECEIVED,
        psu_key=psu_key(call),
        customer_id=customer_id,
        redirect_uri=call.header("TPP-Redirect-URI"),
        nok_redirect_uri=call.header("TPP-Nok-Redirect-URI"),
        created_at=now,
        updated_at=now,
    )
    app.store.add(AUTHORISATIONS, authorisation)
    return authorisation


def started(app: ServerState, authorisation: Authorisation) -> Response:
    """The answer to an authorisation just started (PA, PCA, CA): 201 with its SCA status record
    (STARTED) and its ``Location``; 401 with ``scaRedirect`` when the PSU is not a sandbox
    customer (:func:`unknown_psu_error`), or always under the permissive ``sca-by-401``
    (spec 5 item 6's form, which E2's row shows and E2 "works like" the payment's flow)."""
    if authorisation.customer_id is None:
        raise unknown_psu_error(authorisation)
    if app.reads("sca-by-401"):  # spec 4.3 E2 "works like" the payment's: 401 allowed
        raise sca_required_error(authorisation)
    document = sca_status_document(
        authorisation, decoupled=app.bank.sca_decoupled, oauth=app.bank.sca_oauth
    )
    return Response.json(201, document, headers=(("Location", document["_links"]["self"]["href"]),))


def unknown_psu_error(authorisation: Authorisation) -> ApiError:
    """The 401 of spec 4.3 E2 / spec 5 item 6: the PSU is not known, authenticate first."""
    return ApiError(
        401,
        "PSU_CREDENTIALS_INVALID",
        "the PSU is not known to the sandbox: send the PSU to _links.scaRedirect to identify "
        "with the customerNumber and authorise (spec 5 items 6, 7)",
        links={"scaRedirect": redirect_links(authorisation)["scaRedirect"]},
    )


def sca_required_error(authorisation: Authorisation) -> ApiError:
    """The 401 of spec 5 item 6 for a known PSU (the permissive reading ``sca-by-401``): the
    authorisation started, the PSU goes to ``_links.scaRedirect``."""
    if authorisation.customer_id is None:
        return unknown_psu_error(authorisation)
    return ApiError(
        401,
        "PSU_CREDENTIALS_INVALID",
        "strong customer authentication by redirect is required: send the PSU to "
        "_links.scaRedirect (spec 5 item 6)",
        links={"scaRedirect": redirect_links(authorisation)["scaRedirect"]},
    )


def subject_payments(store: Store, authorisation: Authorisation) -> list[Payment]:
    """The payments an authorisation covers (none for a consent; a cancellation's, the payment
    it would cancel)."""
    if authorisation.subject_kind == SubjectKind.BASKET:
        basket = store.get(BASKETS, authorisation.subject_id)
        return payments_of_basket(store, basket) if basket is not None else []
    if authorisation.subject_kind in (SubjectKind.PAYMENT, SubjectKind.CANCELLATION):
        payment = store.get(PAYMENTS, authorisation.subject_id)
        return [payment] if payment is not None else []
    return []


def _matches(account: sandbox_data.Account, reference: Any) -> bool:
    if not isinstance(reference, dict):
        return False
    return reference.get("iban") == account.iban or reference.get("bban") == account.bban


def consent_accounts(
    store: Store, consent: Consent, customer_id: str
) -> list[sandbox_data.Account]:
    """The accounts a consent covers for a customer: the accounts offered to that customer for
    consent (spec 4.3 E6) that the consent's ``access`` names; all of them when it names none."""
    offered = sandbox_data.consentable_accounts(store, customer_id)
    references = [
        reference
        for key in ("accounts", "balances", "transactions")
        for reference in consent.access.get(key) or ()
    ]
    if not references:
        return offered
    return [account for account in offered if any(_matches(account, r) for r in references)]


def complete(
    app: ServerState,
    authorisation: Authorisation,
    *,
    approved: bool,
    customer: sandbox_data.Customer | None,
) -> Authorisation:
    """Finish an open authorisation: the PSU approved (identified as ``customer``) or cancelled.

    A consent approved by a customer to whom none of the named accounts is offered is rejected
    and its authorisation FAILED (nothing could be consented to).
    """
    store = app.store
    moment: datetime = app.clock.now()
    with store.atomic():
        status = ScaStatus.FINALISED if approved else ScaStatus.FAILED
        if authorisation.subject_kind == SubjectKind.CONSENT:
            status = _complete_consent(store, authorisation, approved, customer, moment)
        elif authorisation.subject_kind == SubjectKind.CANCELLATION:
            status = _complete_cancellation(store, authorisation, approved, moment)
        else:
            target = Status.ACTC if approved else Status.RJCT
            for payment in subject_payments(store, authorisation):
                if payment.status == Status.RCVD:
                    move(store, payment, target, moment)
        finished = replace(
            authorisation,
            status=status,
            customer_id=customer.id if customer is not None else authorisation.customer_id,
            updated_at=moment.isoformat(),
        )
        store.put(AUTHORISATIONS, finished)
    return finished


def _complete_cancellation(
    store: Store, authorisation: Authorisation, approved: bool, moment: datetime
) -> str:
    """A cancellation's SCA: approved, the payment still waiting for it becomes CANC; cancelled,
    the payment stays as it was (its cancellation may be authorised again)."""
    payment = store.get(PAYMENTS, authorisation.subject_id)
    if not approved:
        return ScaStatus.FAILED
    if payment is None or not payment.cancellation_requested:
        return ScaStatus.FAILED
    if payment.status in Status.AUTHORISED:
        move(store, replace(payment, cancellation_requested=False), Status.CANC, moment)
    return ScaStatus.FINALISED


def _complete_consent(
    store: Store,
    authorisation: Authorisation,
    approved: bool,
    customer: sandbox_data.Customer | None,
    moment: datetime,
) -> str:
    consent = store.get(CONSENTS, authorisation.subject_id)
    if consent is None or consent.status != ConsentStatus.RECEIVED:
        return ScaStatus.FAILED
    if not approved or customer is None:
        store.put(CONSENTS, replace(consent, status=ConsentStatus.REJECTED))
        return ScaStatus.FAILED
    accounts = consent_accounts(store, consent, customer.id)
    if not accounts:
        rejected = replace(consent, status=ConsentStatus.REJECTED, customer_id=customer.id)
        store.put(CONSENTS, rejected)
        return ScaStatus.FAILED
    store.put(
        CONSENTS,
        replace(
            consent,
            status=ConsentStatus.VALID,
            customer_id=customer.id,
            authorised_at=moment.isoformat(),
            account_ids=tuple(account.id for account in accounts),
        ),
    )
    return ScaStatus.FINALISED


def final_redirect(authorisation: Authorisation, *, ignore_nok: bool = False) -> str | None:
    """Where the PSU goes back to: the TPP-Redirect-URI with ``authorisationId`` and
    ``scaStatus`` added to its query; a failed SCA goes to the TPP-Nok-Redirect-URI when the TPP
    sent one, with ``error=access_denied`` added as its marker (``ignore_nok``: the fault
    ``nok-redirect-ignored``, which sends it to the TPP-Redirect-URI all the same)."""
    failed = authorisation.status == ScaStatus.FAILED
    base = authorisation.redirect_uri
    if failed and authorisation.nok_redirect_uri and not ignore_nok:
        base = authorisation.nok_redirect_uri
    if not base:
        return None
    parts = urlsplit(base)
    values = {"authorisationId": authorisation.id, "scaStatus": authorisation.status}
    if failed:
        values["error"] = "access_denied"
    extra = urlencode(values)
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))
