"""The plumbing of set-up: sending and checking set-up requests, the worker's cache of shared
data, the data a scenario makes for itself and what refused scenarios share instead
(:meth:`SetUpBase.own`), the target's date, the SCA steps and the reference server's controls."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar, cast

from conformance.bankside.hooks import run_batch_hook
from conformance.bankside.request import NO_BODY, OperationRequest, Psu
from conformance.bankside.sca import (
    ScaError,
    ScaRedirectBroken,
    require_sca_link,
    sca_blocked,
    sca_failure,
)
from conformance.bankside.setup_data.refusals import refused_title
from conformance.bankside.trace import record_use, setup_tag, tagged
from conformance.checks import (
    ConformanceFailure,
    NotApplicable,
    ReadingFailure,
    SetUpFailure,
    check_response_schema,
    json_document,
)
from conformance.profile.templates import apply_template, setup_operations
from conformance.scenario import scenario_seed

if TYPE_CHECKING:
    from conformance.bankside.client import TargetClient
    from conformance.bankside.sca import ScaStep
    from conformance.contract import Contract
    from conformance.exchange import Exchange
    from conformance.profile import TargetProfile


#: What a shared set-up makes.
T = TypeVar("T")

#: What a profile supplies so that a batch run can be had off the reference server.
BATCH_SUPPLY = "[hooks] batch (a command that runs the bank's batch processing or waits for it)"
#: How many batch runs a payment is given at most to be booked (ACTC → ACSP → ACSC).
MAX_BATCH_RUNS = 4
#: How long after it was made a datum the bank may change with time alone (a payment not yet
#: authorised, a consent) serves refused scenarios (``own_recent``): far below any expiry a bank
#: gives such a resource, and long enough for the scenarios of one operation, which run together.
REFUSED_SHARE_SECONDS = 30.0


@dataclass(frozen=True)
class _Failed:
    """A shared set-up that failed: raised again, afresh, for every scenario that needs it."""

    problem: ConformanceFailure | NotApplicable

    def again(self) -> ConformanceFailure | NotApplicable:
        problem = self.problem
        if isinstance(problem, NotApplicable):
            return NotApplicable(problem.reason, supply=problem.supply)
        return type(problem)(
            problem.title,
            spec=problem.spec,
            sent=problem.sent,
            received=problem.received,
            expected=problem.expected,
            related=problem.related,
        )


@dataclass
class _RefusedScope:
    """A scenario whose one request is to be refused (:meth:`SetUpBase.refused_alone`): the
    factory it runs with, its operation, the thread it runs in, and the shared data it used."""

    data: SetUpBase
    operation: str
    thread: str
    used: set[str] = field(default_factory=set)


#: The scope of the scenario running in this thread (or this pool thread's context), if any.
_REFUSED: ContextVar[_RefusedScope | None] = ContextVar("conformance_refused_scope", default=None)


_SAME_SEED_HINT = (
    "; a target that still holds the data of an earlier run with the same --seed refuses it "
    "again (the account exists, the payment is a logical duplicate): run with another seed "
    "(against a target, the default is a random one) or reset the sandbox"
)


class SetUpBase:
    """Creates set-up data through the target's API; caches what read-only scenarios share.

    One per worker (the plugin builds it with the worker's client). ``run_seed`` seeds the
    shared data; fresh data takes the scenario's seed. ``sca`` completes the SCA redirects
    that consents and authorised payments need. ``own_consent``: see the attribute.
    """

    def __init__(
        self,
        contract: Contract,
        profile: TargetProfile,
        client: TargetClient,
        *,
        run_seed: int,
        sca: ScaStep | None = None,
        own_consent: bool = False,
    ) -> None:
        self.contract = contract
        self.profile = profile
        self.client = client
        self.run_seed = run_seed
        self.sca = sca
        #: Whether the shared consent is made through CC and SCA even without the sandbox (a
        #: second identity's: the profile's consent belongs to the run's own certificate).
        self.own_consent = own_consent
        self._cache: dict[str, Any] = {}
        #: One lock per cache key: scenarios in threads side by side (``--threads``) never make
        #: the same shared data twice, and wait only for the key they need.
        self._key_locks: dict[str, threading.RLock] = {}
        self._locks_lock = threading.Lock()
        self._clock_offset: timedelta | None = None
        #: The generation of each refused scenarios' datum (:meth:`own`): a spoilt one is made
        #: afresh under the next.
        self._generations: dict[str, int] = {}
        #: When each datum of refused scenarios was made (:meth:`own`'s ``max_age``), and what
        #: each of their payments read then (its ``still``).
        self._made_at: dict[str, float] = {}
        self._statuses: dict[str, str] = {}
        #: The PSUs (their PSU-ID) whose consent this worker took at a first access, through SCA.
        self._consented: set[str] = set()

    # --- plumbing ------------------------------------------------------------------------------

    def shared(self, key: str, make: Callable[[], T]) -> T:
        """The worker's cached value of ``key``, made on first use (read-only set-up data). A
        failed set-up is remembered too, so the scenarios after it fail at once with the same
        verdict instead of repeating it."""
        record_use(key)  # the self-check's recording run (bankside/trace.py)
        if key not in self._cache:
            with self._locks_lock:
                lock = self._key_locks.setdefault(key, threading.RLock())
            with lock:  # made by the first thread to ask; the others wait for it and share it
                if key not in self._cache:
                    try:
                        with tagged(setup_tag(key)):
                            self._cache[key] = make()
                    except (ConformanceFailure, NotApplicable) as problem:
                        self._cache[key] = _Failed(problem)
        value = self._cache[key]
        if isinstance(value, _Failed):
            raise value.again()
        return cast("T", value)

    def seed_for(self, name: str) -> int:
        """The seed of the worker's shared data called ``name`` (distinct per name and run)."""
        return scenario_seed(self.run_seed, f"shared:{name}")

    def own_seed(self, seed: int, name: str) -> int:
        """The seed of the data called ``name`` that the scenario of ``seed`` makes for itself
        (distinct per name, so that one scenario's customer and account never collide)."""
        return scenario_seed(seed, f"own:{name}")

    def own(
        self,
        seed: int,
        name: str,
        make: Callable[[int], T],
        *,
        still: Callable[[T, bool], bool] | None = None,
        max_age: float | None = None,
    ) -> T:
        """The datum ``name`` the scenario of ``seed`` makes for itself, ``make(seed)`` (issue
        29: resources of its own; ``make`` derives its seeds with :meth:`own_seed`).

        Within :meth:`refused_alone`, the datum is instead the one this worker's scenarios of
        the same operation share in this thread, made once with a seed of its own: they send
        one request that the bank is to refuse, which changes nothing, so what they make would
        be used once and never again. A bank that does not refuse it (any outcome but a pass)
        spoils it, and the next such scenario gets a new one, so no acceptance reaches
        another scenario's precondition. For a datum the bank may change without a request of
        the run (a payment its batch may advance, a payment or consent it may let expire),
        ``still(datum, fresh)`` tells at each use whether it is still what the scenario needs
        (``fresh``: just made), and ``max_age`` (seconds) bounds how long after it was made it
        serves; past either it is made anew."""
        scope = _REFUSED.get()
        if scope is None or scope.data is not self:
            return make(seed)
        base = f"refused:{scope.operation}:{scope.thread}:{name}"
        scope.used.add(base)
        key = self._generation(base)
        made_at = self._made_at.get(key)
        if max_age is not None and made_at is not None and time.monotonic() - made_at > max_age:
            self._renew((base,))
            key = self._generation(base)
        datum, fresh = self._refused_datum(key, make)
        if still is None or still(datum, fresh) or fresh:
            return datum
        self._renew((base,))
        datum, fresh = self._refused_datum(self._generation(base), make)
        still(datum, fresh)  # just made: notes what it reads
        return datum

    def _generation(self, base: str) -> str:
        """The key of the current generation of the refused scenarios' datum ``base``."""
        with self._locks_lock:
            return f"{base}#{self._generations.get(base, 0)}"

    def _refused_datum(self, key: str, make: Callable[[int], T]) -> tuple[T, bool]:
        """The refused scenarios' datum ``key`` and whether this call made it."""
        fresh = key not in self._cache  # the key is this thread's alone
        datum = self.shared(key, lambda: make(self.seed_for(key)))
        if fresh:
            self._made_at[key] = time.monotonic()
        return datum, fresh

    @contextmanager
    def refused_alone(self, op_id: str) -> Iterator[None]:
        """The context of a scenario of ``op_id`` that sends one request the bank is to refuse
        and judges nothing else (the runners choose which): the data it would make for itself
        is shared with the others (:meth:`own`) while none of them is accepted. Whatever ends
        it with an exception (a failure, a should finding, a blocked set-up, not applicable)
        makes everything it used anew for the next, as does a wrong acceptance."""
        scope = _RefusedScope(self, op_id, threading.current_thread().name)
        token = _REFUSED.set(scope)
        try:
            yield
        except BaseException:
            self._renew(scope.used)
            raise
        finally:
            _REFUSED.reset(token)

    def _renew(self, bases: Iterable[str]) -> None:
        """The next use of each shared datum of ``bases`` makes it anew (:meth:`own`)."""
        with self._locks_lock:
            for base in bases:
                spoilt = self._generations.get(base, 0)
                self._generations[base] = spoilt + 1
                self._cache.pop(f"{base}#{spoilt}", None)
                self._made_at.pop(f"{base}#{spoilt}", None)

    def unsupported_reason(self, op_id: str) -> str | None:
        """Why the target does not offer ``op_id`` (the profile's reason), or None."""
        return self.profile.unsupported_reason(self.contract.operations[op_id])

    def require_sandbox(self, what: str) -> None:
        """NotApplicable unless the target has the sandbox API to create ``what`` with."""
        if not self.profile.sandbox:
            raise NotApplicable(
                f"the scenario needs {what}, which only the sandbox API can create, and the "
                "profile says sandbox = false"
            )
        for op_id in ("SCU", "SA"):
            reason = self.unsupported_reason(op_id)
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
        """One valid request of ``op_id`` (no verdict: the caller reads the answer); a sandbox
        creation's body with the profile's set-up template merged in (``[setup] templates``)."""
        template = self.profile.setup_templates.get(op_id)
        if template is not None and body is not NO_BODY:
            body = apply_template(template, body)
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
        """Send a set-up request and return its JSON answer; a refusal blocks the scenario.

        Without ``statuses`` any 2xx will do: a set-up request prepares the scenario's data, and
        where the spec shows no status (E5, E6: "Response: card transactions", "Body and
        response: engagement") the bank's choice of 200 or 201 is not what the scenario judges;
        the body is then read as the documented success's."""
        exchange = self.send(op_id, **request)
        operation = self.contract.operations[op_id]
        wanted = tuple(statuses) if statuses is not None else success_statuses(operation)
        accepted = exchange.status in wanted or (statuses is None and 200 <= exchange.status < 300)
        if not accepted:
            raise SetUpFailure(
                refused_title(
                    what,
                    op_id,
                    exchange,
                    sandbox_creation=op_id in setup_operations(self.contract.operations),
                ),
                spec=operation.spec,
                sent=exchange,
                expected=f"a valid {operation.name} request is accepted "
                f"(HTTP {' or '.join(str(s) for s in wanted)})"
                + (_SAME_SEED_HINT if 400 <= exchange.status < 500 else ""),
            )
        try:
            check_response_schema(exchange, operation, self.contract, any_success=True)
        except ReadingFailure:
            pass  # what rests on our reading of the answer does not block the set-up
        except ConformanceFailure as failure:
            raise SetUpFailure(
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

    # --- SCA -----------------------------------------------------------------------------------

    def start_authorisation(
        self, op_id: str, path_values: Mapping[str, str], psu: Psu, what: str
    ) -> str:
        """Start an authorisation (E2, PA, CA) and return its SCA link (scaRedirect, or with
        decoupled SCA the scaStatus link); the link may come in a 201 SCA status record or a 401
        answer (spec 4.3 E2, spec 5 item 6)."""
        exchange = self.send(op_id, psu=psu, path_values=path_values)
        operation = self.contract.operations[op_id]
        if exchange.status not in (201, 401):
            raise SetUpFailure(
                refused_title(what, op_id, exchange, sandbox_creation=False),
                spec=operation.spec,
                sent=exchange,
                expected="HTTP 201 with the SCA status record, or 401 with _links.scaRedirect",
            )
        return require_sca_link(exchange, self.profile.sca)

    def complete_sca(self, link: str, psu: Psu, *, approve: bool = True) -> None:
        """The PSU goes through the redirect (the profile's SCA step)."""
        if self.sca is None:
            raise NotApplicable("the scenario needs an SCA step and none is configured")
        try:
            self.sca.complete(link, customer_number=psu.customer_number, approve=approve)
        except ScaRedirectBroken as broken:
            raise sca_failure(broken, self.client.exchanges) from None
        except ScaError as error:
            raise sca_blocked(error, self.client.exchanges) from None

    # --- the bank's batch processing -----------------------------------------------------------

    @property
    def can_run_batch(self) -> bool:
        """Whether a batch run can be had: the reference server's control, or the profile's
        batch hook."""
        return self.profile.reference_server or bool(self.profile.hooks.batch)

    def run_batch(self, what: str = "run the batch processing") -> None:
        """One batch processing run (spec 3): the reference server's ``/_control/batch``, else
        the profile's ``[hooks] batch``; not applicable (not judged here) without either."""
        if self.profile.reference_server:
            self.control("POST", "/_control/batch", {}, what=what)
            return
        hooks = self.profile.hooks
        if not hooks.batch:
            raise NotApplicable(
                f"the scenario needs to {what} (spec 3), which only the reference server's "
                "controls or the profile's batch hook can do (reference_server = false, no "
                "[hooks] batch)",
                supply=BATCH_SUPPLY,
            )
        run_batch_hook(hooks.batch, base_url=self.profile.base_url, timeout=hooks.batch_timeout)

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


def success_statuses(operation: Any) -> tuple[int, ...]:
    documented = tuple(sorted(status for status in operation.responses if 200 <= status < 300))
    return documented or (operation.success_status,)
