"""Benchmark: a negative-mode fuzz of every operation with signed requests (issue 14): 10,000
seeded cases (``bench.fuzz``) against an in-process reference server. It must answer every case
below 500 and log no traceback; the figures are the cases a second and the answers by status.
Exit status 1 when any case got a 5xx or the server logged a traceback."""

from __future__ import annotations

import sys
import time

from bench.fuzz import cases, run_fuzz
from reference_server.app import Application
from reference_server.transport.http import start

SEED = 20261125
COUNT = 10_000


def main() -> int:
    running = start(Application())
    try:
        started = time.perf_counter()
        result, tracebacks = run_fuzz(running.url, cases(SEED, COUNT))
        seconds = time.perf_counter() - started
    finally:
        running.stop()
    statuses = ", ".join(f"{status}: {n}" for status, n in sorted(result.statuses.items()))
    print(f"fuzz: {result.sent} signed cases (seed {SEED}) in {seconds:.1f} s")
    print(f"  {result.sent / seconds:.0f} cases/s; answers by status: {statuses}")
    print(f"  5xx: {len(result.server_errors)}; tracebacks logged: {tracebacks}")
    for case, status in result.server_errors[:10]:
        print(f"  HTTP {status}: case {case.number} {case.method} {case.path[:80]} ({case.what})")
    return 1 if result.server_errors or tracebacks else 0


if __name__ == "__main__":
    sys.exit(main())
