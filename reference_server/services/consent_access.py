"""Which consent a production account request uses, and the limits of spec 8 on it.

How the consent is passed is not shown (``operations/AL.json``): the ``Consent-ID`` header when
sent (NextGenPSD2; AL and AT list it, E8 reads it too), else the latest valid consent of the PSU
named by PSU-ID (covering the account, for AT and E8), else — E8 only, whose PSU headers are all
optional — the latest valid consent covering the account.

A played bank whose consent model is ``first-access`` (``[consent] model``) has no consent
endpoint: the consent is bound to the TPP session (TPP-Session-ID, of this TPP and PSU). The
session's first access, or one whose consent has expired (SCA renewal, spec 8), starts a consent
of every account offered to the PSU (spec 4.3 E6) and its authorisation, and is answered 401
with ``_links.scaRedirect`` (spec 5 item 6; CONSENT_UNKNOWN, or CONSENT_EXPIRED for a renewal);
once the PSU approved it there, the session's requests are served. A consent the bank holds
already (the profile's ``[production] consent_id``, ``[prepared]`` consents) is bound to the
session of its id.

Spec 8 limits, on the server's clock:

- SCA renewal every 180 days (spec 9 1.17.4): a consent whose SCA is older reads ``expired``
  and every use answers 401 CONSENT_EXPIRED; so does one past its ``validUntil``;
- transaction details (E8) without PSU-IP-Address: the consent at most 90 days old (else 401
  CONSENT_EXPIRED) and 4 calls a day per consent (the 5th: 429 ACCESS_EXCEEDED), the day being
  the server clock's UTC date. Calls with PSU-IP-Address are neither limited nor counted.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from reference_server.api import ApiError, Call
from reference_server.model.payment_data import CONSENTS, Consent, ConsentStatus, SubjectKind
from reference_server.pipeline import ownership
from reference_server.pipeline.due import due, refuse
from reference_server.pipeline.validation import BANK_ZONE
from reference_server.services import sca_flow

if TYPE_CHECKING:
    from reference_server.api import ServerState
    from reference_server.model.payment_data import Authorisation

__all__ = [
    "DAILY_CALLS_WITHOUT_PSU",
    "FIRST_ACCESS",
    "MAX_AGE_WITHOUT_PSU",
    "SCA_RENEWAL",
    "check_unattended_access",
    "consent_for",
    "effective_status",
    "session_consents",
]

#: The consent model without a consent endpoint (``[consent] model``).
FIRST_ACCESS = "first-access"
#: The header a first-access consent is bound by.
SESSION_HEADER = "TPP-Session-ID"

#: Spec 8 "renewal of SCA every 180 days" (account access).
SCA_RENEWAL = timedelta(days=180)
#: Spec 8: E8 without PSU-IP-Address needs a consent at most 90 days old.
MAX_AGE_WITHOUT_PSU = timedelta(days=90)
#: Spec 8: E8 without PSU-IP-Address, 4 calls per day.
DAILY_CALLS_WITHOUT_PSU = 4
#: A first-access consent lasts until its SCA is due again (spec 8): no date of its own.
SESSION_VALID_UNTIL = "9999-12-31"

#: The ``rules.json`` rows of a consent's use (AL, AT, E8) this module implements.
_SCA_RENEWAL_DUE = "LIM-sca-renewal-180-days"
_TERMINATED = "CNS-terminated-consent-refused"
_AGE_WITHOUT_PSU = "LIM-transaction-details-consent-max-90-days"
_DAILY_CALLS = "LIM-transaction-details-daily-calls-without-ip"


def _authorised_at(consent: Consent) -> datetime | None:
    return datetime.fromisoformat(consent.authorised_at) if consent.authorised_at else None


def effective_status(app: ServerState, consent: Consent) -> str:
    """The consent's status now: a valid consent past ``validUntil`` (bank date) or whose SCA is
    older than 180 days reads ``expired``."""
    if consent.status != ConsentStatus.VALID:
        return consent.status
    now = app.clock.now()
    if date.fromisoformat(consent.valid_until) < now.astimezone(BANK_ZONE).date():
        return ConsentStatus.EXPIRED
    authorised = _authorised_at(consent)
    if authorised is not None and now - authorised > SCA_RENEWAL:
        return ConsentStatus.EXPIRED
    return consent.status


def _newest_valid(consents: list[Consent], account_id: str | None) -> Consent | None:
    chosen = [
        consent
        for consent in consents
        if consent.status == ConsentStatus.VALID
        and (account_id is None or account_id in consent.account_ids)
    ]
    chosen.sort(key=lambda consent: consent.authorised_at or "", reverse=True)
    return chosen[0] if chosen else None


def consent_for(call: Call, account_id: str | None, *, any_psu: bool = False) -> Consent:
    """The valid consent the request uses (see the module docstring), covering ``account_id``
    when one is given. Raises 401 CONSENT_UNKNOWN / CONSENT_INVALID / CONSENT_EXPIRED and 403
    CONSENT_INVALID (the consent does not cover the account)."""
    if call.app.bank.consent_model == FIRST_ACCESS:
        consent = _session_consent(call)
    else:
        consent = _used_consent(call, account_id, any_psu)
    _check_usable(call, consent, account_id)
    return consent


def session_consents(app: ServerState, session: str) -> list[Consent]:
    """The consents bound to the TPP session ``session``, newest first: those given in it, and
    a consent the bank holds already under that id."""
    store = app.store
    found = {consent.id: consent for consent in store.find(CONSENTS, "sessionId", session)}
    held = store.get(CONSENTS, session)
    if held is not None:
        found[held.id] = held
    chosen = list(found.values())
    chosen.sort(key=lambda consent: consent.authorised_at or consent.created_at, reverse=True)
    return chosen


def _session_consent(call: Call) -> Consent:
    """The valid consent of this TPP session, TPP and PSU (``first-access``); else a new one
    started, and the 401 that sends the PSU to its SCA."""
    session = call.header(SESSION_HEADER)
    if not session:
        raise ApiError(
            400,
            "HTTP_HEADER_REQUIRED",
            "this bank binds the consent to the TPP session: send TPP-Session-ID",
            path=SESSION_HEADER,
        )
    app = call.app
    with app.store.atomic():
        mine = [
            consent
            for consent in session_consents(app, session)
            if ownership.owned(call, consent.tpp_id)
            and ownership.same_psu(call, consent.customer_id)
        ]
        valid = [consent for consent in mine if consent.status == ConsentStatus.VALID]
        if valid and effective_status(app, valid[0]) == ConsentStatus.VALID:
            return valid[0]
        authorisation = _start_session_consent(call, session)
    renewal = bool(valid)
    raise ApiError(
        401,
        "CONSENT_EXPIRED" if renewal else "CONSENT_UNKNOWN",
        (
            "the consent of this TPP session needs its SCA renewed (spec 8: every 180 days)"
            if renewal
            else "no consent in this TPP session yet"
        )
        + ": send the PSU to _links.scaRedirect, then repeat the request (spec 5 item 6)",
        links=sca_flow.redirect_links(
            authorisation, decoupled=app.bank.sca_decoupled, oauth=app.bank.sca_oauth
        ),
    )


def _start_session_consent(call: Call, session: str) -> Authorisation:
    """A consent of every account offered to the PSU, bound to ``session``, and its SCA."""
    app = call.app
    consent = Consent(
        id=str(uuid.uuid4()),
        psu_key=sca_flow.psu_key(call),
        customer_id=call.auth.customer_id,
        access={},
        valid_until=SESSION_VALID_UNTIL,
        recurring=True,
        frequency_per_day=DAILY_CALLS_WITHOUT_PSU,
        status=ConsentStatus.RECEIVED,
        created_at=app.clock.now().isoformat(),
        tpp_id=ownership.tpp_of(call),
        session_id=session,
    )
    app.store.add(CONSENTS, consent)
    return sca_flow.start(app, call, SubjectKind.CONSENT, consent.id)


def _used_consent(call: Call, account_id: str | None, any_psu: bool) -> Consent:
    """The consent Consent-ID names, else the PSU's newest valid one (covering ``account_id``),
    else with ``any_psu`` any valid one covering it; 401 CONSENT_UNKNOWN when there is none."""
    store = call.app.store
    consent_id = call.header("Consent-ID")
    psu_id = call.auth.psu_id or call.header("PSU-ID")
    if consent_id:
        return _named_consent(call, consent_id)
    if psu_id:
        consents = store.find(CONSENTS, "psuKey", psu_id)
        mine = [consent for consent in consents if ownership.owned(call, consent.tpp_id)]
        consent = _newest_valid(mine, account_id)
        if consent is None:
            raise ApiError(
                401,
                "CONSENT_UNKNOWN",
                "the PSU has no valid consent"
                + (f" covering account {account_id}" if account_id else ""),
            )
        return consent
    if any_psu and account_id is not None:
        consent = _newest_valid(store.all(CONSENTS), account_id)
        if consent is None:
            raise ApiError(401, "CONSENT_UNKNOWN", f"no valid consent covers account {account_id}")
        return consent
    raise ApiError(
        401,
        "CONSENT_UNKNOWN",
        "name the consent with Consent-ID, or the PSU with PSU-ID",
        path="Consent-ID",
    )


def _named_consent(call: Call, consent_id: str) -> Consent:
    """The consent of Consent-ID, if this TPP made it and this PSU gave it."""
    consent = call.app.store.get(CONSENTS, consent_id)
    if consent is None or not ownership.owned(call, consent.tpp_id):
        raise ApiError(401, "CONSENT_UNKNOWN", f"no consent {consent_id!r}", path="Consent-ID")
    if not ownership.same_psu(call, consent.customer_id):
        raise ApiError(
            401,
            "CONSENT_INVALID",
            f"consent {consent_id!r} was given by another PSU",
            path="Consent-ID",
        )
    return consent


def _check_usable(call: Call, consent: Consent, account_id: str | None) -> None:
    """The consent is valid now (not expired, spec 8) and covers ``account_id``: an SCA older
    than 180 days and a terminated consent answer their ``rules.json`` row's due."""
    app = call.app
    status = effective_status(app, consent)
    expired = (
        f"consent {consent.id} has expired: its validUntil has passed or its SCA is older "
        "than 180 days (spec 8)"
    )
    if status == ConsentStatus.EXPIRED and consent.status == ConsentStatus.VALID:
        today = app.clock.now().astimezone(BANK_ZONE).date()
        if date.fromisoformat(consent.valid_until) >= today:  # its SCA is due again
            raise refuse(
                due(app.contract, _SCA_RENEWAL_DUE, call.operation),
                expired,
                code="CONSENT_EXPIRED",
                status=401,
            )
    if status == ConsentStatus.EXPIRED:  # past its validUntil: no requirement states the answer
        raise ApiError(401, "CONSENT_EXPIRED", expired)
    if status == ConsentStatus.TERMINATED:
        raise refuse(
            due(app.contract, _TERMINATED, call.operation),
            f"consent {consent.id} is {status}, not valid",
            code="CONSENT_INVALID",
            status=401,
        )
    if status != ConsentStatus.VALID:
        raise ApiError(401, "CONSENT_INVALID", f"consent {consent.id} is {status}, not valid")
    if account_id is not None and account_id not in consent.account_ids:
        raise ApiError(
            403, "CONSENT_INVALID", f"consent {consent.id} does not cover account {account_id}"
        )


