"""Benchmark: the reference server's own cost per signed request is at most 2x a bare handler's.

Two servers run side by side in the same run, each in its own process: the reference server
(``python -m reference_server --port 0``, its default log level) and a bare ``http.server``
handler (``bench/bare_server.py``: same ``ThreadingHTTPServer``, HTTP/1.1 keep-alive, Nagle off;
reads the body, answers a fixed JSON). Client worker processes (:mod:`bench.load`) send both
servers the same bytes, on keep-alive connections:

* ``E12`` ``GET /v1/sandbox/accounts/{mockAccountId}`` of an account of the sandbox data fill
  (spec 4.3 E12, spec 9 1.16.0), answered 200;
* ``E16`` ``POST /v1/payments/norwegian-domestic-credit-transfers?allowLogicalDuplicate=true``
  (spec 4.3 E16) from that account, answered 201 (the query makes replays legitimate: the
  server would refuse a logical duplicate otherwise).

Both are signed once with ``conformance.signing.SignatureAuth`` and the default identity before
any timer starts and then replayed as raw bytes: the client's RSA signature is not the server's
cost. Replaying is sound because the reference server neither requires a fresh ``Date`` (it is
optional and only signed, spec 5) nor refuses a repeated ``X-Request-ID``; every answer's status
is checked, so a change there fails the benchmark instead of measuring error answers.

The gated figure is the **server's CPU time per request** (user + system of the whole server
process, from ``/proc/<pid>/stat``), reference over bare: the client processes share the machine
with the servers, so wall-clock throughput partly measures the clients, while a server's CPU time
is its own work. Requests per second and latency percentiles (p50, p90, p99, as the clients see
them) are printed beside it, and the wall-time ratio (1 / throughput) for information; without
``/proc`` the wall-time ratio is gated instead. Each round runs both servers for the same
duration (the order alternating), after one warm-up; figures are medians over rounds, the ratio
the median of the per-round ratios.

A third row, for information, loads the same reference server process with the E12 request's
header block on the unsigned ``GET /_control/clock`` (a reference-server-only route: no signature
check, no contract, no store write): the floor of its socket side, routing and logging, which
tells how much of the budget is gone before the first spec 5 or contract check.
"""

from __future__ import annotations

import json
import re
import selectors
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from bench.load import LoadPool, LoadRound, RawRequest, gate
from conformance.generate import factories
from conformance.signing import SignatureAuth, TppIdentity, default_identity

BUDGET = 2.0
"""The reference server may cost at most this multiple of the bare handler per request."""

WORKERS = 4
ROUNDS = 7
DURATION = 1.5
"""Seconds each server is loaded per round: short rounds, alternating, so that load from other
processes on the machine lands on both servers alike; long enough for ~100 clock ticks of CPU."""
WARMUP = 0.5

_BARE_SCRIPT = Path(__file__).with_name("bare_server.py")
_REFERENCE = "reference server"
_BARE = "bare http.server"
_FLOOR = "reference, unsigned"
_URL = re.compile(rb"(https?://\S+)")
_NDCT = "/v1/payments/norwegian-domestic-credit-transfers"
_PSU_HEADERS = {
    "x-accept-fix": "amount-as-string",
    "TPP-Session-ID": "bench-session",
    "TPP-Redirect-URI": "https://tpp.example/callback",
    "PSU-IP-Address": "192.0.2.10",
}


# -- the two server processes ---------------------------------------------------------------------


@dataclass(frozen=True)
class ServerProcess:
    """A server running in a child process, and where it listens."""

    name: str
    process: subprocess.Popen[bytes]
    url: str

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def address(self) -> tuple[str, int]:
        split = urlsplit(self.url)
        assert split.hostname is not None and split.port is not None
        return split.hostname, split.port


