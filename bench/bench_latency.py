"""Benchmark: the bundled run against a target 25 ms away, as a ratio of the same run on loopback.

What a bank team feels first is a run against its test environment, a network distance away. Three
runs of the whole suite in one invocation, each against a fresh reference server started the way
``conformance run`` starts its own (the run CAs as trust anchors, the bundled seed), each timed
from the start of ``conformance run`` to its exit:

* **loopback**: the server directly; ``-n`` left to the harness (one worker per CPU there).
* **25 ms**: the server behind :mod:`bench.latency_proxy`, which delays every answer by 25 ms;
  ``-n`` left to the harness, which measures the distance in its preflight and sizes the workers
  for it (:mod:`conformance.bankside.concurrency`).
* **25 ms, -n auto**: the same with one worker per CPU, the sizing a CPU-bound run would choose:
  what the network sizing buys.

The figure is latency / loopback (goal: at most 1.3). The verdict counts of the three runs must be
equal: a faster run that judges less is not faster. Not gated in CI (the machine is shared);
``BENCH_LATENCY_MS`` changes the delay.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.bench_suite import Verdicts
from bench.latency_proxy import latency_proxy
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


def timed_run(label: str, folder: Path, delay: float, numprocesses: str | None) -> LatencyRun:
    """One ``conformance run`` against a fresh server, through the proxy when ``delay`` > 0."""
    identity = write_run_identity(folder / "identity")
    with (
        bundled_reference_server(trust=identity.trusted, crl=identity.crl) as url,
        latency_proxy(url, delay) as proxy,
    ):
        target = proxy.url if delay > 0 else url
        reports = folder / "reports"
        command = [sys.executable, "-m", "conformance", "run", "--target", target]
        command += ["--profile", str(REFERENCE_PROFILE), "--seed", str(DEFAULT_SEED)]
        command += ["--cert", str(identity.certificate), "--key", str(identity.key)]
        command += ["--reports", str(reports)]
        if numprocesses is not None:
            command += ["-n", numprocesses]
        command += ["--", *trust_anchor_arguments(identity), "-q"]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=_ROOT, check=False)
        seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = done.stdout[-2000:]
        raise SystemExit(f"{label}: the run failed (exit {done.returncode}):\n{tail}")
    chosen = numprocesses or "auto"
    for line in done.stdout.splitlines():
        if line.startswith("conformance: ") and " workers (" in line:
            chosen = line.split()[1]
    return LatencyRun(label, seconds, chosen, Verdicts.from_junit(reports / "junit.xml"))


def main() -> None:
    delay = float(os.environ.get("BENCH_LATENCY_MS", "25")) / 1000
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as directory:
        folder = Path(directory)
        runs = [
            timed_run("loopback", folder / "loopback", 0.0, None),
            timed_run(f"{delay * 1000:g} ms", folder / "latency", delay, None),
            timed_run(f"{delay * 1000:g} ms, -n auto", folder / "auto", delay, "auto"),
        ]
    base = runs[0]
    for run in runs:
        print(
            f"{run.label:<18} {run.seconds:6.1f} s  {run.seconds / base.seconds:4.2f}x  "
            f"workers {run.workers:<4}  {run.verdicts}"
        )
    if len({str(run.verdicts) for run in runs}) != 1:
        raise SystemExit("FAIL: the runs reached different verdicts")
    figure = runs[1].seconds / base.seconds
    print(
        f"latency: {runs[1].seconds:.1f} s at {delay * 1000:g} ms against {base.seconds:.1f} s on "
        f"loopback = {figure:.2f}x (goal <= {GOAL}x, not gated); one worker per CPU there: "
        f"{runs[2].seconds / base.seconds:.2f}x"
    )


if __name__ == "__main__":
    main()
