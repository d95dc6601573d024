"""The run's own traffic for tools (``conformance run --traffic``): ``events.ndjson``, an event
stream written as the run goes, and ``traffic.har``, every exchange as HAR 1.2, both masked as the
reports are (:func:`~conformance.report.exchange_record.exchange_record`).

One JSON object a line, each with ``event`` and ``at`` (ISO 8601, UTC):

- ``run``: the run began (``seed``);
- ``exchange``: one exchange, in ``exchange`` (the record of ``exchange_record``), with the
  ``scenario`` that made it and its ``position`` among the scenario's exchanges; a scenario's
  exchanges are written when its call ends, before its verdict;
- ``verdict``: a scenario's verdict as the reporting process learns it (``scenario``,
  ``verdict``, ``reason``, ``level``, ``operation``);
- ``end``: the run's verdict line (``verdict``), once the reports are written.

Every process of the run (each xdist worker, the controller) appends whole lines to the one file
with a single write each (``O_APPEND``), so the lines of two processes never mix. The HAR is made
of the ``exchange`` events at the end, in their order; an exchange's ``startedDateTime`` is when it
was recorded (the end of its scenario), its ``time`` the answer time.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from conformance import __version__

__all__ = ["EVENTS", "HAR", "append_event", "har_of", "read_events", "write_har"]

EVENTS: Final = "events.ndjson"
HAR: Final = "traffic.har"


def append_event(path: Path, event: str, **fields: Any) -> None:
    """Append one event line to ``path`` in a single write."""
    line = json.dumps(
        {"event": event, "at": datetime.now(UTC).isoformat(), **fields}, ensure_ascii=False
    )
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, (line + "\n").encode("utf-8"))
    finally:
        os.close(descriptor)


def read_events(path: Path) -> Iterator[dict[str, Any]]:
    """The events of ``path`` in their order."""
    with path.open(encoding="utf-8") as stream:
        for line in stream:
            if line.strip():
                yield json.loads(line)


def _content(body: str, mime: str) -> dict[str, Any]:
    data = base64.b64decode(body)
    try:
        return {"size": len(data), "mimeType": mime, "text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"size": len(data), "mimeType": mime, "text": body, "encoding": "base64"}


def _headers(pairs: list[list[str]]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in pairs]


def _mime(pairs: list[list[str]]) -> str:
    return next((v for n, v in pairs if n.lower() == "content-type"), "")


def _entry(record: Mapping[str, Any], scenario: str) -> dict[str, Any]:
    request_headers, response_headers = record["request_headers"], record["response_headers"]
    request: dict[str, Any] = {
        "method": record["method"],
        "url": record["url"],
        "httpVersion": "HTTP/1.1",
        "headers": _headers(request_headers),
        "queryString": [],
        "cookies": [],
        "headersSize": -1,
        "bodySize": len(base64.b64decode(record["request_body"])),
    }
    if record["request_body"]:
        content = _content(record["request_body"], _mime(request_headers))
        request["postData"] = {k: v for k, v in content.items() if k != "size"}
    return {
        "startedDateTime": record["at"],
        "time": record["elapsed_ms"],
        "request": request,
        "response": {
            "status": record["status"],
            "statusText": "",
            "httpVersion": "HTTP/1.1",
            "headers": _headers(response_headers),
            "cookies": [],
            "content": _content(record["response_body"], _mime(response_headers)),
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": len(base64.b64decode(record["response_body"])),
        },
        "cache": {},
        "timings": {"send": 0, "wait": record["elapsed_ms"], "receive": 0},
        "comment": scenario,
    }


def har_of(events: Path) -> dict[str, Any]:
    """The HAR 1.2 document of the ``exchange`` events of ``events``."""
    entries = [
        _entry(event["exchange"], str(event.get("scenario", "")))
        for event in read_events(events)
        if event.get("event") == "exchange"
    ]
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": "psd2-conformance", "version": __version__},
            "entries": entries,
        }
    }


def write_har(events: Path, har: Path) -> Path:
    """Write ``har`` from ``events``; returns it."""
    har.write_text(json.dumps(har_of(events), indent=1, ensure_ascii=False) + "\n", "utf-8")
    return har
