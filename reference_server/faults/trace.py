"""The switch trace: which fault switches each request reached (``--switch-trace FILE``).

The self-check runs each fault only on the scenarios that can see it (``conformance selfcheck``).
A fault changes the server's behaviour only where ``faulty(name)`` is asked and answers True, so
on the faithful server a request that never asks for a fault's switch is answered exactly as it
would be with the fault on. The faithful recording run tags every request with its scenario
(``conformance.contract.trace.TRACE_HEADER``); the server writes one JSON line per request that
asked any switch: ``{"tag": "<scenario id or setup:key>", "faults": [...]}``. A switch asked
outside a request or by an untagged request is written with ``"tag": null``: the self-check then
runs that fault on every scenario.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TextIO

from conformance.contract.trace import TRACE_HEADER
from reference_server.api import Headers

__all__ = ["SwitchTrace", "untagged"]

_TRACE_KEY = TRACE_HEADER.lower()
_ASKED: ContextVar[set[str] | None] = ContextVar("fault_switches_asked", default=None)


class SwitchTrace:
    """Appends one line per request that asked a fault switch (thread-safe, flushed per line)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()
        self._global: set[str] = set()

    @contextmanager
    def request(self, headers: Headers) -> Iterator[None]:
        """Collect the switches asked while the request with ``headers`` is answered (its
        body read, dispatched, its answer written), then write them under its tag."""
        tag = headers.get(TRACE_HEADER)
        asked: set[str] = set()
        token = _ASKED.set(asked)
        try:
            yield
        finally:
            _ASKED.reset(token)
            if asked:
                self._write(tag or None, asked)

    def asked(self, name: str) -> None:
        """Note that the switch of fault ``name`` was asked (``Application.faulty``)."""
        current = _ASKED.get()
        if current is not None:
            current.add(name)
            return
        with self._lock:
            if name in self._global:
                return
            self._global.add(name)
        self._write(None, {name})

    def _write(self, tag: str | None, faults: set[str]) -> None:
        line = json.dumps({"tag": tag, "faults": sorted(faults)}, separators=(",", ":"))
        with self._lock:
            if self._file.closed:
                return
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def untagged(headers: Headers) -> Headers:
    """``headers`` without the self-check's tag (so that nothing else ever sees it)."""
    if TRACE_HEADER not in headers:
        return headers
    return Headers((name, value) for name, value in headers.raw() if name.lower() != _TRACE_KEY)
