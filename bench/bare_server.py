"""The baseline of ``bench_server``: a bare ``http.server`` handler, run as its own process.

``python bench/bare_server.py [--port N]`` serves every GET with 200 and every other method with
201, a small fixed JSON body with ``Content-Length``. It does what any HTTP/1.1 server on
``http.server`` must do and nothing else: parse the request line and headers, read the body,
write the answer on a keep-alive connection with Nagle off (without it every keep-alive answer
waits ~40 ms on the delayed ACK). It shares the reference server's socket settings
(``ThreadingHTTPServer``, HTTP/1.1, ``disable_nagle_algorithm``) so that the difference measured
between the two is the reference server's own work: routing, spec 5 verification, contract
validation, the store, logging.

It prints ``bare server listening on http://HOST:PORT`` (flushed) first, the same shape as the
reference server's first line. Standard library only: it is started as a script by path, so it
does not depend on the ``bench`` package being importable.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: The fixed answer: about the size of a short sandbox or payment answer's envelope.
BODY = b'{"status": "ok", "transactionStatus": "RCVD"}'


class BareHandler(BaseHTTPRequestHandler):
    """Reads the body, answers :data:`BODY`; keep-alive HTTP/1.1, no logging."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self._answer(200)

    def do_POST(self) -> None:
        self._answer(201)

    do_PUT = do_DELETE = do_PATCH = do_POST

    def _answer(self, status: int) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the baseline is the socket side alone."""


class BareServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = BareServer((args.host, args.port), BareHandler)
    host, port = server.server_address[:2]
    assert isinstance(host, str)  # an IPv4 or IPv6 address
    print(f"bare server listening on http://{host}:{port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
