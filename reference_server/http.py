"""The socket side of the server, in one place: read a request, write a response.

``http.server`` is built for browsers; an interface server needs different defaults, set here:
HTTP/1.1 keep-alive with ``Content-Length`` on every answer, Nagle off (DESIGN.md: without it every
keep-alive answer waits ~40 ms on the delayed ACK), a read timeout so a slow client cannot hold a
thread, a body limit read no further than the limit, JSON error bodies (spec 7) even for the
errors ``http.server`` raises itself (bad request line, oversized headers, unknown method), one log
line per request through :mod:`logging`, and ``X-Request-ID`` echoed on every answer.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from reference_server import errors
from reference_server.api import ApiError, Headers, Request, Response
from reference_server.app import Application

__all__ = [
    "DEFAULT_READ_TIMEOUT",
    "MAX_BODY_BYTES",
    "ReferenceServer",
    "RequestHandler",
    "RunningServer",
    "start",
]

logger = logging.getLogger("reference_server.http")

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


def _phrase(code: int) -> str | None:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return None


class RequestHandler(BaseHTTPRequestHandler):
    """One connection; ``handle_one_request`` of the base class reads each request on it."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "psd2-reference-server"
    sys_version = ""
    server: ReferenceServer

    def parse_request(self) -> bool:
        """The base parser, minus HTTP/0.9: a two-word request line is refused (as JSON) before
        the base class would wait for headers that an HTTP/0.9 client never sends."""
        line = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        if len(line.split()) == 2:
            self.command, self.requestline, self.request_version = None, line, "HTTP/1.1"
            self.send_error(400, "HTTP/0.9 requests are not supported")
            return False
        return super().parse_request()

    def setup(self) -> None:
        self.timeout = self.server.read_timeout
        super().setup()

    # Every method goes through one dispatch; others get http.server's 501, as JSON.
    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_GET

    def _handle(self) -> None:
        started = time.perf_counter()
        request_id = self.headers.get("X-Request-ID")
        try:
            body = self._read_body()
        except ApiError as error:
            self.close_connection = True
            response = errors.render(error, html=self.server.app.faulty("html-errors"))
            self._write(response, request_id, started)
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
            headers=Headers(self.headers.items()),
            body=body,
            client=(str(self.client_address[0]), int(self.client_address[1])),
        )
        response = self.server.app.dispatch(request)
        self._write(response, request_id, started)

    def _read_body(self) -> bytes:
        """The body, at most :data:`MAX_BODY_BYTES`; an error answer closes the connection."""
        if self.headers.get("Transfer-Encoding", "").strip().lower() not in ("", "identity"):
            raise ApiError(
                411, "BAD_REQUEST", "send the body with Content-Length (chunked is not accepted)"
            )
        declared = self.headers.get("Content-Length")
        if declared is None:
            return b""
        if not declared.strip().isdigit():
            raise ApiError(400, "BAD_REQUEST", f"Content-Length {declared!r} is not a number")
        length = int(declared)
        if length > self.server.max_body:
            raise ApiError(
                413,
                "BAD_REQUEST",
                f"the body of {length} bytes is larger than {self.server.max_body} bytes",
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
            deadline = time.monotonic() + 1.0
            discarded = 0
            while discarded <= self.server.max_body and time.monotonic() < deadline:
                chunk = self.connection.recv(65536)
                if not chunk:
                    break
                discarded += len(chunk)
        except OSError:
            pass

    def _write(self, response: Response, request_id: str | None, started: float) -> None:
        try:
            self.send_response(response.status)
            self._send_headers(response, request_id)
            if self.command != "HEAD" and response.body:
                self.wfile.write(response.body)
            self.wfile.flush()
        except (ConnectionError, TimeoutError):
            self.close_connection = True
        logger.info(
            "%s %s %d %.1fms X-Request-ID=%s",
            self.command,
            self.path,
            response.status,
            (time.perf_counter() - started) * 1000,
            request_id or "-",
        )

    def _send_headers(self, response: Response, request_id: str | None) -> None:
        if response.content_type is not None:
            self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        if request_id is not None:
            self.send_header("X-Request-ID", request_id)
        for name, value in response.headers:
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()

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
        response = errors.render(error, html=self.server.app.faulty("html-errors"))
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

    def __init__(
        self,
        address: tuple[str, int],
        app: Application,
        *,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.app = app
        self.read_timeout = read_timeout
        self.max_body = max_body
        super().__init__(address, RequestHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = str(host)
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{port}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        logger.exception("connection error from %s", client_address)


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
) -> RunningServer:
    """Start a server in a daemon thread; ``port=0`` picks a free port (see ``.url``)."""
    if app is None:
        app = Application(faults=faults)
    server = ReferenceServer((host, port), app, read_timeout=read_timeout, max_body=max_body)
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.1},
        name=f"reference-server-{server.server_address[1]}",
        daemon=True,
    )
    thread.start()
    return RunningServer(server, thread)
