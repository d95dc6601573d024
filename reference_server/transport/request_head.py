"""The head of an HTTP/1.1 request (request line and header block), read as ``http.server`` reads
it, for less work.

``http.server`` hands the header block to the ``email`` package's feed parser, a general MIME
parser that costs more per request than everything else in the stock handler together (about
60 µs for the 19 header lines of a signed payment, where the signature check's RSA operation
takes 25). Interface requests are plain ``Name: value`` lines, so :func:`parse_header_lines`
builds the same ``http.client.HTTPMessage`` directly when every line is one, and hands anything
else (a folded continuation line, a line without a colon, a name with a space, a stray CR) to
``http.client.parse_headers``, the stock path, so that every request gets exactly the headers
``http.server`` would have given it. :func:`read_header_lines` applies ``http.client``'s limits
(65 536 bytes a line, 100 lines) and :func:`parse_request_line` gives ``http.server``'s
answers to a bad request line; :class:`reference_server.transport.http.RequestHandler` puts them
together.
"""

from __future__ import annotations

import http.client
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus
from io import BufferedIOBase
from typing import BinaryIO

__all__ = [
    "MAX_HEADER_LINES",
    "MAX_LINE",
    "HeadError",
    "RequestLine",
    "parse_header_lines",
    "parse_request_line",
    "read_header_lines",
]

#: Longest header line, and most lines in a header block (the blank line included), as
#: ``http.client`` reads them (its ``_MAXLINE`` and ``_MAXHEADERS``).
MAX_LINE = 65536
MAX_HEADER_LINES = 100

#: A header name the ``email`` parser reads as one: printable ASCII without space or colon.
_NAME = re.compile(r"[!-9;-~]+")


class HeadError(Exception):
    """A request head ``http.server`` refuses: the status and the message of its ``send_error``."""

    def __init__(
        self, status: int, message: str, explain: str | None = None, *, version: str | None = None
    ) -> None:
        super().__init__(status, message, explain)
        self.status = status
        self.message = message
        self.explain = explain
        #: The request's HTTP version when it was read before the refusal, else None.
        self.version = version


@dataclass(frozen=True, slots=True)
class RequestLine:
    """A request line that parsed: method, target (``//`` collapsed), version, keep-alive."""

    command: str
    path: str
    version: str
    keep_alive: bool


def parse_request_line(line: str, *, server_version: str = "HTTP/1.1") -> RequestLine | None:
    """The request line (CRLF stripped) as ``http.server`` reads it: None for a blank line
    (no answer, the connection closes), :class:`HeadError` for one it refuses (400 syntax or
    version, 505 for HTTP/2 and above). A two-word (HTTP/0.9) line is the caller's business.

    ``keep_alive``: HTTP/1.1 or later on a server speaking ``server_version`` 1.1.
    """
    words = line.split()
    if not words:
        return None
    version = "HTTP/0.9"
    keep_alive = False
    if len(words) >= 3:
        version = words[-1]
        number = _version_number(version)
        if number is None:
            raise HeadError(HTTPStatus.BAD_REQUEST, f"Bad request version ({version!r})")
        if number >= (2, 0):
            raise HeadError(
                HTTPStatus.HTTP_VERSION_NOT_SUPPORTED,
                f"Invalid HTTP version ({version.split('/', 1)[1]})",
            )
        keep_alive = number >= (1, 1) and server_version >= "HTTP/1.1"
    if not 2 <= len(words) <= 3:
        raise HeadError(
            HTTPStatus.BAD_REQUEST,
            f"Bad request syntax ({line!r})",
            version=version if len(words) > 3 else None,
        )
    command, path = words[0], words[1]
    if path.startswith("//"):
        path = "/" + path.lstrip("/")  # as http.server: no scheme-relative target (gh-87389)
    return RequestLine(command, path, version, keep_alive)


def _version_number(version: str) -> tuple[int, int] | None:
    """``HTTP/<major>.<minor>`` with one to ten digits each (RFC 2145: numbers, not text)."""
    if not version.startswith("HTTP/"):
        return None
    parts = version[5:].split(".")
    if len(parts) != 2 or not all(part.isdigit() and len(part) <= 10 for part in parts):
        return None
    return int(parts[0]), int(parts[1])


def read_header_lines(rfile: BinaryIO | BufferedIOBase) -> list[bytes]:
    """The header lines up to and including the blank line (or the end of the stream).

    :class:`HeadError` 431 for a line over :data:`MAX_LINE` bytes or a block of more than
    :data:`MAX_HEADER_LINES` lines, with ``http.client``'s words.
    """
    lines: list[bytes] = []
    while True:
        line = rfile.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise HeadError(
                HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                "Line too long",
                f"got more than {MAX_LINE} bytes when reading header line",
            )
        lines.append(line)
        if len(lines) > MAX_HEADER_LINES:
            raise HeadError(
                HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                "Too many headers",
                f"got more than {MAX_HEADER_LINES} headers",
            )
        if line in (b"\r\n", b"\n", b""):
            return lines


def parse_header_lines(lines: Sequence[bytes]) -> http.client.HTTPMessage:
    """The header block as ``http.client.parse_headers`` parses it (ISO-8859-1 text, the
    ``email`` parser), directly when every line is a plain ``Name: value`` line."""
    message = http.client.HTTPMessage()
    for raw in lines:
        if raw in (b"\r\n", b"\n", b""):
            break
        header = _plain_header(raw.decode("iso-8859-1"))
        if header is None:
            return http.client.parse_headers(io.BytesIO(b"".join(lines)))
        message.set_raw(*header)
    if "content-type" in message and message.get_content_maintype() in ("message", "multipart"):
        # The feed parser would go on to read the (empty) body as a nested message or parts.
        return http.client.parse_headers(io.BytesIO(b"".join(lines)))
    message.set_payload("")  # what the feed parser leaves after an empty body
    return message


def _plain_header(line: str) -> tuple[str, str] | None:
    """``(name, value)`` of a line the ``email`` parser reads as one complete header and nothing
    else, or None: a name (:data:`_NAME`), a colon, a value without CR or LF (the feed parser
    also splits lines at a lone CR), then CRLF or LF. The value is what the ``compat32`` policy
    keeps: leading blanks dropped, trailing ones kept. String methods rather than one regular
    expression: a certificate header is 1.5 kB, which a regex would walk character by character.
    """
    if line.endswith("\r\n"):
        text = line[:-2]
    elif line.endswith("\n"):
        text = line[:-1]
    else:
        return None
    if "\r" in text or "\n" in text:
        return None
    name, colon, value = text.partition(":")
    if not colon or _NAME.fullmatch(name) is None:
        return None
    return name, value.lstrip(" \t")
