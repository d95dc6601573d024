"""The reverse proxy of ``conformance proxy``: a TPP's app talks to it as to the bank, every
exchange goes through unchanged and is judged in a thread of its own.

- The standard library's ``ThreadingHTTPServer``: a thread per client connection, HTTP/1.1
  keep-alive, Nagle off; each client connection has its own keep-alive connection to the target
  (``http.client``), so concurrent clients never share one.
- Unchanged: the method, the path and query (``(request-target)`` is signed, spec 5), the header
  lines in their order and case, the body bytes; only the hop-by-hop headers of RFC 9110 section
  7.6.1 are dropped, and ``Host`` names the target (unless ``preserve_host``). The answer goes back
  the same way (a chunked answer is sent back with ``Content-Length``: bodies are small JSON).
- Judging happens in one judge thread fed by a queue, so the added latency per exchange is the
  forwarding and a queue put. The exchange is queued just before its answer is written back, so
  what a client sends after an answer is judged after it (a cancellation after the status read
  that preceded it, even on another connection): the order of the state checks follows the
  traffic's causes.
- TLS on both legs: the proxy serves HTTPS with a server certificate (``conformance certs
  --server``), and shows the profile's QWAC to the bank (mutual TLS through
  ``conformance.bankside.tls.client_context``, with the profile's CA bundle).
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import io
import json
import queue
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from conformance.contract import framing
from conformance.contract.read_deadline import TIMED_OUT, DeadlineReader
from conformance.errors import ConformanceError
from conformance.exchange import Exchange

__all__ = ["HOP_BY_HOP", "ProxyServer", "Upstream", "start_proxy"]

#: Hop-by-hop headers (RFC 9110 section 7.6.1): meant for one connection, never forwarded.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
#: Largest request body read (the reference server's limit; bodies are small JSON).
MAX_BODY = 1024 * 1024
#: Seconds a client connection may stay silent between requests, and the most a request's head
#: and body may take in all once its first byte has come.
READ_TIMEOUT = 30.0

#: Most client connections served at once (the reference server's cap).
MAX_CONNECTIONS = 512
_BUSY_TEXT = "the proxy serves its most connections at once; try again"
_BUSY_BODY = json.dumps(
    {"id": "proxy-busy", "system": "psd2-conformance-proxy", "status": 503,
     "code": "PROXY_ERROR", "message": _BUSY_TEXT}
).encode()  # fmt: skip
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
    b"Connection: close\r\nContent-Length: " + str(len(_BUSY_BODY)).encode() + b"\r\n\r\n"
    + _BUSY_BODY
)  # fmt: skip

#: What the proxy hands on after an exchange: the exchange and when it was sent.
Sink = Callable[[Exchange, datetime], None]


class Upstream:
    """The target: its base URL, TLS context and one keep-alive connection per thread."""

    def __init__(
        self,
        target: str,
        *,
        tls: ssl.SSLContext | None = None,
        timeout: float = 30.0,
        preserve_host: bool = False,
    ) -> None:
        parts = urlsplit(target)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConformanceError(f"--target must be an http(s) URL, not {target!r}")
        if parts.path not in ("", "/") or parts.query:
            raise ConformanceError(
                f"--target {target!r} has a path: the proxy passes every path unchanged (the "
                "signature covers it, spec 5), so give the scheme, host and port only"
            )
        self.base_url = f"{parts.scheme}://{parts.netloc}"
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.netloc = parts.netloc
        self.tls = (
            tls if tls is not None else (ssl.create_default_context() if self.https else None)
        )
        self.timeout = timeout
        self.preserve_host = preserve_host
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            if self.https:
                connection = http.client.HTTPSConnection(
                    self.host, self.port, timeout=self.timeout, context=self.tls
                )
            else:
                connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self._local.connection = connection
        return connection

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def forward(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        """Send the request as given; the answer's status, reason, headers and body, all of it
        within :attr:`timeout` of the request's end (a target that drips its answer a byte at a
        time does not hold the client: security-5.md L19). A keep-alive connection the target
        closed meanwhile is opened again once."""
        for attempt in (1, 2):
            connection = self._connection()
            if connection.sock is not None:
                connection.sock.settimeout(self.timeout)  # the last answer's deadline left it
            try:
                connection.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
                for name, value in headers:
                    connection.putheader(name, value)
                connection.endheaders(body if body else None)
                deadline = time.monotonic() + self.timeout
                connection.response_class = functools.partial(  # type: ignore[assignment]
                    _answer_within, deadline=deadline, seconds=self.timeout
                )
                response = connection.getresponse()
                data = response.read()
                answer_headers = response.getheaders()
                if response.will_close:
                    self.close()
                return response.status, response.reason, answer_headers, data
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if attempt == 2:
                    raise
            except BaseException:
                self.close()  # a half-used connection is never reused
                raise
        raise AssertionError("unreachable")

    def outgoing_headers(self, received: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The request's headers as the target gets them: hop-by-hop ones dropped, Host the
        target's (in its place), a chunked body's length stated."""
        connection_named = _connection_tokens(received)
        sent: list[tuple[str, str]] = []
        for name, value in received:
            lower = name.lower()
            if lower in HOP_BY_HOP or lower in connection_named:
                continue
            if lower == "host" and not self.preserve_host:
                value = self.netloc
            sent.append((name, value))
        if not any(name.lower() == "host" for name, _ in sent):
            sent.insert(0, ("Host", self.netloc))
        return sent


