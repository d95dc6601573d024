"""Set-up of payments and signing baskets (spec 2.4, 2.6, 4.3 E1, E16-E18), and the
factory that offers every kind of set-up data."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import Psu
from conformance.bankside.sca import sca_link
from conformance.bankside.setup_data.base import MAX_BATCH_RUNS, REFUSED_SHARE_SECONDS, T
from conformance.bankside.setup_data.consents import ConsentSetUp
from conformance.bankside.setup_data.records import (
    PRODUCT_OF_OPERATION,
    Account,
    Basket,
    Consent,
    Payment,
)
from conformance.checks import (
    NotApplicable,
    SetUpFailure,
    json_document,
)
from conformance.generate import factories

if TYPE_CHECKING:
    from conformance.exchange import Exchange


class DataFactory(ConsentSetUp):
    """Creates set-up data through the target's API; caches what read-only scenarios share.

    One per worker (the plugin builds it with the worker's client). ``run_seed`` seeds the
    shared data; fresh data takes the scenario's seed. ``sca`` completes the SCA redirects
    that consents and authorised payments need.
    """

    def payment_body(self, op_id: str, seed: int, debtor: Account | None = None) -> dict[str, Any]:
        """A valid body of E16, E17 or E18 debiting ``debtor`` (the worker's account by default)."""
        debtor_bban = debtor.bban if debtor is not None else self.debtor_bban()
        creditor = self.profile.payment_accounts.creditor_bban
        if op_id == "E17":
            return factories.periodic_payment(
                seed, today=self.today(), debtor_bban=debtor_bban, creditor_bban=creditor
            )
        if op_id == "E18":
            return factories.ncbct_payment(seed, debtor_bban=debtor_bban)
        return factories.ndct_payment(
            seed,
            debtor_bban=debtor_bban,
            creditor_bban=creditor,
            kid_reference_type=self.profile.kid_reference_type,
        )

    def payment(
        self,
        seed: int,
        op_id: str = "E16",
        *,
        body: Mapping[str, Any] | None = None,
        psu: Psu | None = None,
        authorise: bool = False,
        approve: bool = True,
        single_sca: bool = True,
    ) -> Payment:
        """A fresh payment (E16, E17 or E18) for the worker's private PSU; with ``authorise``
        taken through SCA (``approve`` or cancel) before it is returned. Where the bank starts
        a payment's SCA at its creation when asked (``[sca] start = "psu-context"``), it is
        asked (spec 4.2: PSU-Context "required for single-SCA initiation") unless
        ``single_sca`` is False: a payment meant for a signing basket."""
        reason = self.unsupported_reason(op_id)
        if reason is not None:
            raise NotApplicable(f"the scenario needs a payment: {reason}")
        psu = psu or self.psu("PRIVATE")
        settings = self.profile.sca
        if settings.start == "psu-context" and single_sca and not psu.corporate:
            psu = replace(psu, context=True)  # asks for single-SCA initiation (spec 4.2)
        chosen = dict(body) if body is not None else self.payment_body(op_id, seed)
        # Payment creation may answer 401 with the SCA link (spec 5 item 6), whatever the
        # profile says of where SCA starts; such an answer still names the payment.
        document = self.create(
            op_id,
            f"creating a payment ({op_id})",
            statuses=(201, 401),
            psu=psu,
            body=chosen,
        )
        created = self.client.exchanges[-1] if self.client.exchanges else None
        if created is not None and created.status == 401 and not document.get("paymentId"):
            raise SetUpFailure(
                f"Set-up failed: the payment creation ({op_id}) was answered HTTP 401 without "
                "a paymentId",
                spec="spec 5 item 6",
                sent=created,
                expected="a valid payment is created: HTTP 201, or 401 with _links.scaRedirect "
                "and the paymentId",
            )
        link = sca_link(document, settings)
        asked = settings.start == "creation" or (settings.start == "psu-context" and psu.context)
        if asked and (link is None or not document.get("paymentId")):
            raise SetUpFailure(
                f"Set-up failed: the payment creation ({op_id}) answer has no "
                + ("paymentId" if link is not None else "SCA link"),
                spec="spec 5 item 6",
                sent=created,
                expected="the profile says SCA starts at payment creation ([sca] start): the "
                "answer carries the paymentId and _links."
                + ("scaStatus" if settings.decoupled else "scaRedirect"),
            )
        payment = Payment(
            payment_id=str(document["paymentId"]),
            operation=op_id,
            product=PRODUCT_OF_OPERATION[op_id],
            psu=psu,
            status=str(document.get("transactionStatus", "")),
            body=chosen,
            sca_link=link,
            created=created,
        )
        if authorise:
            self.authorise_payment(payment, approve=approve)
        return payment

    def shared_payment(self, op_id: str = "E16") -> Payment:
        """The worker's payment of ``op_id`` for scenarios that only read it (PS)."""
        return self.shared(f"payment:{op_id}", lambda: self.payment(self.seed_for(op_id), op_id))

    def cancellation_pending_payment(self, seed: int, op_id: str = "E16") -> Payment:
        """An authorised payment of ``op_id`` made for the scenario of ``seed``, whose
        cancellation (PC) waits for its own authorisation (PCA, ``[cancellation] sca =
        "authorised"``): the scenario's own, so that its PCA is the first start of that
        authorisation (a bank may answer a second one as already started). A batch run may carry
        a fresh authorised payment past cancelling before PC reaches it: then another is made
        (three in all); a target that cancels at once leaves the last one cancelled, and PCA's
        own scenarios judge what it answers then. PCA's refused scenarios share one
        (:meth:`own`) while it reads the status it had when made (a batch may move it)."""

        def make(made: int) -> Payment:
            for attempt in range(3):
                payment = self.payment(
                    self.own_seed(made, f"cancellation:{op_id}:{attempt}"), op_id, authorise=True
                )
                answer = self.send("PC", psu=payment.psu, path_values=payment.path_values)
                if answer.status == 202 or not 400 <= answer.status < 500:
                    break
            return payment

        return self.own(seed, f"cancellation:{op_id}", make, still=self._status_kept)

    def own_recent(self, seed: int, name: str, make: Callable[[int], T]) -> T:
        """:meth:`own` for a datum the bank may change with time alone (a payment not yet
        authorised, its basket, a consent): refused scenarios share it for at most
        :data:`REFUSED_SHARE_SECONDS` after it was made, as a scenario's own is used at once."""
        return self.own(seed, name, make, max_age=REFUSED_SHARE_SECONDS)

    def _status_kept(self, payment: Payment, fresh: bool) -> bool:
        """Whether ``payment`` still reads (PS) the status it read when it was made (``fresh``:
        it is, and that status is noted)."""
        answer = self.payment_status(payment)
        document = json_document(answer)
        status = document.get("transactionStatus") if isinstance(document, Mapping) else None
        read = f"{answer.status}:{status}"
        if fresh:
            self._statuses[payment.payment_id] = read
        return answer.status == 200 and self._statuses.get(payment.payment_id) == read

    def payments(self, seed: int, count: int, op_id: str = "E16") -> list[Payment]:
        """``count`` fresh payments of one product (a basket's content)."""
        return [
            self.payment(seed * 1000 + index, op_id, single_sca=False) for index in range(count)
        ]

    def authorise_payment(self, payment: Payment, *, approve: bool = True) -> None:
        """Take the payment through SCA: its own SCA link from creation, or one from PA."""
        link = payment.sca_link or self.start_authorisation(
            "PA",
            payment.path_values,
            payment.psu,
            "starting the payment authorisation",
        )
        self.complete_sca(link, payment.psu, approve=approve)

    def payment_status(self, payment: Payment) -> Exchange:
        """PS for ``payment`` (the caller judges the answer)."""
        return self.send(
            "PS",
            psu=payment.psu,
            path_values=payment.path_values,
        )

    def booked_payment_consent(self, seed: int) -> Consent:
        """A consent on a fresh sandbox account whose one booked transaction is a payment from
        it (E16, authorised, booked by batch runs: spec 3; spec 4.3 E3 lists "those from
        sandbox payments"): a transaction the bank made itself, with what the bank gives a
        payment's transaction (its ``endToEndId``), which E7's creation (spec 2.9) cannot give.
        Not applicable where no batch run can be had or the payment is not booked by them."""
        account = self.new_account(seed)
        body = self.payment_body("E16", seed, debtor=account)
        payment = self.payment(seed, "E16", body=body, authorise=True)
        status = None
        for _ in range(MAX_BATCH_RUNS):
            self.run_batch("run the batch processing that books a payment")
            document = json_document(self.payment_status(payment))
            status = document.get("transactionStatus") if isinstance(document, Mapping) else None
            if status in ("ACSC", "RJCT", "CANC"):
                break
        if status != "ACSC":
            raise NotApplicable(
                f"the payment from the account was not booked by {MAX_BATCH_RUNS} batch runs "
                f"(it reads {status})"
            )
        return self.new_consent(seed, account)

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
            raise SetUpFailure(
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
