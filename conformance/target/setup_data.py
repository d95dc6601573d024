"""Set-up data for scenarios, created through the target's own sandbox API (spec 4.1, 4.3).

A scenario needs things to exist before its one request: a customer whose PSU-ID it can send, an
account with transactions (E3, E11), a card account with booked and pending transactions (E4,
E10), an agreement with an engagement (E13), a consent confirmed through SCA and a transaction id
from the account list (E8), payments of each product (E1, PS, PC, PA), a basket (E2).

:class:`DataFactory` creates them with ordinary, signed requests through the worker's client, so
they are recorded with the scenario that caused them. Two kinds of data:

- **shared** (``customer()``, ``account()``, ``card_account()``, ``engagement()``, ``consent()``):
  made once per worker and cached, for scenarios that only read. Each worker has its own, so
  pytest-xdist workers never share mutable state;
- **fresh** (``new_*``, ``payment()``, ``basket()``): made for one scenario, seeded from its
  scenario seed, for scenarios that change what they touch.

Without the sandbox API (``profile.sandbox = false``) the shared data comes from the profile's
PSU identities and production identifiers, and anything else makes the scenario not applicable.
A set-up request the target refuses is a :class:`~conformance.checks.ConformanceFailure` of the
operation that refused it (a valid request must be accepted), titled as set-up.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from conformance.checks import (
    ConformanceFailure,
    NotApplicable,
    check_response_schema,
    check_sca_redirect,
    json_document,
)
from conformance.generate import factories
from conformance.scenario import scenario_seed
from conformance.target.request import NO_BODY, OperationRequest, Psu

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.exchange import Exchange
    from conformance.target.client import TargetClient
    from conformance.target.profile import TargetProfile
    from conformance.target.sca import ScaStep

__all__ = [
    "NDCT_PRODUCT",
    "PRODUCT_OF_OPERATION",
    "Account",
    "Basket",
    "CardAccount",
    "Consent",
    "Customer",
    "DataFactory",
    "Engagement",
    "Payment",
]

CustomerType = Literal["PRIVATE", "CORPORATE"]

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

#: Transactions on the shared account and card account: enough to page and filter over.
_SHARED_TRANSACTIONS = 3
_SHARED_BOOKED, _SHARED_PENDING = 2, 1
#: Consent statuses that mean "usable" (NextGenPSD2).
_VALID_CONSENT = "valid"


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
    ``account_id`` (an AL resourceId) and ``transaction_id`` (from AT, for E8)."""

    consent_id: str
    psu: Psu
    account_id: str | None = None
    transaction_id: str | None = None
    sandbox_account: Account | None = None


@dataclass(frozen=True)
class Payment:
    """A payment created with E16, E17 or E18; ``product`` is the product of its PS/PC/PA path."""

    payment_id: str
    operation: str
    product: str
    psu: Psu
    status: str
    body: Mapping[str, Any] = field(default_factory=dict, compare=False)
    sca_link: str | None = None


@dataclass(frozen=True)
class Basket:
    """A signing basket (E1) and the payments in it."""

    basket_id: str
    payment_ids: tuple[str, ...]
    psu: Psu
    status: str


@dataclass(frozen=True)
class _Failed:
    """A shared set-up that failed: raised again, afresh, for every scenario that needs it."""

    problem: ConformanceFailure | NotApplicable

    def again(self) -> ConformanceFailure | NotApplicable:
        problem = self.problem
        if isinstance(problem, NotApplicable):
            return NotApplicable(problem.reason)
        return ConformanceFailure(
            problem.title,
            spec=problem.spec,
            sent=problem.sent,
            received=problem.received,
            expected=problem.expected,
            related=problem.related,
        )


# --- the factory --------------------------------------------------------------------------------


#: Why a target may refuse valid set-up data: it is the data an earlier run created already.
_SAME_SEED_HINT = (
    "; a target that still holds the data of an earlier run with the same --seed refuses it "
    "again (the account exists, the payment is a logical duplicate): run with another seed "
    "(against a target, the default is a random one) or reset the sandbox"
)


