"""Reference-server-only controls under ``/_control`` (never under ``/v1``, never signed).

They exist so that a test (or a TPP developing against the sandbox) can reach states that take
time on a real bank: the clock moved forward (spec 8 consent age, the daily call limit, spec 3
batch runs) and a clean slate. Loopback callers only. The payment side adds ``/_control/batch``
through its own ``ROUTES``.

- ``GET /_control/clock`` → ``{"now", "today", "offsetSeconds"}``
- ``POST /_control/clock`` with ``{"advance": "P1DT2H"}``, ``{"advanceSeconds": N}`` or
  ``{"set": "2026-03-01T10:00:00Z"}`` → the same document
- ``POST /_control/reset`` → 200 ``{"reset": true}`` (store emptied, clock back to real time)
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from reference_server.api import ApiError, Call, Response, Route, ServerState

__all__ = ["ROUTES", "parse_duration"]

_DURATION = re.compile(
    r"^(?P<sign>-)?P(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
    r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$"
)


def parse_duration(text: str) -> timedelta:
    """An ISO 8601 duration of weeks, days, hours, minutes and seconds (``P1D``, ``PT90M``,
    ``-P2D``); years and months have no fixed length and are refused."""
    found = _DURATION.match(text)
    if found is None or text.rstrip("-") in ("P", "PT") or text.endswith("T"):
        raise ValueError(f"{text!r} is not an ISO 8601 duration like P1D or PT2H30M")
    parts = {
        name: float(value) for name, value in found.groupdict().items() if value and name != "sign"
    }
    delta = timedelta(**parts)
    return -delta if found.group("sign") else delta


def _clock_document(app: ServerState) -> dict[str, Any]:
    now = app.clock.now()
    return {
        "now": now.isoformat(),
        "today": now.date().isoformat(),
        "offsetSeconds": app.clock.offset.total_seconds(),
    }


def show_clock(call: Call) -> Response:
    return Response.json(200, _clock_document(call.app))


def move_clock(call: Call) -> Response:
    body = call.body
    if not isinstance(body, dict) or len(body) != 1:
        raise ApiError(
            400,
            "FORMAT_ERROR",
            'send one of {"advance": "P1D"}, {"advanceSeconds": 86400}, {"set": "<ISO datetime>"}',
        )
    try:
        if "advance" in body:
            call.app.clock.advance(parse_duration(str(body["advance"])))
        elif "advanceSeconds" in body:
            seconds = body["advanceSeconds"]
            if isinstance(seconds, bool) or not isinstance(seconds, int | float):
                raise ValueError("advanceSeconds must be a number")
            call.app.clock.advance(timedelta(seconds=seconds))
        elif "set" in body:
            call.app.clock.set(datetime.fromisoformat(str(body["set"]).replace("Z", "+00:00")))
        else:
            raise ValueError(f"unknown clock control {next(iter(body))!r}")
    except (ValueError, OverflowError) as error:
        raise ApiError(400, "FORMAT_ERROR", str(error)) from None
    return Response.json(200, _clock_document(call.app))


def reset(call: Call) -> Response:
    call.app.reset()
    return Response.json(200, {"reset": True})


ROUTES = (
    Route("GET", "/_control/clock", show_clock),
    Route("POST", "/_control/clock", move_clock),
    Route("POST", "/_control/reset", reset),
)