def _first_line(process: subprocess.Popen[bytes], timeout: float) -> bytes:
    """The child's first stdout line, without waiting forever on a child that hangs."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise TimeoutError(f"no output within {timeout} s")
    return process.stdout.readline()


@contextmanager
def server_process(
    name: str, command: Sequence[str], timeout: float = 60.0
) -> Iterator[ServerProcess]:
    """Start ``command``, read its URL from its first line (``... listening on URL``), and
    stop it (SIGTERM, then SIGKILL) on exit. Its log (stderr) goes to /dev/null."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        line = _first_line(process, timeout)
        found = _URL.search(line)
        if found is None:
            raise RuntimeError(
                f"{name} did not announce its URL (exit code {process.poll()}): {line!r}"
            )
        yield ServerProcess(name, process, found.group(1).decode("ascii"))
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def reference_command(log_level: str = "INFO") -> list[str]:
    """The reference server as a user starts it (default log level INFO: a line per request),
    with replays allowed: the benchmark sends each pre-signed request many times."""
    return [
        sys.executable,
        "-m",
        "reference_server",
        "--port",
        "0",
        "--allow-replay",
        "--log-level",
        log_level,
    ]


def bare_command() -> list[str]:
    """The baseline, started by path (``bench/bare_server.py``)."""
    return [sys.executable, str(_BARE_SCRIPT), "--port", "0"]


# -- the signed requests --------------------------------------------------------------------------


def to_raw(request: httpx.Request) -> bytes:
    """The request as HTTP/1.1 bytes: request line, headers as httpx would send them, body."""
    lines = [f"{request.method} {request.url.raw_path.decode('ascii')} HTTP/1.1".encode("ascii")]
    lines += [name + b": " + value for name, value in request.headers.raw]
    return b"\r\n".join(lines) + b"\r\n\r\n" + request.content


class _Signer:
    """Builds and signs requests for one server (set-up and the pre-built workload)."""

    def __init__(self, url: str, identity: TppIdentity) -> None:
        self.client = httpx.Client(base_url=url, timeout=30.0, verify=False)
        self.auth = SignatureAuth(identity.signing_credentials())

    def sign(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        body: object = None,
        params: dict[str, str] | None = None,
    ) -> httpx.Request:
        fixed = {"X-Request-ID": str(uuid.uuid4())}
        if body is not None:
            fixed["Content-Type"] = "application/json"
        request = self.client.build_request(
            method,
            path,
            params=params,
            headers={**fixed, **(headers or {})},
            content=None if body is None else json.dumps(body).encode("utf-8"),
        )
        return next(self.auth.sync_auth_flow(request))

    def send(self, request: httpx.Request, expected: int) -> httpx.Response:
        response = self.client.send(request)
        if response.status_code != expected:
            raise RuntimeError(
                f"set-up: {request.method} {request.url.path} answered "
                f"{response.status_code} (expected {expected}): {response.text[:500]}"
            )
        return response

    def close(self) -> None:
        self.client.close()


def prepare_workload(url: str, identity: TppIdentity | None = None) -> tuple[RawRequest, ...]:
    """Fill the sandbox of the reference server at ``url`` (SDF), then sign the E12 read and the
    E16 creation once each, checking that the server accepts both, and return their bytes."""
    signer = _Signer(url, identity or default_identity())
    try:
        fill = signer.send(signer.sign("POST", "/v1/sandbox/data-fill"), 201).json()
        customer_id, account_id = fill["customers"][0], fill["accounts"][0]
        read = signer.sign("GET", f"/v1/sandbox/accounts/{account_id}")
        account = signer.send(read, 200).json()[0]
        payment = factories.ndct_payment(1, debtor_bban=account["bban"])
        create = signer.sign(
            "POST",
            _NDCT,
            params={"allowLogicalDuplicate": "true"},
            headers={**_PSU_HEADERS, "PSU-ID": customer_id},
            body=payment,
        )
        signer.send(create, 201)
        return (
            RawRequest("E12 GET sandbox account", to_raw(read), 200),
            RawRequest("E16 POST NDCT payment", to_raw(create), 201),
        )
    finally:
        signer.close()


