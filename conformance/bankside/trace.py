"""The self-check's recording run: each request tagged with the scenario that sent it.

With ``CONFORMANCE_SWITCH_TRACE=DIR`` in its environment (set by ``conformance selfcheck`` for
the faithful run only), a run tags every request with the scenario it is made for, or with
``setup:<key>`` while the worker's shared set-up data ``key`` is made, or with
:data:`PREFLIGHT_TAG` while the preflight probes the target (every run makes it, before any
scenario) (``conformance.contract.trace.TRACE_HEADER``, never signed, taken off by the server before
anything reads the request); the bundled reference server writes the fault switches each tagged
request reached to ``DIR/server-switches.jsonl``; and each process writes which shared set-up
data each scenario (or each shared datum) used to ``DIR/setup-use-<pid>.jsonl``. From the two,
the self-check knows which scenarios can see each fault (``conformance.selfcheck``). Without
the variable nothing here does anything.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import httpx

from conformance.contract.trace import SETUP_TAG_PREFIX, TRACE_HEADER

__all__ = [
    "PREFLIGHT_TAG",
    "SERVER_TRACE",
    "SETUP_USE_GLOB",
    "TRACE_ENV",
    "add_tag",
    "record_use",
    "setup_tag",
    "tagged",
    "trace_dir",
]

#: The environment variable naming the folder of a recording run's trace.
TRACE_ENV = "CONFORMANCE_SWITCH_TRACE"
#: The bundled server's file in that folder (``python -m reference_server --switch-trace``).
SERVER_TRACE = "server-switches.jsonl"
#: The tag of the preflight's requests (``bankside/preflight.py``): no scenario's, but made by
#: every run, a narrowed one too, so a fault its requests reached needs no whole run.
PREFLIGHT_TAG = "preflight"
#: The files of shared set-up use, one per process.
SETUP_USE_GLOB = "setup-use-*.jsonl"

_TAG: ContextVar[str] = ContextVar("conformance_trace_tag", default="")
_LOCK = threading.Lock()
_RECORDED: set[tuple[str, str]] = set()


def trace_dir() -> Path | None:
    """The folder of this run's trace, or None when the run records none."""
    value = os.environ.get(TRACE_ENV)
    return Path(value) if value else None


def setup_tag(key: str) -> str:
    """The tag of the requests that make the shared set-up data ``key``."""
    return SETUP_TAG_PREFIX + key


@contextmanager
def tagged(tag: str) -> Iterator[None]:
    """Tag the requests made in this context (this thread) with ``tag``."""
    token = _TAG.set(tag)
    try:
        yield
    finally:
        _TAG.reset(token)


def add_tag(request: httpx.Request) -> None:
    """httpx request hook: put the current tag on the request (a recording run only)."""
    tag = _TAG.get()
    if tag and trace_dir() is not None:
        request.headers[TRACE_HEADER] = tag


def record_use(key: str) -> None:
    """Note that the current scenario (or shared datum) uses the shared set-up data ``key``."""
    folder = trace_dir()
    tag = _TAG.get()
    if folder is None or not tag:
        return
    line = json.dumps({"by": tag, "key": key}, separators=(",", ":"))
    with _LOCK:
        if (tag, key) in _RECORDED:
            return
        _RECORDED.add((tag, key))
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / f"setup-use-{os.getpid()}.jsonl").open("a", encoding="utf-8") as file:
            file.write(line + "\n")
