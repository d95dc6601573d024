"""Benchmark: the reference server against Prism's mock of the same contract, side by side.

A bank team choosing a sandbox to develop against may compare the reference server with a mock
server generated from the OpenAPI export. Stoplight Prism 5 (``npx @stoplight/prism-cli mock
schemas/openapi.json``) is the common one: it validates each request against the export and
answers from its examples. The figure the reference server must hold: at least twice Prism's
throughput, while it checks far more (every signature, every header format, the data it keeps).

In one invocation, both servers are started on this machine and sent the same request: one
signed E9 GET (``/v1/sandbox/customers``: Date, X-Request-ID, Signature,
TPP-Signature-Certificate, built and signed once, :func:`bench.bench_server.to_raw`; the
reference server's sandbox filled first, so that it lists customers as Prism lists its
example's), from 4
client processes on keep-alive connections, closed loop (:mod:`bench.load`), in rounds that
alternate between the servers (``BENCH_PRISM_ROUNDS``, default 5, of ``BENCH_PRISM_SECONDS``,
default 2 s, after a warm-up). Every answer must be 200: a server answering an error is not
serving the request. Reported per server: throughput (median of rounds) and p50/p99 latency.

Needs Node.js (``npx``; the first run downloads ``@stoplight/prism-cli@5``); without it the
benchmark says so and stops. Not run by CI (nor by ``make test``).
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.bench_server import ServerProcess, _Signer, reference_command, server_process, to_raw
from bench.load import LoadPool, LoadRound, RawRequest
from conformance.signing import default_identity

GOAL = 2.0
"""The reference server's throughput over Prism's, at least."""

PRISM = "@stoplight/prism-cli@5"
WORKERS = 4
_ROOT = Path(__file__).resolve().parent.parent
_OPENAPI = _ROOT / "schemas" / "openapi.json"
_E9 = "/v1/sandbox/customers"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def prism_mock(timeout: float = 300.0) -> Iterator[ServerProcess]:
    """Prism's mock of ``schemas/openapi.json`` on a free port, until it answers; stopped on
    exit (its process group: npx starts node under it)."""
    npx = shutil.which("npx")
    if npx is None:
        raise SystemExit("prism: npx (Node.js) is not on the PATH; install Node.js to compare")
    port = _free_port()
    command = [npx, "--yes", PRISM, "mock", str(_OPENAPI), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--errors", "false"]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise SystemExit(f"prism: {' '.join(command)} exited ({process.returncode})")
            try:
                httpx.get(url + _E9, timeout=2.0)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"prism: no answer on {url} within {timeout:g} s") from None
                time.sleep(0.5)
        yield ServerProcess("Prism mock", process, url)  # type: ignore[arg-type]
    finally:
        os.killpg(process.pid, 15)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)


def signed_e9(url: str, *, fill: bool = False) -> tuple[RawRequest, int]:
    """The signed E9 GET both servers get, checked once against ``url`` (200), and the size of
    its answer; with ``fill``, the sandbox is filled first (SDF: customers and their accounts),
    so that the answer lists customers, as Prism's lists its example's."""
    signer = _Signer(url, default_identity())
    try:
        if fill:
            signer.send(signer.sign("POST", "/v1/sandbox/data-fill"), 201)
        request = signer.sign("GET", _E9, headers={"Accept": "application/json"})
        answer = signer.send(request, 200)
        return RawRequest("E9 GET sandbox customers", to_raw(request), 200), len(answer.content)
    finally:
        signer.close()


@dataclass(frozen=True)
class Figures:
    name: str
    rounds: tuple[LoadRound, ...]

    @property
    def throughput(self) -> float:
        return statistics.median(item.throughput for item in self.rounds)

    @property
    def p50(self) -> float:
        return statistics.median(item.p50 for item in self.rounds)

    @property
    def p99(self) -> float:
        return statistics.median(item.p99 for item in self.rounds)

    def row(self) -> str:
        low = min(r.throughput for r in self.rounds)
        ranges = f"{low:.0f}-{max(r.throughput for r in self.rounds):.0f}"
        return (
            f"{self.name:<18} {self.throughput:8.0f} ({ranges}) req/s  "
            f"p50 {self.p50 * 1e3:6.2f} ms  p99 {self.p99 * 1e3:6.2f} ms"
        )


def _checked(measured: LoadRound, name: str) -> LoadRound:
    if measured.unexpected:
        raise SystemExit(
            f"{name}: {measured.unexpected} of {measured.requests} answers were not 200; "
            f"first: {measured.first_unexpected}"
        )
    return measured


def main() -> None:
    if shutil.which("npx") is None:
        print("prism: skipped, npx (Node.js) is not on the PATH")
        return
    rounds = int(os.environ.get("BENCH_PRISM_ROUNDS", "5"))
    seconds = float(os.environ.get("BENCH_PRISM_SECONDS", "2"))
    print(f"load average before: {' '.join(f'{v:.1f}' for v in os.getloadavg())}", flush=True)
    with (
        server_process("reference server", reference_command()) as reference,
        prism_mock() as prism,
    ):
        ours, our_size = signed_e9(reference.url, fill=True)
        theirs, their_size = signed_e9(prism.url)
        targets = [(reference.name, reference, ours), (prism.name, prism, theirs)]
        results: dict[str, list[LoadRound]] = {name: [] for name, _, _ in targets}
        pools = {name: LoadPool([request], WORKERS) for name, _, request in targets}
        try:
            for name, server, _ in targets:  # warm-up (Prism's JIT, the server's caches)
                _checked(pools[name].run(*server.address, 1.0), name)
            for index in range(rounds):
                for name, server, _ in targets if index % 2 == 0 else targets[::-1]:
                    measured = pools[name].run(*server.address, seconds)
                    results[name].append(_checked(measured, name))
        finally:
            for pool in pools.values():
                pool.close()
    print(f"load average after: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    ours, theirs = (Figures(name, tuple(found)) for name, found in results.items())
    print(
        f"{WORKERS} client processes, keep-alive, the same signed E9 GET (answers of "
        f"{our_size} and {their_size} bytes); {rounds} rounds x {seconds:g} s per server, "
        "alternating (medians, range of rounds)"
    )
    print(ours.row())
    print(theirs.row())
    ratio = ours.throughput / theirs.throughput
    verdict = "met" if ratio >= GOAL else "NOT met"
    print(
        f"prism: the reference server serves {ratio:.2f}x Prism's throughput (goal >= {GOAL:g}x: "
        f"{verdict}); p99 {ours.p99 * 1e3:.2f} ms against {theirs.p99 * 1e3:.2f} ms"
    )
    if ratio < GOAL:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
