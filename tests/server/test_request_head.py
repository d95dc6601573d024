"""The request head is read as stock ``http.server`` reads it
(``reference_server.transport.request_head``).

The reference server parses plain header blocks itself instead of through the ``email`` package;
these tests hold it to the stock parser's result, head by head: the same method, target,
version, keep-alive decision, header list, and the same refusal (status, message) for a bad
head. The stock side is ``BaseHTTPRequestHandler.parse_request`` itself, run on the same bytes,
so the comparison follows the Python version the suite runs on. HTTP/0.9 is the one deliberate
difference (refused at once, see ``test_http.py``); the other is a header block RFC 9112 lets
a recipient refuse (a folded, malformed or cut-off line: ``conformance.contract.framing``), which
the stock parser reads by dropping lines and the reference server refuses with 400, as the proxy
does (security-5.md L6).
"""

from __future__ import annotations

import io
import random
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from conformance.contract.framing import header_block_problem
from reference_server.transport.http import RequestHandler
from reference_server.transport.request_head import (
    MAX_HEADER_LINES,
    parse_header_lines,
    read_header_lines,
)


class _Probe:
    """Runs ``parse_request`` of a handler class on raw bytes, without a socket."""

    refusals: list[tuple[int, str | None, str | None]]
    interim: int

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        self.refusals.append((int(code), message, explain))
        self.close_connection = True

    def handle_expect_100(self) -> bool:
        self.interim += 1
        return True