class DataFactory:
    """Creates set-up data through the target's API; caches what read-only scenarios share.

    One per worker (the plugin builds it with the worker's client). ``run_seed`` seeds the
    shared data; fresh data takes the scenario's seed. ``sca`` completes the SCA redirects
    that consents and authorised payments need.
    """

    def __init__(
        self,
        contract: Contract,
        profile: TargetProfile,
        client: TargetClient,
        *,
        run_seed: int,
        sca: ScaStep | None = None,
    ) -> None:
        self.contract = contract
        self.profile = profile
        self.client = client
        self.run_seed = run_seed
        self.sca = sca
        self._cache: dict[str, Any] = {}
        self._clock_offset: timedelta | None = None

    # --- plumbing ------------------------------------------------------------------------------

    def shared(self, key: str, make: Callable[[], Any]) -> Any:
        """The worker's cached value of ``key``, made on first use (read-only set-up data). A
        failed set-up is remembered too, so the scenarios after it fail at once with the same
        verdict instead of repeating it."""
        if key not in self._cache:
            try:
                self._cache[key] = make()
            except (ConformanceFailure, NotApplicable) as problem:
                self._cache[key] = _Failed(problem)
        value = self._cache[key]
        if isinstance(value, _Failed):
            raise value.again()
        return value

    def _seed(self, name: str) -> int:
        return self.seed_for(name)

    def seed_for(self, name: str) -> int:
        """The seed of the worker's shared data called ``name`` (distinct per name and run)."""
        return scenario_seed(self.run_seed, f"shared:{name}")

    def require_sandbox(self, what: str) -> None:
        """NotApplicable unless the target has the sandbox API to create ``what`` with."""
        if not self.profile.sandbox:
            raise NotApplicable(
                f"the scenario needs {what}, which only the sandbox API can create, and the "
                "profile says sandbox = false"
            )
        for op_id in ("SCU", "SA"):
            reason = self.profile.unsupported_reason(op_id)
            if reason is not None:
                raise NotApplicable(f"the scenario needs {what}: {reason}")

    def send(
        self,
        op_id: str,
        *,
        psu: Psu | None = None,
        path_values: Mapping[str, str] | None = None,
        query: Mapping[str, Any] | None = None,
        body: Any = NO_BODY,
        headers: Mapping[str, str | None] | None = None,
    ) -> Exchange:
        """One valid request of ``op_id`` (no verdict: the caller reads the answer)."""
        return OperationRequest.build(
            self,
            op_id,
            psu=psu,
            path_values=path_values,
            query=query or (),
            body=body,
            headers=headers,
        ).send(self)

    def create(
        self,
        op_id: str,
        what: str,
        *,
        statuses: Iterable[int] | None = None,
        **request: Any,
    ) -> Any:
        """Send a set-up request and return its JSON answer; a refusal fails the scenario."""
        exchange = self.send(op_id, **request)
        operation = self.contract.operations[op_id]
        wanted = tuple(statuses) if statuses is not None else _successes(operation)
        if exchange.status not in wanted:
            raise ConformanceFailure(
                f"Set-up failed: {what} ({op_id}) was answered HTTP {exchange.status}",
                spec=operation.spec,
                sent=exchange,
                expected=f"a valid {operation.name} request is accepted "
                f"(HTTP {' or '.join(str(s) for s in wanted)})"
                + (_SAME_SEED_HINT if 400 <= exchange.status < 500 else ""),
            )
        try:
            check_response_schema(exchange, operation, self.contract)
        except ConformanceFailure as failure:
            raise ConformanceFailure(
                f"Set-up failed: {what} ({op_id}): {failure.title}",
                spec=failure.spec,
                sent=exchange,
                received=failure.received,
                expected=failure.expected,
            ) from None
        return json_document(exchange)

    def today(self) -> date:
        """The target's date, for sandbox dates and execution dates.

        The reference server's clock can be set apart from real time (``/_control/clock``): its
        offset is read once per worker and applied locally, instead of one request per date.
        No scenario moves the shared clock (the spec 8 age scenarios age one consent through
        ``/_control/consents/{consentId}/age``), so the offset read once stays right.
        """
        if not self.profile.reference_server:
            return datetime.now(UTC).date()
        if self._clock_offset is None:
            answer = self.client.request("GET", "/_control/clock", auth=None)
            document = json_document(answer)
            offset = document.get("offsetSeconds") if isinstance(document, dict) else None
            self._clock_offset = timedelta(seconds=float(offset or 0))
        return (datetime.now(UTC) + self._clock_offset).date()

    # --- customers -----------------------------------------------------------------------------

    def customer(self, customer_type: CustomerType = "PRIVATE") -> Customer:
        """The worker's customer of that type (created once; from the profile without sandbox)."""
        return self.shared(
            f"customer:{customer_type}",
            lambda: (
                self._profile_customer(customer_type)
                if not self.profile.sandbox
                else self.new_customer(self._seed(customer_type), customer_type)
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
        private = self.profile.psu_private
        if private.psu_id is None and private.national_id is None:
            raise NotApplicable("the profile names no private PSU ([psu.private] psu_id)")
        return Customer(
            private.psu_id or "",
            private.customer_number,
            "PRIVATE",
            national_id=private.national_id,
        )

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

    def account(self) -> Account:
        """The worker's account of its private customer, with a few transactions (read only)."""
        return self.shared(
            "account",
            lambda: self.new_account(self._seed("account"), transactions=_SHARED_TRANSACTIONS),
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
                self._seed("card"), booked=_SHARED_BOOKED, pending=_SHARED_PENDING
            ),
        )

    def new_card_account(self, seed: int, *, booked: int = 0, pending: int = 0) -> CardAccount:
        """A fresh card account (SCA) with ``booked`` invoiced and ``pending`` not yet invoiced
        card transactions (E5)."""
        self.require_sandbox("a sandbox card account")
        reason = self.profile.unsupported_reason("SCA")
        if reason is not None:
            raise NotApplicable(f"the scenario needs a card account: {reason}")
        owner = self.customer("PRIVATE")
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
        return self.shared("engagement", lambda: self.new_engagement(self._seed("engagement")))

    def new_engagement(self, seed: int, roles: Sequence[str] = ("REGISTER", "VIEW")) -> Engagement:
        """A CORPORATE customer owning an agreement (SAG) and an account (SA), and an engagement
        (E6) that shows the account to a private member PSU (spec 4.3 E6)."""
        self.require_sandbox("a sandbox agreement")
        for op_id in ("SAG", "E6"):
            reason = self.profile.unsupported_reason(op_id)
            if reason is not None:
                raise NotApplicable(f"the scenario needs an agreement with an engagement: {reason}")
        corporation = self.new_customer(seed, "CORPORATE")
        agreement = self.create(
            "SAG",
            "creating a corporate sandbox agreement",
            body=factories.sandbox_agreement_create(seed, corporation.customer_id),
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
        member = self.customer("PRIVATE")
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

    # --- consents (spec 8; NextGenPSD2 shape assumed: operations/CC.json) ---------------------

    def consent(self) -> Consent:
        """The worker's consent on its account, confirmed through SCA, with a transaction id
        from the account transactions list (E8 reads it). From the profile without sandbox."""
        return self.shared("consent", self._make_shared_consent)

    def _make_shared_consent(self) -> Consent:
        if not self.profile.sandbox:
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
        return self.new_consent(self._seed("consent"), self.account())

    def new_consent_request(self, seed: int, account: Account) -> tuple[str, Psu]:
        """A consent (CC) on ``account`` for its owner, not yet authorised: its id and PSU."""
        reason = self.profile.unsupported_reason("CC")
        if reason is not None:
            raise NotApplicable(f"the scenario needs a consent: {reason}")
        psu = account.owner.psu
        created = self.create(
            "CC",
            "creating an account-information consent",
            psu=psu,
            body=factories.consent_request(seed, [account.iban]),
        )
        return str(created["consentId"]), psu

    def new_consent(self, seed: int, account: Account, *, approve: bool = True) -> Consent:
        """A consent (CC) on ``account`` for its owner, taken through SCA (spec 5 item 6), with
        the account's resource id (AL) and a booked transaction id (AT) read with it."""
        for op_id in ("CC", "AL", "AT"):
            reason = self.profile.unsupported_reason(op_id)
            if reason is not None:
                raise NotApplicable(f"the scenario needs a consent: {reason}")
        psu = account.owner.psu
        created = self.create(
            "CC",
            "creating an account-information consent",
            psu=psu,
            body=factories.consent_request(seed, [account.iban]),
        )
        consent_id = str(created["consentId"])
        link = _link(created, "scaRedirect")
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
            raise ConformanceFailure(
                f"Set-up failed: the consent is {status.get('consentStatus')!r} after SCA",
                spec="spec 8",
                sent=self.client.exchanges[-1] if self.client.exchanges else None,
                expected="a consent the PSU approved through SCA is valid",
            )
        account_id, transaction_id = self._first_transaction(consent_id, psu, account)
        return Consent(consent_id, psu, account_id, transaction_id, account)

    def _first_transaction(
        self, consent_id: str, psu: Psu, account: Account
    ) -> tuple[str | None, str | None]:
        consent_header = {"Consent-ID": consent_id}
        listed = self.create(
            "AL", "listing the consented accounts", psu=psu, headers=consent_header
        )
        accounts = listed.get("accounts", []) if isinstance(listed, Mapping) else []
        chosen = next(
            (item for item in accounts if item.get("iban") == account.iban),
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

    # --- SCA -----------------------------------------------------------------------------------

    def start_authorisation(
        self, op_id: str, path_values: Mapping[str, str], psu: Psu, what: str
    ) -> str:
        """Start an authorisation (E2, PA, CA) and return its scaRedirect link; the link may come
        in a 201 SCA status record or a 401 answer (spec 4.3 E2, spec 5 item 6)."""
        exchange = self.send(op_id, psu=psu, path_values=path_values)
        operation = self.contract.operations[op_id]
        if exchange.status not in (201, 401):
            raise ConformanceFailure(
                f"Set-up failed: {what} ({op_id}) was answered HTTP {exchange.status}",
                spec=operation.spec,
                sent=exchange,
                expected="HTTP 201 with the SCA status record, or 401 with _links.scaRedirect",
            )
        return check_sca_redirect(exchange)

    def complete_sca(self, link: str, psu: Psu, *, approve: bool = True) -> None:
        """The PSU goes through the redirect (the profile's SCA step)."""
        if self.sca is None:
            raise NotApplicable("the scenario needs an SCA step and none is configured")
        self.sca.complete(link, customer_number=psu.customer_number, approve=approve)

    # --- payments ------------------------------------------------------------------------------

    def payment_body(self, op_id: str, seed: int, debtor: Account | None = None) -> dict[str, Any]:
        """A valid body of E16, E17 or E18 debiting ``debtor`` (the worker's account by default)."""
        debtor_bban = (debtor or self.account()).bban if self.profile.sandbox else None
        if op_id == "E17":
            return factories.periodic_payment(seed, today=self.today(), debtor_bban=debtor_bban)
        if op_id == "E18":
            return factories.ncbct_payment(seed, debtor_bban=debtor_bban)
        return factories.ndct_payment(seed, debtor_bban=debtor_bban)

    def payment(
        self,
        seed: int,
        op_id: str = "E16",
        *,
        body: Mapping[str, Any] | None = None,
        psu: Psu | None = None,
        authorise: bool = False,
        approve: bool = True,
    ) -> Payment:
        """A fresh payment (E16, E17 or E18) for the worker's private PSU; with ``authorise``
        taken through SCA (``approve`` or cancel) before it is returned."""
        reason = self.profile.unsupported_reason(op_id)
        if reason is not None:
            raise NotApplicable(f"the scenario needs a payment: {reason}")
        psu = psu or self.psu("PRIVATE")
        chosen = dict(body) if body is not None else self.payment_body(op_id, seed)
        document = self.create(op_id, f"creating a payment ({op_id})", psu=psu, body=chosen)
        payment = Payment(
            payment_id=str(document["paymentId"]),
            operation=op_id,
            product=PRODUCT_OF_OPERATION[op_id],
            psu=psu,
            status=str(document.get("transactionStatus", "")),
            body=chosen,
            sca_link=_link(document, "scaRedirect"),
        )
        if authorise:
            self.authorise_payment(payment, approve=approve)
        return payment

    def shared_payment(self, op_id: str = "E16") -> Payment:
        """The worker's payment of ``op_id`` for scenarios that only read it (PS)."""
        return self.shared(f"payment:{op_id}", lambda: self.payment(self.seed_for(op_id), op_id))

    def payments(self, seed: int, count: int, op_id: str = "E16") -> list[Payment]:
        """``count`` fresh payments of one product (a basket's content)."""
        return [self.payment(seed * 1000 + index, op_id) for index in range(count)]

    def authorise_payment(self, payment: Payment, *, approve: bool = True) -> None:
        """Take the payment through SCA: its own scaRedirect link, or one from PA."""
        link = payment.sca_link or self.start_authorisation(
            "PA",
            {"payment-product": payment.product, "payment-id": payment.payment_id},
            payment.psu,
            "starting the payment authorisation",
        )
        self.complete_sca(link, payment.psu, approve=approve)

    def payment_status(self, payment: Payment) -> Exchange:
        """PS for ``payment`` (the caller judges the answer)."""
        return self.send(
            "PS",
            psu=payment.psu,
            path_values={"payment-product": payment.product, "payment-id": payment.payment_id},
        )

    def basket(self, seed: int, payments: Sequence[Payment]) -> Basket:
        """A signing basket (E1) of ``payments`` for their PSU."""
        psu = payments[0].psu
        document = self.create(
            "E1",
            "creating a signing basket",
            psu=psu,
            body=factories.signing_basket(payment.payment_id for payment in payments),
        )
        if not document.get("basketId"):
            raise ConformanceFailure(
                "Set-up failed: the signing basket answer carries no basketId",
                spec="spec 2.4",
                sent=self.client.exchanges[-1] if self.client.exchanges else None,
                expected="the signing basket has its basketId (E2 names the basket by it)",
            )
        return Basket(
            basket_id=str(document["basketId"]),
            payment_ids=tuple(payment.payment_id for payment in payments),
            psu=psu,
            status=str(document.get("transactionStatus", "")),
        )

    # --- reference-server controls ---------------------------------------------------------------

    def control(self, method: str, path: str, body: Any = None, *, what: str) -> Any:
        """A reference-server control (``/_control/...``); NotApplicable on any other target."""
        if not self.profile.reference_server:
            raise NotApplicable(
                f"the scenario needs to {what}, which only the reference server's controls can "
                "do (the profile says reference_server = false)"
            )
        answer = self.client.request(
            method,
            path,
            content=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json"} if body is not None else None,
            auth=None,
        )
        if answer.status >= 400:
            raise NotApplicable(
                f"the scenario needs to {what}, and the reference server's {path} answered "
                f"HTTP {answer.status}"
            )
        return json_document(answer)


def _successes(operation: Any) -> tuple[int, ...]:
    documented = tuple(sorted(status for status in operation.responses if 200 <= status < 300))
    return documented or (operation.success_status,)


def _link(document: Any, name: str) -> str | None:
    if not isinstance(document, Mapping):
        return None
    links = document.get("_links")
    link = links.get(name) if isinstance(links, Mapping) else None
    href = link.get("href") if isinstance(link, Mapping) else None
    return href if isinstance(href, str) and href else None
