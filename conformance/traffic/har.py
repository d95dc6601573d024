"""Reading a HAR file (HTTP Archive 1.2: browser devtools, mitmproxy's HAR export, API gateways)
into exchanges for the judge.

No library: the maintained choices on PyPI are few and not a fit (``haralyzer``, last released
July 2023, is built around pages and timings; ``hario-core`` is young, pulls in pydantic and has
few users), and what the judge reads is small. The file is checked against the parts of the HAR
1.2 structure the judge reads (:data:`HAR_SCHEMA`, with ``jsonschema`` as everywhere else), and a
file that breaks it is refused naming the JSON path. Bodies: ``postData.text`` and
``content.text`` as UTF-8, or base64 where ``encoding`` says so (HAR 1.2 for ``content``;
mitmproxy and some gateways write it on ``postData`` too). HTTP/2 pseudo-headers (``:method``)
are left out: spec 5's signing string reads the request line, not them.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator

from conformance.contract import bounded_json
from conformance.errors import ConformanceError
from conformance.exchange import Exchange

__all__ = ["HAR_SCHEMA", "read_har"]

_HEADERS = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["name", "value"],
        "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
    },
}
_TEXT_OR_NONE = {"type": ["string", "null"]}

#: The parts of HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/) the judge reads.
HAR_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "required": ["log"],
    "properties": {
        "log": {
            "type": "object",
            "required": ["version", "entries"],
            "properties": {
                "version": {"type": "string"},
                "entries": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["startedDateTime", "time", "request", "response"],
                        "properties": {
                            "startedDateTime": {"type": "string"},
                            "time": {"type": "number"},
                            "request": {
                                "type": "object",
                                "required": ["method", "url", "httpVersion", "headers"],
                                "properties": {
                                    "method": {"type": "string"},
                                    "url": {"type": "string"},
                                    "httpVersion": {"type": "string"},
                                    "headers": _HEADERS,
                                    "postData": {
                                        "type": "object",
                                        "properties": {
                                            "mimeType": {"type": "string"},
                                            "text": _TEXT_OR_NONE,
                                            "encoding": {"type": "string"},
                                        },
                                    },
                                },
                            },
                            "response": {
                                "type": "object",
                                "required": ["status", "headers", "content"],
                                "properties": {
                                    "status": {"type": "integer"},
                                    "headers": _HEADERS,
                                    "content": {
                                        "type": "object",
                                        "properties": {
                                            "text": _TEXT_OR_NONE,
                                            "encoding": {"type": "string"},
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        }
    },
}


#: Longest HAR file read: a capture holds many bodies, each within the reader's own limit.
_MAX_HAR_BYTES = 1024 * 1024 * 1024


def read_har(path: Path) -> Iterator[tuple[Exchange, datetime]]:
    """Each entry of the HAR file as an exchange and when it was sent, in the file's order (the
    order of ``startedDateTime`` where it differs)."""
    try:
        document = bounded_json.loads(
            path.read_text(encoding="utf-8-sig"), max_bytes=_MAX_HAR_BYTES
        )
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConformanceError(f"{path} is not a readable HAR file (JSON): {error}") from None
    errors = sorted(
        Draft202012Validator(HAR_SCHEMA).iter_errors(document), key=lambda e: list(e.path)
    )
    if errors:
        first = errors[0]
        raise ConformanceError(
            f"{path} is not a HAR 1.2 file: at {first.json_path}: {first.message}"
            + (f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else "")
        )
    entries = document["log"]["entries"]
    dated = [
        (_when(entry["startedDateTime"], f"{path} entry {position}"), position, entry)
        for position, entry in enumerate(entries)
    ]
    for at, position, entry in sorted(dated, key=lambda item: (item[0], item[1])):
        yield _exchange(entry, path, position), at


def _when(text: str, where: str) -> datetime:
    """An entry's ``startedDateTime``: it drives the certificate-validity and Date checks, so
    one that is not a date is refused, never taken as the present moment (L12)."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ConformanceError(
            f"{where}: startedDateTime {text[:60]!r} is not an ISO 8601 date and time"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _pairs(headers: list[Mapping[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (item["name"], item["value"]) for item in headers if not item["name"].startswith(":")
    )


def _body(part: Mapping[str, Any] | None, where: str) -> bytes:
    if not part:
        return b""
    text = part.get("text")
    if not text:
        return b""
    if str(part.get("encoding", "")).lower() == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except binascii.Error:
            raise ConformanceError(
                f"{where}: encoding base64, but the text is not base64"
            ) from None
    try:
        return str(text).encode("utf-8")
    except UnicodeEncodeError as error:
        raise ConformanceError(
            f"{where}: the text is not Unicode text that UTF-8 can hold ({error.reason} at "
            f"character {error.start})"
        ) from None


def _exchange(entry: Mapping[str, Any], path: Path, position: int) -> Exchange:
    request, response = entry["request"], entry["response"]
    where = f"{path} entry {position}"
    url = request["url"]
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number raises here, not later
    except ValueError as error:
        raise ConformanceError(
            f"{where}: the request URL {url[:200]!r} is not a URL: {error}"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConformanceError(
            f"{where}: the request URL {url[:200]!r} is not an absolute http:// or https:// URL"
        )
    return Exchange(
        method=request["method"].upper(),
        url=url,
        request_headers=_pairs(request["headers"]),
        request_body=_body(request.get("postData"), f"{where} request"),
        signing_string=None,
        status=int(response["status"]),
        response_headers=_pairs(response["headers"]),
        response_body=_body(response.get("content"), f"{where} response"),
        elapsed=max(float(entry["time"]), 0.0) / 1000,
        base_url=f"{parts.scheme}://{parts.netloc}",
    )
