"""Reading the reference server's exchange log (``python -m reference_server --exchange-log
FILE``) into exchanges for the judge.

One JSON object per line, written by ``reference_server.transport.exchange_log``: ``at``
(ISO 8601, when the request arrived), ``base_url``, ``method``, ``target`` (path and query as
received),
``request_headers`` and ``response_headers`` (``[name, value]`` pairs in wire order and case),
``request_body`` and ``response_body`` (base64: the exact bytes, so the Digest can be checked),
``status`` and ``elapsed_ms``.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conformance.contract import bounded_json
from conformance.errors import ConformanceError
from conformance.exchange import Exchange

__all__ = ["looks_like_exchange_log", "read_exchange_log"]

_FIELDS = ("at", "method", "target", "request_headers", "status", "response_headers")


def looks_like_exchange_log(first_line: str) -> bool:
    """Whether a file's first line is one of the exchange log's."""
    try:
        record = bounded_json.loads(first_line)
    except json.JSONDecodeError:
        return False
    return isinstance(record, dict) and all(name in record for name in _FIELDS)


def read_exchange_log(path: Path) -> Iterator[tuple[Exchange, datetime]]:
    """Each logged exchange and when its request arrived, in the log's order."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ConformanceError(f"{path} cannot be read: {error}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = bounded_json.loads(line)
            yield _exchange(record), _when(str(record["at"]))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, binascii.Error) as error:
            raise ConformanceError(
                f"{path} line {number} is not an exchange log record: {error}"
            ) from None


def _when(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _pairs(items: Any) -> tuple[tuple[str, str], ...]:
    return tuple((str(name), str(value)) for name, value in items)


def _exchange(record: dict[str, Any]) -> Exchange:
    base_url = str(record.get("base_url") or "http://reference-server.invalid")
    return Exchange(
        method=str(record["method"]),
        url=base_url + str(record["target"]),
        request_headers=_pairs(record["request_headers"]),
        request_body=base64.b64decode(record.get("request_body") or "", validate=True),
        signing_string=None,
        status=int(record["status"]),
        response_headers=_pairs(record["response_headers"]),
        response_body=base64.b64decode(record.get("response_body") or "", validate=True),
        elapsed=float(record.get("elapsed_ms", 0.0)) / 1000,
        base_url=base_url,
    )
