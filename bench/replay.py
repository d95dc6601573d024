"""The floor of ``bench_suite``: recorded requests, freshly signed, sent in a tight loop.

``ReplayPool`` starts ``workers`` processes (spawned, so they share no GIL with each other or
with the parent) that each load the run's TPP identity and open one ``httpx.Client`` with a
``SignatureAuth`` before any clock starts. :meth:`ReplayPool.run` hands every worker its share
of the requests and measures, in the parent, from the moment it says "go" to the moment the last
worker has its last answer. Inside the loop each request is built, signed (Date, Digest,
Signature, TPP-Signature-Certificate: one RSA-2048 signature each) with a fresh X-Request-ID,
sent, and its answer read in full: what the suite cannot avoid per request, and nothing else
(no generation, no checks, no reports, no process start).

Standard library, httpx and the signer only, so that spawning a worker imports little.
"""

from __future__ import annotations

import base64
import multiprocessing
import os
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from bench.load import stop_workers

__all__ = ["ReplayPool", "ReplayRequest", "ReplayRound", "split"]

#: Seconds the parent waits for a worker (start-up, or one round).
TIMEOUT = 600.0


@dataclass(frozen=True)
class ReplayRequest:
    """One request to replay: method, path (with its query) relative to the base URL, the
    headers the scenario sent (the signer's and X-Request-ID are made afresh), the body."""

    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ReplayRequest:
        """From a line of ``bench.suite_recorder``."""
        return cls(
            method=record["method"],
            path=record["path"],
            headers=tuple((name, value) for name, value in record["headers"]),
            body=base64.b64decode(record["body"]),
        )


@dataclass(frozen=True)
class ReplayRound:
    """One floor round: the wall time the parent saw, and what came back."""

    seconds: float
    worker_seconds: tuple[float, ...]
    statuses: Counter[int]
    cpu_seconds: float
    """User + system CPU the workers used in their loops, together."""

    @property
    def requests(self) -> int:
        return sum(self.statuses.values())


def split(requests: Sequence[ReplayRequest], parts: int) -> list[list[ReplayRequest]]:
    """``requests`` in ``parts`` contiguous shares whose sizes differ by at most one (a share
    keeps the suite's order: a creation before the reads of what it created)."""
    if parts < 1:
        raise ValueError("at least one part")
    size, extra = divmod(len(requests), parts)
    shares: list[list[ReplayRequest]] = []
    start = 0
    for index in range(parts):
        end = start + size + (1 if index < extra else 0)
        shares.append(list(requests[start:end]))
        start = end
    return shares


def _header_value(value: str) -> bytes:
    return value.encode("ascii") if value.isascii() else value.encode("utf-8")


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


def _worker(pipe: Connection, base_url: str, cert: str, key: str | None) -> None:
    """Set up (identity, client, signer), say "ready"; then per command ``("go", requests)``
    send them all and answer ``(seconds, statuses)``; ``None`` ends. Errors go back as text."""
    import httpx

    from conformance.signing import SignatureAuth, load_identity

    try:
        identity = load_identity(cert, key)
        auth = SignatureAuth(identity.signing_credentials())
        client = httpx.Client(base_url=base_url.rstrip("/") + "/", timeout=60.0)
        del client.headers["Accept"]  # as the suite's client: Accept comes with each request
    except Exception:
        pipe.send(traceback.format_exc())
        return
    pipe.send("ready")
    with client:
        while True:
            command = pipe.recv()
            if command is None:
                return
            try:
                requests: list[ReplayRequest] = command[1]
                prepared = [
                    (
                        request.method,
                        request.path.lstrip("/"),
                        [(name, _header_value(value)) for name, value in request.headers],
                        request.body or None,
                    )
                    for request in requests
                ]
                statuses: Counter[int] = Counter()
                pipe.send("set")
                pipe.recv()  # "go"
                cpu_before = _cpu()
                started = time.perf_counter()
                for method, path, headers, body in prepared:
                    response = client.request(
                        method,
                        path,
                        # httpx takes str names with bytes values; its types do not say so
                        headers=[("X-Request-ID", str(uuid.uuid4())), *headers],  # type: ignore[arg-type]
                        content=body,
                        auth=auth,
                    )
                    statuses[response.status_code] += 1
                pipe.send((time.perf_counter() - started, statuses, _cpu() - cpu_before))
            except Exception:
                pipe.send(traceback.format_exc())


class ReplayPool:
    """``workers`` processes replaying signed requests against ``base_url`` (a context manager).

    ``cert``/``key`` are the files of the identity to sign with (the run's, which the server
    trusts).
    """

    def __init__(self, base_url: str, cert: str, key: str | None, workers: int) -> None:
        if workers < 1:
            raise ValueError("at least one worker")
        context = multiprocessing.get_context("spawn")
        self._pipes: list[Connection] = []
        self._processes: list[Any] = []
        for index in range(workers):
            parent, child = context.Pipe()
            process = context.Process(
                target=_worker,
                args=(child, base_url, cert, key),
                name=f"bench-replay-{index}",
                daemon=True,
            )
            process.start()
            child.close()
            self._pipes.append(parent)
            self._processes.append(process)
        self._gather("ready")

    @property
    def workers(self) -> int:
        return len(self._pipes)

    def __enter__(self) -> ReplayPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _gather(self, expected: str | None = None) -> list[Any]:
        answers = []
        for pipe in self._pipes:
            if not pipe.poll(TIMEOUT):
                raise TimeoutError("a replay worker did not answer")
            answer = pipe.recv()
            if isinstance(answer, str) and answer != expected:
                raise RuntimeError(f"replay worker: {answer}")
            answers.append(answer)
        return answers

    def run(self, requests: Sequence[ReplayRequest]) -> ReplayRound:
        """Send ``requests``, split into one contiguous share per worker, all workers at once."""
        for pipe, share in zip(self._pipes, split(requests, self.workers), strict=True):
            pipe.send(("share", share))
        self._gather("set")
        started = time.perf_counter()
        for pipe in self._pipes:
            pipe.send("go")
        answers = self._gather()
        seconds = time.perf_counter() - started
        statuses: Counter[int] = Counter()
        for _, counted, _ in answers:
            statuses.update(counted)
        return ReplayRound(
            seconds,
            tuple(elapsed for elapsed, _, _ in answers),
            statuses,
            sum(cpu for _, _, cpu in answers),
        )

    def close(self) -> None:
        stop_workers(self._pipes, self._processes)
