"""``conformance fleet run``: each bank's ``conformance run`` in its own process, a few at a time,
each under a deadline, and the record of how each ended (``fleet-run.json``).

One bank's run is the unit: it is bound by the bank's latency and rate limit, not by this
machine's CPU, and it owns one PSU, one clean-up list and one rate limit, so it is never split.
Each child is started in a session of its own (its own process group, with the bundled server
it may start), so that a bank that passes its deadline is stopped whole: SIGTERM to the group
(``conformance run`` then stops as interrupted), SIGKILL to what is left after a grace period.
A run whose runner was killed (``kill -9``) stops itself: :mod:`conformance.fleet.watchdog`.
One bank's failure, hang or refusal never stops the others: each ends in a
:class:`~conformance.fleet.outcome.BankOutcome`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from conformance.errors import INTERRUPTED_EXIT, ConformanceError
from conformance.fleet.outcome import (
    INTERRUPTED,
    JUDGED,
    NOT_RUN,
    OUTCOME_JSON,
    TIMED_OUT,
    BankOutcome,
)
from conformance.fleet.watchdog import PARENT_ENV
from conformance.report.compliance import COMPLIANCE_JSON

__all__ = ["GRACE_SECONDS", "Bank", "FleetOptions", "bank_command", "banks_of", "run_fleet"]

#: Seconds between the SIGTERM to a late bank's process group and the SIGKILL.
GRACE_SECONDS = 10.0
#: The log of each bank's run, in its folder.
RUN_LOG = "run.log"


@dataclass(frozen=True)
class Bank:
    """One profile of the fleet: its folder under the fleet's reports, its name, and why its
    profile could not be read ("" when it could)."""

    folder: str
    profile: Path
    name: str
    error: str = ""


@dataclass(frozen=True)
class FleetOptions:
    """How every bank runs."""

    reports: Path
    jobs: int
    deadline: float
    round: str
    #: Each bank is played by the bundled reference server (``conformance run --play``).
    play: bool = False
    #: Faults of the bundled server switched on for every bank (with ``play``).
    faults: tuple[str, ...] = ()
    #: Faults of one bank's bundled server, by its folder (with ``play``).
    bank_faults: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Arguments for every bank's ``conformance run`` (``--smoke``, ``--strict``, ``-- -k E1``).
    run_args: tuple[str, ...] = ()


def banks_of(profiles: Sequence[Path]) -> list[Bank]:
    """The banks of ``profiles``, each named by its profile (or, when it cannot be read, by its
    file and why), in a folder of its own: the file's stem, ``-2``, ``-3``... when stems repeat."""
    # on use: `conformance fleet report` needs no profile loader
    from conformance.profile import load_profile

    banks: list[Bank] = []
    taken: set[str] = set()
    for path in profiles:
        folder, number = path.stem, 1
        while folder in taken:
            number += 1
            folder = f"{path.stem}-{number}"
        taken.add(folder)
        try:
            name, error = load_profile(path).name or path.stem, ""
        except ConformanceError as problem:
            name, error = path.stem, f"its profile could not be read: {problem.message}"
        banks.append(Bank(folder, path.resolve(), name, error))
    return banks


def bank_command(bank: Bank, options: FleetOptions) -> list[str]:
    """The ``conformance run`` of one bank, in this interpreter."""
    command = [sys.executable, "-m", "conformance", "run"]
    command += ["--play" if options.play else "--profile", str(bank.profile)]
    command += ["--reports", str(options.reports / bank.folder)]
    for fault in (*options.faults, *options.bank_faults.get(bank.folder, ())):
        command += ["--fault", fault]
    return command + list(options.run_args)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _last_word(log: Path) -> str:
    """Why a run ended without a verdict: its last ``conformance:`` line, else its last line."""
    try:
        lines = [line.strip() for line in log.read_text("utf-8", errors="replace").splitlines()]
    except OSError:
        return "its run left no log"
    lines = [line for line in lines if line]
    said = [line for line in lines if line.startswith("conformance:")]
    return (said or lines or ["its run printed nothing"])[-1]


def _stop_group(process: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM to the process group of ``process``, SIGKILL after ``grace`` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace)
    _kill_group(process)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to whatever is left of the group (a server the run started and left behind)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


