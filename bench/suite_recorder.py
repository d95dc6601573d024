"""A pytest plugin for ``bench_suite``: writes every exchange the suite made, for the floor's mix.

Loaded into a measured run with ``-p bench.suite_recorder`` (after ``--`` of ``conformance
run``) and switched on by :data:`ENV_DIRECTORY`. After each scenario's call phase it keeps the
scenario's exchanges (``RunContext.exchanges``: set-up, SCA page and control calls included);
at the end of the session each process (every xdist worker) writes them as JSON lines to
``exchanges-<worker>.jsonl`` in that directory. The benchmark then replays the same method, path,
header and body mix, freshly signed, as the floor (``bench.replay``).

Why a plugin and not the server's log: the log has the method, path and status of every request
(it is what the benchmark counts) but no headers or bodies, and a floor of body-less requests
would be a floor of cheap refusals. The plugin's cost (keeping references, one file per worker
at the end) is counted in the suite's wall time, never in the floor's.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conformance.exchange import Exchange

__all__ = ["ENV_DIRECTORY", "KEPT_HEADERS_EXCLUDED", "exchange_record"]

#: The environment variable naming the directory the records go to (unset: the plugin is idle).
ENV_DIRECTORY = "BENCH_SUITE_RECORD_DIR"

#: Headers a replay makes afresh (the signer's, X-Request-ID) or the HTTP layer sets.
KEPT_HEADERS_EXCLUDED = frozenset(
    {
        "x-request-id",
        "digest",
        "signature",
        "tpp-signature-certificate",
        "date",
        "host",
        "content-length",
        "connection",
        "accept-encoding",
        "user-agent",
        "transfer-encoding",
    }
)

_recorded: list[Exchange] = []
_seen: set[int] = set()


def exchange_record(exchange: Exchange) -> dict[str, Any]:
    """One exchange as a JSON-ready record: what a replay needs, and the status it had."""
    return {
        "method": exchange.method,
        "path": exchange.path,
        "headers": [
            [name, value]
            for name, value in exchange.request_headers
            if name.lower() not in KEPT_HEADERS_EXCLUDED
        ],
        "body": base64.b64encode(exchange.request_body).decode("ascii"),
        "signer": exchange.signer,
        "status": exchange.status,
    }


def _directory() -> Path | None:
    value = os.environ.get(ENV_DIRECTORY)
    return Path(value) if value else None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        return (yield)
    finally:
        context = getattr(item, "funcargs", {}).get("conformance_context")
        if context is not None and _directory() is not None:
            # A scenario skipped before it cleared the list leaves the previous one's exchanges
            # there: each exchange is kept once (the list keeps them alive, so ids stay unique).
            for exchange in context.exchanges:
                if id(exchange) not in _seen:
                    _seen.add(id(exchange))
                    _recorded.append(exchange)


def pytest_sessionfinish(session: pytest.Session) -> None:
    directory = _directory()
    if directory is None or not _recorded:
        return
    worker = getattr(session.config, "workerinput", {}).get("workerid", "main")
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / f"exchanges-{worker}.jsonl").open("w", encoding="utf-8") as out:
        for exchange in _recorded:
            out.write(json.dumps(exchange_record(exchange), ensure_ascii=False) + "\n")
