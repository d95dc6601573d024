"""Account-information consents: creation (CC), status (CS), authorisation start (CA), read (CG)
and deletion by the TPP (CD).

Spec 8 presupposes a PSU consent (its age, SCA renewal, the daily call limit) but shows no consent
operation; these are the minimal NextGenPSD2-like operations of the contract (``operations/CC.json``
and siblings). A consent is created for the PSU of PSU-ID and covers the accounts offered to that
PSU for consent (spec 4.3 E6: engagements with both REGISTER and VIEW) that its ``access`` names —
all of them when it names none. It becomes valid when the PSU approves it on the SCA page
(:mod:`reference_server.resources.sca`), and its age is counted from that moment on the server's
clock (:mod:`reference_server.services.consent_access`). A consent the TPP deletes (CD) reads
``terminatedByTpp`` and gives access to nothing.

The consent model (``[consent] model`` of a played profile): ``detailed`` (the bundled server)
takes every form (named accounts; empty lists or none, covering every offered account, which
Berlin Group calls a bank-offered consent; ``allPsd2``); a played ``bank-offered`` bank refuses
named accounts and ``allPsd2`` (the PSU chooses at SCA), a played ``global`` bank anything but
``allPsd2: allAccounts``. CG shows the access as asked, except that a consent that named no
account lists, once authorised, the accounts it covers (the PSU's choice).

A played ``first-access`` bank has none of these operations (404 RESOURCE_UNKNOWN): its consent
is given at a TPP session's first account access (``services/consent_access.py``).

``POST /_control/consents/{consentId}/age`` with ``{"days": N}`` (reference-server only, loopback,
unsigned) makes a consent N days older: its SCA (``authorised_at``) and creation move N days back.
For a ``first-access`` bank ``{consentId}`` may name the TPP session instead (its newest consent).
Spec 8's ages (90 days without the PSU, SCA renewal after 180) can so be reached for one consent,
where moving the server's clock would age every consent of every scenario running meanwhile.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Any

from reference_server.api import ApiError, Call, Response, Route
from reference_server.model.payment_data import CONSENTS, Consent, ConsentStatus, SubjectKind
from reference_server.model.sandbox_data import ACCOUNTS
from reference_server.pipeline import ownership
from reference_server.pipeline.due import unknown_id
from reference_server.pipeline.validation import BANK_ZONE
from reference_server.services import sca_flow
from reference_server.services.consent_access import (
    FIRST_ACCESS,
    effective_status,
    session_consents,
)

__all__ = [
    "OPERATIONS",
    "ROUTES",
    "age_consent",
    "authorise_consent",
    "consent_status",
    "create_consent",
    "delete_consent",
    "read_consent",
]


def _link(href: str, *verbs: str) -> dict[str, Any]:
    return {"href": href, "verbs": list(verbs)}


def consent_path(consent_id: str) -> str:
    return f"/v1/consents/{consent_id}"


def _references(access: Any) -> list[Any]:
    if not isinstance(access, dict):
        return []
    keys = ("accounts", "balances", "transactions")
    return [item for key in keys for item in access.get(key) or ()]


def _check_model(model: str, access: Any) -> None:
    """A played bank's consent model refuses another model's body (400 FORMAT_ERROR)."""
    if model == "bank-offered" and (_references(access) or "allPsd2" in access):
        raise ApiError(
            400,
            "FORMAT_ERROR",
            "this bank offers the accounts at SCA (bank-offered consent): send access with "
            "empty accounts, balances and transactions lists",
            path="access",
        )
    if model == "global" and (access.get("allPsd2") != "allAccounts" or _references(access)):
        raise ApiError(
            400,
            "FORMAT_ERROR",
            'this bank gives global consents only: send access {"allPsd2": "allAccounts"}',
            path="access",
        )


def _check_offered(call: Call) -> None:
    """A played ``first-access`` bank has no consent endpoint: 404 RESOURCE_UNKNOWN."""
    if call.app.bank.consent_model == FIRST_ACCESS:
        raise ApiError(
            404,
            "RESOURCE_UNKNOWN",
            "this bank has no consent endpoint: the consent is given at the first account "
            "access of a TPP session (401 with _links.scaRedirect)",
        )


def create_consent(call: Call) -> Response:
    """CC: 201 ``{consentId, consentStatus: received, _links}``.

    For a PSU that is a sandbox customer, every account the ``access`` names must be offered to
    that PSU for consent (else 400 CONSENT_INVALID, naming them); a ``validUntil`` before today
    is 400 FORMAT_ERROR; a body of another model than the played bank's is 400 FORMAT_ERROR.
    """
    _check_offered(call)
    app = call.app
    body = call.body
    _check_model(app.bank.consent_model, body["access"])
    today = app.clock.now().astimezone(BANK_ZONE).date()
    if date.fromisoformat(body["validUntil"]) < today:
        raise ApiError(
            400,
            "FORMAT_ERROR",
            f"validUntil {body['validUntil']} lies in the past",
            path="validUntil",
        )
    consent = Consent(
        id=str(uuid.uuid4()),
        psu_key=sca_flow.psu_key(call),
        customer_id=call.auth.customer_id,
        access=dict(body["access"]),
        valid_until=body["validUntil"],
        recurring=bool(body["recurringIndicator"]),
        frequency_per_day=int(body["frequencyPerDay"]),
        status=ConsentStatus.RECEIVED,
        created_at=app.clock.now().isoformat(),
        tpp_id=ownership.tpp_of(call),
    )
    if consent.customer_id is not None:
        offered = sca_flow.consent_accounts(app.store, consent, consent.customer_id)
        missing = [
            reference
            for reference in _references(consent.access)
            if not any(
                isinstance(reference, dict)
                and (reference.get("iban") == account.iban or reference.get("bban") == account.bban)
                for account in offered
            )
        ]
        if missing or not offered:
            raise ApiError(
                400,
                "CONSENT_INVALID",
                "these accounts are not offered to the PSU for consent (spec 4.3 E6: an "
                f"engagement with REGISTER and VIEW is needed): {missing or 'none offered'}",
                path="access",
            )
    app.store.add(CONSENTS, consent)
    path = consent_path(consent.id)
    return Response.json(
        201,
        {
            "consentId": consent.id,
            "consentStatus": consent.status,
            "_links": {
                "status": _link(f"{path}/status", "GET"),
                "startAuthorisation": _link(f"{path}/authorisations", "POST"),
            },
        },
        headers=(("Location", path),),
    )


def _require(call: Call) -> Consent:
    consent_id = call.path_params["consentId"]
    consent = call.app.store.get(CONSENTS, consent_id)
    if (
        consent is None
        or not ownership.owned(call, consent.tpp_id)
        or not ownership.same_psu(call, consent.customer_id)
    ):
        raise unknown_id(
            call.app.contract,
            call.operation,
            f"no consent {consent_id!r}",
            code="CONSENT_UNKNOWN",
            path="consentId",
        )
    return consent


def consent_status(call: Call) -> Response:
    """CS: ``{consentStatus}``; a valid consent past its validUntil or its SCA renewal period
    reads ``expired`` (spec 8)."""
    _check_offered(call)
    consent = _require(call)
    return Response.json(200, {"consentStatus": effective_status(call.app, consent)})


def authorise_consent(call: Call) -> Response:
    """CA: start the consent's SCA, like E2 (spec 5 item 6): 201 STARTED, 401 with
    ``scaRedirect`` for a PSU the sandbox does not know, 400 RESOURCE_BLOCKED once the consent is
    no longer ``received``."""
    _check_offered(call)
    app = call.app
    with app.store.atomic():
        consent = _require(call)
        if consent.status != ConsentStatus.RECEIVED:
            raise ApiError(
                400,
                "RESOURCE_BLOCKED",
                f"consent {consent.id} is {consent.status}: only a received consent can be "
                "authorised",
                path="consentId",
            )
        authorisation = sca_flow.start(app, call, SubjectKind.CONSENT, consent.id)
    return sca_flow.started(app, authorisation)


def _access_view(call: Call, consent: Consent) -> dict[str, Any]:
    """The access as asked, or, for a consent that named no account (bank-offered) once the PSU
    chose at SCA, the accounts it covers."""
    access = dict(consent.access)
    if _references(access) or "allPsd2" in access or not consent.account_ids:
        return access
    accounts = (call.app.store.get(ACCOUNTS, account_id) for account_id in consent.account_ids)
    references = [{"iban": account.iban} for account in accounts if account is not None]
    return {
        "accounts": references,
        "balances": [dict(reference) for reference in references],
        "transactions": [dict(reference) for reference in references],
    }


def _bank_date(moment: str) -> str:
    """The bank's calendar date of a stored moment (ISO 8601)."""
    return datetime.fromisoformat(moment).astimezone(BANK_ZONE).date().isoformat()


