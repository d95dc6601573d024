"""How a run spreads its scenarios when ``-n`` and ``--threads`` are not given: xdist workers
(processes) and scenarios in flight in each worker (threads), chosen by the target's measured
answer time, wherever the target is.

A scenario spends its time building, signing and judging requests (CPU) and waiting for answers
(the network). Processes are for the CPU: one worker per CPU, never more (each is a process that
imports and collects the suite, about a second of CPU; eight of them on two CPUs made the bundled
run half again as slow, ``bench/RESULTS.md``). Threads are for the waits: a scenario waiting for
an answer holds no CPU, so a worker keeps several in flight when every answer takes a while.

The preflight sends several probes to every target, the bundled server and a loopback address
included: a bank reached through ``kubectl port-forward``, an SSH tunnel or a local gateway has a
loopback address and is far away all the same. The first answer is left out (it may pay for a
cold start: a connection, a handshake, a sleeping sandbox).

* **The fastest of the other answers under** :data:`NETWORK_ROUND_TRIP`: nothing waits long, the
  run is CPU-bound: one scenario at a time in each worker. The fastest, not the median: a busy
  machine's queue for its CPUs (a loopback answer can take 20 ms at a load of 10) slows some
  answers, not every one, while a distance delays every answer.
* **From it** each worker keeps ``1 + round trip / SCENARIO_CPU`` scenarios in flight (at most
  :data:`MAX_THREADS`), the round trip being the median of the answers after the first: enough
  that a CPU always has a scenario to work on while the others wait. Misjudged, a CPU-bound run
  with threads costs about a tenth more CPU; a distant one without them costs several times its
  time (3.3x at 25 ms, ``bench/RESULTS.md``).
* **A rate limit** caps what is in flight at ``rate_limit * round trip`` (rounded up): a scenario
  waiting a round trip per request sends at most ``1 / round trip`` requests a second, so more
  would only queue at the pacer.

:class:`Concurrency` says what was chosen and why, with the measured times, in the one line every
run prints.
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
    "fastest_answer",
    "is_loopback",
    "round_trip",
]

#: A target whose fastest answer (after the first) takes at least this long (seconds) has waits
#: worth overlapping: its scenarios are kept in flight.
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
    ``::1``); a name is resolved (a name that does not resolve is not loopback). Only named in
    the choice line: a loopback address may lead to a bank far away (a tunnel), so the choice
    is the measured answer time's."""
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


def fastest_answer(samples: Sequence[float]) -> float | None:
    """The fastest of the samples but the first (a cold start), or the one sample there is; None
    without any: the wait every answer pays (a distance), without what only some pay (a busy
    machine's queue for its CPUs)."""
    if not samples:
        return None
    return min(samples[1:] or samples)


def choose_concurrency(
    *,
    samples: Sequence[float],
    where: str = "the target",
    rate_limit: float | None = None,
    cpus: int | None = None,
) -> Concurrency:
    """Workers and scenarios in flight for a target whose preflight answered in ``samples``
    seconds (module docstring); ``where`` names the target in the reason."""
    count = cpus or os.cpu_count() or 1
    measured, fastest = round_trip(samples), fastest_answer(samples)
    if measured is None or fastest is None:
        choice = Concurrency(count, 1, f"{where}, not timed: CPU-bound, one worker per CPU")
    elif fastest < NETWORK_ROUND_TRIP:
        shown = f"the fastest of {len(samples) - 1} after the first" if len(samples) > 1 else "once"
        choice = Concurrency(
            count, 1, f"{where} answers in {_ms(fastest)} ({shown}): CPU-bound, one worker per CPU"
        )
    else:
        threads = min(MAX_THREADS, 1 + math.ceil(measured / SCENARIO_CPU))
        shown = (
            f"median of {len(samples) - 1} answers after the first, the fastest {_ms(fastest)}"
            if len(samples) > 1
            else "one answer"
        )
        choice = Concurrency(
            count,
            threads,
            f"{where} is {_ms(measured)} away ({shown}): one worker per CPU, the waits overlapped",
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


def _ms(seconds: float) -> str:
    """Milliseconds as the choice line shows them: whole from 10 ms, one decimal below."""
    milliseconds = seconds * 1000
    return f"{milliseconds:.0f} ms" if milliseconds >= 10 else f"{milliseconds:.1f} ms"
