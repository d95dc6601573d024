"""Benchmark: ``make test`` of this checkout beside ``make test`` of another, alternating.

What a developer waits for at every change is ``make test`` (lint, formatting, the layer
contracts, types, the tests). This benchmark times it from start to exit in this checkout and,
when ``BENCH_BASELINE`` names another checkout (a ``git worktree`` of an older commit, with its
own ``.venv``, which ``make`` creates when missing), in that one too, alternating (this, baseline,
this, ...), so that both meet the same machine in the same minutes. Printed per run: the wall
time, the CPU time of everything it ran (steadier than wall time on a shared machine), pytest's
own count and seconds; then the best of each and their ratio. ``BENCH_MAKETEST_ROUNDS`` sets the
pairs (default 1). A ``make test`` that fails fails the benchmark. Not part of ``make bench``'s
budget: it takes minutes. With a baseline, the medians of the pairs' ratios are appended to
``bench/figures.jsonl`` (``python -m bench.figures`` shows them in the Figures table).
"""

from __future__ import annotations

import os
import re
import resource
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from bench.bench_bundled import commit_of
from bench.figures import record

_ROOT = Path(__file__).resolve().parent.parent
#: ``make test`` may take at most this multiple of the baseline's (issue 30; a goal, not a gate).
GOAL = 1.3
_SUMMARY = re.compile(r"=*\s*(?P<counts>[0-9][^=\n]*?) in (?P<seconds>[0-9.]+)s")


@dataclass(frozen=True)
class MakeTest:
    checkout: Path
    seconds: float
    cpu_seconds: float
    counts: str
    pytest_seconds: float


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(checkout: Path) -> MakeTest:
    before, started = _children_cpu(), time.perf_counter()
    done = subprocess.run(
        ["make", "test"], cwd=checkout, capture_output=True, text=True, check=False
    )
    seconds, cpu = time.perf_counter() - started, _children_cpu() - before
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: make test failed:\n{done.stdout[-3000:]}")
    found = _SUMMARY.findall(done.stdout)
    counts, pytest_seconds = found[-1] if found else ("?", "0")
    return MakeTest(checkout, seconds, cpu, counts.strip(), float(pytest_seconds))


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def _row(label: str, run: MakeTest) -> str:
    return (
        f"{label:<8} {run.seconds:6.0f} s wall ({run.seconds / 60:.1f} min), CPU "
        f"{run.cpu_seconds:5.0f} s, pytest {run.pytest_seconds:5.0f} s: {run.counts}"
    )


def main() -> None:
    rounds = int(os.environ.get("BENCH_MAKETEST_ROUNDS", "1"))
    baseline = os.environ.get("BENCH_BASELINE")
    checkouts = [_ROOT] + ([Path(baseline).resolve()] if baseline else [])
    runs: dict[Path, list[MakeTest]] = {checkout: [] for checkout in checkouts}
    load_before = _load()
    print(f"load average before: {load_before}", flush=True)
    for index in range(rounds):
        for checkout in checkouts:
            run = timed(checkout)
            runs[checkout].append(run)
            label = "this" if checkout == _ROOT else "baseline"
            print(f"  round {index + 1}: {_row(label, run)}", flush=True)
        if baseline:  # the pair of the same minutes
            this, base = runs[_ROOT][-1], runs[checkouts[1]][-1]
            print(
                f"  round {index + 1}: {this.seconds / base.seconds:.2f}x wall, "
                f"{this.cpu_seconds / base.cpu_seconds:.2f}x CPU",
                flush=True,
            )
    print(f"load average after: {_load()}")
    best = {checkout: min(done, key=lambda run: run.seconds) for checkout, done in runs.items()}
    this = best[_ROOT]
    print(_row("this", this))
    if baseline:
        base = best[checkouts[1]]
        print(_row("baseline", base))
        print(
            f"maketest: {this.seconds:.0f} s against the baseline's {base.seconds:.0f} s = "
            f"{this.seconds / base.seconds:.2f}x wall, {this.cpu_seconds / base.cpu_seconds:.2f}x "
            f"CPU (best of {rounds}; goal: at most {GOAL}x, issue 30)"
        )
        pairs = list(zip(runs[_ROOT], runs[checkouts[1]], strict=True))
        wall = statistics.median(a.seconds / b.seconds for a, b in pairs)
        cpu = statistics.median(a.cpu_seconds / b.cpu_seconds for a, b in pairs)
        record(
            "maketest-vs-baseline",
            "`make test` against a baseline commit (`python -m bench maketest`)",
            f"{wall:.2f}× wall, {cpu:.2f}× CPU (medians of {len(pairs)} alternated pairs; "
            f"best {this.seconds:.0f} s against {base.seconds:.0f} s)",
            how=f"BENCH_BASELINE at {commit_of(checkouts[1])}, this at {commit_of(_ROOT)}; "
            f"{this.counts} against {base.counts}; load {load_before} before, {_load()} after",
        )


if __name__ == "__main__":
    main()