def read_consent(call: Call) -> Response:
    """CG: 200 with the consent (NextGenPSD2 ``ConsentInformationResponse``): its access,
    recurringIndicator, validUntil, frequencyPerDay, lastActionDate, consentStatus, _links."""
    _check_offered(call)
    consent = _require(call)
    moment = consent.authorised_at or consent.created_at
    path = consent_path(consent.id)
    return Response.json(
        200,
        {
            "access": _access_view(call, consent),
            "recurringIndicator": consent.recurring,
            "validUntil": consent.valid_until,
            "frequencyPerDay": consent.frequency_per_day,
            "lastActionDate": _bank_date(moment),
            "consentStatus": effective_status(call.app, consent),
            "_links": {
                "self": _link(path, "GET", "DELETE"),
                "status": _link(f"{path}/status", "GET"),
            },
        },
    )


def delete_consent(call: Call) -> Response:
    """CD: 204; the consent reads ``terminatedByTpp`` from now on and gives access to nothing
    (a terminated one deleted again: 204 too). Fault ``consent-termination-ignored``: 204, and
    the consent stays as it was."""
    _check_offered(call)
    store = call.app.store
    with store.atomic():
        consent = _require(call)
        if not call.app.faulty("consent-termination-ignored"):
            store.put(CONSENTS, replace(consent, status=ConsentStatus.TERMINATED))
    return Response.empty(204)


