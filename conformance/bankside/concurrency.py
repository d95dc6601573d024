"""How a run spreads its scenarios when ``-n`` and ``--threads`` are not given: xdist workers
(processes) and scenarios in flight in each worker (threads), chosen by where the target is.

A scenario spends its time building, signing and judging requests (CPU) and waiting for answers
(the network). Processes are for the CPU: one worker per CPU, never more (each is a process that
imports and collects the suite, about a second of CPU; eight of them on two CPUs made the bundled
run half again as slow, ``bench/RESULTS.md``). Threads are for the waits: a scenario waiting for
an answer holds no CPU, so a worker keeps several in flight when the target is far away.

* **The bundled server, or a target on a loopback address**: the run is CPU-bound (the server
  runs on the same CPUs): one worker per CPU, one scenario at a time in each, whatever the
  preflight's samples say (on a loaded machine a loopback answer can take 20 ms: that is the CPUs
  queueing, not distance, and more workers would only queue more).
* **A target elsewhere**: the preflight sends several probes; the first is discarded (it may pay
  for a cold start: a connection, a handshake, a sleeping sandbox) and the median of the others
  is the round trip. Below :data:`NETWORK_ROUND_TRIP` the run is CPU-bound as above; from it each
  worker keeps ``1 + round trip / SCENARIO_CPU`` scenarios in flight (at most
  :data:`MAX_THREADS`): enough that a CPU always has a scenario to work on while the others wait.
* **A rate limit** caps what is in flight at ``rate_limit * round trip`` (rounded up): a scenario
  waiting a round trip per request sends at most ``1 / round trip`` requests a second, so more
  would only queue at the pacer.

:class:`Concurrency` says what was chosen and why, in the one line every run prints.
"""

from __future__ import annotations

import ipaddress
import math
import os
import socket
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = [
    "MAX_THREADS",
    "NETWORK_ROUND_TRIP",
    "SCENARIO_CPU",
    "Concurrency",
    "choose_concurrency",
    "is_loopback",
    "round_trip",
]

#: A target whose answers take at least this long (seconds) is treated as remote.
NETWORK_ROUND_TRIP = 0.005
#: About the CPU one scenario costs its worker (seconds; ~1.4 requests built, signed, judged and
#: reported): one more scenario in flight per this much of round trip keeps the CPU busy.
SCENARIO_CPU = 0.003
#: The most scenarios in flight in one worker (the client keeps at most 20 connections).
MAX_THREADS = 16


@dataclass(frozen=True)
class Concurrency:
    """The run's spread: ``workers`` xdist processes (0: none, one process) with ``threads``
    scenarios in flight in each, and ``reason``, the words that say why."""

    workers: int
    threads: int
    reason: str

    @property
    def numprocesses(self) -> str:
        """The ``-n`` value for pytest-xdist."""
        return str(self.workers)

    def line(self) -> str:
        """The line every run prints about its choice."""
        processes = "one process" if self.workers == 0 else _count(self.workers, "worker")
        flight = (
            "one scenario at a time" if self.threads == 1 else f"{self.threads} scenarios in flight"
        )
        each = "" if self.workers == 0 or self.threads == 1 else " in each"
        return f"conformance: {processes}, {flight}{each} ({self.reason})"


def _count(number: int, word: str) -> str:
    return f"{number} {word}" if number == 1 else f"{number} {word}s"


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine's loopback interface (``localhost``, 127.0.0.0/8,
    ``::1``); a name is resolved (a name that does not resolve is not loopback)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return False
    addresses = {str(entry[4][0]).split("%", 1)[0] for entry in found}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def round_trip(samples: Sequence[float]) -> float | None:
    """The round trip the samples show: the median of all but the first (a cold start), or the
    one sample there is; None without any."""
    if not samples:
        return None
    warm = samples[1:] or samples
    return statistics.median(warm)


def choose_concurrency(
    *,
    bundled: bool,
    loopback: bool,
    samples: Sequence[float],
    rate_limit: float | None = None,
    cpus: int | None = None,
) -> Concurrency:
    """Workers and scenarios in flight for a target (module docstring)."""
    count = cpus or os.cpu_count() or 1
    measured = round_trip(samples)
    if bundled or loopback:
        where = "the bundled server" if bundled else "the target is on this machine (loopback)"
        choice = Concurrency(count, 1, f"{where}: CPU-bound, one worker per CPU")
    elif measured is None or measured < NETWORK_ROUND_TRIP:
        away = "" if measured is None else f" {measured * 1000:.1f} ms away"
        choice = Concurrency(count, 1, f"the target is{away}: CPU-bound, one worker per CPU")
    else:
        threads = min(MAX_THREADS, 1 + math.ceil(measured / SCENARIO_CPU))
        choice = Concurrency(
            count,
            threads,
            f"the target is {measured * 1000:.0f} ms away (median of {len(samples[1:]) or 1} "
            "answers after the first): one worker per CPU, the waits overlapped",
        )
    if rate_limit is None:
        return choice
    busy = max(1, math.ceil(rate_limit * max(measured or 0.0, NETWORK_ROUND_TRIP)))
    workers = max(1, min(choice.workers, busy))
    threads = max(1, min(choice.threads, busy // workers))
    if (workers, threads) == (choice.workers, choice.threads):
        return choice
    return Concurrency(
        workers,
        threads,
        f"{choice.reason}; at most {busy} in flight under the rate limit of {rate_limit:g}/s",
    )
