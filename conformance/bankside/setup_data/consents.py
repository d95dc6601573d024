"""Set-up of consents (spec 8; NextGenPSD2 shape assumed: operations/CC.json), confirmed through
SCA, and a transaction id to read details with.

Under the consent model ``first-access`` (``[consent] model``) there is no consent endpoint: a
consent is the first account access (AL) of a fresh TPP session, answered 401 with
``_links.scaRedirect`` (spec 5 item 6's form), the SCA the profile's way, and the same access
sent again in that session; the consent is then named by its session (TPP-Session-ID).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from conformance.bankside.request import Psu, redirect_headers
from conformance.bankside.sca import require_sca_link, sca_link
from conformance.bankside.setup_data.parties import PartySetUp
from conformance.bankside.setup_data.records import (
    FIRST_ACCESS_STATUS,
    Account,
    Consent,
)
from conformance.bankside.setup_data.refusals import refused_title
from conformance.checks import (
    NotApplicable,
    SetUpFailure,
)
from conformance.generate import factories

#: Consent statuses that mean "usable" (NextGenPSD2).
_VALID_CONSENT = "valid"


class ConsentSetUp(PartySetUp):
    """Consents: the worker's shared one, or fresh ones."""

    def consent(self) -> Consent:
        """The worker's consent on its account, confirmed through SCA, with a transaction id
        from the account transactions list (E8 reads it). From the profile without sandbox."""
        return self.shared("consent", self._make_shared_consent)

    def _make_shared_consent(self) -> Consent:
        if not self.profile.sandbox and not self.own_consent:
            production = self.profile.production
            if production.consent_id and production.account_ids:
                return self.known_consent(
                    production.consent_id,
                    self.psu("PRIVATE"),
                    production.account_ids[0],
                    production.transaction_ids[0] if production.transaction_ids else None,
                )
            if not (self.profile.consent.at_first_access and production.account_ids):
                raise NotApplicable(
                    "the scenario needs a consent, an account and a transaction: name them in "
                    "the profile's [production] table (consent_id, account_ids, transaction_ids)"
                )
            consent = self._first_access(None, self.psu("PRIVATE"), approve=True)
            return self.first_transaction(consent, account_id=production.account_ids[0])
        return self.new_consent(self.seed_for("consent"), self.account())

    def known_consent(
        self,
        handle: str,
        psu: Psu,
        account_id: str | None = None,
        transaction_id: str | None = None,
    ) -> Consent:
        """A consent the profile names (``[production]``, ``[prepared]``): its Consent-ID, or
        under the model ``first-access`` the TPP-Session-ID of the session it is bound to."""
        return Consent(
            handle,
            psu,
            account_id,
            transaction_id,
            bound_to_session=self.profile.consent.at_first_access,
        )

    def new_consent_request(self, seed: int, account: Account) -> tuple[str, Psu]:
        """A consent (CC) on ``account`` for its owner, not yet authorised: its id and PSU."""
        created, psu = self._create_consent(seed, account)
        return str(created["consentId"]), psu

    def _create_consent(self, seed: int, account: Account) -> tuple[Any, Psu]:
        """CC on ``account`` for its owner: the answer and the PSU."""
        reason = self.unsupported_reason("CC")
        if reason is not None:
            raise NotApplicable(f"the scenario needs a consent: {reason}")
        psu = account.owner.psu
        created = self.create(
            "CC",
            "creating an account-information consent",
            psu=psu,
            body=factories.consent_request(seed, [account.iban], model=self.profile.consent.model),
        )
        return created, psu

    def new_consent(self, seed: int, account: Account, *, approve: bool = True) -> Consent:
        """A consent on ``account`` for its owner, taken through SCA (spec 5 item 6), with the
        account's resource id (AL) and a booked transaction id (AT) read with it: created (CC)
        and authorised, or, under ``first-access``, given at a session's first access."""
        for op_id in ("AL", "AT"):
            reason = self.unsupported_reason(op_id)
            if reason is not None:
                raise NotApplicable(f"the scenario needs a consent: {reason}")
        if self.profile.consent.at_first_access:
            consent = self._first_access(account, account.owner.psu, approve=approve)
            return self.first_transaction(consent, account.iban) if approve else consent
        created, psu = self._create_consent(seed, account)
        consent_id = str(created["consentId"])
        link = sca_link(created, self.profile.sca)
        if link is None:
            link = self.start_authorisation(
                "CA", {"consentId": consent_id}, psu, "starting the consent authorisation"
            )
        self.complete_sca(link, psu, approve=approve)
        status = self.create(
            "CS", "reading the consent status", path_values={"consentId": consent_id}, psu=psu
        )
        consent = Consent(consent_id, psu, sandbox_account=account)
        if not approve:
            return consent
        if status.get("consentStatus") != _VALID_CONSENT:
            raise SetUpFailure(
                f"Set-up failed: the consent is {status.get('consentStatus')!r} after SCA",
                spec="spec 8",
                sent=self.client.exchanges[-1] if self.client.exchanges else None,
                expected="a consent the PSU approved through SCA is valid",
            )
        return self.first_transaction(consent, account.iban)

    def _first_access(self, account: Account | None, psu: Psu, *, approve: bool) -> Consent:
        """The consent of a fresh TPP session (``first-access``): the session's first account
        access (AL, with TPP-Redirect-URI for the way back) answered 401 with the SCA link, and
        the PSU's SCA the profile's way; or answered 200, where the bank binds a consent to the
        PSU and holds the one this PSU gave at an earlier first access of this worker's run
        (spec 5 item 6 and spec 8 say neither)."""
        consent = Consent(str(uuid.uuid4()), psu, sandbox_account=account, bound_to_session=True)
        headers = {**consent.access_headers, **redirect_headers(self.profile)}
        exchange = self.send("AL", psu=psu, headers=headers)
        if exchange.status == 200 and psu.psu_id in self._consented:
            # the bank holds the consent this PSU gave at an earlier first access of this run: it
            # binds consents to the PSU rather than to the TPP session (the spec says neither).
            # A PSU that never consented and is served anyway is no such case: that blocks below.
            if not approve:
                raise NotApplicable(
                    "the scenario needs a consent the PSU refuses at SCA, and the bank served the "
                    "first access of a new TPP session from a consent the PSU gave before (its "
                    "consents are the PSU's, not the session's)"
                )
            return consent
        if exchange.status != FIRST_ACCESS_STATUS:
            raise SetUpFailure(
                refused_title(
                    "the first account access of a new TPP session",
                    "AL",
                    exchange,
                    sandbox_creation=False,
                ),
                spec="spec 5 item 6",
                sent=exchange,
                expected="HTTP 401 with _links.scaRedirect: the profile's [consent] model is "
                '"first-access" (the consent is given at the first account access)',
            )
        self.complete_sca(require_sca_link(exchange, self.profile.sca), psu, approve=approve)
        if approve and psu.psu_id is not None:
            self._consented.add(psu.psu_id)
        return consent

    def first_transaction(
        self, consent: Consent, iban: str | None = None, *, account_id: str | None = None
    ) -> Consent:
        """``consent`` with the resource id of its account (the one with ``iban`` or
        ``account_id``, else its first) and a booked transaction id on it, read through the
        consent (AL, AT)."""
        listed = self.create(
            "AL", "listing the consented accounts", psu=consent.psu, headers=consent.access_headers
        )
        accounts = listed.get("accounts", []) if isinstance(listed, Mapping) else []
        chosen = next(
            (
                item
                for item in accounts
                if (iban is not None and item.get("iban") == iban)
                or (account_id is not None and item.get("resourceId") == account_id)
            ),
            accounts[0] if accounts else None,
        )
        if chosen is None:
            return consent
        chosen_id = str(chosen["resourceId"])
        transactions = self.create(
            "AT",
            "listing the account's transactions",
            psu=consent.psu,
            path_values={"id": chosen_id},
            query={"bookingStatus": "booked"},
            headers=consent.access_headers,
        )
        booked = (transactions.get("transactions") or {}).get("booked") or []
        transaction_id = next(
            (item["transactionId"] for item in booked if "transactionId" in item), None
        )
        return replace(consent, account_id=chosen_id, transaction_id=transaction_id)
