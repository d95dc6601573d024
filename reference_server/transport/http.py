"""The socket side of the server, in one place: read a request, write a response.

``http.server`` is built for browsers; an interface server needs different defaults, set here:
HTTP/1.1 keep-alive with ``Content-Length`` on every answer, Nagle off (without it every
keep-alive answer waits ~40 ms on the delayed ACK), a read timeout so a slow client cannot hold a
thread, a body limit read no further than the limit, JSON error bodies (spec 7) even for the
errors ``http.server`` raises itself (bad request line, oversized headers, unknown method), one log
line per request through :mod:`logging`, and ``X-Request-ID`` echoed on every answer.
"""

from __future__ import annotations

import contextlib
import email.utils
import io
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from conformance.contract import framing
from conformance.contract.catalogue import body_case_id
from conformance.contract.read_deadline import TIMED_OUT, DeadlineReader
from reference_server.api import ApiError, Headers, Request, Response
from reference_server.app import Application
from reference_server.faults.trace import untagged
from reference_server.pipeline import errors
from reference_server.pipeline.due import due, refuse
from reference_server.transport import request_head
from reference_server.transport.exchange_log import ExchangeLog

__all__ = [
    "DEFAULT_READ_TIMEOUT",
    "MAX_BODY_BYTES",
    "ReferenceServer",
    "RequestHandler",
    "RunningServer",
    "start",
]

#: A body over the size limit (``facts.BODY_CASES``: 400 or 413 due).
_OVERSIZED = body_case_id("oversized-body")

#: The request log keeps the name it had before this module moved into ``transport/``: the log
#: lines (``INFO reference_server.http: GET /p 201 ...``) are read by people and by the benchmark.
logger = logging.getLogger("reference_server.http")

#: Connections served at once; at the cap the longest idle one is closed for a newcomer.
MAX_CONNECTIONS = 512
#: Largest request body accepted (413 above it).
MAX_BODY_BYTES = 1024 * 1024
#: Seconds a connection may stay silent while a request is read (and between keep-alive requests).
DEFAULT_READ_TIMEOUT = 15.0

#: Spec 7 code for the HTTP-level errors that ``http.server`` raises itself.
_HTTP_CODES = {
    400: "BAD_REQUEST",
    404: "RESOURCE_UNKNOWN",
    405: "BAD_REQUEST",
    408: "BAD_REQUEST",
    411: "BAD_REQUEST",
    413: "BAD_REQUEST",
    414: "BAD_REQUEST",
    431: "BAD_REQUEST",
}


class _PerSecond:
    """A text that depends only on the whole second, made once per second. The (second, text)
    pair is replaced whole, never changed in place, so threads can share it."""

    def __init__(self, make: Callable[[int], str]) -> None:
        self._make = make
        self._last: tuple[int, str] = (-1, "")

    def __call__(self, second: int) -> str:
        last = self._last
        if last[0] != second:
            last = (second, self._make(second))
            self._last = last
        return last[1]


#: ``BaseHTTPRequestHandler.date_time_string``'s text (``email.utils.formatdate``, GMT).
_HTTP_DATE = _PerSecond(lambda second: email.utils.formatdate(second, usegmt=True))


def _phrase(code: int) -> str | None:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return None


