"""The exchange log (``--exchange-log FILE``): every request and its answer as one JSON line,
whole (headers in wire order and case, bodies as base64), for ``conformance judge`` to judge the
traffic a TPP sent to the reference server.

The file holds what the TPP sent, unmasked: PSU ids, signatures, certificates (the Signature and
Digest can only be checked on the exact bytes). It is created readable by its owner only
(mode 0600); treat it as sensitive test data. ``conformance judge`` masks what it writes, as a run
does.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["ExchangeLog"]


class ExchangeLog:
    """Appends one line per exchange; safe across the server's threads."""

    def __init__(self, path: Path, base_url: str = "") -> None:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._file = os.fdopen(descriptor, "a", encoding="utf-8")
        self._lock = threading.Lock()
        self.base_url = base_url

    def write(
        self,
        *,
        at: float,
        method: str,
        target: str,
        request_headers: Sequence[tuple[str, str]],
        request_body: bytes,
        status: int,
        response_headers: Sequence[tuple[str, str]],
        response_body: bytes,
        elapsed: float,
    ) -> None:
        line = json.dumps(
            {
                "at": datetime.fromtimestamp(at, UTC).isoformat(timespec="microseconds"),
                "base_url": self.base_url,
                "method": method,
                "target": target,
                "request_headers": [list(pair) for pair in request_headers],
                "request_body": base64.b64encode(request_body).decode("ascii"),
                "status": status,
                "response_headers": [list(pair) for pair in response_headers],
                "response_body": base64.b64encode(response_body).decode("ascii"),
                "elapsed_ms": round(elapsed * 1000, 3),
            },
            ensure_ascii=False,
        )
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()
