"""Benchmark: the reference server under hostile load (issue 14). Figures, each beside the
baseline measured in the same run:

- a fresh client's request (a signed E9 read) with no idle connection, then beside 100, 300 and
  500 idle keep-alive connections (half of them with a request started and gone silent): the
  median latency and its ratio to the baseline;
- how long a byte-at-a-time sender holds a connection before the read timeout cuts it off, with
  the server's read timeout set to 1 s.

Exit status 1 when a fresh client is not answered within 5 s beside the idle connections, or a
slow sender is not cut off within twice the read timeout.
"""

from __future__ import annotations

import socket
import statistics
import sys
import time
from urllib.parse import urlsplit

from conformance.bankside.client import TargetClient
from reference_server.app import Application
from reference_server.transport.http import start

ROUNDS = 20
IDLE = (100, 300, 500)


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def _latency(client: TargetClient) -> float:
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        answer = client.request("GET", "/v1/sandbox/customers")
        times.append(time.perf_counter() - started)
        if answer.status != 200:
            raise RuntimeError(f"the fresh client got HTTP {answer.status}")
        client.take_exchanges()
    return statistics.median(times)


def _slow_sender(url: str) -> float:
    """Seconds until a sender of one byte every 0.2 s is cut off (read timeout 1 s)."""
    head = b"GET /v1/sandbox/customers HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 500
    with socket.create_connection(_address(url), timeout=5) as stream:
        started = time.monotonic()
        for byte in head:
            try:
                stream.sendall(bytes([byte]))
                time.sleep(0.2)
            except OSError:
                break
            if time.monotonic() - started > 30:
                break
        return time.monotonic() - started


def main() -> int:
    ok = True
    running = start(Application())
    try:
        with TargetClient(running.url, verify=False, timeout=10.0) as client:
            baseline = _latency(client)
            print(f"hostile: a fresh client's signed read, median of {ROUNDS}")
            print(f"  no idle connection: {baseline * 1000:.2f} ms (baseline)")
            for count in IDLE:
                idle = [socket.create_connection(_address(running.url)) for _ in range(count)]
                try:
                    for stream in idle[::2]:
                        stream.sendall(b"GET /v1/sa")
                    figure = _latency(client)
                finally:
                    for stream in idle:
                        stream.close()
                ok &= figure < 5
                print(
                    f"  beside {count} idle connections: {figure * 1000:.2f} ms "
                    f"({figure / baseline:.2f}x the baseline)"
                )
    finally:
        running.stop()
    quick = start(Application(), read_timeout=1.0)
    try:
        held = _slow_sender(quick.url)
    finally:
        quick.stop()
    ok &= held < 2.0
    print(f"  a byte-at-a-time sender was cut off after {held:.2f} s (read timeout 1 s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
