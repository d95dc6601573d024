"""The signed client every scenario talks to the target through, recording each exchange; a
target it cannot talk to is a :class:`~conformance.errors.TargetError`.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import httpx

from conformance import __version__
from conformance.bankside.oauth import TokenSource, says_token_expired
from conformance.bankside.retry import RETRYABLE_STATUSES, Pacer, RetryPolicy, worker_share
from conformance.bankside.tls import client_context, client_context_as
from conformance.bankside.trace import add_tag
from conformance.contract import bounded_json
from conformance.errors import TargetError
from conformance.exchange import JSON_MEDIA_TYPE, STANDARD_SIGNER, Exchange
from conformance.profile import TlsSettings
from conformance.signing import (
    KeyIdStyle,
    SignatureAuth,
    TppIdentity,
    default_identity,
    load_identity,
)

if TYPE_CHECKING:
    from conformance.profile import TargetProfile

__all__ = [
    "DEFAULT_AUTH",
    "HeaderValues",
    "TargetClient",
]

#: Request extension keys the client and its hooks use to pass data along with a request.
_SLOT: Final = "conformance.exchange_slot"
_SIGNING_STRING: Final = "conformance.signing_string"
_SIGNER: Final = "conformance.signer"
_CALLER_HEADERS: Final = "conformance.caller_headers"
_STARTED: Final = "conformance.started"


_USER_AGENT: Final = f"psd2-conformance/{__version__}"


class _DefaultAuth:
    """Marker for "the client's own signer" (``None`` means: send this request unsigned)."""

    def __repr__(self) -> str:
        return "DEFAULT_AUTH"


DEFAULT_AUTH: Final = _DefaultAuth()

#: Request headers for one request. ``None`` as a value removes a default header (a scenario
#: that sends no X-Request-ID); a sequence of pairs may repeat a name.
HeaderValues = Mapping[str, str | None] | Sequence[tuple[str, str | None]]


def _header_pairs(headers: httpx.Headers) -> tuple[tuple[str, str], ...]:
    encoding = headers.encoding
    return tuple((key.decode(encoding), value.decode(encoding)) for key, value in headers.raw)


# ---------------------------------------------------------------------------------------------
# Bad targets
# ---------------------------------------------------------------------------------------------


#: TLS alerts of a server that refuses the client's certificate (mutual TLS), in words.
_CLIENT_CERTIFICATE_ALERTS = {
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "requires a TLS client certificate (mutual TLS)",
    "SSLV3_ALERT_HANDSHAKE_FAILURE": "refused the TLS handshake (a client certificate missing?)",
    "TLSV1_ALERT_UNKNOWN_CA": "does not trust the CA of the TLS client certificate",
    "SSLV3_ALERT_CERTIFICATE_EXPIRED": "refused the TLS client certificate as expired",
    "SSLV3_ALERT_BAD_CERTIFICATE": "refused the TLS client certificate",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN": "refused the TLS client certificate",
    "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE": "refused the TLS client certificate as unsuitable",
}


def _causes(error: BaseException) -> Iterable[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def target_error(error: httpx.HTTPError, url: str, timeout: float | None = None) -> TargetError:
    """One sentence naming ``url`` and what went wrong (refused, DNS, TLS, timeout, not HTTP)."""
    within = f" within {timeout:g} s" if timeout is not None else ""
    if isinstance(error, httpx.ConnectTimeout):
        return TargetError(f"the target at {url} did not accept a connection{within}")
    if isinstance(error, httpx.TimeoutException):
        return TargetError(f"the target at {url} did not answer{within}")
    for cause in _causes(error):
        message = _cause_message(cause, url)
        if message is not None:
            return TargetError(message)
    hint = _https_hint(error, url)
    if isinstance(error, httpx.RemoteProtocolError):
        return TargetError(f"the target at {url} did not answer with valid HTTP ({error}){hint}")
    if isinstance(error, httpx.ConnectError):
        return TargetError(f"cannot connect to the target at {url} ({error}){hint}")
    return TargetError(f"the exchange with the target at {url} failed ({error}){hint}")


def _cause_message(cause: BaseException, url: str) -> str | None:
    """The sentence for one cause in an error's chain that names what went wrong (an untrusted or
    refused TLS certificate, a failed handshake, an unknown host, a refused connection), else
    None."""
    if isinstance(cause, ssl.SSLCertVerificationError):
        return (
            f"the TLS certificate of the target at {url} is not trusted "
            f"({cause.verify_message}); name its CA with --tls-ca or ca_certificate in the "
            "profile"
        )
    if isinstance(cause, ssl.SSLError):
        refused = _CLIENT_CERTIFICATE_ALERTS.get(str(cause.reason))
        if refused is not None:
            return (
                f"the target at {url} {refused} ({cause.reason}); the TLS client certificate "
                "is the profile's tls_certificate or --tls-cert"
            )
        return f"the TLS handshake with the target at {url} failed ({cause.reason})"
    if isinstance(cause, socket.gaierror):
        host = urlsplit(url).hostname
        return (
            f"the host name {host} of the target at {url} cannot be resolved; check the host "
            "in --target (or base_url in the profile)"
        )
    if isinstance(cause, ConnectionRefusedError):
        return f"the target at {url} refused the connection (is it running?)"
    return None


def _https_hint(error: httpx.HTTPError, url: str) -> str:
    """For plain HTTP sent to a port that speaks TLS (the connection reset or closed without an
    answer, or a TLS record back): the likely fix, the same URL with ``https://``."""
    if not url.startswith("http://"):
        return ""
    reset = any(isinstance(cause, ConnectionResetError) for cause in _causes(error))
    closed = isinstance(error, httpx.RemoteProtocolError)
    if not (reset or closed):
        return ""
    return f"; if it speaks TLS, give https://{url.removeprefix('http://')}"