class _Connections:
    """The open connections' readers, so that the server can close an idle one at its cap."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, DeadlineReader] = {}

    def __len__(self) -> int:
        return len(self._open)

    def add(self, reader: DeadlineReader) -> None:
        with self._lock:
            self._open[id(reader)] = reader

    def discard(self, reader: DeadlineReader) -> None:
        with self._lock:
            self._open.pop(id(reader), None)

    def waiting(self) -> int:
        """How many open connections wait for a request (none of its bytes has come)."""
        with self._lock:
            return sum(1 for reader in self._open.values() if reader.deadline is None)

    def close_idle(self) -> bool:
        """Close the longest open connection that waits for a request; False when none does."""
        with self._lock:
            idle = next((r for r in self._open.values() if r.deadline is None), None)
            if idle is None:
                return False
            self._open.pop(id(idle), None)
        with contextlib.suppress(OSError):
            idle.connection.shutdown(socket.SHUT_RDWR)
        return True


#: The answer at the connection cap with no idle connection to close (spec 7 body).
_BUSY_BODY = (
    b'{"status":503,"code":"SYSTEM_ERROR","system":"psd2-reference-server",'
    b'"message":"too many connections: try again"}'
)
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Retry-After: 1\r\nConnection: close\r\nContent-Length: "
    + str(len(_BUSY_BODY)).encode()
    + b"\r\n\r\n"
    + _BUSY_BODY
)


class RequestHandler(BaseHTTPRequestHandler):
    """One connection; ``handle_one_request`` of the base class reads each request on it."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    #: A buffered ``wfile``: the status line, the headers and the body of an answer leave in one
    #: ``send`` when :meth:`_write` flushes, instead of one for the head and one for the body
    #: (``socketserver`` advises a buffer whenever Nagle is off). Every path that answers
    #: flushes: :meth:`_write`, :meth:`handle_expect_100`, and ``finish()`` for the errors that
    #: close the connection.
    wbufsize = 64 * 1024
    server_version = "psd2-reference-server"
    sys_version = ""
    #: Set by the base class's ``handle_one_request`` before it calls :meth:`parse_request`.
    raw_requestline: bytes
    server: ReferenceServer

    def parse_request(self) -> bool:
        """The request line and headers, with ``http.server``'s answers to a bad head
        (:mod:`reference_server.transport.request_head`, which parses the header block without the
        ``email`` package when it is plain ``Name: value`` lines) and without HTTP/0.9: a
        two-word request line is refused (as JSON) before any wait for headers that an HTTP/0.9
        client never sends. Sets what the base parser sets: ``command``, ``path``,
        ``request_version``, ``requestline``, ``headers``, ``close_connection``."""
        # None until a method is read, as the base parser sets it (typeshed says str only).
        self.command = None  # type: ignore[assignment]
        self.request_version = self.default_request_version
        self.close_connection = True
        line = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        self.requestline = line
        if len(line.split()) == 2:
            self.request_version = "HTTP/1.1"
            self.send_error(400, "HTTP/0.9 requests are not supported")
            return False
        try:
            parsed = request_head.parse_request_line(line, server_version=self.protocol_version)
            if parsed is None:
                return False
            self.request_version = parsed.version
            self.close_connection = not parsed.keep_alive
            self.command, self.path = parsed.command, parsed.path
            lines = request_head.read_header_lines(self.rfile)
            problem = framing.header_block_problem(lines)
            if problem is not None:
                raise request_head.HeadError(HTTPStatus.BAD_REQUEST, "Bad request head", problem)
            self.headers = request_head.parse_header_lines(lines)
        except request_head.HeadError as refused:
            self.request_version = refused.version or self.request_version
            self.send_error(refused.status, refused.message, refused.explain)
            return False
        connection = self.headers.get("Connection", "").lower()
        if connection == "close":
            self.close_connection = True
        elif connection == "keep-alive" and self.protocol_version >= "HTTP/1.1":
            self.close_connection = False
        expect = self.headers.get("Expect", "").lower()
        if (
            expect == "100-continue"
            and self.protocol_version >= "HTTP/1.1"
            and self.request_version >= "HTTP/1.1"
        ):
            return self.handle_expect_100()
        return True

    def setup(self) -> None:
        # Per connection, from the server; typeshed declares the attribute a ClassVar only.
        self.timeout = self.server.read_timeout  # type: ignore[misc]
        super().setup()
        self._reader = DeadlineReader(self.connection, self.server.read_timeout)
        self.rfile = io.BufferedReader(self._reader)
        self.server.connections.add(self._reader)
        #: The TLS client certificate of this connection (DER), read once: the QWAC of mutual
        #: TLS, which the request checks compare with the signing certificate.
        peer = getattr(self.connection, "getpeercert", None)
        self._client_certificate: bytes | None = peer(binary_form=True) if peer else None

    def finish(self) -> None:
        self.server.connections.discard(self._reader)
        super().finish()

    def handle_one_request(self) -> None:
        """One request; the next one's deadline starts with its own first byte. A request whose
        head and body did not arrive within the deadline gets 408, and the connection closes."""
        self._reader.next_request()
        super().handle_one_request()
        if self._reader.expired:
            self.send_error(408, TIMED_OUT)
            with contextlib.suppress(OSError):
                self.wfile.flush()

    def date_time_string(self, timestamp: float | None = None) -> str:
        """The ``Date`` header as ``http.server`` writes it (RFC 7231 IMF-fixdate), formatted
        once per second: the text only depends on the whole second."""
        return _HTTP_DATE(int(time.time() if timestamp is None else timestamp))

    def handle_expect_100(self) -> bool:
        """``Expect: 100-continue``: the interim answer must leave now, not with the final one
        (the client waits for it before it sends the body)."""
        self.send_response_only(HTTPStatus.CONTINUE)
        self.end_headers()
        self.wfile.flush()
        return True

    # Every method of RFC 9110 goes through one dispatch (TRACE and CONNECT on a known path get
    # 405 with Allow there); an unknown method gets http.server's 501, as JSON.
    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_TRACE = do_CONNECT = do_GET

    def _handle(self) -> None:
        started = time.perf_counter()
        # One pass over the parsed header lines, then O(1) lookups. ``raw_items`` gives what
        # ``items`` would: http.client decodes headers as ISO-8859-1, so no value carries the
        # surrogates that the compat32 policy would otherwise turn into ``Header`` objects.
        headers = Headers(self.headers.raw_items())
        trace = self.server.app.switch_trace
        if trace is None:
            self._answer(headers, started)
            return
        with trace.request(headers):  # the self-check's recording run (faults/trace.py)
            self._answer(untagged(headers), started)

    def _answer(self, headers: Headers, started: float) -> None:
        request_id = headers.get("X-Request-ID")
        try:
            body = self._read_body(headers)
        except ApiError as error:
            self.close_connection = True
            app = self.server.app
            form = errors.form_for(app, None, payment_style=False)
            response = errors.render(error, html=app.faulty("html-errors"), form=form)
            self._write(response, request_id, started, b"")
            self._linger()
            return
        except (TimeoutError, ConnectionError):
            self.close_connection = True
            return
        split = urlsplit(self.path)
        request = Request(
            method=self.command,
            path=split.path or "/",
            target=self.path
            if not split.scheme
            else (split.path + ("?" + split.query if split.query else "")),
            query={
                name: tuple(values)
                for name, values in parse_qs(split.query, keep_blank_values=True).items()
            },
            headers=headers,
            body=body,
            client=(str(self.client_address[0]), int(self.client_address[1])),
            client_certificate=self._client_certificate,
        )
        response = self.server.app.dispatch(request)
        self._write(response, request_id, started, body)

    def _read_body(self, headers: Headers) -> bytes:
        """The body, at most :data:`MAX_BODY_BYTES`; an error answer closes the connection.
        Its framing is checked as the proxy checks it (:mod:`conformance.contract.framing`):
        a request framed twice or ambiguously is 400; a chunked one is 411."""
        try:
            framed = framing.body_framing(self.headers.raw_items())
        except framing.FramingError as error:
            raise ApiError(400, "BAD_REQUEST", error.message) from None
        if framed.chunked:
            raise ApiError(
                411, "BAD_REQUEST", "send the body with Content-Length (chunked is not accepted)"
            )
        length = framed.length
        if length > self.server.max_body:
            if self.server.app.faulty("server-error-on-oversized-body"):
                raise ApiError(500, "SYSTEM_ERROR")
            # read before routing: the requirement judged on every operation
            raise refuse(
                due(self.server.app.contract, _OVERSIZED, None),
                f"the body of {length} bytes is larger than {self.server.max_body} bytes",
                code="BAD_REQUEST",
                status=413,
            )
        body = self.rfile.read(length) if length else b""
        if len(body) < length:
            raise ConnectionError("the client closed the connection inside the body")
        return body

    def _linger(self) -> None:
        """After refusing a body unread: stop sending, then discard what the client is still
        sending (at most the body limit, for at most a second) so that closing the socket does
        not reset the connection before the client has read the answer."""
        try:
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(1.0)
            self._reader.timeout_changed()
            deadline = time.monotonic() + 1.0
            discarded = 0
            while discarded <= self.server.max_body and time.monotonic() < deadline:
                chunk = self.connection.recv(65536)
                if not chunk:
                    break
                discarded += len(chunk)
        except OSError:
            pass

    def _write(
        self, response: Response, request_id: str | None, started: float, body: bytes
    ) -> None:
        try:
            self.send_response(response.status)
            sent = self._send_headers(response, request_id)
            if self.command != "HEAD" and response.body:
                self.wfile.write(response.body)
            self.wfile.flush()
        except (ConnectionError, TimeoutError):
            self.close_connection = True
            sent = []
        if self.server.exchange_log is not None:
            self._log_exchange(response, body, sent, started)
        if logger.isEnabledFor(logging.INFO):
            # The request line, as logger.info would emit it minus the search for the calling
            # frame (the line shows no source location): it is written for every request.
            record = logger.makeRecord(
                logger.name,
                logging.INFO,
                __file__,
                0,
                "%s %s %d %.1fms X-Request-ID=%s",
                (
                    self.command,
                    self.path,
                    response.status,
                    (time.perf_counter() - started) * 1000,
                    request_id or "-",
                ),
                None,
            )
            logger.handle(record)

    def _send_headers(self, response: Response, request_id: str | None) -> list[tuple[str, str]]:
        """Send the answer's headers; returns them (after Server and Date, which
        ``send_response`` sent)."""
        sent: list[tuple[str, str]] = []
        if response.content_type is not None and not (
            response.status < 300 and self.server.app.faulty("no-content-type")
        ):
            sent.append(("Content-Type", response.content_type))
        sent.append(("Content-Length", str(len(response.body))))
        if request_id is not None and not self.server.app.faulty("request-id-not-echoed"):
            sent.append(("X-Request-ID", request_id))
        sent += response.headers
        if self.close_connection:
            sent.append(("Connection", "close"))
        for name, value in sent:
            self.send_header(name, value)
        self.end_headers()
        return sent

    def _log_exchange(
        self, response: Response, body: bytes, sent: list[tuple[str, str]], started: float
    ) -> None:
        """The exchange, whole, to ``--exchange-log`` (``exchange_log.py``)."""
        log = self.server.exchange_log
        assert log is not None
        elapsed = time.perf_counter() - started
        log.write(
            at=time.time() - elapsed,
            method=self.command,
            target=self.path,
            request_headers=list(self.headers.raw_items()),
            request_body=body,
            status=response.status,
            response_headers=[
                ("Server", self.version_string()),
                ("Date", self.date_time_string()),
                *sent,
            ],
            response_body=b"" if self.command == "HEAD" else response.body,
            elapsed=elapsed,
        )

    # -- http.server's own errors, as JSON -------------------------------------------------------

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors raised by ``http.server`` itself (bad request line, header limits, unknown
        method): the spec 7 JSON body, never the HTML page, and the connection closed."""
        self.close_connection = True
        phrase = _phrase(code)
        text = message or phrase or f"HTTP {code}"
        if explain:
            text = f"{text}: {explain}"
        fallback = "SYSTEM_ERROR" if code >= 500 else "BAD_REQUEST"
        error = ApiError(code, _HTTP_CODES.get(code, fallback), text)
        app = self.server.app
        form = errors.form_for(app, None, payment_style=False)
        response = errors.render(error, html=app.faulty("html-errors"), form=form)
        # The request may have failed before its headers were read: nothing to echo then.
        headers = getattr(self, "headers", None)
        request_id = headers.get("X-Request-ID") if headers is not None else None
        if getattr(self, "command", None) is None:
            self.command = ""
        # A request line that did not parse leaves the version at HTTP/0.9, which would make
        # http.server send the body without a status line or headers: answer in HTTP/1.1.
        if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":
            self.request_version = "HTTP/1.1"
        try:
            self.send_response(code, phrase)
            self._send_headers(response, request_id)
            if self.command != "HEAD":
                self.wfile.write(response.body)
        except (ConnectionError, TimeoutError):
            pass
        logger.info("%s %d (%s)", getattr(self, "requestline", "") or "-", code, text)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.address_string(), *args)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Requests are logged once, by :meth:`_write`, with their duration and X-Request-ID."""


