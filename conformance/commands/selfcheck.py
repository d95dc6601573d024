"""``conformance selfcheck``: run the suite against the faithful reference server and each of its
deliberate faults, one child process per run, and print the table :mod:`conformance.selfcheck`
makes.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from conformance.commands import COMMANDS, Subparsers
from conformance.commands.usage import (
    add_list_faults,
    check_faults,
    check_numprocesses,
    check_selection,
    fault_table,
)
from conformance.contract import load_contract
from conformance.errors import ConformanceError
from conformance.generate import generate_scenarios
from conformance.profile import load_profile
from conformance.report import writable_reports
from conformance.report.verdicts import NOT_JUDGED_EXIT
from conformance.selfcheck import (
    FAITHFUL,
    Outcome,
    ScenarioRef,
    compare,
    read_run,
    render_details,
    render_table,
    result_word,
    scenario_refs,
)
from reference_server.faults import FAULTS

__all__ = ["register", "run_command", "run_one", "selfcheck"]

_DESCRIPTION = """\
Run the suite against the bundled reference server, faithful and with each of its deliberate
faults, and check that every fault fails exactly the scenarios it names (and the faithful server
none), each with a message naming the spec part, what was sent, what came back and how to
reproduce it. Exit code 1 on any mismatch. Arguments after -- go to every run's pytest."""

#: The folder of the faithful run under --reports.
_FAITHFUL_DIR = "faithful"
#: How many lines of a failed run's log the table's details quote.
_LOG_TAIL = 8


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "selfcheck",
        help=COMMANDS["selfcheck"],
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME",
        help="check this fault only (repeatable; default: every fault; "
        "python -m reference_server --list-faults)",
    )
    parser.add_argument(
        "--play",
        metavar="PROFILE",
        help="every server plays the bank this profile describes and every run uses it; a "
        "fault's scenarios the profile leaves unjudged (not applicable, waived) are excused",
    )
    parser.add_argument(
        "--skip-faithful",
        action="store_true",
        help="leave out the run on the faithful server",
    )
    parser.add_argument(
        "-n",
        "--numprocesses",
        dest="numprocesses",
        metavar="N",
        default="auto",
        help="pytest-xdist workers of each run (default auto; 0 for one process)",
    )
    parser.add_argument(
        "--reports",
        metavar="DIR",
        default="reports/selfcheck",
        help="where each run's reports go, one folder per server (default: reports/selfcheck)",
    )
    add_list_faults(parser)
    parser.add_argument(
        "pytest_args",
        nargs=argparse.REMAINDER,
        metavar="-- PYTEST_ARGS",
        help="arguments for every run's pytest, after --",
    )
    parser.set_defaults(func=selfcheck)


def _chosen_faults(names: Sequence[str]) -> list[str]:
    return check_faults(names, "selfcheck") if names else list(FAULTS)


def _pytest_args(extra: Sequence[str]) -> list[str]:
    extra = list(extra)
    return extra[1:] if extra[:1] == ["--"] else extra


def strict_for(fault: str | None) -> bool:
    """Whether the self-check runs the server with ``--strict``: the faithful server (0 must
    failures and 0 should findings) and a fault graded should (it breaks only our reading, so
    only ``--strict`` can make its run fail). A must fault runs at default strictness, which
    its run must fail."""
    return fault is None or FAULTS[fault].level == "should"


def run_command(
    fault: str | None,
    reports: Path,
    numprocesses: str,
    pytest_args: Sequence[str],
    play: str | None = None,
) -> list[str]:
    """The ``conformance run`` command line of one self-check run (``--strict`` as
    :func:`strict_for` says)."""
    command = [sys.executable, "-m", "conformance", "run"]
    if strict_for(fault):
        command.append("--strict")
    command += ["--reports", str(reports)]
    command += ["-n", str(numprocesses)]
    if play is not None:
        command += ["--play", play]
    if fault is not None:
        command += ["--fault", fault, *FAULTS[fault].run_options]  # e.g. --tls for a QWAC check
    return [*command, "--", "-q", *pytest_args]


def _log_tail(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return " / ".join(line for line in lines[-_LOG_TAIL:] if line.strip())


def run_one(
    fault: str | None,
    refs: dict[str, ScenarioRef],
    reports: Path,
    numprocesses: str,
    pytest_args: Sequence[str],
    play: str | None = None,
) -> Outcome:
    """Run the suite on the server with ``fault`` (None: faithful) and compare."""
    name = FAITHFUL if fault is None else fault
    if reports.exists():
        shutil.rmtree(reports)
    reports.mkdir(parents=True)
    log = reports / "run.log"
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as output:
        code = subprocess.call(
            run_command(fault, reports, numprocesses, pytest_args, play),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    seconds = time.monotonic() - started
    if code not in (0, 1, NOT_JUDGED_EXIT):  # 3 with a matrix: a run not judged (set-up)
        return Outcome.broken(
            name, f"conformance run exited with {code} ({log}): {_log_tail(log)}", seconds
        )
    try:
        verdicts = read_run(reports)
    except ConformanceError as error:
        return Outcome.broken(name, f"{error.message} ({log})", seconds)
    return compare(
        name,
        None if fault is None else FAULTS[fault],
        refs,
        verdicts,
        seconds=seconds,
        exit_code=code,
        excuse_not_judged=play is not None,
        strict=strict_for(fault),
        first_access=play is not None and load_profile(Path(play)).consent.at_first_access,
    )


def selfcheck(args: argparse.Namespace) -> int:
    """Every chosen server in turn, then the table; 0 when every one matched, else 1."""
    if args.list_faults:
        print(fault_table())
        return 0
    check_numprocesses(args.numprocesses)
    faults = _chosen_faults(args.fault)
    servers: list[str | None] = ([] if args.skip_faithful else [None]) + list(faults)
    reports = writable_reports(Path(args.reports).resolve())
    scenarios = generate_scenarios(load_contract())
    refs = scenario_refs(scenarios)
    extra = _pytest_args(args.pytest_args)
    check_selection(extra, scenarios)
    outcomes: list[Outcome] = []
    started = time.monotonic()
    for position, fault in enumerate(servers, start=1):
        folder = reports / (_FAITHFUL_DIR if fault is None else fault)
        name = FAITHFUL if fault is None else fault
        print(f"selfcheck [{position}/{len(servers)}] {name} ...", end=" ", flush=True)
        play = None if args.play is None else str(Path(args.play).resolve())
        outcome = run_one(fault, refs, folder, args.numprocesses, extra, play)
        outcomes.append(outcome)
        print(
            f"{len(outcome.expected)} expected, {len(outcome.failed)} failed "
            f"({'--strict' if outcome.strict else 'default strictness'}): "
            f"{result_word(outcome)} ({outcome.seconds:.0f} s)",
            flush=True,
        )
    print()
    print(render_table(outcomes))
    details = [text for text in (render_details(outcome) for outcome in outcomes) if text]
    if details:
        print()
        print("\n\n".join(details))
    bad = sum(1 for outcome in outcomes if not outcome.ok)
    unexercised = sum(1 for outcome in outcomes if outcome.ok and outcome.unexercised)
    total = time.monotonic() - started
    print()
    print(
        f"selfcheck: {len(outcomes) - bad - unexercised} of {len(outcomes)} servers as expected"
        + (f", {unexercised} not exercised by this selection" if unexercised else "")
        + f" in {total:.0f} s; reports in {reports}/",
        flush=True,
    )
    return 0 if bad == 0 else 1
