"""Set-up of parties and what they hold through the sandbox API (spec 2.9, 4.3): customers,
accounts with transactions, card accounts, engagements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import Psu
from conformance.bankside.setup_data.base import SetUpBase
from conformance.bankside.setup_data.records import (
    Account,
    Agreement,
    CardAccount,
    Customer,
    CustomerType,
    Engagement,
)
from conformance.checks import (
    NotApplicable,
)
from conformance.contract.identifiers import bban_to_iban
from conformance.generate import factories

if TYPE_CHECKING:
    from conformance.profile import PrivatePsu

#: Transactions on the shared account and card account: enough to page and filter over.
_SHARED_TRANSACTIONS = 3
_SHARED_BOOKED, _SHARED_PENDING = 2, 1


class PartySetUp(SetUpBase):
    """Customers, accounts, card accounts and engagements: shared or fresh."""

    def customer(self, customer_type: CustomerType = "PRIVATE") -> Customer:
        """The worker's customer of that type (created once; from the profile without sandbox)."""
        return self.shared(
            f"customer:{customer_type}",
            lambda: (
                self._profile_customer(customer_type)
                if not self.profile.sandbox
                else self.new_customer(self.seed_for(customer_type), customer_type)
            ),
        )

    def psu(self, customer_type: CustomerType = "PRIVATE") -> Psu:
        """The worker's PSU of that type. The corporate PSU is a member of the worker's
        corporation acting in the corporate context: PSU-ID of the member, PSU-Context CORPORATE
        and the corporate agreement as PSU-Corporate-ID (spec 4.2, spec 7 rule 3)."""
        if customer_type != "CORPORATE":
            return self.customer("PRIVATE").psu
        if not self.profile.sandbox:
            return self._profile_customer("CORPORATE").psu
        shared = self.engagement()
        return Psu(
            psu_id=shared.member.customer_id,
            customer_number=shared.member.customer_number,
            corporate_id=shared.agreement_id,
            corporate=True,
        )

    def second_customer(self) -> Customer:
        """A second private customer of the worker, apart from :meth:`customer` (for checks
        that one PSU never reaches another's resources): fresh with the sandbox, else the
        profile's ``[psu.second]``."""
        if self.profile.sandbox:
            return self.shared(
                "customer:second",
                lambda: self.new_customer(self.seed_for("second-customer"), "PRIVATE"),
            )
        return _private_customer(self.profile.psu_second, "second")

    def own_customer(self, seed: int, customer_type: CustomerType = "PRIVATE") -> Customer:
        """A customer the scenario of ``seed`` makes for itself (SCU), so that what it creates
        for the customer is the customer's first (issue 29: resources of its own); without the
        sandbox, the profile's PSU of that type (nothing can be made)."""
        if not self.profile.sandbox:
            return self.customer(customer_type)
        name = f"customer:{customer_type}"
        return self.own(
            seed, name, lambda made: self.new_customer(self.own_seed(made, name), customer_type)
        )

    def _profile_customer(self, customer_type: CustomerType) -> Customer:
        if customer_type == "CORPORATE":
            corporate = self.profile.psu_corporate
            if corporate.psu_id is None:
                raise NotApplicable("the profile names no corporate PSU ([psu.corporate] psu_id)")
            return Customer(
                corporate.psu_id,
                corporate.customer_number,
                "CORPORATE",
                corporate_id=corporate.corporate_id,
            )
        return _private_customer(self.profile.psu_private, "private")

    def new_customer(
        self, seed: int, customer_type: CustomerType = "PRIVATE", *, national_id: bool = False
    ) -> Customer:
        """A fresh sandbox customer (SCU); ``national_id`` registers an X-PSU-IDENTITY for it."""
        self.require_sandbox("a sandbox customer")
        body = factories.sandbox_customer_create(seed, customer_type)
        if not national_id:
            body.pop("nationalIdentityNumber", None)
        document = self.create("SCU", f"creating a {customer_type} sandbox customer", body=body)
        return Customer(
            customer_id=str(document["customerId"]),
            customer_number=document.get("customerNumber"),
            customer_type=customer_type,
            name=str(document.get("customerName", "")),
            national_id=body.get("nationalIdentityNumber"),
        )

    def identity_customer(self, seed: int) -> Customer:
        """A private customer known by its national identity number (X-PSU-IDENTITY, spec 5
        item 5): fresh with the sandbox (numbers must be unique), else the profile's PSU."""
        if not self.profile.sandbox:
            return self._profile_customer("PRIVATE")
        return self.new_customer(seed, "PRIVATE", national_id=True)

    def corporate_customer(self) -> Customer:
        """The worker's CORPORATE customer with its corporate agreement as PSU-Corporate-ID
        (the reference server's reading of spec 4.2 "PSU corporate agreement identifier")."""
        return self.engagement().owner

    # --- accounts ------------------------------------------------------------------------------

    def debtor_bban(self) -> str | None:
        """The debtor account of the worker's payments: its sandbox account, else the
        profile's ``[payments] debtor_bban`` (None: a generated one)."""
        if self.profile.sandbox:
            return self.account().bban
        return self.profile.payment_accounts.debtor_bban

    def account(self) -> Account:
        """The worker's account of its private customer, with a few transactions (read only).
        Without the sandbox, the private PSU's existing account the profile names
        (``[payments] debtor_bban``, ``[production] account_ids`` and ``transaction_ids``)."""
        if not self.profile.sandbox:
            return self._existing_account()
        return self.shared(
            "account",
            lambda: self.new_account(self.seed_for("account"), transactions=_SHARED_TRANSACTIONS),
        )

    def own_account(self, seed: int, *, transactions: int = 0) -> Account:
        """An account of a customer the scenario of ``seed`` makes for itself (SCU, SA, and E7
        with ``transactions``), for a scenario that adds to or changes an account (E7, E15);
        without the sandbox the profile's account."""
        if not self.profile.sandbox:
            return self._existing_account()
        return self.own(
            seed,
            f"account:{transactions}",
            lambda made: self.new_account(
                self.own_seed(made, "account"),
                owner=self.own_customer(made),
                transactions=transactions,
            ),
        )

    def _existing_account(self) -> Account:
        bban = self.profile.payment_accounts.debtor_bban
        production = self.profile.production
        if bban is None or not production.account_ids:
            self.require_sandbox("an account of the PSU ([payments] debtor_bban names none)")
        assert bban is not None
        return Account(
            id=production.account_ids[0],
            iban=bban_to_iban(bban),
            bban=bban,
            currency="NOK",
            owner=self._profile_customer("PRIVATE"),
            transaction_ids=production.transaction_ids,
        )

    def new_account(
        self,
        seed: int,
        *,
        owner: Customer | None = None,
        transactions: int = 0,
        currency: str = "NOK",
        account_name: str | None = None,
        headers: Mapping[str, str | None] | None = None,
    ) -> Account:
        """A fresh sandbox account (SA) of ``owner`` (the worker's private customer by default),
        with ``transactions`` created on it (E7, debtor = the account itself, spec 7 rule 5)."""
        self.require_sandbox("a sandbox account")
        owner = owner or self.customer("PRIVATE")
        if owner.customer_number is None:
            raise NotApplicable("the sandbox customer has no customerNumber to own an account")
        body = factories.sandbox_account_create(seed, owner.customer_number, currency=currency)
        if account_name is not None:
            body["accountName"] = account_name
        document = self.create("SA", "creating a sandbox account", body=body, headers=headers)
        account = Account(
            id=str(document["id"]),
            iban=str(document.get("iban", body["iban"])),
            bban=str(document.get("bban", body["bban"])),
            currency=currency,
            owner=owner,
            document=document,
        )
        if transactions:
            ids = self.add_transactions(account, seed, transactions)
            account = Account(
                account.id, account.iban, account.bban, currency, owner, ids, document
            )
        return account

    def add_transactions(self, account: Account, seed: int, count: int) -> tuple[str, ...]:
        """Create ``count`` transactions on ``account`` (E7); their ids, read back through E3
        when the E7 answer does not carry them (its body is not shown, spec 4.3 E7)."""
        body = factories.sandbox_account_transactions(
            seed,
            {"iban": account.iban, "bban": account.bban, "currency": account.currency},
            count,
            today=self.today(),
        )
        document = self.create(
            "E7",
            "creating sandbox account transactions",
            path_values={"mockAccountId": account.id},
            body=body,
        )
        if isinstance(document, list) and all(
            isinstance(item, Mapping) and "id" in item for item in document
        ):
            return tuple(str(item["id"]) for item in document)
        listed = self.create(
            "E3", "listing sandbox account transactions", path_values={"mockAccountId": account.id}
        )
        return tuple(str(item["id"]) for item in listed if isinstance(item, Mapping))

    # --- card accounts -------------------------------------------------------------------------

    def card_account(self) -> CardAccount:
        """The worker's card account with booked and pending transactions (read only)."""
        return self.shared(
            "card",
            lambda: self.new_card_account(
                self.seed_for("card"), booked=_SHARED_BOOKED, pending=_SHARED_PENDING
            ),
        )

    def own_card_account(self, seed: int) -> CardAccount:
        """A card account of a customer the scenario of ``seed`` makes for itself, for a
        scenario that adds card transactions (E5)."""
        self.require_sandbox("a sandbox card account")
        return self.own(
            seed,
            "card",
            lambda made: self.new_card_account(
                self.own_seed(made, "card"), owner=self.own_customer(made)
            ),
        )

    def new_card_account(
        self, seed: int, *, booked: int = 0, pending: int = 0, owner: Customer | None = None
    ) -> CardAccount:
        """A fresh card account (SCA) of ``owner`` (the worker's private customer by default)
        with ``booked`` invoiced and ``pending`` not yet invoiced card transactions (E5)."""
        self.require_sandbox("a sandbox card account")
        reason = self.unsupported_reason("SCA")
        if reason is not None:
            raise NotApplicable(f"the scenario needs a card account: {reason}")
        owner = owner or self.customer("PRIVATE")
        body = factories.sandbox_card_account_create(seed, owner.customer_number or "")
        document = self.create("SCA", "creating a sandbox card account", body=body)
        resource = document.get("cardAccount", document) if isinstance(document, Mapping) else {}
        card = CardAccount(
            id=str(resource["resourceId"]),
            masked_pan=str(resource.get("maskedPan", body["maskedPan"])),
            currency=str(body["currency"]),
            owner=owner,
        )
        if not booked and not pending:
            return card
        items = self.card_transactions_body(card, seed, booked=booked, pending=pending)
        self.create(
            "E5",
            "creating sandbox card transactions",
            path_values={"mockCardAccountId": card.id},
            body=items,
        )
        return CardAccount(
            card.id,
            card.masked_pan,
            card.currency,
            owner,
            tuple(item["cardTransactionId"] for item in items if item["invoiced"] == "true"),
            tuple(item["cardTransactionId"] for item in items if item["invoiced"] != "true"),
        )

    def card_transactions_body(
        self, card: CardAccount, seed: int, *, booked: int = 1, pending: int = 0
    ) -> list[dict[str, Any]]:
        """An E5 body of ``booked`` invoiced and ``pending`` not invoiced items (the reference
        server reads invoiced "false" as pending, an assumption the flow's verdict names)."""
        items = factories.sandbox_card_transactions(
            seed, card.masked_pan, booked + pending, today=self.today(), currency=card.currency
        )
        for index, item in enumerate(items):
            item["invoiced"] = "true" if index < booked else "false"
        return items

    # --- agreements ----------------------------------------------------------------------------

    def engagement(self) -> Engagement:
        """The worker's corporate agreement with one engagement (REGISTER and VIEW)."""
        return self.shared("engagement", lambda: self.new_engagement(self.seed_for("engagement")))

    def new_agreement(self, seed: int, *, member: Customer | None = None) -> Agreement:
        """A CORPORATE customer owning an agreement (SAG) and an account (SA), and the private
        member PSU an engagement (E6) is to show it to: fresh unless ``member`` is given, so
        that an engagement the scenario adds is the first for that customer and account on the
        agreement (a bank may refuse a second one, spec 4.3 E6 is silent)."""
        self.require_sandbox("a sandbox agreement")
        for op_id in ("SAG", "E6"):
            reason = self.unsupported_reason(op_id)
            if reason is not None:
                raise NotApplicable(f"the scenario needs an agreement with an engagement: {reason}")
        corporation = self.new_customer(seed, "CORPORATE")
        agreement = self.create(
            "SAG",
            "creating a corporate sandbox agreement",
            body=factories.sandbox_agreement_create(
                seed,
                self.profile.owner_reference(corporation.customer_id, corporation.customer_number),
            ),
        )
        agreement_id = str(agreement["id"])
        owner = Customer(
            corporation.customer_id,
            corporation.customer_number,
            "CORPORATE",
            corporation.name,
            corporate_id=agreement_id,
        )
        account = self.new_account(seed, owner=owner)
        member = member or self.new_customer(self.own_seed(seed, "member"), "PRIVATE")
        return Agreement(agreement_id, owner, member, account)

    def own_agreement(self, seed: int) -> Agreement:
        """An agreement (with its owner, account and member PSU) the scenario of ``seed`` makes
        for itself, for a scenario that adds an engagement (E6)."""
        return self.own(
            seed, "agreement", lambda made: self.new_agreement(self.own_seed(made, "agreement"))
        )

    def new_engagement(self, seed: int, roles: Sequence[str] = ("REGISTER", "VIEW")) -> Engagement:
        """A CORPORATE customer owning an agreement (SAG) and an account (SA), and an engagement
        (E6) that shows the account to the worker's private PSU (spec 4.3 E6)."""
        made = self.new_agreement(seed, member=self.customer("PRIVATE"))
        agreement_id, owner, member, account = (
            made.agreement_id,
            made.owner,
            made.member,
            made.account,
        )
        engagement = self.create(
            "E6",
            "adding an engagement to the sandbox agreement",
            path_values={"mockAgreementId": agreement_id},
            body=factories.sandbox_engagement(seed, member.customer_id, account.iban, roles),
        )
        engagement_id = engagement.get("id") if isinstance(engagement, Mapping) else None
        if engagement_id is None:
            read = self.create(
                "E14",
                "reading the sandbox agreement",
                path_values={"mockAgreementId": agreement_id},
            )
            engagement_id = next(
                (item["id"] for item in read.get("engagements", []) if "id" in item), None
            )
        if engagement_id is None:
            raise NotApplicable("the target shows no engagement id to read the engagement with")
        return Engagement(agreement_id, str(engagement_id), owner, member, account)


def _private_customer(psu: PrivatePsu, table: str) -> Customer:
    """A private PSU the profile names (``[psu.private]``, ``[psu.second]``) as a customer."""
    if psu.psu_id is None and psu.national_id is None:
        raise NotApplicable(f"the profile names no {table} PSU ([psu.{table}] psu_id)")
    return Customer(psu.psu_id or "", psu.customer_number, "PRIVATE", national_id=psu.national_id)
