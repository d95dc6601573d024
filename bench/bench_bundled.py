"""Benchmark: the bundled run as a user starts it (``conformance run``), beside another checkout.

The first figure a user feels is ``make run``: ``conformance run`` with no option, the bundled
reference server started for it, every scenario, the reports written. This benchmark times that
command from its start to its exit, in this checkout and, when ``BENCH_BASELINE`` names another
checkout of the project (with its own ``.venv``, e.g. a ``git worktree`` of an older commit),
in that one too, **alternating** (this, baseline, this, baseline, ...), so that both meet the
same machine in the same minutes: on a shared machine only the ratio of such pairs means
something. The suites differ in size from commit to commit, so the figure compared is the
cost per scenario (wall time over the scenarios the run reported), beside the wall time.

Environment:

* ``BENCH_BASELINE``: the other checkout (its ``.venv/bin/conformance`` is run there);
* ``BENCH_BUNDLED_ROUNDS``: pairs to run (default 2); the best and the median are printed;
* ``BENCH_BUNDLED_ARGS``: options for both runs (e.g. ``-n 2``), default none.

Each run writes its reports into a temporary directory; a run that does not exit 0 fails the
benchmark (a fast run that judges less is not faster). Not gated: the machine is shared. With a
baseline, the medians of the pairs' ratios (wall and CPU per scenario) are appended to
``bench/figures.jsonl`` (``python -m bench.figures`` shows them in the Figures table).
"""

from __future__ import annotations

import os
import re
import resource
import shlex
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.figures import record

_ROOT = Path(__file__).resolve().parent.parent
_SUMMARY = re.compile(r"=+ (?P<counts>.*?) in [0-9.]+s")
_PASSED = re.compile(r"(\d+) passed")
_WORKERS = re.compile(r"^(\d+) workers? \[", re.MULTILINE)
_CHOICE = re.compile(r"^conformance: (?P<line>.*workers?.*)$", re.MULTILINE)


@dataclass(frozen=True)
class BundledRun:
    """One timed ``conformance run`` of a checkout."""

    checkout: Path
    seconds: float
    cpu_seconds: float
    """User + system CPU of the run and everything it waited for (workers, server)."""
    counts: str
    scenarios: int
    workers: str
    choice: str
    """The harness's own line about its worker choice, when it printed one."""

    @property
    def per_scenario_ms(self) -> float:
        return 1000 * self.seconds / max(1, self.scenarios)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _scenarios(counts: str) -> int:
    """The scenarios of pytest's summary line (``2064 passed, 1 not applicable``)."""
    return sum(int(number) for number in re.findall(r"(\d+) [a-z]", counts))


def timed_run(checkout: Path, extra: list[str]) -> BundledRun:
    """``conformance run`` of ``checkout`` (its own ``.venv``), reports in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="bench-bundled-") as reports:
        command = [str(checkout / ".venv" / "bin" / "conformance"), "run", "--reports", reports]
        command += extra
        before = _children_cpu()
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=checkout, check=False)
        seconds = time.perf_counter() - started
        cpu = _children_cpu() - before
    if done.returncode != 0:
        tail = done.stdout[-2000:]
        raise SystemExit(f"{checkout}: the run failed (exit {done.returncode}):\n{tail}")
    summary = _SUMMARY.findall(done.stdout)
    counts = summary[-1] if summary else "?"
    workers = _WORKERS.search(done.stdout)
    choice = _CHOICE.search(done.stdout)
    return BundledRun(
        checkout=checkout,
        seconds=seconds,
        cpu_seconds=cpu,
        counts=counts,
        scenarios=_scenarios(counts),
        workers=workers.group(1) if workers else "0",
        choice=choice.group("line") if choice else "",
    )


def _describe(run: BundledRun) -> str:
    return (
        f"{run.seconds:6.1f} s wall, {run.per_scenario_ms:5.1f} ms/scenario, "
        f"CPU {run.cpu_seconds:5.1f} s, {run.workers} workers, {run.counts}"
    )


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    rounds = int(os.environ.get("BENCH_BUNDLED_ROUNDS", "2"))
    extra = shlex.split(os.environ.get("BENCH_BUNDLED_ARGS", ""))
    baseline_dir = os.environ.get("BENCH_BASELINE")
    checkouts = [_ROOT] + ([Path(baseline_dir).resolve()] if baseline_dir else [])
    runs: dict[Path, list[BundledRun]] = {checkout: [] for checkout in checkouts}
    load_before = _load()
    print(f"conformance run {' '.join(extra)}; load average before: {load_before}", flush=True)
    for index in range(rounds):
        for checkout in checkouts:
            run = timed_run(checkout, extra)
            runs[checkout].append(run)
            label = "this" if checkout == _ROOT else "baseline"
            print(f"  round {index + 1} {label:<8} {_describe(run)}", flush=True)
            if run.choice:
                print(f"    {run.choice}", flush=True)
    print(f"load average after: {_load()}")
    best: dict[Path, BundledRun] = {}
    for checkout, done in runs.items():
        best[checkout] = min(done, key=lambda run: run.per_scenario_ms)
        median = statistics.median(run.per_scenario_ms for run in done)
        print(
            f"{'this' if checkout == _ROOT else 'baseline'} ({checkout}): best "
            f"{_describe(best[checkout])}; median {median:.1f} ms/scenario"
        )
    if baseline_dir:
        this, base = best[_ROOT], best[checkouts[1]]
        print(
            f"bundled run: {this.per_scenario_ms:.1f} ms/scenario against the baseline's "
            f"{base.per_scenario_ms:.1f} = {this.per_scenario_ms / base.per_scenario_ms:.2f}x "
            f"(best of {rounds}; wall {this.seconds:.1f} s against {base.seconds:.1f} s)"
        )
        # each round's pair met the same minutes: the median of their ratios, wall and CPU
        pairs = list(zip(runs[_ROOT], runs[checkouts[1]], strict=True))
        wall = statistics.median(a.per_scenario_ms / b.per_scenario_ms for a, b in pairs)
        cpu = statistics.median(
            (a.cpu_seconds / max(1, a.scenarios)) / (b.cpu_seconds / max(1, b.scenarios))
            for a, b in pairs
        )
        print(f"pairs: median {wall:.2f}x wall, {cpu:.2f}x CPU per scenario ({len(pairs)} pairs)")
        record(
            "bundled-vs-baseline",
            "the bundled run per scenario against a baseline commit (`python -m bench bundled`)",
            f"{wall:.2f}× wall, {cpu:.2f}× CPU (medians of {len(pairs)} alternated pairs; "
            f"best {this.per_scenario_ms:.1f} against {base.per_scenario_ms:.1f} ms a scenario)",
            how=f"BENCH_BASELINE at {commit_of(checkouts[1])}, this at {commit_of(_ROOT)}; "
            f"load {load_before} before, {_load()} after",
        )


def commit_of(checkout: Path) -> str:
    """The short commit of a checkout (``?`` when git cannot say)."""
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=checkout, capture_output=True, text=True
    )
    return done.stdout.strip() or "?"


if __name__ == "__main__":
    main()
