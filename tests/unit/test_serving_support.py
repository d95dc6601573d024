"""The tests' throw-away server (``tests/serving_support.py``): it answers while the body runs
and is shut down and closed after it, also when the body raises."""

from __future__ import annotations

import http.server
import socket
from urllib.parse import urlsplit
from urllib.request import urlopen

import pytest
from serving_support import running, serving


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _refused(url: str) -> bool:
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def test_serving_answers_in_the_body_and_is_closed_after_it() -> None:
    with serving(_Hello) as url:
        assert url.startswith("http://127.0.0.1:")
        with urlopen(f"{url}/any", timeout=5) as answer:
            assert answer.read() == b"hello"
    assert _refused(url)


def test_serving_is_closed_when_the_body_raises() -> None:
    with pytest.raises(RuntimeError, match="the body failed"), serving(_Hello) as url:
        raise RuntimeError("the body failed")
    assert _refused(url)


def test_running_yields_the_server_it_was_given() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    with running(server) as served:
        assert served is server
        with urlopen(f"http://127.0.0.1:{server.server_port}/", timeout=5) as answer:
            assert answer.status == 200
    assert server.socket.fileno() == -1  # closed
