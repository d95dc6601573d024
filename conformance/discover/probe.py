"""The probing side of discovery: :class:`Prober` sends signed requests through the suite's own
client (:class:`~conformance.bankside.client.TargetClient`) for the profile as decided so far,
turns a target that does not answer into a line instead of an error, and notes what each answer
created so that it is taken away again (:mod:`conformance.bankside.cleanup`)."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from conformance.bankside.cleanup import CleanupResult, Created, clean_up_one, created_by
from conformance.bankside.client import TargetClient
from conformance.bankside.request import NO_BODY, OperationRequest, Psu
from conformance.contract import bounded_json
from conformance.discover.evidence import describe
from conformance.discover.refusals import header_taught, header_value
from conformance.errors import ConformanceError

if TYPE_CHECKING:
    import httpx

    from conformance.contract import Contract
    from conformance.exchange import Exchange
    from conformance.profile import TargetProfile

__all__ = ["Prober", "document_of", "interface_answer", "told"]

#: How many headers one request is sent again with, each named by the refusal before.
_MOST_TAUGHT = 4

#: A payment id, consent id or account id no bank holds: a probe naming one reaches the
#: operation's route without touching anything.
NOBODY = "discover-0000"


class Prober:
    """Signed requests for ``profile`` (replaced as keys are decided: :meth:`adopt`), the record
    of what did not answer, and the ledger of what the answers created."""

    def __init__(
        self,
        contract: Contract,
        profile: TargetProfile,
        *,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.contract = contract
        self.profile = profile
        self._transport = transport
        self._client: TargetClient | None = None
        self.silent: list[str] = []
        self.created: list[Created] = []
        #: Everything the clean-ups of this discovery did, in all.
        self.cleaned = CleanupResult()
        #: What the probes left that no clean-up can take (a session's consent at first access).
        self.notes: list[str] = []
        self.psu = Psu(psu_id=str(uuid.UUID(int=31, version=4)))
        #: Per operation, the headers a refusal named (each sent from then on), with the
        #: refusal that taught it: the draft says which answer taught each.
        self.taught: dict[str, dict[str, Exchange]] = {}
        self._learned: dict[str, dict[str, str]] = {}
        #: Every answer, with the operation asked (the draft's findings read them).
        self.seen: list[tuple[str, Exchange]] = []
        #: Per operation, the deciding requests whose two answers told different things
        #: (``repeat``): each a line naming both (security-5.md M14).
        self.changed: dict[str, list[str]] = {}

    @property
    def client(self) -> TargetClient:
        if self._client is None:
            self._client = TargetClient.from_profile(self.profile, transport=self._transport)
            # discover keeps every answer: one larger than any of the interface's is not read
            self._client.max_answer_bytes = MAX_INTERFACE_ANSWER
        return self._client

    def adopt(self, **changes: Any) -> None:
        """Probe from now on with the profile changed so (a base URL or headers decided)."""
        self.profile = dataclasses.replace(self.profile, **changes)
        self.close()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # --- sending -------------------------------------------------------------------------------

    def request(
        self,
        op_id: str,
        *,
        path_values: Mapping[str, str] | None = None,
        query: Mapping[str, str] | None = None,
        body: Any = NO_BODY,
        headers: Mapping[str, str | None] | None = None,
        method: str | None = None,
        path: str | None = None,
        psu: Psu | None = None,
        repeat: bool = False,
    ) -> Exchange | None:
        """``op_id``'s request (the suite's headers for it, the prober's PSU), changed as given;
        the exchange, or None when the target gave no answer (the reason kept in
        :attr:`silent`). An answer that created a payment or a consent is noted.

        With ``repeat`` (a probe that decides a key) the request goes twice, and an answer is
        given only when both told the same (:func:`told`); else None, both named in
        :attr:`changed` and :attr:`silent`: a key is never decided from one answer of a bank
        whose answers change between probes (security-5.md M14)."""
        operation = self.contract.operations[op_id]
        psu = psu or self.psu
        learned: dict[str, str | None] = dict(self._learned.get(op_id, {}))
        built = OperationRequest.build(
            self, operation, psu=psu, path_values=path_values, query=query or {}, body=body,
            headers={**learned, **(headers or {})},
        )  # fmt: skip
        built = dataclasses.replace(built, method=method, path=path)
        for _ in range(_MOST_TAUGHT + 1):
            try:
                exchange = built.send(self)
            except ConformanceError as error:  # refused, timeout, TLS, a header not set: a line
                self.silent.append(f"{built.method or operation.method} {op_id}: {error.message}")
                return None
            self.seen.append((op_id, exchange))
            name = header_taught(exchange, built)
            value = None if name is None else header_value(name, self.contract, self.profile, psu)
            if name is None or value is None or len(self._learned.get(op_id, {})) >= _MOST_TAUGHT:
                break
            self._learned.setdefault(op_id, {})[name] = value
            self.taught.setdefault(op_id, {})[name] = exchange
            built = built.with_header(name, value)
        self._note_created(op_id, built.method, exchange)
        if not repeat:
            return exchange
        again: Exchange | None = None
        try:
            again = built.send(self)
        except ConformanceError as error:
            said = f"no answer ({error.message})"
        else:
            self.seen.append((op_id, again))
            self._note_created(op_id, built.method, again)
            said = describe(again)
        if again is not None and told(again) == told(exchange):
            return exchange
        line = f"answers changed between two probes of one request: {describe(exchange)}; {said}"
        self.changed.setdefault(op_id, []).append(line)
        self.silent.append(f"{built.method or operation.method} {op_id}: {line}")
        return None

    def _note_created(self, op_id: str, method: str | None, exchange: Exchange) -> None:
        if method is None and self.contract.operations[op_id].method == "POST":
            made = created_by(exchange, op_id, self.contract)
            if made is not None:
                self.created.append(made)

    def known_psu(self) -> Psu | None:
        """A PSU the bank knows: the profile's private PSU, else the first private customer of
        the sandbox's customer list (E9, read only); None when there is neither."""
        private = self.profile.psu_private
        if private.psu_id is not None:
            return Psu(psu_id=private.psu_id, customer_number=private.customer_number)
        listed = self.request("E9") if self.profile.sandbox else None
        if listed is None or listed.status != 200:
            return None
        try:
            customers = bounded_json.loads(listed.response_body or b"[]")
        except ValueError:
            return None
        for customer in customers if isinstance(customers, list) else ():
            if isinstance(customer, dict) and customer.get("customerType") == "PRIVATE":
                psu_id = customer.get("customerId")
                if isinstance(psu_id, str):
                    return Psu(psu_id=psu_id, customer_number=customer.get("customerNumber"))
        return None

    def new_customer(self, why: str = "to know how a known PSU's SCA goes") -> Psu | None:
        """A private sandbox customer made for the probes (SCU), noted as kept (made ``why``):
        the sandbox API has no operation that deletes one."""
        from conformance.generate import factories

        made = self.request("SCU", body=factories.sandbox_customer_create(31))
        customer = document_of(made)
        psu_id = customer.get("customerId")
        if made is None or made.status not in (200, 201) or not isinstance(psu_id, str):
            return None
        self.notes.append(
            f"sandbox customer {psu_id} ({customer.get('customerNumber')}): made {why}, kept "
            "(the sandbox API has no operation that deletes one)"
        )
        return Psu(psu_id=psu_id, customer_number=customer.get("customerNumber"))

    def clean_up(self) -> CleanupResult:
        """Take away every payment and consent the probes made so far (module docstring); what
        this clean-up did (also added to :attr:`cleaned`)."""
        result = CleanupResult()
        for made in self.created:
            clean_up_one(self, made, result)
        self.created.clear()
        self.cleaned.payments_cancelled += result.payments_cancelled
        self.cleaned.payments_left += result.payments_left
        self.cleaned.consents_deleted += result.consents_deleted
        self.cleaned.consents_kept += result.consents_kept
        self.cleaned.could_not += result.could_not
        return result