# -- the measurement ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerFigures:
    """One server's rounds and their medians."""

    name: str
    rounds: tuple[LoadRound, ...]

    @property
    def requests(self) -> int:
        return sum(item.requests for item in self.rounds)

    @property
    def throughput(self) -> float:
        return statistics.median(item.throughput for item in self.rounds)

    @property
    def p50(self) -> float:
        return statistics.median(item.p50 for item in self.rounds)

    @property
    def p90(self) -> float:
        return statistics.median(item.p90 for item in self.rounds)

    @property
    def p99(self) -> float:
        return statistics.median(item.p99 for item in self.rounds)

    @property
    def cpu_per_request(self) -> float | None:
        values = [item.cpu_per_request for item in self.rounds]
        if any(value is None for value in values):
            return None
        return statistics.median(value for value in values if value is not None)


@dataclass(frozen=True)
class ServerBenchmark:
    reference: ServerFigures
    bare: ServerFigures
    floor: ServerFigures | None
    """The reference server on an unsigned control route (information, not gated)."""
    workers: int
    duration: float

    @property
    def cpu_ratios(self) -> tuple[float, ...] | None:
        pairs = zip(self.reference.rounds, self.bare.rounds, strict=True)
        ratios = []
        for ours, base in pairs:
            # A reading of zero is below the clock's resolution (CPU time is counted in ticks),
            # not a free server: such a round cannot be compared by CPU time.
            if not ours.cpu_per_request or not base.cpu_per_request:
                return None
            ratios.append(ours.cpu_per_request / base.cpu_per_request)
        return tuple(ratios)

    @property
    def wall_ratio(self) -> float:
        """Median over rounds of (1 / reference throughput) / (1 / bare throughput)."""
        return statistics.median(
            base.throughput / ours.throughput
            for ours, base in zip(self.reference.rounds, self.bare.rounds, strict=True)
        )

    @property
    def basis(self) -> str:
        return "server CPU time" if self.cpu_ratios is not None else "wall time"

    @property
    def ratio(self) -> float:
        """The gated figure: CPU-time ratio, or the wall-time ratio without ``/proc``."""
        ratios = self.cpu_ratios
        return statistics.median(ratios) if ratios is not None else self.wall_ratio


def _check(round_: LoadRound, name: str) -> LoadRound:
    if round_.unexpected:
        raise RuntimeError(
            f"{name}: {round_.unexpected} of {round_.requests} answers had an unexpected "
            f"status; first: {round_.first_unexpected}"
        )
    return round_


def floor_request(signed: RawRequest) -> RawRequest:
    """The floor row's request: ``signed``'s headers (certificate, Signature, ...) on the unsigned
    reference-server-only ``GET /_control/clock`` (``resources/control.py``), so that
    ``http.server`` parses the same header block as in the other rows while the server does no
    spec 5, contract or store work: what the reference server costs before its first check."""
    head, _, _ = signed.data.partition(b"\r\n\r\n")
    _, _, headers = head.partition(b"\r\n")
    kept = [line for line in headers.split(b"\r\n") if not line.lower().startswith(b"content-")]
    data = b"\r\n".join([b"GET /_control/clock HTTP/1.1", *kept]) + b"\r\n\r\n"
    return RawRequest("GET /_control/clock", data, 200)


@dataclass(frozen=True)
class _Target:
    name: str
    server: ServerProcess
    pool: LoadPool


