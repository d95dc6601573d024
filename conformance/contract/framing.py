"""How an HTTP/1.1 request is framed (RFC 9112), checked once for both ends that read requests
off a socket: the proxy of ``conformance proxy`` and the reference server.

A recipient that reads a request's framing one way while the next hop reads it another is
how a request is smuggled past the one in front: the proxy would forward, and judge, one request
where the bank reads two. So both refuse, with 400, what RFC 9112 lets a recipient refuse and
what two parsers may read differently:

- a header line that is not ``name: value`` (RFC 9112 5): no colon, whitespace before the colon,
  a name that is not a token (RFC 9110 5.1), a value with CR, LF or NUL, an obsolete folded
  continuation line (5.2), or a header block that ends before its blank line (the client
  half-closed inside it);
- a body framed twice or ambiguously (6.1, 6.3): ``Transfer-Encoding`` together with
  ``Content-Length``, a transfer coding whose last one is not ``chunked``, two ``Content-Length``
  values that differ, or one that is not a string of ASCII digits.

:func:`header_block_problem` checks the raw lines of a header block, :func:`body_framing` the
parsed headers; each problem is a :class:`FramingError` whose text says which rule, for the
spec 7 error body of a 400.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["BodyFraming", "FramingError", "body_framing", "header_block_problem"]

#: A field name: an RFC 9110 token.
_TOKEN: Final = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: A field value may not hold these (RFC 9110 5.5; a bare CR, RFC 9112 2.2).
_FORBIDDEN_IN_VALUE: Final = re.compile(rb"[\r\n\x00]")
#: The ends of a header block: its blank line (CRLF or LF), or the end of the stream.
_BLANK: Final = (b"\r\n", b"\n")
#: The most digits a Content-Length may have (far above any body either end reads).
_MAX_LENGTH_DIGITS: Final = 18


class FramingError(ValueError):
    """A request whose framing RFC 9112 lets a recipient refuse: answered 400, connection closed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class BodyFraming:
    """How the body is delimited: chunked, or ``length`` bytes (0 when neither is stated)."""

    chunked: bool
    length: int


def header_line_problem(line: bytes) -> str | None:
    """What is wrong with one header line (its CRLF or LF included), or None."""
    text = line[:-2] if line.endswith(b"\r\n") else line[:-1] if line.endswith(b"\n") else line
    if text[:1] in (b" ", b"\t"):
        return f"an obsolete folded header line {_shown(text)} (RFC 9112 5.2)"
    name, colon, value = text.partition(b":")
    if not colon:
        return f"a header line without a colon {_shown(text)} (RFC 9112 5)"
    if name[-1:] in (b" ", b"\t"):
        return f"whitespace between a header name and its colon {_shown(text)} (RFC 9112 5.1)"
    if _TOKEN.fullmatch(name) is None:
        return f"a header name that is not a token {_shown(name)} (RFC 9110 5.1)"
    if _FORBIDDEN_IN_VALUE.search(value):
        return f"a CR, LF or NUL inside the value of {_shown(name)} (RFC 9110 5.5)"
    return None


def header_block_problem(lines: Sequence[bytes]) -> str | None:
    """What is wrong with a header block, read line by line up to and including its blank
    line (or the end of the stream), or None: the first malformed line, or a block cut off
    before its blank line."""
    for line in lines:
        if line in _BLANK:
            return None
        if not line:
            break
        problem = header_line_problem(line)
        if problem is not None:
            return problem
    return "the header block ends before its blank line (RFC 9112 2.1: an incomplete request)"


def body_framing(headers: Iterable[tuple[str, str]]) -> BodyFraming:
    """How the body of a request with these headers is delimited; :class:`FramingError` when
    RFC 9112 6.1 and 6.3 say it cannot be told safely."""
    codings: list[str] = []
    lengths: list[str] = []
    for name, value in headers:
        lower = name.lower()
        if lower == "transfer-encoding":
            codings += [part.strip().lower() for part in value.split(",") if part.strip()]
        elif lower == "content-length":
            lengths += [part.strip() for part in value.split(",")]
    if codings and lengths:
        raise FramingError(
            "both Transfer-Encoding and Content-Length: a request framed twice (RFC 9112 6.1)"
        )
    if codings:
        if codings[-1] != "chunked":
            raise FramingError(
                f"Transfer-Encoding {', '.join(codings)}: the last coding of a request must be "
                "chunked (RFC 9112 6.3)"
            )
        return BodyFraming(chunked=True, length=0)
    return BodyFraming(chunked=False, length=_content_length(lengths))


def _content_length(values: Sequence[str]) -> int:
    """The one length the ``Content-Length`` values state (0 when none)."""
    if not values:
        return 0
    for value in values:
        if not (value.isascii() and value.isdigit()) or len(value) > _MAX_LENGTH_DIGITS:
            raise FramingError(f"Content-Length {value!r} is not a number (RFC 9112 6.3)")
    if len({int(value) for value in values}) > 1:
        raise FramingError(f"Content-Length values that differ: {', '.join(values)} (RFC 9112 6.3)")
    return int(values[0])


def _shown(data: bytes) -> str:
    """Raw bytes as printable text for a message: at most 60 characters, escaped."""
    text = ascii(data[:60])[2:-1]
    return f"'{text}…'" if len(data) > 60 else f"'{text}'"
