"""The application: state (contract, store, clock, faults, trust) and the dispatch pipeline.

``Application.dispatch(request) -> Response`` is the whole server minus the socket: route
(reference-server-only routes first, then the contract), authenticate and check headers (spec 5,
spec 4.2), validate parameters and body (the contract's schemas, then the cross-field checks of
``conformance.contract.crossfield``), call the handler, and turn every refusal into the spec 7 error
body. Tests can call it directly without HTTP.

The pipeline of a contract operation, in order:

1. the routes outside the contract (``pipeline.routing``: ``/_control/...``, ``/sca/...``), then
   the contract's router; no match is 405 with ``Allow`` where another method matches, 403
   ``PRODUCT_INVALID`` / 404 ``PRODUCT_UNKNOWN`` for a payment path whose product another
   operation takes / none takes, else 404 ``RESOURCE_UNKNOWN``;
2. the resource modules' ``on_request`` hooks (the batch catches up with the clock);
3. the bearer token of a profile's ``[oauth]`` (``pipeline.tokens``), then ``pipeline.auth``
   (headers, Digest, Signature, certificate, roles, PSU: its docstring lists the order) and
   ``pipeline.certificates`` (revocation, a QWAC-type seal, the QWAC's roles and organisation);
4. ``pipeline.validation``: parameters, body (415, malformed JSON, schema), then the cross-field
   rules, every violation listed in ``tppMessages``;
5. the handler; an :class:`~reference_server.api.ApiError` is rendered by ``pipeline.errors``.
"""

from __future__ import annotations

import importlib
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING
from urllib.parse import unquote

from cryptography import x509

from conformance.contract import load_contract
from conformance.contract.catalogue import (
    TRACE_NOT_ALLOWED,
    UNKNOWN_PATH,
    UNKNOWN_PRODUCT,
    WITHOUT_PREFIX,
    WRONG_METHOD,
)
from conformance.contract.facts import PAYMENT_STYLE_FAMILIES
from conformance.signing.revocation import RevocationLists
from reference_server.api import ApiError, AuthContext, Call, Handler, Request, Response, Route
from reference_server.faults import FAULTS, check_names
from reference_server.faults.trace import SwitchTrace
from reference_server.model.bank_style import (
    BankStyle,
    bank_methods,
    contract_route,
    inbound_path,
    outbound_text,
)
from reference_server.model.clock import Clock
from reference_server.model.readings import READINGS, check_readings
from reference_server.model.replay import SignatureMemory
from reference_server.model.store import Store
from reference_server.model.tokens import TokenIssuer
from reference_server.pipeline import (
    auth,
    certificates,
    errors,
    response_headers,
    tokens,
    validation,
)
from reference_server.pipeline.due import due, refuse
from reference_server.pipeline.routing import Router
from reference_server.resources import MODULES
from reference_server.services import existing_data

if TYPE_CHECKING:
    from conformance.contract import Contract, Operation

__all__ = ["Application", "Throttle"]


class Throttle:
    """A gateway's rate limit, for testing a client against one: every ``every``-th contract
    request (0: none) is answered 429 ACCESS_EXCEEDED with ``Retry-After: retry_after``, and so
    is every request beyond ``rate`` a second (0: no limit; a bucket of one second's requests,
    as a bank's profile states its limit with ``rate_limit``)."""

    def __init__(self, every: int = 0, retry_after: int = 1, *, rate: float = 0.0) -> None:
        self.every = every
        self.retry_after = retry_after
        self.rate = rate
        self._count = itertools.count(1)
        self._lock = threading.Lock()
        self._tokens = max(rate, 1.0)
        self._refilled = time.monotonic()

    def due(self) -> bool:
        if self.every > 0 and next(self._count) % self.every == 0:
            return True
        return self.rate > 0 and not self._take()

    def _take(self) -> bool:
        with self._lock:
            now = time.monotonic()
            capacity = max(self.rate, 1.0)
            self._tokens = min(capacity, self._tokens + (now - self._refilled) * self.rate)
            self._refilled = now
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True

    def answer(self) -> Response:
        refused = errors.render(ApiError(429, "ACCESS_EXCEEDED", "rate limit: try again later"))
        return replace(refused, headers=(*refused.headers, ("Retry-After", str(self.retry_after))))


#: Methods no operation takes: on a known path they get 405 with Allow like any other.
_UNSUPPORTED_METHODS = frozenset({"TRACE", "CONNECT"})

logger = logging.getLogger("reference_server")

_LOOPBACK = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1", "localhost"})