class StockProbe(_Probe, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"


class OurProbe(_Probe, RequestHandler):
    pass


def _parse(kind: type[Any], raw: bytes) -> dict[str, Any]:
    handler = object.__new__(kind)
    line, _, rest = raw.partition(b"\n")
    handler.raw_requestline = line + b"\n" if _ else line
    handler.rfile = io.BytesIO(rest)
    handler.wfile = io.BytesIO()
    handler.refusals = []
    handler.interim = 0
    handler.client_address = ("127.0.0.1", 1)
    ok = handler.parse_request()
    outcome: dict[str, Any] = {"ok": ok, "refusals": handler.refusals, "interim": handler.interim}
    outcome["close"] = handler.close_connection
    for name in ("command", "path", "request_version", "requestline"):
        outcome[name] = getattr(handler, name, None)
    headers = getattr(handler, "headers", None)
    if headers is not None:
        outcome["headers"] = list(headers.raw_items())
        outcome["items"] = headers.items()
        payload = headers.get_payload()
        outcome["payload"] = (
            [part.items() for part in payload] if isinstance(payload, list) else payload
        )
    outcome["unread"] = handler.rfile.read()
    return outcome


def _same(raw: bytes) -> None:
    assert _parse(OurProbe, raw) == _parse(StockProbe, raw), raw


REQUEST_LINES = [
    b"GET / HTTP/1.1",
    b"GET / HTTP/1.0",
    b"POST /v1/payments/x?a=b&c=%20 HTTP/1.1",
    b"GET //evil.example/path HTTP/1.1",
    b"GET / HTTP/2.0",
    b"GET / HTTP/9.9",
    b"GET / HTTP/1.1.1",
    b"GET / HTTPS/1.1",
    b"GET / HTTP/01.01",
    b"GET / HTTP/1.a",
    b"GET / HTTP/12345678901.1",
    b"GET / x HTTP/1.1",
    b"GET / HTTP/1.1 extra",
    b"GARBAGE",
    b"",
    b"   ",
    b"get / http/1.1",
    b"GET\t/\tHTTP/1.1",
]


@pytest.mark.parametrize(
    "line", REQUEST_LINES, ids=[repr(line)[2:-1] or "empty" for line in REQUEST_LINES]
)
def test_request_lines_are_read_as_http_server_reads_them(line: bytes) -> None:
    _same(line + b"\r\nHost: x\r\n\r\n")


HEADER_BLOCKS = {
    "plain": b"Host: x\r\nX-Request-ID: 1\r\nContent-Length: 0\r\n\r\n",
    "lf-only": b"Host: x\nX-A: 1\n\n",
    "no-space": b"Host:x\r\nX-A:\t\t1\r\n\r\n",
    "empty-value": b"X-A:\r\nX-B: \r\n\r\n",
    "trailing-blanks": b"X-A: 1  \t\r\n\r\n",
    "colon-in-value": b'Signature: keyId="SN=1,CA=CN=x",headers="a:b"\r\n\r\n',
    "repeated": b"X-A: 1\r\nx-a: 2\r\nX-A: 3\r\n\r\n",
    "latin-1": b"PSU-Name: \xf8l\xe6\r\n\r\n",
    "utf-8": "PSU-Name: Ærlig Øl\r\n\r\n".encode(),
    "from-header": b"From: someone\r\n\r\n",
    "nothing": b"\r\n",
    "multipart": b"Content-Type: multipart/mixed; boundary=x\r\n\r\n",
    "message": b"Content-Type: message/rfc822\r\n\r\n",
    "connection-close": b"Connection: close\r\n\r\n",
    "connection-keep-alive": b"Connection: Keep-Alive\r\n\r\n",
    "expect-100": b"Expect: 100-Continue\r\nContent-Length: 2\r\n\r\nab",
    "body-follows": b"Content-Length: 4\r\n\r\nX-A: 1",
    "long-line": b"X-Long: " + b"a" * 70000 + b"\r\n\r\n",
    "longest-line": b"X-L: " + b"a" * (65536 - 7) + b"\r\n\r\n",
    "most-headers": b"".join(b"X-%d: 1\r\n" % n for n in range(MAX_HEADER_LINES - 1)) + b"\r\n",
    "too-many-headers": b"".join(b"X-%d: 1\r\n" % n for n in range(MAX_HEADER_LINES)) + b"\r\n",
}


#: Header blocks RFC 9112 lets a recipient refuse, which the stock parser reads by dropping the
#: line and every header after it (security-5.md L6) or by taking a cut-off block as complete.
MALFORMED_BLOCKS = {
    "folded": b"X-A: one\r\n two\r\n\tthree\r\nX-B: 2\r\n\r\n",
    "leading-fold": b" X-A: 1\r\nX-B: 2\r\n\r\n",
    "no-colon": b"X-A: 1\r\nJUNK\r\nX-B: 2\r\nConnection: close\r\n\r\n",
    "space-in-name": b"X A: 1\r\nX-B: 2\r\n\r\n",
    "space-before-colon": b"X-A : 1\r\n\r\n",
    "empty-name": b": 1\r\nX-B: 2\r\n\r\n",
    "unix-from": b"From someone\r\nX-B: 2\r\n\r\n",
    "stray-cr": b"X-A: 1\r2\r\nX-B: 2\r\n\r\n",
    "non-ascii-name": b"X-\xe6: 1\r\nX-B: 2\r\n\r\n",
    "nul-in-value": b"X-A: 1\x002\r\n\r\n",
    "eof-without-blank": b"X-A: 1\r\n",
    "eof": b"",
}


@pytest.mark.parametrize("block", list(MALFORMED_BLOCKS.values()), ids=list(MALFORMED_BLOCKS))
def test_a_malformed_header_block_is_refused_with_400(block: bytes) -> None:
    outcome = _parse(OurProbe, b"POST /v1/x HTTP/1.1\r\n" + block)
    assert not outcome["ok"] and outcome["close"]
    [(status, message, explain)] = outcome["refusals"]
    assert status == 400 and message == "Bad request head" and "RFC 911" in explain


@pytest.mark.parametrize("block", list(HEADER_BLOCKS.values()), ids=list(HEADER_BLOCKS))
@pytest.mark.parametrize("version", [b"HTTP/1.1", b"HTTP/1.0"])
def test_header_blocks_are_read_as_http_server_reads_them(block: bytes, version: bytes) -> None:
    _same(b"POST /v1/x " + version + b"\r\n" + block)


def test_random_header_blocks_are_read_as_http_server_reads_them() -> None:
    rng = random.Random(20260301)
    pieces = [
        b"X-A",
        b"Host",
        b"Sig",
        b":",
        b": ",
        b" ",
        b"\t",
        b"\r\n",
        b"\n",
        b"\r",
        b"v",
        b"=?utf-8?B?w4Y=?=",
        b"\xe6",
        b"From ",
        b"a,b",
        b'"q"',
    ]
    for _ in range(1500):
        lines = [b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(4)]
        raw = b"GET / HTTP/1.1\r\n" + b"\r\n".join(lines) + b"\r\n\r\n"
        if header_block_problem(read_header_lines(io.BytesIO(raw.partition(b"\n")[2]))) is None:
            _same(raw)
        else:
            assert [refusal[0] for refusal in _parse(OurProbe, raw)["refusals"]] == [400], raw


def test_a_plain_block_does_not_go_through_the_email_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import http.client

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the email parser was used")

    monkeypatch.setattr(http.client, "parse_headers", refuse)
    message = parse_header_lines(read_header_lines(io.BytesIO(HEADER_BLOCKS["plain"])))
    assert message["x-request-id"] == "1"
    with pytest.raises(AssertionError):
        parse_header_lines(read_header_lines(io.BytesIO(MALFORMED_BLOCKS["folded"])))