def measure(
    *,
    rounds: int = ROUNDS,
    duration: float = DURATION,
    workers: int = WORKERS,
    warmup: float = WARMUP,
    limit: int | None = None,
    log_level: str = "INFO",
    floor: bool = True,
    command: Sequence[str] | None = None,
) -> ServerBenchmark:
    """Start both servers, prepare the signed workload, and load each server ``rounds`` times
    for ``duration`` seconds (``limit``: at most that many requests per worker and round);
    with ``floor``, also the reference server's unsigned control route (for information).
    ``command`` replaces the reference server's command line (another build, ``--data``, a
    profiling wrapper); it must print ``... listening on URL`` first, like the CLI."""
    with (
        server_process(_REFERENCE, command or reference_command(log_level)) as reference,
        server_process(_BARE, bare_command()) as bare,
    ):
        workload = prepare_workload(reference.url)
        with (
            LoadPool(workload, workers) as signed,
            LoadPool([floor_request(workload[0])], workers) if floor else nullcontext() as unsigned,
        ):
            results = _rounds(reference, bare, signed, unsigned, rounds, duration, warmup, limit)
    figures = {name: ServerFigures(name, tuple(found)) for name, found in results.items()}
    return ServerBenchmark(
        reference=figures[_REFERENCE],
        bare=figures[_BARE],
        floor=figures.get(_FLOOR),
        workers=workers,
        duration=duration,
    )


def _rounds(
    reference: ServerProcess,
    bare: ServerProcess,
    signed: LoadPool,
    unsigned: LoadPool | None,
    rounds: int,
    duration: float,
    warmup: float,
    limit: int | None,
) -> dict[str, list[LoadRound]]:
    """The warm-up, then ``rounds`` rounds over every target, the order alternating."""
    targets = [_Target(_BARE, bare, signed), _Target(_REFERENCE, reference, signed)]
    if unsigned is not None:
        targets.append(_Target(_FLOOR, reference, unsigned))
    for target in targets if warmup > 0 else ():
        _check(target.pool.run(*target.server.address, warmup, limit=limit), target.name)
    results: dict[str, list[LoadRound]] = {target.name: [] for target in targets}
    for index in range(rounds):
        for target in targets if index % 2 == 0 else targets[::-1]:
            measured = target.pool.run(
                *target.server.address, duration, server_pid=target.server.pid, limit=limit
            )
            results[target.name].append(_check(measured, target.name))
    return results


def _row(figures: ServerFigures, note: str = "") -> str:
    cpu = figures.cpu_per_request
    cpu_text = f"{cpu * 1e6:10.1f}" if cpu is not None else f"{'n/a':>10}"
    return (
        f"{figures.name:<19} {figures.throughput:9.0f} {figures.p50 * 1e3:8.2f} "
        f"{figures.p90 * 1e3:8.2f} {figures.p99 * 1e3:8.2f} {cpu_text}{note}"
    ).rstrip()


def report(result: ServerBenchmark) -> str:
    rounds = len(result.reference.rounds)
    lines = [
        f"{result.workers} client processes, keep-alive, pre-signed E12 GET + E16 POST; "
        f"{rounds} rounds x {result.duration:.1f} s per server (medians)",
        f"{'server':<19} {'req/s':>9} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'CPU us/req':>10}",
        _row(result.bare, "   baseline"),
        _row(result.reference, "   signed E12 + E16"),
    ]
    if result.floor is not None:
        lines.append(_row(result.floor, "   GET /_control/clock (information)"))
    lines.append(
        f"wall time per request (1/throughput): {result.wall_ratio:.2f}x the bare handler "
        + ("(gated)" if result.cpu_ratios is None else "(information)")
    )
    ratios = result.cpu_ratios
    if ratios is not None:
        ours, base = result.reference.cpu_per_request, result.bare.cpu_per_request
        assert ours is not None and base is not None
        lines.append(
            f"server CPU time per request: {result.ratio:.2f}x the bare handler (rounds: "
            + ", ".join(f"{value:.2f}" for value in ratios)
            + f"; budget {BUDGET:.2f}); {(ours - base) * 1e6:.0f} us above the baseline"
        )
    return "\n".join(lines)


def main() -> None:
    started = time.perf_counter()
    result = measure()
    print(report(result))
    print(f"({time.perf_counter() - started:.0f} s)")
    verdict = (
        f"the reference server's own cost per signed request is {result.ratio:.2f}x the bare "
        f"handler's ({result.basis})"
    )
    gate(result.ratio, BUDGET, verdict)


if __name__ == "__main__":
    main()
