"""Benchmark: the full suite's wall time (``-n auto``) is at most 1.5x its request floor.

The suite exists to send requests and judge the answers; everything else it does (generation,
data set-up logic, checks, pytest, xdist, Allure and the compliance matrix) should cost little
next to the requests themselves. Two figures, measured in the same round against the same
reference server:

* **suite**: ``conformance run --target URL --profile profiles/reference-server.toml --cert ...
  --key ... --seed 20260129 -n auto -- --trust-anchor ... ...`` (the bundled run's seed; against
  a target the default would be a random one) in a subprocess, timed from its start to its
  exit (interpreter start, imports, preflight, collection, xdist workers, every scenario,
  reports written to a temporary directory). The server is the one ``conformance run``
  starts for itself (``python -m reference_server --port 0 --trust CA ...``, started here with
  the same launcher, :func:`conformance.bankside.bundled.bundled_reference_server`, and the
  same fresh run CAs, :func:`~conformance.bankside.bundled.write_run_identity`), handed to the
  run by ``--target`` so that its log can be read: the number of requests the run sent is the
  number of request lines the server logged (one per request: SCA page GET/POSTs, ``/_control``
  calls and the preflight probes included). The verdicts are the same as a bundled run's: the
  run CAs are passed as the trust anchors, with the options ``conformance run`` gives pytest
  itself.
* **floor**: the same number of requests, each built, signed with ``SignatureAuth`` (Date,
  Digest, one RSA-2048 signature, the certificate header), sent and its answer read, in a tight
  loop over one ``httpx.Client`` per process (:mod:`bench.replay`), timed from "go" to the last
  answer; process start and imports are outside the timer. The mix is the suite's own: every
  exchange of the round is recorded (:mod:`bench.suite_recorder`) and replayed, same method,
  path, query, headers and body, freshly signed, against the same server right after the suite
  (so that the resources the paths name exist). The floor runs **with the suite's parallelism**:
  as many processes as ``-n auto`` started xdist workers, each sending an equal contiguous share.
  That is the fair comparison: a sequential floor would charge the suite for a second CPU it is
  entitled to use. The replays meet the state the suite left behind (its customers, accounts
  and payments, and what the replayed creations add), so the server works somewhat harder during
  the floor than during the suite (both server CPU figures are printed): if anything, the floor
  is generous to the suite.

Each round has a fresh server (the suite's data is seeded, and the same account numbers cannot
be created twice on one server). Figures are medians over rounds (the machine is shared: see the
CPU line of the output, which is steadier than wall time), the ratio the median of the rounds'
ratios. A round whose suite does not pass (exit code, or verdict counts other than the first
round's) fails the benchmark: a fast run that judges less is not faster. ``BENCH_SUITE_ROUNDS``
sets the number of rounds (default 3).
"""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import cycle, islice
from pathlib import Path

from bench.load import gate, process_cpu_seconds
from bench.replay import ReplayPool, ReplayRequest
from bench.suite_recorder import ENV_DIRECTORY
from conformance.bankside.bundled import (
    BundledIdentity,
    bundled_reference_server,
    trust_anchor_arguments,
    write_run_identity,
)
from conformance.profile import REFERENCE_PROFILE
from conformance.scenario import DEFAULT_SEED

BUDGET = 1.5
"""The suite may take at most this multiple of its request floor's wall time."""

ROUNDS = 3
_ROOT = Path(__file__).resolve().parent.parent
#: Where each round's files go (reports, server log, run CA, recording), in a temporary
#: directory: under the project's ``reports/``, where ``conformance run`` writes by default, and
#: not under the system's temporary directory, whose file creation may cost another price (on
#: the benchmark VM ~0.8 ms a file in /tmp against ~0.06 ms here; a run writes ~6,000 Allure
#: files).
_REPORTS = _ROOT / "reports"
_LOG_MARK = " INFO reference_server.http: "
_WORKERS = re.compile(r"^(\d+) workers? \[", re.MULTILINE)