def told(exchange: Exchange) -> tuple[int, object, bool, str | None]:
    """What an answer tells a decision: its status, its spec 7 code, whether it is the
    interface speaking (:func:`interface_answer`) and its ``Allow``; two answers to one request
    that differ here changed between probes (an id or a timestamp in the message may differ)."""
    return (
        exchange.status,
        document_of(exchange).get("code"),
        interface_answer(exchange),
        exchange.response_header("allow"),
    )


def document_of(exchange: Exchange | None) -> dict[str, Any]:
    """The answer's JSON object, or an empty one."""
    if exchange is None:
        return {}
    try:
        document = bounded_json.loads(exchange.response_body or b"null")
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}


#: The largest answer taken for the interface's: its answers are small JSON documents.
MAX_INTERFACE_ANSWER = 1024 * 1024


def interface_answer(exchange: Exchange | None) -> bool:
    """Whether an answer is the interface speaking: JSON or empty, not a server error, not a
    redirect and not larger than any answer of the interface (a 5xx, an HTML page, a redirect to
    a login page or a body of megabytes decides nothing: security-5.md H5)."""
    if exchange is None or exchange.status >= 500 or 300 <= exchange.status < 400:
        return False
    if len(exchange.response_body) > MAX_INTERFACE_ANSWER:
        return False
    if not exchange.response_body:
        return True
    try:
        bounded_json.loads(exchange.response_body)
    except ValueError:
        return False
    return True
