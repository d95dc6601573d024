"""A seeded fuzz of HTTP/1.1 framing (security-5.md H2, M5, M6, L5, L6, L16-L18, L21): raw
requests over a socket of their own, each broken in one way a request smuggler or a broken client
breaks one: ``Transfer-Encoding`` with ``Content-Length``, two lengths, a length that is not ASCII
digits, folded, colon-less or NUL-carrying header lines, a head cut off by a half-close, HTTP/0.9,
a transfer coding that does not end in ``chunked``, a malformed or huge chunk size, a request line
or header block past the limits, and a body nested far deeper than the bounded JSON reader reads
(framed by length or by chunks). The peer (the reference server, or the proxy in front of it) must
answer each with a status line below 500 and log no traceback. ``framing_cases(seed, count)`` is
deterministic for a seed; ``run_framing`` sends them.
"""

from __future__ import annotations

import contextlib
import logging
import random
import socket
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

__all__ = ["FramingCase", "FramingResult", "framing_cases", "run_framing"]

#: Targets of the requests: a creation with a body, and reads.
_TARGETS = (
    ("POST", "/v1/sandbox/customers"),
    ("POST", "/v1/payments/norwegian-domestic-credit-transfers"),
    ("POST", "/v1/consents"),
    ("GET", "/v1/accounts"),
)
_BODY = b'{"customerType":"PRIVATE","customerName":"Kari"}'


@dataclass(frozen=True)
class FramingCase:
    """One raw request (its bytes), whether to half-close after it, and what was broken."""

    number: int
    raw: bytes
    half_close: bool
    what: str


@dataclass
class FramingResult:
    """What a framing fuzz found: the cases answered 5xx, and each status's count."""

    sent: int = 0
    server_errors: list[tuple[FramingCase, int]] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)


def _head(method: str, target: str, *lines: bytes) -> bytes:
    return (
        f"{method} {target} HTTP/1.1\r\nHost: bank.test\r\nConnection: close\r\n"
        "Content-Type: application/json\r\n"
    ).encode() + b"".join(line + b"\r\n" for line in lines)


def _deep(rng: random.Random) -> bytes:
    depth = rng.choice((65, 1_000, 100_000))
    return b"[" * depth + b"]" * depth


def _chunked(body: bytes) -> bytes:
    return f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"


def _length(body: bytes) -> bytes:
    return f"Content-Length: {len(body)}".encode()


