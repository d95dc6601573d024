"""A run's exchanges kept as files, masked as the reports are: one JSON file per scenario under
``<reports>/evidence/exchanges/`` (``conformance run --seal`` seals them, ``conformance verify``
judges them again).

A file holds ``scenario`` (its id) and ``exchanges``: for each, when it was recorded (``at``, ISO
8601), ``method``, ``url``, ``base_url``, ``request_headers`` and ``response_headers``
(``[name, value]`` pairs in wire order), ``request_body`` and ``response_body`` (base64 of the
bytes as kept), ``status``, ``elapsed_ms`` and ``signing_string``. What is kept went through
:func:`~conformance.report.masking.scrub` (each header as a ``Name: value`` line, each body and
URL that is UTF-8 text): identity numbers always, a real target's secrets by its policy. A body
that is not UTF-8 text is kept as it came (it cannot be searched for what to mask).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from conformance.contract import bounded_json
from conformance.errors import ConformanceError
from conformance.exchange import Exchange
from conformance.report.masking import scrub

__all__ = [
    "EVIDENCE_DIR",
    "EXCHANGES_DIR",
    "RECORDING_DIR",
    "exchange_from_record",
    "exchange_record",
    "exchanges_file",
    "iter_files",
    "read_exchanges",
    "write_exchanges",
]

#: The folder of the sealed record, in the reports folder.
EVIDENCE_DIR: Final = "evidence"
#: Where a sealed run writes its exchanges while it runs (in the reports folder): the record
#: already in ``evidence/`` stays there until the new one is sealed.
RECORDING_DIR: Final = "evidence.recording"
#: The exchanges' folder, in the evidence folder.
EXCHANGES_DIR: Final = "exchanges"

_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]")


def exchanges_file(folder: Path, scenario: str) -> Path:
    """The file of a scenario's exchanges in ``folder`` (its id, made safe as a file name)."""
    return folder / (_UNSAFE.sub("_", scenario) + ".json")


def _masked_header(name: str, value: str) -> tuple[str, str]:
    shown = scrub(f"{name}: {value}")
    head, _, rest = shown.partition(": ")
    return (head, rest) if head == name else (name, shown)


def _masked_body(body: bytes) -> bytes:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return body
    return scrub(text).encode("utf-8")


def exchange_record(exchange: Exchange, at: datetime) -> dict[str, Any]:
    """One exchange as a file keeps it, masked."""
    return {
        "at": at.isoformat(),
        "method": exchange.method,
        "url": scrub(exchange.url),
        "base_url": scrub(exchange.base_url),
        "request_headers": [list(_masked_header(n, v)) for n, v in exchange.request_headers],
        "request_body": base64.b64encode(_masked_body(exchange.request_body)).decode("ascii"),
        "signing_string": (
            None if exchange.signing_string is None else scrub(exchange.signing_string)
        ),
        "status": exchange.status,
        "response_headers": [list(_masked_header(n, v)) for n, v in exchange.response_headers],
        "response_body": base64.b64encode(_masked_body(exchange.response_body)).decode("ascii"),
        "elapsed_ms": round(exchange.elapsed * 1000, 3),
    }


def exchange_from_record(record: Mapping[str, Any]) -> tuple[Exchange, datetime]:
    """An exchange as kept and when it was recorded; a malformed record is a ``KeyError``,
    ``TypeError`` or ``ValueError``."""
    at = datetime.fromisoformat(str(record["at"]))
    exchange = Exchange(
        method=str(record["method"]),
        url=str(record["url"]),
        request_headers=tuple((str(n), str(v)) for n, v in record["request_headers"]),
        request_body=base64.b64decode(str(record["request_body"]), validate=True),
        signing_string=(
            None if record.get("signing_string") is None else str(record["signing_string"])
        ),
        status=int(record["status"]),
        response_headers=tuple((str(n), str(v)) for n, v in record["response_headers"]),
        response_body=base64.b64decode(str(record["response_body"]), validate=True),
        elapsed=float(record["elapsed_ms"]) / 1000,
        base_url=str(record.get("base_url") or ""),
    )
    return exchange, (at if at.tzinfo is not None else at.replace(tzinfo=UTC))


def write_exchanges(
    folder: Path, scenario: str, exchanges: Iterable[Exchange], at: datetime | None = None
) -> Path:
    """Write a scenario's exchanges (masked) to its file in ``folder``; returns the file."""
    moment = at or datetime.now(UTC)
    folder.mkdir(parents=True, exist_ok=True)
    path = exchanges_file(folder, scenario)
    document = {
        "scenario": scenario,
        "exchanges": [exchange_record(exchange, moment) for exchange in exchanges],
    }
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_exchanges(path: Path) -> tuple[str, list[tuple[Exchange, datetime]]]:
    """A scenario's id and its exchanges from its file; a file that is not one is a
    :class:`ConformanceError` naming it."""
    try:
        document = bounded_json.loads(path.read_text(encoding="utf-8"))
        return str(document["scenario"]), [
            exchange_from_record(record) for record in document["exchanges"]
        ]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConformanceError(f"{path} cannot be read as exchanges: {error}") from None
    except (KeyError, TypeError, ValueError) as error:
        raise ConformanceError(f"{path} is not a file of exchanges: {error!r}") from None


def iter_files(folder: Path) -> Iterator[Path]:
    """The exchange files of ``folder``, by name."""
    yield from sorted(folder.glob("*.json"))
