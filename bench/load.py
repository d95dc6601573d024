"""Closed-loop HTTP load from worker processes over raw keep-alive sockets (``bench_server``).

Why it is built this way:

* **processes, not threads**: the load must not share a GIL with anything it measures, and the
  parent reads the server's CPU time while the workers run;
* **pre-built bytes**: every request is a complete HTTP/1.1 message made (and signed) before the
  first timer starts, so the client's signing cost is never counted as the server's; a worker
  only ``sendall``\\ s the bytes and parses the status line, the headers it needs
  (``Content-Length``, ``Connection``) and the body;
* **a fixed duration per round**, not a fixed count: a cheap server and a costly one then both
  run long enough for ``/proc/<pid>/stat`` (clock-tick resolution) to time them well.

Every worker keeps one connection per round (opened before the round's clock starts, closed after
it) and sends the request list in order, each worker from its own offset so that the mix is even at
every moment. Answers whose status is not the request's expected one are counted and the first is
kept for the error message: a benchmark of error paths must not pass as a benchmark of the server.

Standard library only, so that spawning a worker imports little.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import socket
import time
import traceback
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

__all__ = [
    "LoadPool",
    "LoadRound",
    "RawRequest",
    "WorkerSample",
    "percentile",
    "process_cpu_seconds",
]

#: Seconds a worker waits on one answer (and the parent on a worker) before giving up.
IO_TIMEOUT = 30.0


@dataclass(frozen=True)
class RawRequest:
    """One complete HTTP/1.1 request message and the status its server must answer."""

    label: str
    data: bytes
    expected_status: int


@dataclass(frozen=True)
class WorkerSample:
    """What one worker saw in one round."""

    elapsed: float
    """Seconds from the worker's first send to its last answer."""
    latencies: array[float]
    """Seconds per exchange (``array('d')``), in order."""
    unexpected: int
    first_unexpected: str | None

    @property
    def count(self) -> int:
        return len(self.latencies)