#: Each break: a name and how it makes the raw request (and whether it half-closes).
_Break = Callable[[random.Random, str, str], tuple[bytes, bool]]
_BREAKS: dict[str, _Break] = {
    "Transfer-Encoding and Content-Length": lambda rng, m, t: (
        _head(m, t, b"Transfer-Encoding: chunked", b"Content-Length: 4", b"")
        + _chunked(_BODY), False),
    "two Content-Lengths that differ": lambda rng, m, t: (
        _head(m, t, _length(_BODY), b"Content-Length: 3", b"") + _BODY, False),
    "a Content-Length that is not ASCII digits": lambda rng, m, t: (
        _head(m, t, b"Content-Length: " + rng.choice(
            ("\u00b2".encode("latin-1"), b"+5", b"0x5", b"5 5", b"-1", b"9" * 30)), b"")
        + _BODY, False),
    "a folded header line": lambda rng, m, t: (
        _head(m, t, b"X-A: 1", b" folded", _length(_BODY), b"") + _BODY, False),
    "a header line without a colon": lambda rng, m, t: (
        _head(m, t, b"JUNK", _length(_BODY), b"") + _BODY, False),
    "whitespace before a colon": lambda rng, m, t: (
        _head(m, t, b"Content-Length : 2", b"") + b"{}", False),
    "a NUL in a header value": lambda rng, m, t: (
        _head(m, t, b"X-A: a\x00b", _length(_BODY), b"") + _BODY, False),
    "HTTP/0.9": lambda rng, m, t: (f"GET {t}\r\n\r\n".encode(), False),
    "a head cut off by a half-close": lambda rng, m, t: (
        _head(m, t, b"X-Half: val")[:-2], True),
    "a transfer coding not ending in chunked": lambda rng, m, t: (
        _head(m, t, b"Transfer-Encoding: chunked, gzip", b"") + _chunked(_BODY), False),
    "a malformed chunk size": lambda rng, m, t: (
        _head(m, t, b"Transfer-Encoding: chunked", b"")
        + rng.choice((b"zz\r\n", b"-1\r\n", b"\r\n")) + _BODY + b"\r\n0\r\n\r\n", True),
    "a huge chunk size": lambda rng, m, t: (
        _head(m, t, b"Transfer-Encoding: chunked", b"")
        + b"ffffffffffffffff\r\n" + _BODY, True),
    "a request line past the limit": lambda rng, m, t: (
        f"{m} {t}?{'a' * 70_000} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode(),
        False),
    "a header block past the limit": lambda rng, m, t: (
        _head(m, t, *(f"X-H{i}: {'v' * 100}".encode() for i in range(rng.choice((120, 700)))),
              b""), False),
    "a body nested deep, by length": lambda rng, m, t: (
        lambda body: (_head(m, t, _length(body), b"") + body, False))(_deep(rng)),
    "a body nested deep, in chunks": lambda rng, m, t: (
        _head(m, t, b"Transfer-Encoding: chunked", b"") + _chunked(_deep(rng)), False),
}  # fmt: skip


def framing_cases(seed: int, count: int) -> Iterator[FramingCase]:
    """``count`` cases, every break in turn on a random target, the same for the same seed."""
    rng = random.Random(seed)
    names = sorted(_BREAKS)
    for number in range(count):
        name = names[number % len(names)]
        method, target = rng.choice(_TARGETS)
        raw, half_close = _BREAKS[name](rng, method, target)
        yield FramingCase(number, raw, half_close, f"{name} ({method} {target})")


def _exchange(host: str, port: int, case: FramingCase, timeout: float) -> bytes:
    """Send the raw request; what came back until the peer closed (or ``timeout`` passed)."""
    answer = b""
    with socket.create_connection((host, port), timeout=timeout) as stream:
        with contextlib.suppress(OSError):
            stream.sendall(case.raw)
            if case.half_close:
                stream.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            while chunk := stream.recv(65536):
                answer += chunk
    return answer


def _status(answer: bytes) -> int | None:
    parts = answer.split(b"\r\n", 1)[0].split()
    if len(parts) >= 2 and parts[0].startswith(b"HTTP/1.") and parts[1].isdigit():
        return int(parts[1])
    return None


def run_framing(
    base_url: str, fuzz: Sequence[FramingCase] | Iterator[FramingCase], *, timeout: float = 10.0
) -> tuple[FramingResult, list[FramingCase], int]:
    """Send every case to ``base_url`` (plain HTTP): the result (5xx answers in
    ``server_errors``), the cases that got no status line, and the tracebacks an in-process
    reference server (or proxy) logged meanwhile."""
    parts = urlsplit(base_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    tracebacks = _Tracebacks()
    loggers = [logging.getLogger(name) for name in ("reference_server", "conformance")]
    for logger in loggers:
        logger.addHandler(tracebacks)
    result = FramingResult()
    unanswered: list[FramingCase] = []
    try:
        for case in fuzz:
            status = _status(_exchange(host, port, case, timeout))
            result.sent += 1
            if status is None:
                unanswered.append(case)
                continue
            result.statuses[status] = result.statuses.get(status, 0) + 1
            if status >= 500:
                result.server_errors.append((case, status))
    finally:
        for logger in loggers:
            logger.removeHandler(tracebacks)
    return result, unanswered, tracebacks.count


class _Tracebacks(logging.Handler):
    """Counts the records logged with an exception attached."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.count += 1
