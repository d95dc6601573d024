"""``python -m bench``: run ``main()`` of every ``bench/bench_*.py`` module, in name order.

Modules are found by their file names, so adding a benchmark is adding a file. Every module
runs even when an earlier one fails; the exit status is non-zero when any of them failed
(raised, or exited with a non-zero code).
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path


def discover() -> list[str]:
    """Module names of the benchmarks beside this file (``bench.bench_signing``, ...)."""
    here = Path(__file__).resolve().parent
    return [f"{__package__ or 'bench'}.{path.stem}" for path in sorted(here.glob("bench_*.py"))]


def run(names: list[str]) -> int:
    failed: list[str] = []
    for name in names:
        print(f"== {name}", flush=True)
        try:
            importlib.import_module(name).main()
        except SystemExit as exc:
            if exc.code not in (None, 0):
                failed.append(name)
        except Exception:
            traceback.print_exc()
            failed.append(name)
    if failed:
        print(f"FAIL: {', '.join(failed)}")
        return 1
    print(f"all {len(names)} benchmark module(s) within budget")
    return 0


if __name__ == "__main__":
    sys.exit(run(discover()))