class _AnswerReader(io.RawIOBase):
    """The target's socket read with a total deadline: each read waits at most what is left."""

    def __init__(self, sock: socket.socket, deadline: float, seconds: float) -> None:
        super().__init__()
        self._sock = sock
        self._deadline = deadline
        self._seconds = seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        late = f"the target's whole answer did not arrive within {self._seconds:g} s"
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(late)
        self._sock.settimeout(left)
        try:
            return self._sock.recv_into(buffer)
        except TimeoutError:
            raise TimeoutError(late) from None


class _DeadlineSocket:
    """What :class:`http.client.HTTPResponse` reads its answer from: the socket, its reads
    bounded by one deadline (:class:`_AnswerReader`)."""

    def __init__(self, sock: socket.socket, deadline: float, seconds: float) -> None:
        self._reader = _AnswerReader(sock, deadline, seconds)

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(self._reader)


def _answer_within(
    sock: socket.socket, *, deadline: float, seconds: float, **options: Any
) -> http.client.HTTPResponse:
    """``http.client``'s response, read within ``deadline`` (``response_class`` of a forward)."""
    return http.client.HTTPResponse(
        _DeadlineSocket(sock, deadline, seconds),  # type: ignore[arg-type]
        **options,
    )


def _connection_tokens(headers: list[tuple[str, str]]) -> frozenset[str]:
    """Header names the Connection header declares hop-by-hop (RFC 9110 section 7.6.1)."""
    tokens: set[str] = set()
    for name, value in headers:
        if name.lower() == "connection":
            tokens |= {token.strip().lower() for token in value.split(",") if token.strip()}
    return frozenset(tokens - {"close", "keep-alive"})