# -- figures ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdicts:
    """The suite's counts, from its ``junit.xml``."""

    passed: int
    failed: int
    errors: int
    skipped: int

    @classmethod
    def from_junit(cls, path: Path) -> Verdicts:
        suite = ElementTree.parse(path).getroot()
        if suite.tag == "testsuites":
            suite = suite[0]
        tests, failed = int(suite.get("tests", 0)), int(suite.get("failures", 0))
        errors, skipped = int(suite.get("errors", 0)), int(suite.get("skipped", 0))
        return cls(tests - failed - errors - skipped, failed, errors, skipped)

    def __str__(self) -> str:
        text = f"{self.passed} passed, {self.skipped} skipped"
        if self.failed or self.errors:
            text += f", {self.failed} failed, {self.errors} errors"
        return text


@dataclass(frozen=True)
class SuiteRun:
    """One timed run of the suite."""

    seconds: float
    requests: int
    """Request lines the server logged during the run."""
    recorded: int
    """Exchanges the recorder saw (the scenarios'; the preflight probes are not among them)."""
    workers: int
    exit_code: int
    verdicts: Verdicts
    statuses: Counter[int]
    cpu_seconds: float
    """User + system CPU of the run's processes (``conformance run`` and its xdist workers)."""
    server_cpu_seconds: float | None


@dataclass(frozen=True)
class SuiteRound:
    """A suite run and the floor of its requests, against one server."""

    suite: SuiteRun
    floor_seconds: float
    floor_requests: int
    floor_logged: int
    """Request lines the server logged during the floor (must equal ``floor_requests``)."""
    floor_statuses: Counter[int]
    floor_cpu_seconds: float
    """User + system CPU of the floor's client processes during their loops."""
    floor_server_cpu_seconds: float | None

    @property
    def ratio(self) -> float:
        return ratio(self.suite.seconds, self.floor_seconds)


def ratio(suite_seconds: float, floor_seconds: float) -> float:
    """Suite wall time over floor wall time (the gated figure)."""
    if floor_seconds <= 0:
        raise ValueError("the floor took no time")
    return suite_seconds / floor_seconds


def _median(values: Iterable[float | None]) -> float | None:
    present = list(values)
    if not present or any(value is None for value in present):
        return None
    return statistics.median(value for value in present if value is not None)


@dataclass(frozen=True)
class SuiteBenchmark:
    """Every round, and the medians the verdict is taken on."""

    rounds: tuple[SuiteRound, ...]
    numprocesses: str = "auto"

    @property
    def suite_seconds(self) -> float:
        return statistics.median(item.suite.seconds for item in self.rounds)

    @property
    def floor_seconds(self) -> float:
        return statistics.median(item.floor_seconds for item in self.rounds)

    @property
    def requests(self) -> int:
        return round(statistics.median(item.suite.requests for item in self.rounds))

    @property
    def workers(self) -> int:
        return self.rounds[0].suite.workers

    @property
    def ratio(self) -> float:
        """The gated figure: the median of the rounds' ratios."""
        return statistics.median(item.ratio for item in self.rounds)

    @property
    def suite_cpu(self) -> tuple[float, float | None]:
        """Median CPU seconds of the suite's processes, and of the server meanwhile."""
        return (
            statistics.median(item.suite.cpu_seconds for item in self.rounds),
            _median(item.suite.server_cpu_seconds for item in self.rounds),
        )

    @property
    def floor_cpu(self) -> tuple[float, float | None]:
        """Median CPU seconds of the floor's processes, and of the server meanwhile."""
        return (
            statistics.median(item.floor_cpu_seconds for item in self.rounds),
            _median(item.floor_server_cpu_seconds for item in self.rounds),
        )


# -- the server's log -----------------------------------------------------------------------------


def logged_requests(log: Path) -> list[str]:
    """The request lines of the reference server's log (one per request, whatever the route)."""
    if not log.exists():
        return []
    with log.open(encoding="utf-8", errors="replace") as lines:
        return [line for line in lines if _LOG_MARK in line]


