"""The handler interface: what a resource handler receives, returns and raises.

Every handler in ``reference_server.resources`` is a plain function ``(Call) -> Response``. The
HTTP plumbing (``reference_server.transport.http``) builds a :class:`Request`; the application
(``reference_server.app``) routes it, authenticates it, validates it and hands the handler a
:class:`Call` in which everything the contract can check has already been checked. A handler
signals a refusal by raising :class:`ApiError`; the application renders it in the spec 7 form
(with ``tppMessages`` for payment operations, spec 2.6).

A :class:`Call` holds ``app`` (the server as a :class:`ServerState`: store, clock, contract,
``faulty(name)``, ``reads(name)`` (a reading played), logger, trust and revocation, tokens,
``reset()``; the ``Application`` satisfies it, so handlers never import ``app.py``), ``request``
(the :class:`Request`: method, path, query, case-insensitive immutable :class:`Headers` (those of
``conformance.contract.request_rules``), the body's bytes, the client address and the DER of a TLS
client certificate), ``operation`` (the contract's; None on the routes outside it), ``path_params``
(percent-decoded), ``query`` (converted to the schema's types; absent parameters stay absent),
``body`` (the parsed JSON, already valid against the request schema and the cross-field rules; None
without a body) and ``auth`` (:class:`AuthContext`: certificate, roles, the PSU's headers RFC
2047-decoded, and the sandbox customer the PSU is);
``call.header(name)`` reads a header, decoded.

A handler answers with ``Response.json(status, document, headers=())``, ``Response.empty()``,
``Response.html(status, text)`` or ``Response.redirect(location)``; the transport adds
Content-Length, X-Request-ID and Content-Type. A refusal is raised, never returned::

    raise ApiError(400, "FORMAT_ERROR", "creditorName is too long", path="creditorName")
    raise ApiError(400, "RESOURCE_BLOCKED", "...", tpp_code="BAD_REQUEST")  # tppMessages' own code
    raise ApiError(400, "FORMAT_ERROR", messages=[TppMessage("FORMAT_ERROR", "...", "a/b")])

The application renders it (``pipeline.errors``): ``{id, system, status, code, message}`` (and
``_links`` when given), with ``tppMessages`` for the payment and basket families; any other
exception is logged and answered 500 ``SYSTEM_ERROR`` without a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from conformance.contract.request_rules import Headers
from conformance.signing import decode_header_value

if TYPE_CHECKING:
    import logging

    from cryptography import x509

    from conformance.contract import Contract, Operation
    from conformance.signing.revocation import RevocationLists
    from reference_server.model.bank_style import BankStyle
    from reference_server.model.clock import Clock
    from reference_server.model.replay import SignatureMemory
    from reference_server.model.store import Store
    from reference_server.model.tokens import TokenIssuer

__all__ = [
    "ApiError",
    "AuthContext",
    "Call",
    "Handler",
    "Headers",
    "Request",
    "Response",
    "Route",
    "ServerState",
    "TppMessage",
    "decoded_header",
    "decoded_value",
]

#: JSON value as parsed by :func:`json.loads`.
Json = Any

#: ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))`` without building an encoder
#: per call (``json.dumps`` does for any non-default option). An encoder keeps no state between
#: calls, so one is shared by every thread.
_COMPACT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


class ServerState(Protocol):
    """What handlers and pipeline stages use of the server (``reference_server.app.Application``).

    They depend on this, not on the application, so that the application can import them.
    """

    contract: Contract
    store: Store
    clock: Clock
    logger: logging.Logger
    #: The CAs a signing certificate must chain to (``--trust``); empty: any CA.
    trust_cas: tuple[x509.Certificate, ...]
    #: The bank a profile describes (``--profile``): gateway headers, the KID reference type.
    bank: BankStyle
    #: Signatures of state-changing requests seen lately (replay protection), and whether a
    #: replay is refused (off with ``--allow-replay``, for benchmarks of pre-signed requests).
    signatures: SignatureMemory
    replay_protection: bool
    #: Whether a TPP reaches only its own payments, baskets and consents (``ownership``; off
    #: with ``--shared-sandbox``).
    ownership_checks: bool
    #: The serials the CAs have revoked (``--crl``); empty: nothing is revoked.
    revocation: RevocationLists
    #: The access tokens and authorisation codes issued (``[oauth]`` of ``--profile``).
    tokens: TokenIssuer

    def faulty(self, name: str) -> bool:
        """Whether the deliberate fault ``name`` is switched on."""
        ...

    def reads(self, name: str) -> bool:
        """Whether the reading ``name`` (``model/readings.py``) is played: one of the played
        profile's ``readings`` (``--permissive`` and ``--demanding`` play those of their own)."""
        ...

    def reset(self) -> None:
        """Empty the store and set the clock back to real time."""
        ...


@dataclass(frozen=True)
class Request:
    """One HTTP request as received: nothing interpreted beyond the request line and headers."""

    method: str
    path: str  # the path as sent, without the query (the routers decode path values)
    target: str  # the raw request target (path + query) as sent, for the signing string
    query: Mapping[str, tuple[str, ...]]  # raw query values, every repetition kept
    headers: Headers
    body: bytes = b""
    client: tuple[str, int] = ("127.0.0.1", 0)
    #: The certificate the client showed in the TLS handshake (DER; the QWAC of mutual TLS),
    #: None over plain HTTP or without one.
    client_certificate: bytes | None = None

    @property
    def request_id(self) -> str | None:
        value: str | None = self.headers.get("X-Request-ID")
        return value