class ProxyHandler(BaseHTTPRequestHandler):
    """One client connection: each request forwarded, handed to the sink, then answered."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    wbufsize = 64 * 1024
    server_version = "psd2-conformance-proxy"
    sys_version = ""
    server: ProxyServer

    def setup(self) -> None:
        self.timeout = self.server.read_timeout  # type: ignore[misc]
        super().setup()
        # a request's head and body within one total deadline, as the reference server reads
        # them (security-5.md L19: a client dripping a byte at a time once held its thread)
        self._reader = DeadlineReader(self.connection, self.server.read_timeout)
        self.rfile = io.BufferedReader(self._reader)

    def handle_one_request(self) -> None:
        """One request; one not complete within the read deadline gets 408 and the connection
        closes (its first byte starts the deadline)."""
        self._reader.next_request()
        super().handle_one_request()
        if self._reader.expired:
            if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":
                self.request_version = "HTTP/1.1"
            self._refuse(408, TIMED_OUT, code="BAD_REQUEST")

    def parse_request(self) -> bool:
        """``http.server``'s parse, its header lines kept and then checked as the reference server
        checks them (:mod:`conformance.contract.framing`): a malformed, folded or cut-off header
        block, or an HTTP/0.9 request, is refused with 400 and never forwarded."""
        recorder = _LineRecorder(self.rfile)
        self.rfile = recorder  # type: ignore[assignment]
        try:
            parsed = super().parse_request()
        finally:
            self.rfile = recorder.stream
        if not parsed:
            return False
        if self.request_version == "HTTP/0.9":
            self.request_version = "HTTP/1.1"  # else the refusal goes without a status line
            self._refuse(400, "HTTP/0.9 requests are not supported", code="BAD_REQUEST")
            return False
        problem = framing.header_block_problem(recorder.lines)
        if problem is not None:
            self._refuse(400, f"a malformed request head: {problem}", code="BAD_REQUEST")
            return False
        return True

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.upstream.close()

    def do_GET(self) -> None:
        self._proxy()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_TRACE = do_GET

    def _proxy(self) -> None:
        at = datetime.now(UTC)
        started = time.perf_counter()
        received = list(self.headers.raw_items())
        if not self.path.isascii():
            self._refuse(400, "the request target is not ASCII (RFC 9112 3.2)", code="BAD_REQUEST")
            return
        try:
            framed = framing.body_framing(received)
        except framing.FramingError as error:
            self._refuse(400, error.message, code="BAD_REQUEST")
            return
        body = self._read_chunked() if framed.chunked else self._read_length(framed.length)
        if body is None:
            return
        upstream = self.server.upstream
        sent = upstream.outgoing_headers(received)
        if framed.chunked:
            sent.append(("Content-Length", str(len(body))))
        try:
            status, reason, answer, data = upstream.forward(self.command, self.path, sent, body)
        except (OSError, http.client.HTTPException) as error:
            self._refuse(
                502,
                f"the proxy could not reach the target {upstream.base_url}: {_printable(error)}",
            )
            return
        exchange = Exchange(
            method=self.command,
            url=upstream.base_url + self.path,
            request_headers=tuple(received),
            request_body=body,
            signing_string=None,
            status=status,
            response_headers=tuple(answer),
            response_body=data,
            elapsed=time.perf_counter() - started,
            base_url=upstream.base_url,
        )
        # handed on before the answer goes back (the sink only queues it): a request the client
        # sends once it has this answer is then handed on after it, so the judge sees a status
        # read before the cancellation it led to, even when the two came on two connections
        self.server.sink(exchange, at)
        self._answer(status, reason, answer, data)

    def _read_length(self, length: int) -> bytes | None:
        if length > MAX_BODY:
            self._refuse(413, "body too large")
            return None
        body = self.rfile.read(length) if length else b""
        if len(body) < length:
            self.close_connection = True
            return None
        return body

    def _read_chunked(self) -> bytes | None:
        parts: list[bytes] = []
        size = 0
        while True:
            line = self.rfile.readline(1024)
            try:
                length = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                self._refuse(400, "malformed chunked body")
                return None
            if length == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            size += length
            if size > MAX_BODY:
                self._refuse(413, "body too large")
                return None
            parts.append(self.rfile.read(length))
            self.rfile.readline(8)

    def _answer(
        self, status: int, reason: str, headers: list[tuple[str, str]], data: bytes
    ) -> None:
        """The target's answer as it came (hop-by-hop headers aside)."""
        hop = _connection_tokens(headers)
        self.send_response_only(status, reason)
        has_length = False
        for name, value in headers:
            lower = name.lower()
            if lower in HOP_BY_HOP or lower in hop:
                continue
            has_length = has_length or lower == "content-length"
            self.send_header(name, value)
        if not has_length and self.command != "HEAD" and status not in (204, 304):
            self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        with contextlib.suppress(OSError):
            self.wfile.flush()

    def _refuse(self, status: int, text: str, *, code: str = "PROXY_ERROR") -> None:
        """The proxy's own error (the target unreachable, a request it will not forward): the
        spec 7 error body that says so; the exchange is not judged (it never reached the bank)."""
        self.close_connection = True
        body = json.dumps(
            {
                "id": str(uuid.uuid4()),
                "system": self.server_version,
                "status": status,
                "code": code,
                "message": text,
            },
            ensure_ascii=False,
        ).encode()
        with contextlib.suppress(OSError):
            self.send_response_only(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        self.server.refused(text)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the judge prints one line per exchange."""


def _printable(error: BaseException) -> str:
    """An error's text as a terminal line and a JSON message may carry it: control and
    non-ASCII characters escaped, at most 200 characters (a garbage answer is quoted in it)."""
    text = ascii(str(error))[1:-1]
    return text if len(text) <= 200 else text[:200] + "…"


class _LineRecorder:
    """A stream whose ``readline`` results are kept: the header lines ``http.server`` reads."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.lines: list[bytes] = []

    def readline(self, limit: int = -1) -> bytes:
        line: bytes = self.stream.readline(limit)
        self.lines.append(line)
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class ProxyServer(ThreadingHTTPServer):
    """The listening side: a thread per client connection, TLS per connection when given."""

    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    request_queue_size = 1024

    def __init__(
        self,
        address: tuple[str, int],
        upstream: Upstream,
        sink: Sink,
        *,
        tls: ssl.SSLContext | None = None,
        read_timeout: float = READ_TIMEOUT,
        on_refused: Callable[[str], None] | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.max_connections = max_connections
        self._active = 0
        self._active_lock = threading.Lock()
        self.upstream = upstream
        self.sink = sink
        self.tls = tls
        self.read_timeout = read_timeout
        self._on_refused = on_refused
        super().__init__(address, ProxyHandler)

    @property
    def url(self) -> str:
        address, port = self.server_address[:2]
        host = address.decode() if isinstance(address, bytes) else str(address)
        host = f"[{host}]" if ":" in host else host
        return f"{'https' if self.tls else 'http'}://{host}:{port}"

    def refused(self, text: str) -> None:
        if self._on_refused is not None:
            self._on_refused(text)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread per connection, at most :attr:`max_connections` at once: a newcomer past the
        cap gets 503 with the spec 7 body at once (a slowloris client cannot hold a thread per
        connection without bound: security-5.md L19)."""
        with self._active_lock:
            full = self._active >= self.max_connections
            if not full:
                self._active += 1
        if full:
            with contextlib.suppress(OSError):
                request.sendall(_BUSY)
            self.shutdown_request(request)
            self.refused(f"a connection from {client_address[0]} refused: {_BUSY_TEXT}")
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release()

    def _release(self) -> None:
        with self._active_lock:
            self._active -= 1

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(self.read_timeout)
        try:
            connection = self.tls.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as error:
            self.refused(f"TLS handshake with {client_address[0]} refused: {error}")
            return
        try:
            super().finish_request(connection, client_address)
        finally:
            connection.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that broke (a client gone) is no concern of the judgement."""


@dataclass
class RunningProxy:
    """A proxy serving in a background thread (the command, tests, the benchmark)."""

    server: ProxyServer
    thread: threading.Thread

    @property
    def url(self) -> str:
        return self.server.url

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def start_proxy(
    upstream: Upstream,
    sink: Sink,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    tls: ssl.SSLContext | None = None,
    on_refused: Callable[[str], None] | None = None,
    max_connections: int = MAX_CONNECTIONS,
    read_timeout: float = READ_TIMEOUT,
) -> RunningProxy:
    """Listen on ``host:port`` (0: a free port) and serve in a daemon thread."""
    server = ProxyServer(
        (host, port),
        upstream,
        sink,
        tls=tls,
        on_refused=on_refused,
        max_connections=max_connections,
        read_timeout=read_timeout,
    )
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.02},
        name=f"conformance-proxy-{server.server_address[1]}",
        daemon=True,
    )
    thread.start()
    return RunningProxy(server, thread)


class JudgeWorker:
    """The judge thread: exchanges in through :meth:`put`, one judgement at a time, in the order
    they ended; ``on_judged`` gets each verdict (the command prints its line)."""

    def __init__(
        self, judge: Callable[[Exchange, datetime], Any], on_judged: Callable[[Any], None]
    ):
        self._judge = judge
        self._on_judged = on_judged
        self._queue: queue.SimpleQueue[tuple[Exchange, datetime] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="conformance-judge", daemon=True)
        self._thread.start()

    def put(self, exchange: Exchange, at: datetime) -> None:
        self._queue.put((exchange, at))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            self._on_judged(self._judge(*item))

    def close(self) -> None:
        """Judge what is queued, then stop."""
        self._queue.put(None)
        self._thread.join()