@dataclass(frozen=True)
class LoadRound:
    """One server, one round: every worker's exchanges together."""

    requests: int
    throughput: float
    """Requests per second: each worker's own rate, summed (the workers run side by side)."""
    p50: float
    p90: float
    p99: float
    server_cpu_seconds: float | None
    """CPU time (user + system) the server process used during the round; None without /proc."""
    unexpected: int
    first_unexpected: str | None

    @property
    def cpu_per_request(self) -> float | None:
        if self.server_cpu_seconds is None or not self.requests:
            return None
        return self.server_cpu_seconds / self.requests

    @property
    def wall_per_request(self) -> float:
        """Seconds of wall time per request at this load (1 / throughput)."""
        return 1.0 / self.throughput if self.throughput else math.inf


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending sequence (``fraction`` in (0, 1])."""
    if not ordered:
        raise ValueError("no samples")
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process and all its threads, living or exited
    (``/proc/<pid>/stat`` fields 14 and 15); None where ``/proc`` is absent."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = text[text.rindex(")") + 2 :].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


# -- the worker process ---------------------------------------------------------------------------


class _Connection:
    """One keep-alive connection; :meth:`exchange` sends bytes and reads one answer."""

    def __init__(self, host: str, port: int) -> None:
        self.sock = socket.create_connection((host, port), timeout=IO_TIMEOUT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = self.sock.makefile("rb")

    def exchange(self, data: bytes) -> tuple[int, bytes, bool]:
        """Status, body, and whether the server closes the connection after it."""
        self.sock.sendall(data)
        status_line = self.reader.readline()
        if not status_line:
            raise ConnectionError("the server closed the connection")
        status = int(status_line.split(None, 2)[1])
        length = 0
        closing = False
        while True:
            line = self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection":
                closing = value.strip().lower() == b"close"
        body = self.reader.read(length) if length else b""
        return status, body, closing

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def _run(
    address: tuple[str, int],
    connection: _Connection,
    requests: Sequence[RawRequest],
    offset: int,
    duration: float,
    limit: int | None,
) -> WorkerSample:
    latencies = array("d")
    unexpected = 0
    first: str | None = None
    clock = time.perf_counter
    index = offset
    started = clock()
    deadline = started + duration
    while clock() < deadline and (limit is None or len(latencies) < limit):
        request = requests[index % len(requests)]
        index += 1
        before = clock()
        status, body, closing = connection.exchange(request.data)
        latencies.append(clock() - before)
        if status != request.expected_status:
            unexpected += 1
            if first is None:
                first = (
                    f"{request.label}: {status} (expected {request.expected_status}) "
                    f"{body[:400].decode('utf-8', 'replace')}"
                )
        if closing:
            connection.close()
            connection = _Connection(*address)
    elapsed = clock() - started
    connection.close()
    return WorkerSample(elapsed, latencies, unexpected, first)


def _worker(pipe: Connection, requests: tuple[RawRequest, ...], offset: int) -> None:
    """Commands: ``("connect", host, port)`` → ``"ready"``; ``("go", duration, limit)`` →
    :class:`WorkerSample`; ``None`` → exit. A failure answers its traceback as a ``str``."""
    connection: _Connection | None = None
    address = ("", 0)
    while True:
        command = pipe.recv()
        if command is None:
            return
        try:
            if command[0] == "connect":
                address = (command[1], command[2])
                connection = _Connection(*address)
                pipe.send("ready")
            else:
                assert connection is not None, "go before connect"
                _, duration, limit = command
                sample = _run(address, connection, requests, offset, duration, limit)
                connection = None
                pipe.send(sample)
        except Exception:
            if connection is not None:
                connection.close()
                connection = None
            pipe.send(f"worker {offset}: {traceback.format_exc()}")


# -- the parent side ------------------------------------------------------------------------------


class LoadPool:
    """``workers`` processes sending ``requests`` round after round (a context manager)."""

    def __init__(self, requests: Sequence[RawRequest], workers: int) -> None:
        if not requests:
            raise ValueError("no requests to send")
        if workers < 1:
            raise ValueError("at least one worker")
        context = multiprocessing.get_context("spawn")
        self._pipes: list[Connection] = []
        self._processes: list[Any] = []
        for offset in range(workers):
            parent, child = context.Pipe()
            process = context.Process(
                target=_worker,
                args=(child, tuple(requests), offset),
                name=f"bench-load-{offset}",
                daemon=True,
            )
            process.start()
            child.close()
            self._pipes.append(parent)
            self._processes.append(process)

    def __enter__(self) -> LoadPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _gather(self) -> list[Any]:
        answers = []
        for pipe in self._pipes:
            if not pipe.poll(IO_TIMEOUT + 5):
                raise TimeoutError("a load worker did not answer")
            answer = pipe.recv()
            if isinstance(answer, str) and answer != "ready":
                raise RuntimeError(answer)
            answers.append(answer)
        return answers

    def run(
        self,
        host: str,
        port: int,
        duration: float,
        *,
        server_pid: int | None = None,
        limit: int | None = None,
    ) -> LoadRound:
        """One round against ``host:port``: every worker sends for ``duration`` seconds (or
        ``limit`` requests); the server's CPU time is read around the round."""
        for pipe in self._pipes:
            pipe.send(("connect", host, port))
        self._gather()
        cpu_before = process_cpu_seconds(server_pid) if server_pid is not None else None
        for pipe in self._pipes:
            pipe.send(("go", duration, limit))
        samples: list[WorkerSample] = self._gather()
        cpu_after = process_cpu_seconds(server_pid) if server_pid is not None else None
        return summarise(
            samples,
            None if cpu_before is None or cpu_after is None else cpu_after - cpu_before,
        )

    def close(self) -> None:
        stop_workers(self._pipes, self._processes)


def stop_workers(pipes: list[Connection], processes: list[Any]) -> None:
    """Ask each worker process to stop (``None`` on its pipe), then join, terminate stragglers and
    close the pipes; both lists are emptied. Shared by the load and replay pools."""
    for pipe in pipes:
        with contextlib.suppress(OSError):
            pipe.send(None)
    for process in processes:
        process.join(timeout=5)
        if process.is_alive():
            process.terminate()
            process.join(timeout=5)
    for pipe in pipes:
        pipe.close()
    pipes.clear()
    processes.clear()


def gate(ratio: float, budget: float, verdict: str) -> None:
    """Print PASS or FAIL for ``verdict`` against ``budget`` (a ratio); exit 1 on FAIL."""
    if ratio > budget:
        print(f"FAIL: {verdict} (> {budget}x)")
        raise SystemExit(1)
    print(f"PASS: {verdict} (<= {budget}x)")


def summarise(samples: Sequence[WorkerSample], server_cpu_seconds: float | None) -> LoadRound:
    """One :class:`LoadRound` from the workers' samples."""
    ordered = sorted(value for sample in samples for value in sample.latencies)
    if not ordered:
        raise RuntimeError("the round completed no request")
    throughput = sum(sample.count / sample.elapsed for sample in samples if sample.elapsed > 0)
    firsts = [sample.first_unexpected for sample in samples if sample.first_unexpected]
    return LoadRound(
        requests=len(ordered),
        throughput=throughput,
        p50=percentile(ordered, 0.50),
        p90=percentile(ordered, 0.90),
        p99=percentile(ordered, 0.99),
        server_cpu_seconds=server_cpu_seconds,
        unexpected=sum(sample.unexpected for sample in samples),
        first_unexpected=firsts[0] if firsts else None,
    )
