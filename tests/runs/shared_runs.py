"""The whole runs of a test session, each made once and read by every test that needs it (issue 45
item 1): one run per configuration (the bundled server under a deliberate fault, each reading,
each example profile), its reports and terminal kept in a folder of the session.

Under pytest-xdist every worker is a process of its own, so a session-scoped fixture would make
the run once per worker: instead the first test to ask for a configuration makes it under a file
lock in the folder the session shares (``SHARED_RUNS``, made by the root ``conftest.py`` before
the workers start, which inherit it); a test of another worker asking meanwhile waits on the lock
and then reads the same run. ``made.log`` there lists each run made with its time, and the
session's summary prints how many runs were made (``conftest.py``)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from conformance.bankside.bundled import bundled_reference_server
from conformance.profile import ENV_PREFIX, load_profile

#: The environment variable naming the session's folder of shared runs (root ``conftest.py``).
SHARED_RUNS = "CONFORMANCE_SHARED_RUNS"
#: The file of that folder that lists each run made: its name and seconds, a line each.
MADE_LOG = "made.log"
#: The value every secret of an example profile gets (tests look for it in the reports).
SECRET = "round-trip-secret"
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "profiles" / "examples"
#: The timeout of one whole run, in seconds.
TIMEOUT = 900


@dataclass(frozen=True)
class SharedRun:
    """A run made once in the session: where it ran, its exit code and its terminal."""

    name: str
    folder: Path
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def reports(self) -> Path:
        """Its reports folder (``--reports``, or ``reports/`` where the run ran)."""
        return self.folder / "reports"

    def document(self) -> dict[str, Any]:
        """Its ``compliance.json``."""
        document: dict[str, Any] = json.loads(
            (self.reports / "compliance.json").read_text(encoding="utf-8")
        )
        return document

    def tail(self) -> str:
        """The end of its terminal, for an assertion's message."""
        return self.stdout[-3000:] + self.stderr[-2000:]


def _folder() -> Path:
    value = os.environ.get(SHARED_RUNS)
    assert value, f"{SHARED_RUNS} is not set: the root conftest.py sets it for the session"
    return Path(value)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def shared_run(name: str, make: Callable[[Path], subprocess.CompletedProcess[str]]) -> SharedRun:
    """The run ``name`` of this session: made by ``make(folder)`` (its terminal returned) by the
    first test that asks, under a lock the session's workers share; read by every later one."""
    root = _folder()
    folder = root / name
    record = folder / "run.json"
    with _locked(root / f"{name}.lock"):
        if not record.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            started = time.monotonic()
            done = make(folder)
            seconds = time.monotonic() - started
            record.write_text(
                json.dumps(
                    {"returncode": done.returncode, "stdout": done.stdout,
                     "stderr": done.stderr, "seconds": seconds}
                ),
                encoding="utf-8",
            )  # fmt: skip
            with (root / MADE_LOG).open("a", encoding="utf-8") as log:
                log.write(f"{name}\t{seconds:.0f}\n")
    data = json.loads(record.read_text(encoding="utf-8"))
    return SharedRun(name, folder, data["returncode"], data["stdout"], data["stderr"],
                     data["seconds"])  # fmt: skip


def run_suite(
    folder: Path, *args: str, command: tuple[str, ...] = (sys.executable, "-m", "conformance")
) -> subprocess.CompletedProcess[str]:
    """``conformance run ARGS`` in ``folder``, its reports in ``folder/reports``."""
    return subprocess.run(
        [*command, "run", "--reports", str(folder / "reports"), *args],
        cwd=folder, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        env=dict(os.environ),
    )  # fmt: skip


def reading_run(reading: str) -> SharedRun:
    """The whole suite against the bundled server playing ``reading`` (``permissive``,
    ``demanding``), two workers."""
    return shared_run(reading, lambda folder: run_suite(folder, f"--{reading}", "-n", "2"))


def fault_run(fault: str) -> SharedRun:
    """The README's whole run under a deliberate fault, as written: ``.venv/bin/conformance run
    --fault FAULT`` from a folder holding only this checkout's ``.venv`` (its reports in that
    folder's ``reports/``)."""

    def make(folder: Path) -> subprocess.CompletedProcess[str]:
        (folder / ".venv").symlink_to(ROOT / ".venv")
        return subprocess.run(
            [".venv/bin/conformance", "run", "--fault", fault],
            cwd=folder, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip

    return shared_run(f"fault-{fault}", make)


def example_secrets(profile: Path) -> dict[str, str]:
    """The environment an example profile reads its secrets from, each given ``SECRET``."""
    loaded = load_profile(profile)
    secrets = {
        value.removeprefix(ENV_PREFIX): SECRET
        for value in loaded.headers.values()
        if value.startswith(ENV_PREFIX)
    }
    if loaded.oauth is not None and loaded.oauth.client_secret_env:
        secrets[loaded.oauth.client_secret_env] = SECRET
    return secrets


def example_run(profile: Path) -> SharedRun:
    """The whole suite (two workers) with an example profile against the reference server
    playing its bank (``--profile``), its secrets from :func:`example_secrets`; the server's log
    is ``server.log`` in the run's folder."""

    def make(folder: Path) -> subprocess.CompletedProcess[str]:
        secrets: Mapping[str, str] = example_secrets(profile)
        with (
            mock.patch.dict(os.environ, secrets),
            bundled_reference_server(
                server_args=["--profile", str(profile)], log_path=folder / "server.log"
            ) as url,
        ):
            return run_suite(folder, "--profile", str(profile), "--target", url, "-n", "2")

    return shared_run(f"example-{profile.stem}", make)
