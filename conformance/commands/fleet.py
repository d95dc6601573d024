"""``conformance fleet``: many banks at once. ``fleet run`` runs each bank's ``conformance run``
in its own process (:mod:`conformance.fleet.run`) and ends with the fleet report; ``fleet
report`` merges the runs it finds under some folders into that report
(:mod:`conformance.fleet.merge`, :mod:`conformance.fleet.render`)."""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from conformance.commands import COMMANDS, Subparsers
from conformance.commands.usage import check_faults, check_numprocesses, positive_int
from conformance.errors import ConformanceError, RunInterrupted
from conformance.fleet.outcome import JUDGED, BankOutcome
from conformance.report import writable_reports
from reference_server.cli import add_fault_argument

__all__ = ["fleet_report", "fleet_run", "register"]

_DESCRIPTION = """\
Many banks at once: the platform's view of one code base serving many banks, each with its own
profile. `fleet run` runs each bank's `conformance run --profile P --reports DIR/<bank>` in its
own process (a few at a time, each under a deadline: one bank's failure, hang or refusal never
stops the others) and ends with `fleet report` over DIR. `fleet report` merges the
compliance.json files it finds under the folders given (a local fleet run, a CI matrix's
artefacts, a Kubernetes job's volume) into one report (fleet.html, fleet.md, fleet.json): the
matrix of causes × banks, each cause platform or bank, and per bank what is new, fixed and
persisting since its previous run. docs/guides/fleet.md has the scale-out templates."""

#: The deadline of one bank's run when none is given: an hour.
DEFAULT_DEADLINE = 3600.0


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "fleet",
        help=COMMANDS["fleet"],
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="fleet_command", required=True, metavar="ACTION")
    _register_run(actions)
    _register_report(actions)


def _register_run(actions: Subparsers) -> None:
    run = actions.add_parser(
        "run",
        help="run every bank's suite, each in its own process, then write the fleet report",
        description="Run each profile's `conformance run` in its own process group, at most "
        "--jobs at once, each stopped at --deadline (then reported as timed out), and write "
        "the fleet report over --reports. Exit 0 when every bank's run ended with exit 0.",
    )
    run.add_argument("profiles", nargs="+", type=Path, metavar="PROFILE", help="bank profiles")
    run.add_argument(
        "--reports",
        type=Path,
        required=True,
        metavar="DIR",
        help="each bank's reports go to DIR/<profile file's stem>/ (with fleet-run.json: how "
        "its run ended); a dated DIR per round keeps the history (fleet report reads them all)",
    )
    run.add_argument(
        "--jobs",
        "-j",
        type=positive_int,
        default=2,
        metavar="N",
        help="banks run at once (default %(default)s); a bank's run is bound by its latency "
        "and rate limit, not by this machine's CPU",
    )
    run.add_argument(
        "--deadline",
        type=_seconds,
        default=DEFAULT_DEADLINE,
        metavar="SECONDS",
        help="a bank's run still going after this is stopped (its whole process group) and "
        "reported as timed out (default %(default)g)",
    )
    run.add_argument(
        "--round",
        metavar="LABEL",
        help="the fleet round the runs belong to in the history (default: the time this fleet "
        "run started); a CI matrix gives every job the same one (its pipeline id)",
    )
    run.add_argument(
        "--index",
        type=int,
        metavar="N",
        help="run only the N-th profile (from 0), e.g. a Kubernetes Indexed Job's "
        "$JOB_COMPLETION_INDEX; no fleet report is written (the merge job writes it)",
    )
    run.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="where the fleet report goes (default: DIR/fleet-report under --reports)",
    )
    run.add_argument(
        "--no-report",
        action="store_true",
        help="leave the fleet report to a later `conformance fleet report` (a CI matrix job)",
    )
    run.add_argument("--smoke", action="store_true", help="every bank's run is a smoke run")
    run.add_argument("--strict", action="store_true", help="every bank's run is --strict")
    run.add_argument(
        "-n",
        "--numprocesses",
        metavar="N",
        help="pytest-xdist workers of each bank's run (default: the run chooses)",
    )
    run.add_argument(
        "--play",
        action="store_true",
        help="each bank is played by its own bundled reference server (conformance run "
        "--play PROFILE): a fleet checked offline",
    )
    add_fault_argument(run, "with --play: a fault of the reference server every bank plays")
    run.add_argument(
        "--bank-fault",
        action="append",
        default=[],
        metavar="BANK:NAME",
        help="with --play: a fault one bank plays, the bank named by its profile file's stem "
        "(repeatable)",
    )
    run.set_defaults(func=fleet_run)


