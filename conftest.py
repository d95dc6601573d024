"""Make the conformance plugin active for pytest runs from a checkout, and give the session a
folder for its shared whole runs.

An installed distribution registers the plugin through its ``pytest11`` entry point under the
name ``conformance.plugin``; pytest skips a ``pytest_plugins`` entry already registered under that
name, so a checkout that is also installed loads the plugin exactly once.

The shared runs (``tests/runs/shared_runs.py``): the session (the xdist controller, before it
starts the workers, which inherit its environment) makes one folder, named in
``CONFORMANCE_SHARED_RUNS``; its summary says how many whole runs the tests made there, and the
folder goes with the session.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

pytest_plugins = ["conformance.plugin"]

#: Must equal ``shared_runs.SHARED_RUNS`` and ``shared_runs.MADE_LOG`` (tests/runs/).
_SHARED_RUNS = "CONFORMANCE_SHARED_RUNS"
_MADE_LOG = "made.log"
_FOLDER = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    if _SHARED_RUNS in os.environ:  # a worker, or a session inside a test: the outer one's
        return
    folder = Path(tempfile.mkdtemp(prefix="conformance-shared-runs-"))
    os.environ[_SHARED_RUNS] = str(folder)
    config.stash[_FOLDER] = folder


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    folder = config.stash.get(_FOLDER, None)
    log = folder / _MADE_LOG if folder is not None else None
    if log is None or not log.is_file():
        return
    made = [line.split("\t") for line in log.read_text(encoding="utf-8").splitlines()]
    names = ", ".join(f"{name} ({seconds} s)" for name, seconds in made)
    terminalreporter.write_line(f"shared whole runs made: {len(made)}: {names}")


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_FOLDER, None)
    if folder is not None:
        del os.environ[_SHARED_RUNS]
        shutil.rmtree(folder, ignore_errors=True)