OPERATIONS = {
    "CC": create_consent,
    "CS": consent_status,
    "CA": authorise_consent,
    "CG": read_consent,
    "CD": delete_consent,
}


def _earlier(moment: str | None, days: int) -> str | None:
    return (
        None
        if moment is None
        else (datetime.fromisoformat(moment) - timedelta(days=days)).isoformat()
    )


def _aged(call: Call) -> Consent:
    """The consent the age control names: by its id, or (a ``first-access`` bank) by its TPP
    session, the session's newest."""
    if call.app.bank.consent_model == FIRST_ACCESS:
        bound = session_consents(call.app, call.path_params["consentId"])
        if bound:
            return bound[0]
    return _require(call)


def age_consent(call: Call) -> Response:
    """``POST /_control/consents/{consentId}/age`` ``{"days": N}``: the consent N days older
    (its SCA and creation N days earlier); 200 with its id, authorisation moment and status."""
    body = call.body
    days = body.get("days") if isinstance(body, dict) else None
    if isinstance(days, bool) or not isinstance(days, int) or days < 0:
        raise ApiError(400, "FORMAT_ERROR", 'send {"days": N} with N a whole number >= 0')
    store = call.app.store
    with store.atomic():
        consent = _aged(call)
        consent = replace(
            consent,
            created_at=_earlier(consent.created_at, days) or consent.created_at,
            authorised_at=_earlier(consent.authorised_at, days),
        )
        store.put(CONSENTS, consent)
    return Response.json(
        200,
        {
            "consentId": consent.id,
            "authorisedAt": consent.authorised_at,
            "consentStatus": effective_status(call.app, consent),
        },
    )


ROUTES = (Route("POST", "/_control/consents/{consentId}/age", age_consent),)
