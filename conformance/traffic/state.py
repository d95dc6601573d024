"""What earlier exchanges let the judge expect of a later one (spec 2.4, spec 3, spec 7, spec 9).

The judge remembers, from the traffic it has seen, the payments created (their product, whether
periodic, their last status read), the baskets and their payments, the authorisations started
and their links, the outcome of an SCA seen through its status link or the reference server's
SCA page, and the sandbox transactions listed per account. From that:

- ``STATE-basket-worst-case`` (spec 2.4): a basket's status, as its creation (E1) answers it and
  as its reads (BS, BR) answer it later, is the worst case of its payments' statuses, judged when
  each payment's status was read since anything could change it. Must (its flow's requirement)
  where spec 2.4 states it: every payment in one status of the basket's list (RCVD, ACTC, RJCT),
  or one of them RJCT. The judge's own readings are should, named (:func:`worst_case`): a payment
  status outside spec 2.4's list (CANC as RJCT, PDNG or ACSC as accepted), and a basket of
  accepted and received payments read as PATC;
- ``STATE-unknown-status``: a payment status spec 3 does not list is reported as an unknown
  status (the answer that carried it also breaks its schema), never counted as accepted or
  rejected: neither the basket's worst case nor the status after an SCA is judged on it;
- ``ERR-1-reference-mix-invalid`` (spec 7 rule 1): a basket naming a periodic payment this
  traffic created is refused 400 REFERENCE_MIX_INVALID (the TPP broke it; the bank must refuse);
- ``ERR-6-pending-payment-not-deletable`` (spec 7 rule 6, spec 3): deleting a payment last read
  PDNG is refused;
- ``STATE-status-after-sca`` (spec 3, spec 5 item 6, should: its flows' requirement): after an SCA
  seen approved the payment reads an accepted status, after one seen cancelled RJCT;
- ``SB-booked-transaction-ids-stable`` (spec 9, 1.18.0): the same booked transaction keeps its id
  from one listing of an account (E3) to the next;
- ``TPP-replay`` (security, should): a state-changing request that repeats the signature of an
  earlier accepted one on the same method and request target is a replay
  (``request_rules.replayed``, the reference server's rule and key); the bank does not carry it
  out again.

A status is "fresh" only until something could change it unseen: an authorisation of the payment,
an SCA, a cancellation, or a reference-server control (clock, batch, reset). Nothing is judged on
a stale status, so concurrent clients and a moving batch never make a finding.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from conformance.checks import json_document
from conformance.contract.facts import (
    BASKET_LISTED,
    NOT_ACCEPTED,
    PAYMENT_STATUSES,
    basket_worst_status,
)
from conformance.contract.request_rules import SAFE_METHODS, replay_key, replayed
from conformance.contract.requirements import (
    BODY_SCHEMA_ERROR,
    MUST,
    AnswerDue,
    grade,
    grade_flow,
)
from conformance.report.verdicts import Finding
from conformance.traffic.model import BANK, TPP, GradedViolation
from conformance.traffic.request_checks import request_view

if TYPE_CHECKING:
    from conformance.contract import Contract, Operation
    from conformance.exchange import Exchange

__all__ = ["TrafficState"]

#: The judge's reading of the worst case where a payment's status is not in spec 2.4's list.
OUTSIDE_LIST_READING = (
    "spec 2.4 lists RCVD, ACTC, PATC and RJCT for a basket and does not say which stands for a "
    "payment status outside that list: our reading counts CANC as RJCT, RCVD as not accepted, "
    "and ACCP, ACSC, ACSP, ACWC, ACWP, PDNG and PART as accepted"
)
#: The judge's reading of a basket whose payments are partly accepted and partly received.
MIXED_READING = (
    "spec 2.4 does not say which of its basket statuses stands for payments partly accepted "
    "(ACTC) and partly received (RCVD): our reading is PATC (partially accepted)"
)
#: Why an unknown status is judged no further.
UNKNOWN_READING = (
    "a payment status spec 3 does not list is unknown: the judge counts it neither as accepted "
    "nor as rejected"
)
_CONTROL = "/_control/"
#: The reference server's read of a basket (the contract has none): its status is judged too.
_BASKET_VIEW = "/_control/signing-baskets/"


@dataclass(frozen=True)
class WorstCase:
    """The basket status due for its payments' statuses, and the reading it rests on ("" where
    spec 2.4 states it)."""

    status: str
    reading: str = ""


def worst_case(statuses: Sequence[str]) -> WorstCase:
    """The basket status for its payments' statuses (spec 3's, none unknown):
    ``facts.basket_worst_status`` (spec 2.4 "worst case", which the suite's flow and the
    reference server read too), with the reading it rests on: stated where a payment is RJCT,
    or every status is one of spec 2.4's list and the basket is not a mix of accepted and
    received payments; else our reading."""
    due = basket_worst_status(statuses)
    if due == "RJCT":
        # a rejected payment is the worst case whatever the others; CANC as RJCT is our reading
        return WorstCase(due, "" if "RJCT" in statuses else OUTSIDE_LIST_READING)
    outside = any(status not in BASKET_LISTED for status in statuses)
    reading = OUTSIDE_LIST_READING if outside else ""
    return WorstCase(due, (reading or MIXED_READING) if due == "PATC" else reading)


@dataclass
class _Payment:
    periodic: bool
    status: str | None = None  # the last status read, None when stale
    sca: str | None = None  # "approved" or "cancelled", when an SCA of it was seen


@dataclass
class _Authorisation:
    payments: tuple[str, ...]


@dataclass
class _State:
    payments: dict[str, _Payment] = field(default_factory=dict)
    baskets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: path of an authorisation's status link or SCA page → the authorisation
    links: dict[str, _Authorisation] = field(default_factory=dict)
    #: account and query → transaction fingerprint → the ids it was listed under last
    listings: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    #: the replay keys (``request_rules.replay_key``: method, target, signature value) of the
    #: state-changing requests the bank accepted
    signatures: set[str] = field(default_factory=set)
    #: seconds the reference server's clock is off real time (``/_control/clock``)
    clock_offset: float = 0.0


def _finding(
    side: str,
    rule: str,
    level: str,
    title: str,
    spec: str,
    *,
    place: str = "",
    quotes: tuple[str, ...] = (),
    reading: str = "",
) -> Finding:
    return Finding(
        level, title, spec, reading=reading, quotes=quotes, side=side, rule=rule, place=place
    )


class TrafficState:
    """The state of the traffic so far; fed one exchange at a time, in the order they ended."""

    def __init__(self, contract: Contract) -> None:
        self._contract = contract
        self._state = _State()
        self._lock = threading.Lock()

    @property
    def clock_offset(self) -> float:
        return self._state.clock_offset

    # --- before the answer is judged: what the request deserved -------------------------------

    def request_violations(
        self, exchange: Exchange, operation: Operation, body: Any
    ) -> list[GradedViolation]:
        """TPP violations only the state shows: a periodic payment in a basket, a replay."""
        with self._lock:
            found: list[GradedViolation] = []
            if operation.id == "E1" and isinstance(body, Mapping):
                found += self._periodic_in_basket(body)
            replay = self._replay(exchange)
            if replay is not None:
                found.append(replay)
            return found

    def _periodic_in_basket(self, body: Mapping[str, Any]) -> Iterator[GradedViolation]:
        ids = body.get("paymentIds")
        if not isinstance(ids, list):
            return
        periodic = [
            pid
            for pid in ids
            if isinstance(pid, str)
            and (payment := self._state.payments.get(pid)) is not None
            and payment.periodic
        ]
        if not periodic:
            return
        rule = self._contract.rule("ERR-1-reference-mix-invalid")
        grade_ = self._contract.requirement(rule.id, "E1").grade
        index = ids.index(periodic[0])
        yield GradedViolation(
            _finding(
                TPP,
                rule.id,
                grade_.level,
                f"the basket names the periodic payment {periodic[0]} (created by E17 earlier "
                "in this traffic)",
                rule.spec,
                place=f"body /paymentIds/{index}",
                quotes=grade_.quotes,
                reading=grade_.reading,
            ),
            AnswerDue(
                rule.expected_status,
                rule.expected_code,
                status_stated=grade_.level == MUST,
                code_stated=grade_.level == MUST,
                body=BODY_SCHEMA_ERROR,
            ),
        )

    def _replay(self, exchange: Exchange) -> GradedViolation | None:
        """``request_rules.replayed`` with the reference server's key, against the requests the
        bank accepted so far in this traffic."""
        violation = replayed(request_view(exchange), seen=self._state.signatures.__contains__)
        if violation is None:
            return None
        grade_ = grade(stated=False, reading=violation.reading)
        return GradedViolation(
            _finding(
                TPP,
                violation.rule,
                grade_.level,
                violation.text,
                violation.spec,
                place=violation.path,
                reading=grade_.reading,
            ),
            self._contract.requirement(violation.requirement).expected,
        )

    # --- after the answer: what the state says of it, then the state updated ------------------

    def observe(
        self, exchange: Exchange, operation: Operation | None, values: Mapping[str, str], body: Any
    ) -> list[Finding]:
        """The bank's findings the state shows on this answer, then the state moved on."""
        with self._lock:
            path = urlsplit(exchange.url).path
            if operation is None:
                return list(self._outside(exchange, path))
            findings = list(self._judge(exchange, operation, values, body))
            self._learn(exchange, operation, values, body)
            return findings

    def _judge(
        self, exchange: Exchange, operation: Operation, values: Mapping[str, str], body: Any
    ) -> Iterator[Finding]:
        status = exchange.status
        document = json_document(exchange)
        if operation.id == "E1" and status == 201 and isinstance(body, Mapping):
            yield from self._worst_case(body, document)
        elif operation.id == "PC" and 200 <= status < 300:
            payment = self._state.payments.get(values.get("payment-id", ""))
            if payment is not None and payment.status == "PDNG":
                rule = self._contract.rule("ERR-6-pending-payment-not-deletable")
                grade_ = self._contract.requirement(rule.id, "PC").grade
                yield _finding(
                    BANK,
                    rule.id,
                    grade_.level,
                    f"deleted (HTTP {status}) a payment whose status was last read PDNG",
                    rule.spec,
                    place="status",
                    quotes=grade_.quotes,
                    reading=grade_.reading,
                )
        elif operation.id in ("BS", "BR") and status == 200 and isinstance(document, Mapping):
            basket = self._state.baskets.get(values.get("basketId", ""))
            if basket is not None:
                yield from self._basket_status(basket, document, f"the basket ({operation.id})")
        elif operation.id == "PS" and status == 200 and isinstance(document, Mapping):
            yield from self._after_sca(values.get("payment-id", ""), document)
        elif operation.id == "E3" and status == 200 and isinstance(document, list):
            # the same account, filter and page: the same booked transactions
            listing = f"{values.get('mockAccountId', '')}?{urlsplit(exchange.url).query}"
            yield from self._stable_ids(listing, document)

    def _worst_case(self, body: Mapping[str, Any], document: Any) -> Iterator[Finding]:
        ids = body.get("paymentIds")
        if not isinstance(ids, list) or not isinstance(document, Mapping):
            return
        yield from self._basket_status(ids, document, "the new basket")

    def _basket_status(
        self, ids: Sequence[Any], document: Mapping[str, Any], what: str
    ) -> Iterator[Finding]:
        statuses = [
            payment.status
            for pid in ids
            if isinstance(pid, str) and (payment := self._state.payments.get(pid)) is not None
        ]
        if len(statuses) != len(ids) or any(status is None for status in statuses):
            return  # a payment not created here, or one whose status may have changed unseen
        known = [str(status) for status in statuses]
        unknown = [status for status in known if status not in PAYMENT_STATUSES]
        if unknown:
            yield _unknown_status(
                f"{what}'s worst case is not judged: a payment of it last read "
                f"{_listed(unknown)}, an unknown status (none of spec 3's payment statuses)"
            )
            return
        if not known:
            return  # a basket of no payments has no worst case: its schema's business
        expected = worst_case(known)
        got = document.get("transactionStatus")
        if got == expected.status:
            return
        grade_ = (
            grade(stated=False, reading=expected.reading)
            if expected.reading
            else grade_flow(self._contract, "basket-worst-case")
        )
        yield _finding(
            BANK,
            "STATE-basket-worst-case",
            grade_.level,
            f"{what} reads {got}, not {expected.status}, the worst case of its payments' "
            f"statuses ({', '.join(known)})",
            "spec 2.4",
            place="body /transactionStatus",
            quotes=grade_.quotes,
            reading=grade_.reading,
        )

    def _after_sca(self, payment_id: str, document: Mapping[str, Any]) -> Iterator[Finding]:
        payment = self._state.payments.get(payment_id)
        if payment is None or payment.sca is None:
            return
        status = document.get("transactionStatus")
        outcome = payment.sca
        payment.sca = None  # judged once, on the first read after the SCA
        if status not in PAYMENT_STATUSES:
            yield _unknown_status(
                f"after an SCA seen {outcome}, the payment reads {_listed([status])}, an unknown "
                "status (none of spec 3's payment statuses): not counted as accepted"
            )
            return
        if outcome == "approved" and status not in NOT_ACCEPTED:
            return
        if outcome == "cancelled" and status == "RJCT":
            return
        wanted = "an accepted status (not RCVD, RJCT or CANC)" if outcome == "approved" else "RJCT"
        flow = "payment-sca-completed" if outcome == "approved" else "payment-sca-cancelled"
        grade_ = grade_flow(self._contract, flow)
        yield _finding(
            BANK,
            "STATE-status-after-sca",
            grade_.level,
            f"after an SCA seen {outcome}, the payment reads {status}, not {wanted}",
            "spec 3, spec 5 item 6",
            place="body /transactionStatus",
            quotes=grade_.quotes,
            reading=grade_.reading,
        )

    def _stable_ids(self, listing: str, document: Sequence[Any]) -> Iterator[Finding]:
        current: dict[str, set[str]] = {}
        for item in document:
            if isinstance(item, Mapping) and isinstance(item.get("id"), str):
                current.setdefault(_fingerprint(item), set()).add(item["id"])
        before = self._state.listings.get(listing, {})
        changed = [
            (ids, before[key])
            for key, ids in current.items()
            if key in before and not ids & before[key]
        ]
        self._state.listings[listing] = {
            **before,
            **{key: frozenset(ids) for key, ids in current.items()},
        }
        if not changed:
            return
        now_ids, old_ids = changed[0]
        rule = self._contract.rule("SB-booked-transaction-ids-stable")
        grade_ = self._contract.requirement(rule.id, "E3").grade
        yield _finding(
            BANK,
            rule.id,
            grade_.level,
            f"{len(changed)} transaction(s) changed id since the same listing before "
            f"({listing}; e.g. {sorted(old_ids)[0]} is now {sorted(now_ids)[0]})",
            rule.spec,
            place="body /*/id",
            quotes=grade_.quotes,
            reading=grade_.reading,
        )

    def _learn(
        self, exchange: Exchange, operation: Operation, values: Mapping[str, str], body: Any
    ) -> None:
        state = self._state
        status = exchange.status
        document = json_document(exchange)
        if 200 <= status < 300:
            key = replay_key(request_view(exchange))
            if key is not None:
                state.signatures.add(key)
        if operation.id in ("E16", "E17", "E18"):
            self._learn_created(operation.id, status, document)
        elif operation.id in ("PS", "PC"):
            self._learn_payment(operation.id, status, document, values.get("payment-id", ""))
        elif operation.id == "E1":
            self._learn_basket(status, document, body)
        elif operation.id in ("PA", "E2"):
            self._learn_authorisation(operation.id, status, document, values)

    def _learn_created(self, operation_id: str, status: int, document: Any) -> None:
        """A payment created (E16, E17, E18): its status as the creation answered it."""
        if status == 201 and isinstance(document, Mapping):
            pid = document.get("paymentId")
            if isinstance(pid, str):
                self._state.payments[pid] = _Payment(
                    periodic=operation_id == "E17",
                    status=_status(document),
                )

    def _learn_payment(self, operation_id: str, status: int, document: Any, pid: str) -> None:
        """A payment's status read (PS), or a cancellation tried (PC: the status is unknown)."""
        payments = self._state.payments
        if operation_id == "PS" and status == 200 and isinstance(document, Mapping):
            payment = payments.get(pid)
            if payment is not None:
                payment.status = _status(document)
        elif operation_id == "PC" and pid in payments:
            payments[pid].status = None

    def _learn_basket(self, status: int, document: Any, body: Any) -> None:
        """A basket created (E1): the payments it holds, as the request named them."""
        if status == 201 and isinstance(document, Mapping):
            ids = body.get("paymentIds") if isinstance(body, Mapping) else None
            basket = document.get("basketId")
            if isinstance(basket, str) and isinstance(ids, list):
                self._state.baskets[basket] = tuple(str(pid) for pid in ids)

    def _learn_authorisation(
        self, operation_id: str, status: int, document: Any, values: Mapping[str, str]
    ) -> None:
        """An authorisation started (PA for a payment, E2 for a basket's): the statuses of its
        payments are unknown from now on, and its SCA links lead back to them."""
        if status not in (201, 401):
            return
        state = self._state
        subject = (
            (values.get("payment-id", ""),)
            if operation_id == "PA"
            else state.baskets.get(values.get("basketId", ""), ())
        )
        for pid in subject:
            if pid in state.payments:
                state.payments[pid].status = None
        if isinstance(document, Mapping):
            for path in _link_paths(document):
                state.links[path] = _Authorisation(tuple(subject))

    # --- outside the contract: SCA pages and status links, the reference server's controls ----

    def _outside(self, exchange: Exchange, path: str) -> Iterator[Finding]:
        state = self._state
        if path.startswith(_BASKET_VIEW) and exchange.method == "GET":
            document = json_document(exchange)
            basket = state.baskets.get(path.removeprefix(_BASKET_VIEW))
            if exchange.status == 200 and isinstance(document, Mapping) and basket is not None:
                yield from self._basket_status(
                    basket, document, "the basket (reference server view)"
                )
            return
        if path.startswith(_CONTROL):
            self._control(exchange, path)
            return
        authorisation = state.links.get(path)
        if authorisation is None:
            return
        outcome: str | None = None
        document = json_document(exchange)
        if exchange.method == "GET" and isinstance(document, Mapping):
            outcome = {"FINALISED": "approved", "FAILED": "cancelled"}.get(
                str(document.get("scaStatus"))
            )
        elif exchange.method == "POST" and 300 <= exchange.status < 400:
            form = parse_qs(exchange.request_body.decode("utf-8", "replace"))
            outcome = {"approve": "approved", "cancel": "cancelled"}.get(
                (form.get("action") or [""])[0]
            )
        if outcome is None:
            return
        for pid in authorisation.payments:
            payment = state.payments.get(pid)
            if payment is not None:
                payment.status = None
                payment.sca = outcome

    def _control(self, exchange: Exchange, path: str) -> None:
        """The reference server's controls: a reset forgets everything, a clock move or a batch
        run makes every status stale; the clock's offset is kept for the date rules."""
        if exchange.status >= 300:
            return
        document = json_document(exchange)
        if path.startswith(_CONTROL + "clock") and isinstance(document, Mapping):
            offset = document.get("offsetSeconds")
            if isinstance(offset, int | float):
                self._state.clock_offset = float(offset)
        if exchange.method in SAFE_METHODS:
            return
        if path.startswith(_CONTROL + "reset"):
            self._state = _State()
            return
        for payment in self._state.payments.values():
            payment.status = None
            payment.sca = None