# ---------------------------------------------------------------------------------------------
# The client
# ---------------------------------------------------------------------------------------------


@functools.cache
def _default_tls() -> ssl.SSLContext:
    """httpx's own default context (certifi's CAs, or ``SSL_CERT_FILE``/``SSL_CERT_DIR``), made
    once per process and shared: making one loads the CA bundle (about 15 ms), and a run makes a
    client per identity, the tests hundreds."""
    return httpx.create_ssl_context()


class TargetClient:
    """One keep-alive ``httpx.Client`` to the target, signing and recording every request.

    ``base_url`` (plus ``path_prefix``) is what the spec's paths are relative to (spec,
    introduction: "All paths are relative to {base_url}"). By default the client signs with a
    :class:`~conformance.signing.SignatureAuth` for ``identity`` (the bundled default test
    identity when None); ``auth`` replaces that signer, ``sign=False`` sends unsigned requests.
    ``transport`` is for tests (``httpx.MockTransport``). ``verify`` is True, False, a CA file,
    or an ``ssl.SSLContext``.
    """

    def __init__(
        self,
        base_url: str,
        *,
        path_prefix: str = "",
        identity: TppIdentity | None = None,
        digest_algorithm: str = "SHA-256",
        sign: bool = True,
        auth: httpx.Auth | None = None,
        timeout: float = 30.0,
        connect_timeout: float | None = None,
        verify: bool | str | Path | ssl.SSLContext = True,
        transport: httpx.BaseTransport | None = None,
        max_connections: int = 20,
        retry: RetryPolicy | None = None,
        proxy: str | None = None,
        pacer: Pacer | None = None,
        static_headers: Mapping[str, str] | None = None,
        key_id_style: KeyIdStyle | None = None,
    ) -> None:
        self.retry = retry or RetryPolicy()
        #: The largest answer read (None: any); a larger one ends its request (``discover``
        #: sets it: it keeps its answers, M13).
        self.max_answer_bytes: int | None = None
        self._key_id_style = key_id_style
        self.pacer = pacer or Pacer(None)
        #: The files a replay of this client's exchanges signs with (``Exchange.replay_with``).
        self.replay_with: tuple[tuple[str, str], ...] = ()
        self.base_url = (base_url.rstrip("/") + "/" + path_prefix.strip("/")).rstrip("/")
        self.timeout = timeout
        self._lock = threading.Lock()
        self._identity_value = identity
        self._digest_algorithm = digest_algorithm
        self._exchanges: list[Exchange] = []
        #: The record of the scenario running in this context (:meth:`recording`), if any.
        self._scenario_record: ContextVar[list[Exchange] | None] = ContextVar(
            f"exchanges-{id(self)}", default=None
        )
        self._auth: httpx.Auth | None
        self._auth_name: str
        if auth is not None:
            self._auth, self._auth_name = auth, type(auth).__name__
        elif sign:
            self._auth, self._auth_name = self.make_signer(), STANDARD_SIGNER
        else:
            self._auth, self._auth_name = None, ""
        if isinstance(verify, str | Path):
            verify = ssl.create_default_context(cafile=str(verify))
        #: What every ``httpx.Client`` of this client is made with (``over_tls_as`` makes more).
        self._http_options: dict[str, Any] = {
            "base_url": self.base_url + "/",
            "timeout": httpx.Timeout(timeout, connect=connect_timeout or timeout),
            "transport": transport,
            "proxy": proxy,
            "http1": True,
            "http2": False,
            "follow_redirects": False,
            "limits": httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            "event_hooks": {
                "request": [_mark_start, add_tag],
                "response": [self._bound_answer, self._record],
            },
        }
        #: The profile's ``[headers]`` (an API gateway's), on every request; a replay's profile
        #: sends them again, so its reproduction command does not repeat them.
        self._static = frozenset(name.lower() for name in static_headers or {})
        self._static_values = dict(static_headers or {})
        self._http = self._new_http(verify)
        #: The TLS settings of the profile (``over_tls_as`` keeps their CA trust), and the
        #: clients that show another TLS client certificate, by identity.
        self.tls_settings: TlsSettings | None = None
        self._tls_variants: dict[TppIdentity, TargetClient] = {}
        #: Where the bearer token of every request comes from (``[oauth]``); None: none is sent.
        self.tokens: TokenSource | None = None
        self._is_variant = False

    def _bearer(self, headers: httpx.Headers) -> str | None:
        """Put the current access token on ``headers`` (unless the caller set Authorization
        itself, or removed it); the token, None when none was put."""
        if self.tokens is None or "authorization" in headers:
            return None
        token = self.tokens.token()
        headers["Authorization"] = f"Bearer {token}"
        return token

    def _new_http(self, verify: bool | ssl.SSLContext) -> httpx.Client:
        http = httpx.Client(
            verify=_default_tls() if verify is True else verify, **self._http_options
        )
        # Accept is a per-request default (so one request can go without it); the rest of
        # httpx's client defaults stay, with a User-Agent that names the suite.
        del http.headers["Accept"]
        http.headers["User-Agent"] = _USER_AGENT
        http.headers.update(self._static_values)
        return http

    def over_tls_as(self, identity: TppIdentity) -> TargetClient:
        """This client showing ``identity`` as its TLS client certificate (another QWAC) in the
        handshake: it signs as this one does, and its exchanges are recorded with this one's.
        Made once per identity; closed with this client."""
        with self._lock:
            variant = self._tls_variants.get(identity)
            if variant is None:
                variant = copy.copy(self)
                variant._http = self._new_http(
                    client_context_as(self.tls_settings or TlsSettings(), identity)
                )
                variant._tls_variants = {}
                variant._is_variant = True
                self._tls_variants[identity] = variant
        return variant

    def make_signer(
        self,
        signer: Callable[..., httpx.Auth] | None = None,
        *,
        identity: TppIdentity | None = None,
        **options: Any,
    ) -> httpx.Auth:
        """A signer for this client's identity whose signing strings end up in the record.

        ``signer`` is :class:`~conformance.signing.SignatureAuth` or one of its deliberately
        broken siblings (``WrongKeySigner``, ``StaleDigestSigner``, ...); ``options`` go to its
        constructor (``digest_algorithm`` defaults to the client's). Pass the result as
        ``auth=`` of one request.
        """
        chosen = identity if identity is not None else self.identity()
        options.setdefault("digest_algorithm", self._digest_algorithm)
        options.setdefault("on_signed", self.on_signed)
        if self._key_id_style is not None:
            options.setdefault("key_id_style", self._key_id_style)
        factory = signer if signer is not None else SignatureAuth
        return factory(chosen.signing_credentials(), **options)

    def identity(self) -> TppIdentity:
        """The TPP identity this client signs as (the default test identity unless given)."""
        if self._identity_value is None:
            self._identity_value = default_identity()
        return self._identity_value

    @classmethod
    def from_profile(
        cls,
        profile: TargetProfile,
        *,
        identity: TppIdentity | None = None,
        digest_algorithm: str = "SHA-256",
        sign: bool = True,
        transport: httpx.BaseTransport | None = None,
    ) -> TargetClient:
        """A client for ``profile``: its URL, timeout, CA, and its certificate (or ``identity``)."""
        if identity is None and sign and profile.certificate is not None:
            identity = load_identity(
                profile.certificate, profile.key, password=profile.key_password
            )
        client = cls(
            profile.base_url,
            identity=identity,
            digest_algorithm=digest_algorithm,
            sign=sign,
            timeout=profile.connection.timeout,
            connect_timeout=profile.connection.connect_timeout,
            verify=client_context(profile.tls),
            transport=transport,
            retry=RetryPolicy(profile.connection.retry_attempts, profile.connection.retry_max_wait),
            proxy=profile.connection.proxy,
            pacer=Pacer(worker_share(profile.connection.rate_limit, _worker_count())),
            static_headers=profile.static_headers(),
            key_id_style=profile.key_id,
        )
        client.tls_settings = profile.tls
        if profile.oauth is not None:
            client.tokens = TokenSource(
                profile.oauth,
                profile.base_url,
                verify=client_context(profile.tls),
                identity=client.identity() if sign else identity,
                timeout=profile.connection.timeout,
                transport=transport,
                proxy=profile.connection.proxy,
            )
            client._static |= {"authorization"}  # a replay's profile fetches its own token
        files = {"profile": profile.source}
        if identity is not None and profile.certificate is not None:
            files.update(cert=profile.certificate, key=profile.key)
        files.update(
            {
                "tls-cert": profile.tls.certificate,
                "tls-key": profile.tls.key,
                "tls-ca": profile.tls.ca_certificate,
            }
        )
        client.replay_with = tuple((name, str(path)) for name, path in files.items() if path)
        return client

    # --- hooks ---------------------------------------------------------------------------------

    @staticmethod
    def on_signed(request: httpx.Request, signing_string: str) -> None:
        """The signer's hook: keeps the signing string with the request for the record.

        Pass it as ``on_signed`` to a per-request signer so its exchanges show what it signed.
        """
        request.extensions[_SIGNING_STRING] = signing_string

    def _bound_answer(self, response: httpx.Response) -> None:
        """Response hook, before the body is read: the whole answer must arrive within the
        timeout counted from the request's start. httpx's timeout bounds each read, so a bank
        that drips a byte at a time would otherwise hold a run or ``discover`` for ever (M12)."""
        started = response.request.extensions.get(_STARTED)
        if started is None or self.timeout is None:
            return
        response.stream = _DeadlineStream(
            response.stream,
            started + self.timeout,
            self.timeout,
            response.request,
            max_bytes=self.max_answer_bytes,
        )

    def _record(self, response: httpx.Response) -> None:
        request = response.request
        slot = request.extensions.get(_SLOT)
        if slot is None:  # not one of ours (check_reachable)
            return
        response.read()
        started = request.extensions.get(_STARTED)
        elapsed = 0.0 if started is None else time.perf_counter() - started
        exchange = Exchange(
            method=request.method,
            url=str(request.url),
            request_headers=_header_pairs(request.headers),
            request_body=request.content,
            signing_string=request.extensions.get(_SIGNING_STRING),
            status=response.status_code,
            response_headers=_header_pairs(response.headers),
            response_body=response.content,
            elapsed=elapsed,
            signer=request.extensions.get(_SIGNER, ""),
            caller_headers=request.extensions.get(_CALLER_HEADERS, frozenset()),
            profile_headers=self._static,
            base_url=self.base_url,
            replay_with=self.replay_with,
        )
        slot.append(exchange)
        with self._lock:
            self._record_list().append(exchange)

    # --- requests ------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | Sequence[tuple[str, Any]] | None = None,
        json: Any = None,
        content: bytes | str | None = None,
        headers: HeaderValues | None = None,
        auth: httpx.Auth | _DefaultAuth | None = DEFAULT_AUTH,
    ) -> Exchange:
        """Send one request and return its recorded :class:`Exchange` (whatever the status).

        ``path`` is relative to the base URL (``/v1/payments/...``). ``json`` is serialised
        compactly (UTF-8, not ASCII-escaped); ``content`` is sent as is (a malformed body on
        purpose). ``json=None`` means no body: a JSON ``null`` body goes as ``content="null"``.
        Every request gets a fresh X-Request-ID (spec 4.2: "unique per call") and
        ``Accept: application/json``, and ``Content-Type: application/json`` when it has a body;
        ``headers`` override them, and a ``None`` value removes one. ``auth`` replaces the signer
        for this request (None: unsigned).
        """
        body = _body_bytes(json, content)
        chosen_auth = self._auth if isinstance(auth, _DefaultAuth) else auth
        signer = (
            self._auth_name
            if isinstance(auth, _DefaultAuth)
            else ("" if auth is None else type(auth).__name__)
        )
        slot: list[Exchange] = []
        url = self.base_url + "/" + path.lstrip("/")
        throttled: list[Exchange] = []
        refused: list[Exchange] = []  # answers that refused the access token as expired
        waited = 0.0
        sent_headers = _request_headers(headers, has_body=bool(body))
        # every request the TPP signs; the PSU's own steps (the SCA pages) and the reference
        # server's controls go unsigned and carry no token either
        token = self._bearer(sent_headers) if chosen_auth is not None else None
        while True:
            self.pacer.wait()
            try:
                self._http.request(
                    method,
                    path.lstrip("/"),
                    params=_query(params),
                    content=body,
                    headers=sent_headers,
                    auth=chosen_auth,
                    extensions={
                        _SLOT: slot,
                        _SIGNER: signer,
                        _CALLER_HEADERS: _given_names(headers),
                    },
                )
            except httpx.HTTPError as error:
                raise target_error(error, url, self.timeout) from error
            answer = slot[-1]
            if token is not None and not refused and _refuses_token(answer):
                # the token expired under the request: once more with a fresh one (both answers
                # stay with the exchange, ``token_refreshes``)
                assert self.tokens is not None
                refused.append(answer)
                token = self.tokens.refresh(token)
                sent_headers["Authorization"] = f"Bearer {token}"
                continue
            if answer.status not in RETRYABLE_STATUSES:
                break
            delay = self.retry.delay(
                answer.status, answer.response_header("retry-after"), len(throttled), waited
            )
            if delay is None:
                break
            throttled.append(answer)
            waited += delay
            time.sleep(delay)
        if throttled or refused:
            # the record keeps every attempt; the final one carries the earlier ones with it
            final = replace(answer, retries=tuple(throttled), token_refreshes=tuple(refused))
            self._replace_recorded(answer, final)
            answer = final
        return answer

    def _replace_recorded(self, answer: Exchange, final: Exchange) -> None:
        """``final`` in the record where ``answer`` was (the latest such entry)."""
        with self._lock:
            record = self._record_list()
            for index in range(len(record) - 1, -1, -1):
                if record[index] is answer:
                    record[index] = final
                    break

    def get(self, path: str, **kwargs: Any) -> Exchange:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> Exchange:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> Exchange:
        return self.request("PUT", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Exchange:
        return self.request("DELETE", path, **kwargs)

    def check_reachable(self) -> int:
        """Make sure the target answers HTTP at all (any status will do); return the status.

        Used at session start so that a wrong URL, a stopped server or a TLS problem is one
        clear :class:`TargetError` instead of hundreds of failed scenarios. The probe is an
        unsigned ``GET`` of the base URL and is not recorded.
        """
        try:
            response = self._http.get("", auth=None, headers={"Accept": JSON_MEDIA_TYPE})
        except httpx.HTTPError as error:
            raise target_error(error, self.base_url + "/", self.timeout) from error
        return response.status_code

    # --- the record ----------------------------------------------------------------------------

    def _record_list(self) -> list[Exchange]:
        record = self._scenario_record.get()
        return self._exchanges if record is None else record

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """A record of its own for the requests made in this context (one scenario running in
        a thread beside others): within it :attr:`exchanges` and :meth:`take_exchanges` see
        only this context's exchanges. Outside any, they see the client's shared record."""
        token = self._scenario_record.set([])
        try:
            yield
        finally:
            self._scenario_record.reset(token)

    @property
    def exchanges(self) -> tuple[Exchange, ...]:
        """Every exchange recorded so far (in this context's record, :meth:`recording`), oldest
        first."""
        with self._lock:
            return tuple(self._record_list())

    def take_exchanges(self) -> tuple[Exchange, ...]:
        """The exchanges recorded so far, forgetting them (a test collects its own, then clears)."""
        with self._lock:
            record = self._record_list()
            taken = tuple(record)
            record.clear()
        return taken

    # --- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        self._http.close()
        for variant in self._tls_variants.values():
            variant.close()
        if self.tokens is not None and not self._is_variant:
            self.tokens.close()

    def __enter__(self) -> TargetClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _refuses_token(answer: Exchange) -> bool:
    """Whether the answer says the access token expired (RFC 6750, or a TOKEN_* code)."""
    if answer.status != 401:
        return False
    try:
        document = bounded_json.loads(answer.response_body) if answer.response_body else None
    except ValueError:
        document = None
    code = document.get("code") if isinstance(document, dict) else None
    return says_token_expired(answer.status, answer.response_header("www-authenticate"), code)


def _worker_count() -> int:
    """The run's xdist workers (1 without xdist): how many processes share its rate limit."""
    try:
        return max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    except ValueError:
        return 1


class _DeadlineStream(httpx.SyncByteStream):
    """An answer's body that ends in :class:`httpx.ReadTimeout` once ``deadline`` (a
    ``time.perf_counter`` value) has passed while it streams in."""

    def __init__(
        self,
        stream: Any,
        deadline: float,
        seconds: float,
        request: httpx.Request,
        *,
        max_bytes: int | None = None,
    ) -> None:
        self._stream = stream
        self._deadline = deadline
        self._seconds = seconds
        self._request = request
        self._max_bytes = max_bytes

    def __iter__(self) -> Iterator[bytes]:
        read = 0
        for chunk in self._stream:
            if time.perf_counter() > self._deadline:
                raise httpx.ReadTimeout(
                    f"the whole answer did not arrive within {self._seconds:g} s",
                    request=self._request,
                )
            read += len(chunk)
            if self._max_bytes is not None and read > self._max_bytes:
                raise httpx.ReadError(
                    f"the answer is larger than {self._max_bytes} bytes: not read further",
                    request=self._request,
                )
            yield chunk

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


def _mark_start(request: httpx.Request) -> None:
    """Request hook (after signing): the clock for ``Exchange.elapsed`` starts here. httpx's own
    ``Response.elapsed`` is not set for responses that arrive already read (MockTransport)."""
    request.extensions[_STARTED] = time.perf_counter()


def _body_bytes(json: Any, content: bytes | str | None) -> bytes | None:
    """The body to send: ``json`` serialised, or ``content`` as is (a string as UTF-8)."""
    if json is not None and content is not None:
        raise ValueError("give json or content, not both")
    if json is not None:
        return _json_bytes(json)
    if isinstance(content, str):
        return content.encode("utf-8")
    return content


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _query(
    params: Mapping[str, Any] | Sequence[tuple[str, Any]] | None,
) -> httpx.QueryParams | None:
    """Query values as the spec writes them: booleans ``true``/``false`` (spec 4.3 E9, E16)."""
    if params is None:
        return None
    items = params.items() if isinstance(params, Mapping) else params
    return httpx.QueryParams([(name, _query_value(value)) for name, value in items])


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _request_headers(headers: HeaderValues | None, *, has_body: bool) -> httpx.Headers:
    """Defaults (X-Request-ID, Accept, Content-Type with a body) overridden by ``headers``.

    A name given in ``headers`` replaces its default; given several times, it is sent several
    times. Values that are not ASCII are sent as UTF-8 (spec 5 item 3 speaks of such values).
    """
    pairs: list[tuple[str, str | None]] = [
        ("X-Request-ID", str(uuid.uuid4())),
        ("Accept", JSON_MEDIA_TYPE),
    ]
    if has_body:
        pairs.append(("Content-Type", JSON_MEDIA_TYPE))
    if headers is not None:
        given = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
        replaced = {name.lower() for name, _ in given}
        pairs = [(name, value) for name, value in pairs if name.lower() not in replaced] + given
    return httpx.Headers(
        [(name.encode("ascii"), _header_bytes(value)) for name, value in pairs if value is not None]
    )


def _given_names(headers: HeaderValues | None) -> frozenset[str]:
    if headers is None:
        return frozenset()
    items = headers.items() if isinstance(headers, Mapping) else headers
    return frozenset(name.lower() for name, value in items if value is not None)


def _header_bytes(value: str) -> bytes:
    return value.encode("ascii") if value.isascii() else value.encode("utf-8")