class Application:
    """One server's state and behaviour. Build it, then call :meth:`dispatch` per request."""

    def __init__(
        self,
        *,
        contract: Contract | None = None,
        store: Store | None = None,
        clock: Clock | None = None,
        faults: Iterable[str] = (),
        trust_ca: x509.Certificate | Iterable[x509.Certificate] | None = None,
        modules: Iterable[str] | None = None,
        throttle: Throttle | None = None,
        bank: BankStyle | None = None,
        shared_sandbox: bool = False,
        replay_protection: bool = True,
        revocation: RevocationLists | None = None,
        token_lifetime: float = 3600.0,
        switch_trace: SwitchTrace | None = None,
    ) -> None:
        self.contract: Contract = load_contract() if contract is None else contract
        #: The bank a profile describes (``--profile``); the bundled server's defaults without.
        self.bank = bank or BankStyle()
        self.throttle = throttle or Throttle()
        self.signatures = SignatureMemory()
        self.ownership_checks = not shared_sandbox
        self.replay_protection = replay_protection
        self.store = store or Store()
        self.clock = clock or Clock()
        self.faults = check_names(faults)
        #: Where the fault switches each request asked are written (``--switch-trace``: the
        #: self-check's recording run), or None.
        self.switch_trace = switch_trace
        #: The readings played (``model/readings.py``): the played bank's (a profile's
        #: ``readings``), each name checked.
        self.readings = check_readings(self.bank.readings)
        if self.reads("sca-started-at-creation"):
            self.bank = replace(self.bank, sca_at_creation=True)
        #: The CAs a signing certificate must chain to (``--trust``, repeatable); empty: any CA.
        self.trust_cas: tuple[x509.Certificate, ...] = (
            ()
            if trust_ca is None
            else (trust_ca,)
            if isinstance(trust_ca, x509.Certificate)
            else tuple(trust_ca)
        )
        #: The serials the CAs have revoked (``--crl``).
        self.revocation = revocation or RevocationLists.of(())
        #: The bank's OAuth server's tokens (``[oauth]``), each valid ``token_lifetime`` seconds.
        self.tokens = TokenIssuer(token_lifetime)
        self.logger = logger
        self.modules = _load_modules(modules)
        handlers: dict[str, Handler] = {}
        routes: list[Route] = []
        self._request_hooks: list[Callable[[Application], None]] = []
        self._reset_hooks: list[Callable[[Application], None]] = []
        for module in self.modules:
            for operation_id, handler in getattr(module, "OPERATIONS", {}).items():
                if operation_id in handlers:
                    raise ValueError(f"operation {operation_id} has two handlers")
                handlers[operation_id] = handler
            routes.extend(getattr(module, "ROUTES", ()))
            if hasattr(module, "bank_routes"):  # the played bank's own routes (``--profile``)
                routes.extend(module.bank_routes(self.bank))
            if hasattr(module, "on_request"):
                self._request_hooks.append(module.on_request)
            if hasattr(module, "on_reset"):
                self._reset_hooks.append(module.on_reset)
        self.handlers: Mapping[str, Handler] = MappingProxyType(handlers)
        self.router = Router(routes)
        if self.bank.existing is not None:  # a production-like bank's data (``--profile``)
            self._reset_hooks.append(existing_data.seed)
            existing_data.seed(self)

    # -- state ----------------------------------------------------------------------------------

    def faulty(self, name: str) -> bool:
        """Whether the deliberate fault ``name`` is switched on (``--fault NAME``).

        A name the registry does not know raises, so that a misspelt check fails loudly instead
        of never breaking anything.
        """
        if name not in FAULTS:
            raise ValueError(f"no fault is named {name!r} (reference_server.faults)")
        if self.switch_trace is not None:
            self.switch_trace.asked(name)
        return name in self.faults

    def reads(self, name: str) -> bool:
        """Whether the reading ``name`` is played (the profile's ``readings``).

        A name the table (``model/readings.py``) does not know raises, as :meth:`faulty` does.
        """
        if name not in READINGS:
            raise ValueError(f"no reading is named {name!r} (model/readings.py)")
        return name in self.readings

    def reset(self) -> None:
        """Empty the store and set the clock back to real time (``/_control/reset``)."""
        self.store.reset()
        self.clock.reset()
        for hook in self._reset_hooks:
            hook(self)

    def close(self) -> None:
        self.store.close()
        if self.switch_trace is not None:
            self.switch_trace.close()

    # -- dispatch -------------------------------------------------------------------------------

    def dispatch(self, request: Request) -> Response:
        """Answer one request. Never raises: every failure becomes a spec 7 error answer. A bank
        style with its own product identifiers is applied around it (``bank_style``)."""
        if not self.bank.product_ids:
            return self._dispatch(request)
        answer = self._dispatch(replace(request, path=inbound_path(self.bank, request.path)))
        headers = tuple(
            (name, outbound_text(self.bank, value.encode()).decode())
            if name.lower() == "location"
            else (name, value)
            for name, value in answer.headers
        )
        return replace(answer, body=outbound_text(self.bank, answer.body), headers=headers)

    def _dispatch(self, request: Request) -> Response:
        started = time.perf_counter()
        operation: Operation | None = None
        payment_style = False
        try:
            routed = self.router.match(request.method, request.path)
            if routed is not None:
                return self._call_route(request, routed.route, routed.path_params)
            allowed = self.router.allowed_methods(request.path)
            if allowed:
                raise _method_not_allowed(self.contract, request, allowed)
            if request.method == "OPTIONS":
                return self._options(request)
            if self.throttle.due():
                return self.throttle.answer()
            if request.method in _UNSUPPORTED_METHODS and self.faulty("trace-not-implemented"):
                raise refuse(
                    due(self.contract, TRACE_NOT_ALLOWED, None),
                    f"{request.method} is not implemented",
                    code="SYSTEM_ERROR",
                    fault_status=501,
                )
            matched = self.contract.match(*contract_route(self.bank, request.method, request.path))
            if matched is None:
                payment_style = self._looks_like_payment(request.path)
                raise self._unrouted(request)
            operation, path_params = matched
            payment_style = operation.family in PAYMENT_STYLE_FAMILIES
            return self._call_operation(request, operation, path_params)
        except ApiError as error:
            if error.status == 404 and self.faulty("server-error-on-unknown-resource"):
                error = ApiError(500, "SYSTEM_ERROR")
            answer = errors.render(
                error,
                payment_style=payment_style,
                html=self.faulty("html-errors"),
                form=errors.form_for(self, operation, payment_style=payment_style),
            )
            return response_headers.stamp(self, operation, answer)
        except Exception:
            logger.exception(
                "unhandled error in %s %s (X-Request-ID %s)",
                request.method,
                request.path,
                request.request_id,
            )
            return errors.render(
                ApiError(500, "SYSTEM_ERROR"),
                html=self.faulty("html-errors"),
                form=errors.form_for(self, operation, payment_style=payment_style),
            )
        finally:
            logger.debug(
                "dispatched %s %s in %.1f ms",
                request.method,
                request.path,
                (time.perf_counter() - started) * 1000,
            )

    def _options(self, request: Request) -> Response:
        """OPTIONS answers 204 with ``Allow`` for a known path (RFC 9110 §9.3.7), else 404."""
        allowed = self.contract.allowed_methods(request.path)
        if not allowed:
            raise self._unknown_path(request)
        return Response.empty(204, (("Allow", ", ".join((*allowed, "OPTIONS"))),))

    def _call_route(self, request: Request, route: Route, params: dict[str, str]) -> Response:
        if route.loopback_only and request.client[0] not in _LOOPBACK:
            raise ApiError(403, "FORBIDDEN", "reference-server controls answer loopback only")
        query = {name: values[0] for name, values in request.query.items() if values}
        # JSON bodies are parsed for the handler; others (the SCA page's HTML form) are left to
        # it in ``call.request.body``.
        content_type = request.headers.get("Content-Type")
        json_body = content_type is None or validation.is_json_media_type(content_type)
        body = validation.parse_body(request) if request.body and json_body else None
        call = Call(self, request, None, params, query, body, AuthContext())
        return route.handler(call)

    def _call_operation(
        self, request: Request, operation: Operation, path_params: dict[str, str]
    ) -> Response:
        for hook in self._request_hooks:
            hook(self)
        handler = self.handlers.get(operation.id)
        try:
            tokens.check_bearer(self, request)
            identity = auth.authenticate(self, request, operation)
            certificates.check(self, request, operation, identity)
        except ApiError as refused:
            raise self._with_body_problems(refused, request, operation) from None
        query = validation.parse_query(self, operation, request.query)
        validation.check_path(self, operation, path_params)
        body = validation.parse_body(request, self, operation)
        if operation.request_schema is not None:
            validation.check_body(self, operation, body)
        if handler is None:
            raise ApiError(501, "SYSTEM_ERROR", f"{operation.id} is not implemented")
        call = Call(self, request, operation, path_params, query, body, identity)
        return response_headers.stamp(self, operation, handler(call))

    def _with_body_problems(
        self, refused: ApiError, request: Request, operation: Operation
    ) -> ApiError:
        """A refusal for missing headers that also names the body's problems (schema and
        cross-field), so that one answer lists everything the request must fix (spec 7's
        ``tppMessages`` is a list); any other refusal as it is."""
        if refused.code != "HTTP_HEADER_REQUIRED" or operation.request_schema is None:
            return refused
        try:
            validation.check_body(self, operation, validation.parse_body(request, self, operation))
        except ApiError as body_problem:
            also = "; ".join(str(m.text) for m in body_problem.tpp_messages())
            return ApiError(
                refused.status,
                refused.code,
                f"{refused.message}; the body also has problems: {also}",
                path=refused.path,
                messages=(*refused.tpp_messages(), *body_problem.tpp_messages()),
            )
        return refused

    # -- routing failures -----------------------------------------------------------------------

    def _unrouted(self, request: Request) -> ApiError:
        """Why no operation matched: unknown path (404), wrong method (405 + ``Allow``), or a
        path value the template's operations do not take (the ``payment-product``):

        - a product another operation of the same family takes (NCBCT under
          ``/v1/periodic-payments``) → 403 PRODUCT_INVALID (spec 7, the E17 row);
        - a product no operation of that family takes → 404 PRODUCT_UNKNOWN (spec 7).
        """
        templates = self.contract.templates_for(request.path)
        allowed = tuple(
            sorted({op.method for op in templates} | set(bank_methods(self.bank, request.path)))
        )
        if not allowed:
            return self._unknown_path(request)
        if request.method not in allowed:
            return _method_not_allowed(self.contract, request, allowed)
        taking = [operation for operation in templates if operation.method == request.method]
        for operation in taking:
            for name, value in _refused_path_values(operation, request.path):
                if value in self._known_path_values(operation.family, name):
                    return refuse(
                        due(self.contract, UNKNOWN_PRODUCT, operation),
                        f"the payment product {value} is not offered by {operation.id} "
                        f"({operation.method} {operation.path} takes "
                        f"{', '.join(_pinned(operation, name))})",
                        code="PRODUCT_INVALID",
                        status=403,
                        path=name,
                    )
        # the operation whose product is unknown; none pins one (a bank's own path): unknown path
        pinning = [op for op in taking if any(p.pinned_values for p in op.path_parameters)]
        return refuse(
            due(self.contract, UNKNOWN_PRODUCT, pinning[0])
            if pinning
            else due(self.contract, UNKNOWN_PATH, None),
            f"{request.path} names a payment product this interface does not offer",
            code="PRODUCT_UNKNOWN",
            status=404,
            path="payment-product",
        )

    def _unknown_path(self, request: Request) -> ApiError:
        """404 for a path no operation has: ``VER-v1-prefix`` where the path is an operation's
        without its ``/v1`` prefix (spec 9), else ``ROB-unknown-path``."""
        prefixed = self.contract.templates_for(f"/v1{request.path}")
        requirement = WITHOUT_PREFIX if prefixed else UNKNOWN_PATH
        return refuse(
            due(self.contract, requirement, None),
            f"no resource at {request.path}",
            code="RESOURCE_UNKNOWN",
            status=404,
        )

    def _known_path_values(self, family: str, name: str) -> frozenset[str]:
        """Every value the operations of ``family`` pin for the path parameter ``name``: the
        products the contract knows in that family, whichever endpoint takes them."""
        return frozenset(
            value
            for operation in self.contract.operations.values()
            if operation.family == family
            for value in _pinned(operation, name)
        )

    def _looks_like_payment(self, path: str) -> bool:
        return any(op.family in PAYMENT_STYLE_FAMILIES for op in self.contract.templates_for(path))


