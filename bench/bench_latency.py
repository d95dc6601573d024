"""Benchmark: the bundled run against a target 25 ms away, as a ratio of the same path without
the delay.

What a bank team feels first is a run against its test environment, a network distance away,
often reached through ``kubectl port-forward``, an SSH tunnel or a local gateway: a loopback
address with a far bank behind it. Each run of a round is the whole suite against a fresh
reference server started the way ``conformance run`` starts its own (the run CAs as trust
anchors, the bundled seed), behind :mod:`bench.latency_proxy`, options left to the harness (it
times every target in its preflight and keeps scenarios in flight for the answer time,
:mod:`conformance.bankside.concurrency`), timed from the start of ``conformance run`` to its exit:

* **0 ms**: the proxy forwarding at once: the same path, its processes and its forwarding, without
  the distance.
* **25 ms**: the same proxy delaying every answer by 25 ms.
* **25 ms, one at a time** (``--threads 1``; only with ``BENCH_LATENCY_SEQUENTIAL=1``, it takes
  minutes): what the threads buy.

The figure is the 25 ms run over the best 0 ms run (goal: at most 1.3). Every scenario's verdict
(its JUnit outcome) must be the same in all runs: a faster run that judges differently is not
faster, and the threads must not change a verdict (the 0 ms run keeps one scenario at a time).
The proxy listens on ``127.0.0.1`` (the tunnel: ``BENCH_LATENCY_HOST=loopback``, the default) or
on this machine's outbound address (``network``: a target elsewhere, as issue 22 measured). Not
gated in CI (the machine is shared); ``BENCH_LATENCY_MS`` changes the delay,
``BENCH_LATENCY_ROUNDS`` the rounds (default 1; the runs of a round alternate, the best of each
kind is compared).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from bench.bench_suite import Verdicts
from bench.latency_proxy import latency_proxy, network_address
from conformance.bankside.bundled import (
    bundled_reference_server,
    trust_anchor_arguments,
    write_run_identity,
)
from conformance.profile import REFERENCE_PROFILE
from conformance.scenario import DEFAULT_SEED

GOAL = 1.3
"""The run 25 ms away may take at most this multiple of the loopback run (a goal, not a gate)."""

_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class LatencyRun:
    label: str
    seconds: float
    workers: str
    verdicts: Verdicts
    outcomes: dict[str, str]
    """Every scenario's JUnit outcome by its test id."""


def outcomes(junit: Path) -> dict[str, str]:
    """Each test case's outcome in a JUnit file: passed, skipped, failure or error."""
    found: dict[str, str] = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("skipped", "failure", "error")]
        found[f"{case.get('classname')}::{case.get('name')}"] = kinds[0] if kinds else "passed"
    return found


def timed_run(label: str, folder: Path, delay: float, host: str, options: list[str]) -> LatencyRun:
    """One ``conformance run`` against a fresh server behind the proxy on ``host``."""
    identity = write_run_identity(folder / "identity")
    with (
        bundled_reference_server(trust=identity.trusted, crl=identity.crl) as url,
        latency_proxy(url, delay, host) as proxy,
    ):
        target = proxy.url
        reports = folder / "reports"
        command = [sys.executable, "-m", "conformance", "run", "--target", target]
        command += ["--profile", str(REFERENCE_PROFILE), "--seed", str(DEFAULT_SEED)]
        command += ["--cert", str(identity.certificate), "--key", str(identity.key)]
        command += ["--reports", str(reports)]
        command += options
        command += ["--", *trust_anchor_arguments(identity), "-q"]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=_ROOT, check=False)
        seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = done.stdout[-2000:]
        raise SystemExit(f"{label}: the run failed (exit {done.returncode}):\n{tail}")
    workers = "?"  # the harness's choice and why: "N workers, M scenarios in flight (...)"
    for line in done.stdout.splitlines():
        if line.startswith("conformance: ") and (" at a time" in line or " in flight" in line):
            workers = line.removeprefix("conformance: ")
    junit = reports / "junit.xml"
    return LatencyRun(label, seconds, workers, Verdicts.from_junit(junit), outcomes(junit))


def main() -> None:
    delay = float(os.environ.get("BENCH_LATENCY_MS", "25")) / 1000
    rounds = int(os.environ.get("BENCH_LATENCY_ROUNDS", "1"))
    where = os.environ.get("BENCH_LATENCY_HOST", "loopback")
    if where not in ("loopback", "network"):
        raise SystemExit(f"BENCH_LATENCY_HOST is loopback or network, not {where!r}")
    host = "127.0.0.1" if where == "loopback" else network_address()
    if host is None:
        raise SystemExit("BENCH_LATENCY_HOST=network: this machine has no outbound address")
    away = f"{delay * 1000:g} ms"
    kinds: list[tuple[str, float, list[str]]] = [("0 ms", 0.0, []), (away, delay, [])]
    if os.environ.get("BENCH_LATENCY_SEQUENTIAL") == "1":
        kinds.append((f"{away}, --threads 1", delay, ["--threads", "1"]))
    print(f"the proxy on {host} ({where}); load average before: {_load()}", flush=True)
    runs: dict[str, list[LatencyRun]] = {label: [] for label, _, _ in kinds}
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as directory:
        for index in range(rounds):
            for label, wait, options in kinds:
                folder = Path(directory) / f"{index}-{len(runs[label])}-{wait}-{len(options)}"
                run = timed_run(label, folder, wait, host, list(options))
                runs[label].append(run)
                print(f"  round {index + 1}: {_row(run, None)}", flush=True)
    print(f"load average after: {_load()}")
    best = {label: min(done, key=lambda run: run.seconds) for label, done in runs.items()}
    base = best["0 ms"]
    for run in best.values():
        print(_row(run, base.seconds))
    every = [run for done in runs.values() for run in done]
    differing = sorted(
        test for test in every[0].outcomes if len({run.outcomes.get(test) for run in every}) != 1
    )
    if differing or len({frozenset(run.outcomes) for run in every}) != 1:
        shown = ", ".join(differing[:10]) or "the runs judged different scenarios"
        raise SystemExit(f"FAIL: the runs reached different verdicts: {shown}")
    far = best[away]
    sequential = best.get(f"{away}, --threads 1")
    one = (
        ""
        if sequential is None
        else f"; one scenario at a time there: {sequential.seconds / base.seconds:.2f}x"
    )
    print(
        f"latency ({where}): {far.seconds:.1f} s at {away} against {base.seconds:.1f} s through "
        f"the same proxy at 0 ms = {far.seconds / base.seconds:.2f}x (goal <= {GOAL}x, not "
        f"gated; best of {rounds}){one}; every verdict equal in all {len(every)} runs"
    )


def _row(run: LatencyRun, base: float | None) -> str:
    ratio = "" if base is None else f"{run.seconds / base:4.2f}x  "
    return f"{run.label:<22} {run.seconds:6.1f} s  {ratio}{run.verdicts}\n    {run.workers}"


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