def _settled_requests(log: Path, at_least: int = 0, timeout: float = 5.0) -> list[str]:
    """The request lines once the log stops growing: the server writes a request's line just
    after its answer, so the client may be done a moment before the last line is."""
    deadline = time.monotonic() + timeout
    previous = logged_requests(log)
    while time.monotonic() < deadline:
        time.sleep(0.1)
        current = logged_requests(log)
        if len(current) == len(previous) and len(current) >= at_least:
            return current
        previous = current
    return previous


def logged_status(line: str) -> int | None:
    """The status of a request line (``... INFO reference_server.http: GET /p 201 1.2ms ...``)."""
    words = line.split(_LOG_MARK, 1)[-1].split()
    return next((int(word) for word in words[1:] if word.isdigit() and len(word) == 3), None)


def server_pid() -> int | None:
    """The pid of the reference server this process started (a child running
    ``reference_server``), for its CPU time; None without ``/proc``."""
    me = os.getpid()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            command = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(text[text.rindex(")") + 2 :].split()[1]) == me and b"reference_server" in command:
            return int(stat.parent.name)
    return None


def _cpu(pid: int | None) -> float | None:
    return None if pid is None else process_cpu_seconds(pid)


def _spent(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def _children_cpu() -> float:
    """CPU of this process's waited-for descendants (a run and, through it, its workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# -- the suite ------------------------------------------------------------------------------------


def suite_command(
    url: str,
    identity: BundledIdentity,
    reports: Path,
    *,
    numprocesses: str = "auto",
    pytest_args: Sequence[str] = (),
) -> list[str]:
    """``conformance run`` against ``url`` as a user aims it at a server they started: the
    reference profile, the run identity, its CAs as the trust anchors (the pytest options that
    ``conformance run`` gives a bundled run,
    :func:`~conformance.bankside.bundled.trust_anchor_arguments`), and the recorder
    plugin (:mod:`bench.suite_recorder`)."""
    return [
        sys.executable,
        "-m",
        "conformance",
        "run",
        "--target",
        url,
        "--profile",
        str(REFERENCE_PROFILE),
        "--cert",
        str(identity.certificate),
        "--key",
        str(identity.key),
        "--reports",
        str(reports),
        # The bundled run's seed: against a target the default is a random one, and rounds (and
        # sessions) compare better when they send the same data to their fresh servers.
        "--seed",
        str(DEFAULT_SEED),
        "-n",
        numprocesses,
        "--",
        *trust_anchor_arguments(identity),
        "-p",
        "bench.suite_recorder",
        *pytest_args,
    ]


def load_recorded(directory: Path) -> list[ReplayRequest]:
    """The recorder's exchanges, worker after worker (``gw0``, ``gw1``, ... or ``main``)."""
    requests: list[ReplayRequest] = []
    for path in sorted(directory.glob("exchanges-*.jsonl"), key=_worker_order):
        with path.open(encoding="utf-8") as lines:
            requests += [ReplayRequest.from_record(json.loads(line)) for line in lines if line]
    return requests


def _worker_order(path: Path) -> tuple[int, str]:
    name = path.stem.removeprefix("exchanges-")
    digits = name.removeprefix("gw")
    return (int(digits), name) if digits.isdigit() else (-1, name)


def floor_requests(recorded: Sequence[ReplayRequest], count: int) -> list[ReplayRequest]:
    """``count`` requests of the recorded mix, in order, the mix repeated from its start when the
    log counted more than the recorder saw (the preflight probes are not recorded)."""
    if not recorded:
        raise RuntimeError("the recorder saw no exchange: nothing to replay")
    return list(islice(cycle(recorded), count))


def run_suite(
    url: str,
    identity: BundledIdentity,
    workdir: Path,
    log: Path,
    *,
    numprocesses: str = "auto",
    pytest_args: Sequence[str] = (),
) -> tuple[SuiteRun, list[ReplayRequest]]:
    """One timed run of the suite against ``url``; its figures and its recorded mix."""
    reports, record = workdir / "reports", workdir / "record"
    before = len(logged_requests(log))
    env = {
        **os.environ,
        ENV_DIRECTORY: str(record),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")])),
    }
    command = suite_command(
        url, identity, reports, numprocesses=numprocesses, pytest_args=pytest_args
    )
    pid = server_pid()
    server_before, cpu_before = _cpu(pid), _children_cpu()
    started = time.perf_counter()
    finished = subprocess.run(
        command, cwd=_ROOT, env=env, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    cpu, server_after = _children_cpu() - cpu_before, _cpu(pid)
    lines = _settled_requests(log)[before:]
    junit = reports / "junit.xml"
    if not junit.exists():
        raise RuntimeError(
            f"the suite run wrote no junit.xml (exit code {finished.returncode}):\n"
            f"{finished.stdout[-2000:]}\n{finished.stderr[-2000:]}"
        )
    found = _WORKERS.search(finished.stdout)
    recorded = load_recorded(record)
    run = SuiteRun(
        seconds=seconds,
        requests=len(lines),
        recorded=len(recorded),
        workers=int(found.group(1)) if found else 1,
        exit_code=finished.returncode,
        verdicts=Verdicts.from_junit(junit),
        statuses=Counter(status for status in map(logged_status, lines) if status is not None),
        cpu_seconds=cpu,
        server_cpu_seconds=_spent(server_before, server_after),
    )
    return run, recorded


# -- a round --------------------------------------------------------------------------------------


def measure_round(
    workdir: Path, *, numprocesses: str = "auto", pytest_args: Sequence[str] = ()
) -> SuiteRound:
    """A fresh server with a fresh run CA; the suite against it; then the floor against it."""
    identity = write_run_identity(workdir / "identity")
    log = workdir / "reference-server.log"
    with bundled_reference_server(trust=identity.trusted, log_path=log, crl=identity.crl) as url:
        suite, recorded = run_suite(
            url, identity, workdir, log, numprocesses=numprocesses, pytest_args=pytest_args
        )
        requests = floor_requests(recorded, suite.requests)
        with ReplayPool(url, str(identity.certificate), str(identity.key), suite.workers) as pool:
            before, pid = len(_settled_requests(log)), server_pid()
            server_before = _cpu(pid)
            floor = pool.run(requests)
            server_after = _cpu(pid)
            logged = len(_settled_requests(log, at_least=before + len(requests))) - before
    return SuiteRound(
        suite=suite,
        floor_seconds=floor.seconds,
        floor_requests=floor.requests,
        floor_logged=logged,
        floor_statuses=floor.statuses,
        floor_cpu_seconds=floor.cpu_seconds,
        floor_server_cpu_seconds=_spent(server_before, server_after),
    )


def measure(
    *, rounds: int = ROUNDS, numprocesses: str = "auto", pytest_args: Sequence[str] = ()
) -> SuiteBenchmark:
    """``rounds`` rounds, each checked (:func:`check_round`) and printed as it ends."""
    done: list[SuiteRound] = []
    _REPORTS.mkdir(parents=True, exist_ok=True)
    for index in range(rounds):
        with tempfile.TemporaryDirectory(prefix=".bench-suite-", dir=_REPORTS) as folder:
            measured = measure_round(
                Path(folder), numprocesses=numprocesses, pytest_args=pytest_args
            )
        check_round(measured, done[0] if done else None, index)
        done.append(measured)
        print(f"  round {index + 1}: {describe_round(measured)}", flush=True)
    return SuiteBenchmark(tuple(done), numprocesses)


def check_round(measured: SuiteRound, first: SuiteRound | None, index: int) -> None:
    """The suite passed, with the first round's verdicts; the floor sent as many requests as
    the suite, and the server logged every one of them."""
    suite = measured.suite
    if suite.exit_code != 0:
        raise RuntimeError(
            f"round {index + 1}: the suite run exited with {suite.exit_code} ({suite.verdicts})"
        )
    if first is not None and suite.verdicts != first.suite.verdicts:
        raise RuntimeError(
            f"round {index + 1}: verdicts {suite.verdicts} differ from round 1's "
            f"({first.suite.verdicts})"
        )
    if measured.floor_requests != suite.requests or measured.floor_logged != suite.requests:
        raise RuntimeError(
            f"round {index + 1}: the floor sent {measured.floor_requests} requests and the server "
            f"logged {measured.floor_logged}; the suite sent {suite.requests}"
        )


# -- the report -----------------------------------------------------------------------------------


def status_classes(statuses: Counter[int]) -> str:
    """``2xx 969 / 3xx 29 / 4xx 1604``."""
    classes: Counter[str] = Counter()
    for status, count in statuses.items():
        classes[f"{status // 100}xx"] += count
    return " / ".join(f"{name} {classes[name]}" for name in sorted(classes))


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} s"


def describe_round(item: SuiteRound) -> str:
    return (
        f"suite {item.suite.seconds:6.2f} s ({item.suite.verdicts}), floor "
        f"{item.floor_seconds:6.2f} s, {item.suite.requests} requests, ratio {item.ratio:.2f}; "
        f"CPU: suite processes {item.suite.cpu_seconds:.1f} s, server "
        f"{_seconds(item.suite.server_cpu_seconds)}; floor processes "
        f"{item.floor_cpu_seconds:.1f} s, server {_seconds(item.floor_server_cpu_seconds)}"
    )


def report(result: SuiteBenchmark) -> str:
    first, workers, count = result.rounds[0], result.workers, result.requests
    suite_cpu, suite_server = result.suite_cpu
    floor_cpu, floor_server = result.floor_cpu
    share = -(-count // workers)
    return "\n".join(
        [
            f"suite: conformance run -n {result.numprocesses} ({workers} xdist worker"
            f"{'s' if workers != 1 else ''}) against the reference server: "
            f"{first.suite.verdicts}, {count} requests (server log; {first.suite.recorded} "
            "made by the scenarios, the rest by the preflight probes)",
            f"floor: the same {count} requests (the suite's recorded mix), each freshly signed "
            f"with SignatureAuth and sent in a tight loop over one httpx.Client per process; "
            f"{workers} process{'es' if workers != 1 else ''} in parallel, ~{share} requests "
            "each (the suite's parallelism)",
            f"answers: suite {status_classes(first.suite.statuses)}; floor "
            f"{status_classes(first.floor_statuses)}",
            f"CPU (medians): suite processes {suite_cpu:.1f} s + server {_seconds(suite_server)}; "
            f"floor processes {floor_cpu:.1f} s + server {_seconds(floor_server)}",
            f"{'':<7}{'wall s':>9}{'ms/request':>12}   (median of {len(result.rounds)} rounds)",
            f"{'floor':<7}{result.floor_seconds:9.2f}"
            f"{result.floor_seconds * 1e3 / count:12.2f}   baseline",
            f"{'suite':<7}{result.suite_seconds:9.2f}"
            f"{result.suite_seconds * 1e3 / count:12.2f}   "
            f"ratio {result.ratio:.2f} (rounds: "
            + ", ".join(f"{item.ratio:.2f}" for item in result.rounds)
            + f"; budget {BUDGET:.2f})",
        ]
    )


def main() -> None:
    started = time.perf_counter()
    rounds = int(os.environ.get("BENCH_SUITE_ROUNDS", ROUNDS))
    result = measure(rounds=rounds)
    print(report(result))
    print(f"({time.perf_counter() - started:.0f} s)")
    verdict = (
        f"the suite's wall time is {result.ratio:.2f}x the floor of its "
        f"{result.requests} signed requests"
    )
    gate(result.ratio, BUDGET, verdict)


if __name__ == "__main__":
    main()
