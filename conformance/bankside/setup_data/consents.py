"""Set-up of consents (spec 8; NextGenPSD2 shape assumed: operations/CC.json), confirmed through
SCA, and a transaction id to read details with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import Psu
from conformance.bankside.sca import sca_link
from conformance.bankside.setup_data.parties import PartySetUp
from conformance.bankside.setup_data.records import (
    Account,
    Consent,
)
from conformance.checks import (
    NotApplicable,
    SetUpFailure,
)
from conformance.generate import factories

if TYPE_CHECKING:
    pass

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
            if not (production.consent_id and production.account_ids):
                raise NotApplicable(
                    "the scenario needs a consent, an account and a transaction: name them in "
                    "the profile's [production] table (consent_id, account_ids, transaction_ids)"
                )
            return Consent(
                production.consent_id,
                self.psu("PRIVATE"),
                production.account_ids[0],
                production.transaction_ids[0] if production.transaction_ids else None,
            )
        return self.new_consent(self.seed_for("consent"), self.account())

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
        """A consent (CC) on ``account`` for its owner, taken through SCA (spec 5 item 6), with
        the account's resource id (AL) and a booked transaction id (AT) read with it."""
        for op_id in ("AL", "AT"):
            reason = self.unsupported_reason(op_id)
            if reason is not None:
                raise NotApplicable(f"the scenario needs a consent: {reason}")
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
        if not approve:
            return Consent(consent_id, psu, sandbox_account=account)
        if status.get("consentStatus") != _VALID_CONSENT:
            raise SetUpFailure(
                f"Set-up failed: the consent is {status.get('consentStatus')!r} after SCA",
                spec="spec 8",
                sent=self.client.exchanges[-1] if self.client.exchanges else None,
                expected="a consent the PSU approved through SCA is valid",
            )
        account_id, transaction_id = self.first_transaction(consent_id, psu, account.iban)
        return Consent(consent_id, psu, account_id, transaction_id, account)

    def first_transaction(
        self, consent_id: str, psu: Psu, iban: str | None = None
    ) -> tuple[str | None, str | None]:
        """The resource id of the consent's account (the one with ``iban``, else its first)
        and a booked transaction id on it, read through the consent (AL, AT)."""
        consent_header = {"Consent-ID": consent_id}
        listed = self.create(
            "AL", "listing the consented accounts", psu=psu, headers=consent_header
        )
        accounts = listed.get("accounts", []) if isinstance(listed, Mapping) else []
        chosen = next(
            (item for item in accounts if iban is not None and item.get("iban") == iban),
            accounts[0] if accounts else None,
        )
        if chosen is None:
            return None, None
        account_id = str(chosen["resourceId"])
        transactions = self.create(
            "AT",
            "listing the account's transactions",
            psu=psu,
            path_values={"id": account_id},
            query={"bookingStatus": "booked"},
            headers=consent_header,
        )
        booked = (transactions.get("transactions") or {}).get("booked") or []
        transaction_id = next(
            (item["transactionId"] for item in booked if "transactionId" in item), None
        )
        return account_id, transaction_id
