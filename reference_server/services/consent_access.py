"""Which consent a production account request uses, and the limits of spec 8 on it.

How the consent is passed is not shown (``operations/AL.json``): the ``Consent-ID`` header when
sent (NextGenPSD2; AL and AT list it, E8 reads it too), else the latest valid consent of the PSU
named by PSU-ID (covering the account, for AT and E8), else — E8 only, whose PSU headers are all
optional — the latest valid consent covering the account.

Spec 8 limits, on the server's clock:

- SCA renewal every 180 days (spec 9 1.17.4): a consent whose SCA is older reads ``expired``
  and every use answers 401 CONSENT_EXPIRED; so does one past its ``validUntil``;
- transaction details (E8) without PSU-IP-Address: the consent at most 90 days old (else 401
  CONSENT_EXPIRED) and 4 calls a day per consent (the 5th: 429 ACCESS_EXCEEDED), the day being
  the server clock's UTC date. Calls with PSU-IP-Address are neither limited nor counted.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from reference_server.api import ApiError, Call
from reference_server.model.payment_data import CONSENTS, Consent, ConsentStatus
from reference_server.pipeline import ownership
from reference_server.pipeline.validation import BANK_ZONE

if TYPE_CHECKING:
    from reference_server.api import ServerState

__all__ = [
    "DAILY_CALLS_WITHOUT_PSU",
    "MAX_AGE_WITHOUT_PSU",
    "SCA_RENEWAL",
    "check_unattended_access",
    "consent_for",
    "effective_status",
]

#: Spec 8 "renewal of SCA every 180 days" (account access).
SCA_RENEWAL = timedelta(days=180)
#: Spec 8: E8 without PSU-IP-Address needs a consent at most 90 days old.
MAX_AGE_WITHOUT_PSU = timedelta(days=90)
#: Spec 8: E8 without PSU-IP-Address, 4 calls per day.
DAILY_CALLS_WITHOUT_PSU = 4


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
    consent = _used_consent(call, account_id, any_psu)
    _check_usable(call.app, consent, account_id)
    return consent


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


def _check_usable(app: ServerState, consent: Consent, account_id: str | None) -> None:
    """The consent is valid now (not expired, spec 8) and covers ``account_id``."""
    status = effective_status(app, consent)
    if status == ConsentStatus.EXPIRED:
        raise ApiError(
            401,
            "CONSENT_EXPIRED",
            f"consent {consent.id} has expired: its validUntil has passed or its SCA is older "
            "than 180 days (spec 8)",
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
        raise ApiError(
            401,
            "CONSENT_EXPIRED",
            f"consent {consent.id} is more than 90 days old: transaction details without the "
            "PSU (no PSU-IP-Address) need a younger consent (spec 8)",
        )
    if app.faulty("no-daily-limit"):
        return
    calls = app.store.next_number(f"e8-calls:{consent.id}:{now.date().isoformat()}")
    if calls > DAILY_CALLS_WITHOUT_PSU:
        raise ApiError(
            429,
            "ACCESS_EXCEEDED",
            f"consent {consent.id} has used its {DAILY_CALLS_WITHOUT_PSU} transaction details "
            "calls without PSU-IP-Address for today (spec 8)",
        )
