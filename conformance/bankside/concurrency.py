"""How many xdist workers a run uses when ``-n`` is not given: CPU-bound near the target,
network-bound far from it, and never more than the profile's rate limit can keep busy.

A scenario spends its time building, signing and judging requests (CPU) and waiting for answers
(the network). On loopback the wait is well under a millisecond, so one worker per CPU is right
(``-n auto``). A target 25 ms away keeps a worker waiting most of the time, so more workers
overlap their waits; but each worker is a process that imports and collects the suite (about a
second of CPU), so past a few per CPU the start-up costs more than the overlap gains
(``bench/RESULTS.md``, latency: 8 workers on 2 CPUs were as fast as 12 or 16, and 32 slower).
With a rate limit, a worker waiting ``round_trip`` sends at most ``1 / round_trip`` requests a
second, so more than ``rate_limit * round_trip`` workers would only queue at the limiter.
"""

from __future__ import annotations

import math
import os

__all__ = ["NETWORK_ROUND_TRIP", "WORKERS_PER_CPU", "choose_workers"]

#: A target whose answers take at least this long (seconds) is treated as remote.
NETWORK_ROUND_TRIP = 0.005
#: Workers per CPU for a remote target, and the most workers in all.
WORKERS_PER_CPU = 4
MAX_WORKERS = 16


def choose_workers(
    round_trip: float | None, rate_limit: float | None = None, cpus: int | None = None
) -> str:
    """The ``-n`` value: ``"auto"`` (one per CPU) near the target, a number far from it or under
    a rate limit. ``round_trip`` is the fastest answer of the preflight (None: not measured)."""
    count = cpus or os.cpu_count() or 1
    remote = round_trip is not None and round_trip >= NETWORK_ROUND_TRIP
    workers = min(count * WORKERS_PER_CPU, MAX_WORKERS) if remote else count
    if rate_limit is not None:
        busy = math.ceil(rate_limit * max(round_trip or 0.0, NETWORK_ROUND_TRIP))
        workers = max(1, min(workers, busy))
    return "auto" if workers == count and not remote and rate_limit is None else str(workers)
