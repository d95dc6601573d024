"""A throw-away HTTP server for a test, on a thread of the test's own process: bound to port 0 on
the loopback address, served on a daemon thread while the ``with`` body runs, and always shut
down and closed after it, also when the body raises. The tests' stand-in banks, targets and
time-stamping authority all run this way."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from typing import TypeVar

Server = TypeVar("Server", bound=HTTPServer)

# How often serve_forever looks for the shutdown request: shutdown() waits up to this long.
POLL_SECONDS = 0.05


@contextmanager
def running(server: Server) -> Iterator[Server]:
    """``server`` (already bound) answering on a daemon thread while the body runs; shut down,
    closed and its thread joined after. For a server class with state of its own; otherwise
    ``serving``."""
    thread = threading.Thread(target=server.serve_forever, args=(POLL_SECONDS,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], *, host: str = "127.0.0.1") -> Iterator[str]:
    """``handler`` served by a ``ThreadingHTTPServer`` (one daemon thread a request) on
    ``host``, port 0, while the body runs; yields its base URL, ``http://host:port``."""
    with running(ThreadingHTTPServer((host, 0), handler)) as server:
        yield f"http://{host}:{server.server_port}"