def check_unattended_access(call: Call, consent: Consent) -> None:
    """Spec 8 for E8 without PSU-IP-Address: consent at most 90 days old, 4 calls a day."""
    if call.header("PSU-IP-Address"):
        return
    app = call.app
    now = app.clock.now()
    authorised = _authorised_at(consent)
    if (
        authorised is not None
        and now - authorised > MAX_AGE_WITHOUT_PSU
        and not app.faulty("no-consent-age-check")
    ):
        raise refuse(
            due(app.contract, _AGE_WITHOUT_PSU, call.operation),
            f"consent {consent.id} is more than 90 days old: transaction details without the "
            "PSU (no PSU-IP-Address) need a younger consent (spec 8)",
            code="CONSENT_EXPIRED",
            status=401,
        )
    if app.faulty("no-daily-limit"):
        return
    calls = app.store.next_number(f"e8-calls:{consent.id}:{now.date().isoformat()}")
    if calls > DAILY_CALLS_WITHOUT_PSU:
        raise refuse(
            due(app.contract, _DAILY_CALLS, call.operation),
            f"consent {consent.id} has used its {DAILY_CALLS_WITHOUT_PSU} transaction details "
            "calls without PSU-IP-Address for today (spec 8)",
            code="ACCESS_EXCEEDED",
            status=429,
        )