class ReferenceServer(ThreadingHTTPServer):
    """The threading HTTP server bound to one :class:`Application`."""

    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    #: The listen backlog: connections a burst opens wait here to be accepted (``socketserver``'s
    #: 5 would make the 6th of a burst retry its SYN a second later, hundreds for minutes).
    request_queue_size = 1024

    def __init__(
        self,
        address: tuple[str, int],
        app: Application,
        *,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        max_body: int = MAX_BODY_BYTES,
        tls: ssl.SSLContext | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.app = app
        self.read_timeout = read_timeout
        self.max_connections = max_connections
        self.connections = _Connections()
        self.max_body = max_body
        self.tls = tls
        #: Every exchange, whole, as JSON lines (``--exchange-log``); None: not kept.
        self.exchange_log: ExchangeLog | None = None
        super().__init__(address, RequestHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = str(host)
        if ":" in host:
            host = f"[{host}]"
        scheme = "http" if self.tls is None else "https"
        return f"{scheme}://{host}:{port}"

    def process_request(self, request: Any, client_address: Any) -> None:
        """At the connection cap, the longest idle connection (waiting for its next request) is
        closed to make room; with none idle the newcomer gets 503 with ``Retry-After`` at once.
        Each connection has its thread: the cap bounds them."""
        if len(self.connections) >= self.max_connections and not self.connections.close_idle():
            with contextlib.suppress(OSError):
                request.sendall(_BUSY)
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Over HTTPS the handshake happens here, in the connection's own thread (a slow or
        refused client never holds the accept loop); a refused handshake (no client certificate,
        one of another CA, an expired one) closes the connection with TLS's alert and one log
        line."""
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(self.read_timeout)
        try:
            connection = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as error:
            reason = getattr(error, "reason", None) or error
            logger.info("TLS handshake with %s refused: %s", client_address[0], reason)
            return
        try:
            super().finish_request(connection, client_address)
        finally:
            connection.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        logger.exception("connection error from %s", client_address)


#: Seconds between the serving loop's looks at a stop request (``RunningServer.stop``).
STOP_POLL_INTERVAL = 0.01


@dataclass
class RunningServer:
    """A server serving in a background thread (tests, benchmarks, ``conformance run``)."""

    server: ReferenceServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def app(self) -> Application:
        return self.server.app

    def stop(self, *, close_app: bool = True) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
        if close_app:
            self.server.app.close()


def start(
    app: Application | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
    max_body: int = MAX_BODY_BYTES,
    faults: Iterable[str] = (),
    tls: ssl.SSLContext | None = None,
    max_connections: int = MAX_CONNECTIONS,
) -> RunningServer:
    """Start a server in a daemon thread; ``port=0`` picks a free port (see ``.url``); with
    ``tls`` (:func:`reference_server.transport.tls.server_context`) it serves HTTPS."""
    if app is None:
        app = Application(faults=faults)
    server = ReferenceServer(
        (host, port),
        app,
        read_timeout=read_timeout,
        max_body=max_body,
        tls=tls,
        max_connections=max_connections,
    )
    thread = threading.Thread(
        target=server.serve_forever,
        # How long ``stop`` may wait for the loop to see it (socketserver polls): the tests start
        # and stop a hundred servers, and 10 ms keeps an idle server's wake-ups negligible.
        kwargs={"poll_interval": STOP_POLL_INTERVAL},
        name=f"reference-server-{server.server_address[1]}",
        daemon=True,
    )
    thread.start()
    return RunningServer(server, thread)