class _Running:
    """The banks' processes still running, so that a fleet stopped itself (Ctrl-C, SIGTERM: a
    pod deleted) stops them too: each is in a session of its own, out of reach of the
    terminal's Ctrl-C."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: set[subprocess.Popen[bytes]] = set()

    def add(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._processes.add(process)

    def discard(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._processes.discard(process)

    def stop_all(self) -> None:
        with self._lock:
            processes = list(self._processes)
        for process in processes:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)


_RUNNING = _Running()


def _clear(folder: Path) -> None:
    """An earlier run's compliance document and record in the bank's folder are removed, so that
    a run that writes none is never read as that earlier one."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in (COMPLIANCE_JSON, OUTCOME_JSON):
        (folder / name).unlink(missing_ok=True)


def _ended(folder: Path, code: int, log: Path) -> tuple[str, str]:
    """The status and why of a run that ended by itself with ``code``."""
    if (folder / COMPLIANCE_JSON).is_file():
        return JUDGED, ""
    if code == INTERRUPTED_EXIT:
        return INTERRUPTED, _last_word(log)
    return NOT_RUN, f"exit code {code}: {_last_word(log)}"


def run_bank(bank: Bank, options: FleetOptions) -> BankOutcome:
    """Run one bank under the deadline and record how it ended (in its folder, too)."""
    folder = options.reports / bank.folder
    _clear(folder)
    command = bank_command(bank, options)
    started, clock = _now(), time.monotonic()
    if bank.error:
        status, why, code = NOT_RUN, bank.error, None
    else:
        # said until the run ends: a runner killed meanwhile (kill -9) leaves this record, so
        # the fleet report names the bank as interrupted instead of leaving it out
        BankOutcome(
            bank=bank.folder,
            name=bank.name,
            profile=str(bank.profile),
            status=INTERRUPTED,
            why="the fleet runner stopped before this bank's run ended (no final status)",
            exit_code=None,
            started=started,
            finished="",
            seconds=0.0,
            round=options.round,
            command=tuple(command),
        ).write(folder)
        status, why, code = _run(command, folder, options.deadline)
    outcome = BankOutcome(
        bank=bank.folder,
        name=bank.name,
        profile=str(bank.profile),
        status=status,
        why=why,
        exit_code=code,
        started=started,
        finished=_now(),
        seconds=round(time.monotonic() - clock, 3),
        round=options.round,
        command=tuple(command),
    )
    outcome.write(folder)
    return outcome


def _run(command: Sequence[str], folder: Path, deadline: float) -> tuple[str, str, int | None]:
    """Run ``command`` in a session of its own, its output in the bank's log: its status, why
    and exit code (None: it passed ``deadline`` and was stopped, or never started)."""
    log = folder / RUN_LOG
    with log.open("wb") as output:
        try:
            process = subprocess.Popen(
                command,
                env={**os.environ, PARENT_ENV: str(os.getpid())},  # fleet/watchdog.py
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            return NOT_RUN, f"its run could not start: {error}", None
        _RUNNING.add(process)
        try:
            code = process.wait(timeout=deadline)
        except subprocess.TimeoutExpired:
            _stop_group(process, GRACE_SECONDS)
            why = (
                f"no verdict within the deadline of {deadline:g} s: its run was stopped "
                f"(last said: {_last_word(log)})"
            )
            return TIMED_OUT, why, None
        finally:
            _RUNNING.discard(process)
    _kill_group(process)
    return (*_ended(folder, code, log), code)


def _tell(done: Callable[[BankOutcome], None], ended: Future[BankOutcome]) -> None:
    """Tell ``done`` of a bank's run as it ends (not of one cancelled before it began)."""
    if not ended.cancelled() and ended.exception() is None:
        done(ended.result())


def run_fleet(
    banks: Sequence[Bank],
    options: FleetOptions,
    done: Callable[[BankOutcome], None] = lambda outcome: None,
) -> list[BankOutcome]:
    """Every bank, ``options.jobs`` at a time; ``done`` hears of each as it ends. The outcomes
    come back in the banks' order."""
    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        futures = [pool.submit(run_bank, bank, options) for bank in banks]
        for future in futures:
            future.add_done_callback(partial(_tell, done))
        try:
            return [future.result() for future in futures]
        except BaseException:  # Ctrl-C, SIGTERM: no bank's run outlives the fleet
            for future in futures:
                future.cancel()
            _RUNNING.stop_all()
            raise
