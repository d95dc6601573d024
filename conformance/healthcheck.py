"""The container image's health check (``HEALTHCHECK`` of the ``Dockerfile``):
``python -m conformance.healthcheck``.

When the container runs ``conformance serve`` (its first process), the server's port must accept
a TCP connection on the loopback address (a plain or a TLS server alike; ``--port``, default
8000); a container that runs any other command (``run``, ``fleet run``, ``verify``) is healthy
for as long as it runs. Exit 0 healthy, 1 not.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = ["DEFAULT_PORT", "healthy", "served_port"]

#: ``conformance serve``'s default port.
DEFAULT_PORT: Final = 8000
#: How long the port may take to accept.
_TIMEOUT: Final = 3.0


def served_port(argv: Sequence[str]) -> int | None:
    """The port the command line ``argv`` serves on, or None when it is not ``serve``."""
    if "serve" not in argv:
        return None
    after = list(argv[argv.index("serve") + 1 :])
    for index, word in enumerate(after):
        if word == "--port" and index + 1 < len(after):
            return int(after[index + 1])
        if word.startswith("--port="):
            return int(word.split("=", 1)[1])
    return DEFAULT_PORT


def healthy(argv: Sequence[str], host: str = "127.0.0.1") -> bool:
    """Whether the container whose first process runs ``argv`` is healthy."""
    port = served_port(argv)
    if port is None:
        return True
    try:
        with socket.create_connection((host, port), timeout=_TIMEOUT):
            return True
    except OSError:
        return False


def _first_process() -> list[str]:
    raw = Path("/proc/1/cmdline").read_bytes()
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


if __name__ == "__main__":
    sys.exit(0 if healthy(_first_process()) else 1)
