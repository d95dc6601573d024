"""A pytest plugin for ``bench_validator``: writes every exchange's method, path, status and both
bodies, so that the validators can be compared on the suite's own requests and the server's own
answers.

Loaded into a run with ``-p bench.body_recorder`` (after ``--`` of ``conformance run``) and
switched on by :data:`ENV_FILE`: after each scenario's call phase it keeps the scenario's
exchanges (``RunContext.exchanges``), and at the end of the session writes them as JSON lines
(bodies in base64) to that file (one process: run it with ``-n 0``).
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["ENV_FILE"]

#: The environment variable naming the file the records go to (unset: the plugin is idle).
ENV_FILE = "BENCH_BODY_RECORD"

_records: list[dict[str, Any]] = []
_seen: set[int] = set()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        return (yield)
    finally:
        context = getattr(item, "funcargs", {}).get("conformance_context")
        if context is not None and os.environ.get(ENV_FILE):
            for exchange in context.exchanges:
                if id(exchange) not in _seen:
                    _seen.add(id(exchange))
                    _records.append(
                        {
                            "method": exchange.method,
                            "path": exchange.path,
                            "status": exchange.status,
                            "request": base64.b64encode(exchange.request_body).decode(),
                            "response": base64.b64encode(exchange.response_body).decode(),
                        }
                    )


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get(ENV_FILE)
    if not target or not _records:
        return
    with Path(target).open("w", encoding="utf-8") as out:
        for record in _records:
            out.write(json.dumps(record) + "\n")