@dataclass(frozen=True)
class AuthContext:
    """Who is calling, as established by ``reference_server.pipeline.auth`` (spec 5).

    ``certificate`` is the verified TPP signing certificate (None only when the operation is not
    authenticated, i.e. reference-server-only routes). ``roles`` are the PSD2 roles it carries
    (None when it carries none). The PSU fields are the decoded header values (RFC 2047 decoded);
    ``customer_id`` is the sandbox customer the PSU-ID (or X-PSU-IDENTITY) belongs to, if any.
    """

    certificate: x509.Certificate | None = None
    roles: frozenset[str] | None = None
    psu_id: str | None = None
    psu_identity: str | None = None
    psu_context: str | None = None
    customer_id: str | None = None


@dataclass(frozen=True)
class Call:
    """What a handler receives: the request after routing, authentication and validation.

    ``operation`` is None for the reference-server-only routes (``/_control/...``, ``/sca/...``).
    ``query`` holds the query parameters converted to their schema types (bool, int, date string)
    for contract operations, and the raw first value of each parameter otherwise. ``body`` is the
    parsed JSON body (validated against the operation's request schema), or None without a body.
    """

    app: ServerState
    request: Request
    operation: Operation | None
    path_params: Mapping[str, str]
    query: Mapping[str, Any]
    body: Json
    auth: AuthContext

    @property
    def headers(self) -> Headers:
        return self.request.headers

    def header(self, name: str) -> str | None:
        """A header value, RFC 2047-decoded (spec 5 part 3)."""
        return decoded_header(self.request.headers, name)


@dataclass(frozen=True)
class Response:
    """What a handler returns. Build it with :meth:`json`, :meth:`empty`, :meth:`html`."""

    status: int
    body: bytes = b""
    content_type: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    document: Json = None  # the JSON document ``body`` was serialised from (tests check it)

    @classmethod
    def json(cls, status: int, document: Json, headers: Iterable[tuple[str, str]] = ()) -> Response:
        body = _COMPACT_JSON.encode(document).encode("utf-8")
        return cls(status, body, "application/json", tuple(headers), document)

    @classmethod
    def empty(cls, status: int = 204, headers: Iterable[tuple[str, str]] = ()) -> Response:
        return cls(status, b"", None, tuple(headers))

    @classmethod
    def html(cls, status: int, text: str, headers: Iterable[tuple[str, str]] = ()) -> Response:
        return cls(status, text.encode("utf-8"), "text/html; charset=utf-8", tuple(headers))

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> Response:
        return cls(status, b"", None, (("Location", location),))

    def with_headers(self, *extra: tuple[str, str]) -> Response:
        return Response(
            self.status, self.body, self.content_type, self.headers + extra, self.document
        )


@dataclass(frozen=True)
class TppMessage:
    """One ``tppMessages`` entry (spec 2.6): category ERROR or WARNING, a spec 7 code."""

    code: str
    text: str | None = None
    path: str | None = None
    category: str = "ERROR"

    def to_json(self) -> dict[str, str]:
        document = {"category": self.category, "code": self.code}
        if self.path is not None:
            document["path"] = self.path
        if self.text is not None:
            document["text"] = self.text[:512]  # spec 2.6: text at most 512 characters
        return document


class ApiError(Exception):
    """A refusal, rendered by the application as the spec 7 error body.

    ``code`` goes to the body's ``code``; ``message`` to its ``message``. For payment and basket
    operations the body also carries ``tppMessages``: ``messages`` when given, otherwise one
    ERROR entry built from ``tpp_code or code``, ``message`` and ``path``. ``links`` becomes the
    body's ``_links`` (the 401 ``scaRedirect`` answer, spec 5 part 6). ``headers`` are added to
    the response (``Allow`` on 405).
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str | None = None,
        *,
        path: str | None = None,
        tpp_code: str | None = None,
        messages: Iterable[TppMessage] = (),
        links: Mapping[str, Any] | None = None,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.path = path
        self.tpp_code = tpp_code
        self.messages = tuple(messages)
        self.links = links
        self.headers = tuple(headers)

    def tpp_messages(self) -> tuple[TppMessage, ...]:
        if self.messages:
            return self.messages
        return (TppMessage(self.tpp_code or self.code, self.message, self.path),)


#: A resource handler.
Handler = Callable[[Call], Response]


@dataclass(frozen=True)
class Route:
    """A reference-server-only route outside the contract (``/_control/...``, ``/sca/...``).

    ``path`` is a template with ``{name}`` segments (one path segment each). ``loopback_only``
    refuses callers not on 127.0.0.1/::1 with 403. These routes are never signed.
    """

    method: str
    path: str
    handler: Handler = field(compare=False)
    loopback_only: bool = True


def decoded_header(headers: Headers, name: str) -> str | None:
    """A header value with RFC 2047 encoded words decoded (spec 5 part 3), or None."""
    value = headers.get(name)
    if value is None:
        return None
    return decoded_value(name, value)


def decoded_value(name: str, value: str) -> str:
    """``value`` of header ``name`` RFC 2047-decoded; a malformed encoding is a FORMAT_ERROR."""
    try:
        return decode_header_value(value.strip())
    except ValueError as error:
        raise ApiError(400, "FORMAT_ERROR", f"{name}: {error}", path=name) from None