def _register_report(actions: Subparsers) -> None:
    report = actions.add_parser(
        "report",
        help="merge the runs found under some folders into one fleet report",
        description="Find every compliance.json and fleet-run.json under the folders given, "
        "and write fleet.html, fleet.md and fleet.json to --out: causes × banks, each cause "
        "platform or bank, and each bank's history (new, fixed, persisting; a trend).",
    )
    report.add_argument("folders", nargs="+", type=Path, metavar="DIR", help="where runs are")
    report.add_argument(
        "--out",
        type=Path,
        default=Path("fleet-report"),
        metavar="DIR",
        help="where the fleet report goes (default: %(default)s)",
    )
    report.set_defaults(func=fleet_report)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"a number of seconds above 0, not {text!r}")
    return value


def _bank_faults(given: Sequence[str], folders: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """``BANK:NAME`` options by bank folder; an unknown bank or fault is one line."""
    faults: dict[str, tuple[str, ...]] = {}
    for item in given:
        bank, colon, name = item.partition(":")
        if not colon or bank not in folders:
            raise ConformanceError(
                f"--bank-fault takes BANK:NAME, BANK one of {', '.join(folders)}; not {item!r}"
            )
        faults[bank] = (*faults.get(bank, ()), *check_faults([name], "fleet run"))
    return faults


def _existing(profiles: Sequence[Path]) -> list[Path]:
    """The profiles given, each a file; a path that is none, or a pattern the shell passed on
    as it is because it matched nothing (``profiles/banks/*.toml``), is a mistake of the command
    line, said before anything is written."""
    for path in profiles:
        if path.is_file():
            continue
        if any(mark in str(path) for mark in "*?["):
            raise ConformanceError(
                f"{path} matches no profile (the shell passes a pattern that matches nothing "
                "as it is): give the bank profiles' paths"
            )
        what = "is a folder, not a profile" if path.is_dir() else "does not exist"
        raise ConformanceError(f"the profile {path} {what}")
    return list(profiles)


def _chosen(profiles: Sequence[Path], index: int | None) -> list[Path]:
    if index is None:
        return list(profiles)
    if not 0 <= index < len(profiles):
        raise ConformanceError(
            f"--index {index}: there are {len(profiles)} profiles (0 to {len(profiles) - 1})"
        )
    return [profiles[index]]


def _said(outcome: BankOutcome) -> None:
    ending = f"exit {outcome.exit_code}" if outcome.status == JUDGED else outcome.why
    print(
        f"fleet: {outcome.bank}: {outcome.status} ({ending}) in {outcome.seconds:.0f} s",
        flush=True,
    )


def fleet_run(args: argparse.Namespace) -> int:
    """Run the banks, then the report; 0 when every bank's run ended with exit 0, else 1."""
    from conformance.fleet.run import FleetOptions, banks_of, run_fleet

    check_numprocesses(args.numprocesses)
    if (args.fault or args.bank_fault) and not args.play:
        raise ConformanceError("--fault and --bank-fault switch on faults of --play's servers")
    profiles = _existing(args.profiles)
    reports = writable_reports(args.reports.resolve())
    banks = banks_of(_chosen(profiles, args.index))
    run_args = [
        *(["--smoke"] if args.smoke else []),
        *(["--strict"] if args.strict else []),
        *([] if args.numprocesses is None else ["-n", args.numprocesses]),
    ]
    options = FleetOptions(
        reports=reports,
        jobs=args.jobs,
        deadline=args.deadline,
        round=args.round or datetime.now(UTC).isoformat(timespec="seconds"),
        play=args.play,
        faults=tuple(check_faults(args.fault, "fleet run")),
        bank_faults=_bank_faults(args.bank_fault, [bank.folder for bank in banks]),
        run_args=tuple(run_args),
    )
    print(f"fleet: {len(banks)} bank(s), {args.jobs} at once, reports in {reports}/", flush=True)
    started = time.monotonic()
    with _sigterm_interrupts():
        outcomes = run_fleet(banks, options, _said)
    wall = time.monotonic() - started
    print(
        f"fleet: {len(outcomes)} bank(s) in {wall:.0f} s wall time; their runs took "
        f"{sum(outcome.seconds for outcome in outcomes):.0f} s in all",
        flush=True,
    )
    if args.index is None and not args.no_report:
        _report([reports], (args.out or reports / "fleet-report").resolve())
    return 0 if all(outcome.exit_code == 0 for outcome in outcomes) else 1


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (a pod deleted, a CI job cancelled) ends the fleet as Ctrl-C does, so that its
    banks' runs are stopped with it."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise RunInterrupted("SIGTERM")

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _report(folders: Sequence[Path], out: Path) -> None:
    from conformance.fleet.collect import collect_runs
    from conformance.fleet.merge import build_fleet
    from conformance.fleet.render import FLEET_HTML, headline, write_fleet

    fleet = build_fleet(collect_runs(folders), out)
    write_fleet(out, fleet)
    print(f"fleet: {headline(fleet)}", flush=True)
    print(f"fleet: report in {out / FLEET_HTML}", flush=True)


def fleet_report(args: argparse.Namespace) -> int:
    """Merge the runs under the folders into the fleet report."""
    _report(args.folders, writable_reports(args.out.resolve()))
    return 0