def _unknown_status(title: str) -> Finding:
    """``STATE-unknown-status``: a status no list of the spec names, judged no further."""
    grade_ = grade(stated=False, reading=UNKNOWN_READING)
    return _finding(
        BANK,
        "STATE-unknown-status",
        grade_.level,
        title,
        "spec 3",
        place="body /transactionStatus",
        reading=grade_.reading,
    )


def _listed(statuses: Sequence[Any]) -> str:
    return ", ".join("no status" if status is None else repr(status) for status in statuses)


def _status(document: Mapping[str, Any]) -> str | None:
    status = document.get("transactionStatus")
    return status if isinstance(status, str) else None


def _link_paths(document: Mapping[str, Any]) -> Iterator[str]:
    links = document.get("_links")
    if not isinstance(links, Mapping):
        return
    for name in ("scaRedirect", "scaStatus", "self"):
        link = links.get(name)
        href = link.get("href") if isinstance(link, Mapping) else None
        if isinstance(href, str) and href:
            yield urlsplit(href).path


def _fingerprint(item: Mapping[str, Any]) -> str:
    """A listed transaction without its id and links: what stays the same from one listing of a
    booked transaction to the next."""
    return json.dumps(
        {k: v for k, v in item.items() if k not in ("id", "_links")},
        sort_keys=True,
        separators=(",", ":"),
    )