def _method_not_allowed(contract: Contract, request: Request, allowed: tuple[str, ...]) -> ApiError:
    """405 with ``Allow`` (``ROB-wrong-method``; TRACE ``ROB-trace-not-allowed``)."""
    requirement = TRACE_NOT_ALLOWED if request.method == "TRACE" else WRONG_METHOD
    return refuse(
        due(contract, requirement, None),
        f"{request.method} is not allowed on {request.path}; allowed: {', '.join(allowed)}",
        code="BAD_REQUEST",
        status=405,
        headers=(("Allow", ", ".join(allowed)),),
    )


def _pinned(operation: Operation, name: str) -> tuple[str, ...]:
    """The values ``operation`` pins for its path parameter ``name`` (empty when free or absent)."""
    for parameter in operation.path_parameters:
        if parameter.name == name:
            return parameter.pinned_values or ()
    return ()


def _refused_path_values(operation: Operation, path: str) -> list[tuple[str, str]]:
    """The (parameter, value) pairs of ``path`` that ``operation``'s pinned path parameters do
    not take; ``path`` is known to fit ``operation.path`` segment by segment."""
    segments = path.partition("?")[0].split("/")
    refused: list[tuple[str, str]] = []
    for index, part in enumerate(operation.path.split("/")):
        if not (part.startswith("{") and part.endswith("}")) or index >= len(segments):
            continue
        name = part[1:-1]
        pinned = _pinned(operation, name)
        value = unquote(segments[index])
        if pinned and value not in pinned:
            refused.append((name, value))
    return refused


def _load_modules(names: Iterable[str] | None) -> tuple[ModuleType, ...]:
    if names is None:
        names = MODULES
    return tuple(importlib.import_module(f"reference_server.resources.{name}") for name in names)
