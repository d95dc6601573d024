"""``python -m bench [NAME...]``: run ``main()`` of every ``bench/bench_*.py`` module, in order.

Modules are found by their file names, so adding a benchmark is adding a file. Every module
runs even when an earlier one fails; the exit status is non-zero when any of them failed
(raised, or exited with a non-zero code). Names given on the command line run only those
modules (``python -m bench server`` or ``python -m bench bench_server``); an unknown name exits
with status 2 and the list of known ones.
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


def select(requested: list[str], available: list[str]) -> list[str]:
    """The modules of ``available`` that ``requested`` names (``server``, ``bench_server``,
    ``bench.bench_server`` or ``bench/bench_server.py``), in the order asked; ``ValueError`` names
    an unknown one."""
    by_short = {name.rsplit(".", 1)[-1].removeprefix("bench_"): name for name in available}
    chosen: list[str] = []
    for wanted in requested:
        dotted = wanted.removesuffix(".py").replace("/", ".")
        short = dotted.rsplit(".", 1)[-1].removeprefix("bench_")
        if short not in by_short:
            raise ValueError(f"no benchmark {wanted!r}; known: {', '.join(sorted(by_short))}")
        chosen.append(by_short[short])
    return chosen


def run(names: list[str]) -> int:
    failed: list[str] = []
    for name in names:
        print(f"== {name}", flush=True)
        try:
            importlib.import_module(name).main()
        except SystemExit as exc:
            if exc.code not in (None, 0):
                if isinstance(exc.code, str):  # the reason, which SystemExit would print
                    print(exc.code, flush=True)
                failed.append(name)
        except Exception:
            traceback.print_exc()
            failed.append(name)
    if failed:
        print(f"FAIL: {', '.join(failed)}")
        return 1
    print(f"all {len(names)} benchmark module(s) within budget")
    return 0


def main(argv: list[str]) -> int:
    try:
        names = select(argv, discover()) if argv else discover()
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    return run(names)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
