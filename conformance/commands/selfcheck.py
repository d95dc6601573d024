"""``conformance selfcheck``: run the suite against the faithful reference server and each of its
deliberate faults, one child process per run, and print the table :mod:`conformance.selfcheck`
makes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conformance.bankside.trace import TRACE_ENV
from conformance.commands import COMMANDS, Subparsers
from conformance.commands.run import add_play_argument
from conformance.commands.usage import (
    add_list_faults,
    check_faults,
    check_numprocesses,
    check_selection,
    fault_table,
    positive_int,
)
from conformance.contract import load_contract
from conformance.errors import ConformanceError
from conformance.generate import generate_scenarios
from conformance.profile import DEMANDING_PROFILE, load_profile
from conformance.report import writable_reports
from conformance.report.verdicts import NOT_JUDGED_EXIT
from conformance.selfcheck import (
    FAITHFUL,
    Outcome,
    ScenarioRef,
    SwitchReach,
    compare,
    read_reach,
    read_run,
    render_details,
    render_table,
    result_word,
    scenario_refs,
)
from reference_server.cli import add_fault_argument
from reference_server.faults import FAULTS

__all__ = ["fault_selection", "narrowed_run", "register", "run_command", "run_one", "selfcheck"]

_DESCRIPTION = """\
Run the suite against the bundled reference server, faithful and with each of its deliberate
faults, and check that every fault fails exactly the scenarios it names (and the faithful server
none), each with a message naming the spec part, what was sent, what came back and how to
reproduce it. Exit code 1 on any mismatch. Arguments after -- go to every run's pytest.

The faithful run records which fault switches each scenario's requests reached in the server;
each fault then runs on the scenarios it names and those that reached its switch, the only ones
whose answers it can change (--full: every fault on every scenario)."""

#: The folder of the faithful run under --reports.
_FAITHFUL_DIR = "faithful"
#: The folders, under --reports, of the faithful run's switch trace and of each fault's list of
#: the scenarios it runs on.
_TRACE_DIR = "switch-trace"
_SELECTIONS_DIR = "selections"
#: A fault run on fewer scenarios than this runs in one process: xdist's workers cost more to
#: start than they save.
_ONE_PROCESS_BELOW = 300
#: How many lines of a failed run's log the table's details quote.
_LOG_TAIL = 8


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "selfcheck",
        help=COMMANDS["selfcheck"],
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_fault_argument(parser, "check this fault only; by default every fault")
    add_play_argument(
        parser,
        "every server plays the bank this profile describes and every run uses it; a "
        "fault's scenarios the profile leaves unjudged (not applicable, waived) are excused",
    )
    parser.add_argument(
        "--demanding",
        action="store_true",
        help="every server plays the demanding reading (the strictest bank the spec allows: "
        "python -m reference_server --demanding) and every run uses its profile "
        "(profiles/reference-server-demanding.toml); as with --play, a fault's scenarios "
        "that profile leaves unjudged are excused",
    )
    parser.add_argument(
        "--skip-faithful",
        action="store_true",
        help="leave out the run on the faithful server (every fault then runs on every scenario: "
        "the faithful run is what records which scenarios can see a fault)",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="run every fault on every scenario, not only on those that reached its switch in "
        "the faithful run (make selfcheck-full)",
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
        "-j",
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="fault runs side by side (default: one per CPU, %(default)s here)",
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
    *,
    demanding: bool = False,
) -> list[str]:
    """The ``conformance run`` command line of one self-check run (``--strict`` as
    :func:`strict_for` says; ``demanding``: the server plays the demanding reading)."""
    command = [sys.executable, "-m", "conformance", "run"]
    if strict_for(fault):
        command.append("--strict")
    command += ["--reports", str(reports)]
    command += ["-n", str(numprocesses)]
    if demanding:
        command.append("--demanding")
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
    trace: Path | None = None,
    *,
    demanding: bool = False,
    unreached: frozenset[str] = frozenset(),
) -> Outcome:
    """Run the suite on the server with ``fault`` (None: faithful) and compare; with ``trace``,
    the run records its switch trace there (``bankside/trace.py``); ``unreached``: the
    scenarios the fault names that never asked its switch under the played profile."""
    name = FAITHFUL if fault is None else fault
    if reports.exists():
        shutil.rmtree(reports)
    reports.mkdir(parents=True)
    log = reports / "run.log"
    env = dict(os.environ)
    env.pop(TRACE_ENV, None)
    if trace is not None:
        if trace.exists():
            shutil.rmtree(trace)
        env[TRACE_ENV] = str(trace)
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as output:
        code = subprocess.call(
            run_command(fault, reports, numprocesses, pytest_args, play, demanding=demanding),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
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
    played = None if play is None else load_profile(Path(play))
    return compare(
        name,
        None if fault is None else FAULTS[fault],
        refs,
        verdicts,
        seconds=seconds,
        exit_code=code,
        excuse_not_judged=play is not None,
        strict=strict_for(fault),
        first_access=played is not None and played.consent.at_first_access,
        sca_at_creation=played is not None and played.sca.start == "creation",
        unreached=unreached,
    )


def _progress(outcome: Outcome, chosen: str) -> None:
    print(
        f"{len(outcome.expected)} expected, {len(outcome.failed)} failed{chosen} "
        f"({'--strict' if outcome.strict else 'default strictness'}): "
        f"{result_word(outcome)} ({outcome.seconds:.0f} s)",
        flush=True,
    )


def _reach(outcome: Outcome, trace: Path | None) -> SwitchReach | None:
    """What the faithful run's switch trace says, when it can be trusted (the run went as
    expected and wrote one); None: every fault runs on every scenario."""
    if trace is None:
        return None
    if not outcome.ok:
        print("(the faithful run did not go as expected: every fault runs on every scenario)")
        return None
    try:
        return read_reach(trace)
    except ConformanceError as error:
        print(f"({error.message}: every fault runs on every scenario)")
        return None


def fault_selection(
    fault: str, reach: SwitchReach | None, refs: dict[str, ScenarioRef]
) -> frozenset[str] | None:
    """The scenarios ``fault`` runs on: None (every one) without a trace, for a fault whose run
    needs options the faithful run did not have (``--tls``), or whose switch was asked outside
    a scenario; else those it names and those that reached its switch."""
    if reach is None or FAULTS[fault].run_options:
        return None
    return reach.selection(FAULTS[fault], refs.values())


def _unreached(
    fault: str, reach: SwitchReach | None, refs: dict[str, ScenarioRef], play: str | None
) -> frozenset[str]:
    """Under a played bank, the scenarios ``fault`` names whose requests never asked its switch
    in the faithful run (excused: the fault cannot change their answers there); none without a
    trace, without a played bank, or for a fault whose run needs options the faithful run did
    not have (``--tls``: its switch is asked only over mutual TLS)."""
    if reach is None or play is None or FAULTS[fault].run_options:
        return frozenset()
    return reach.unreached(FAULTS[fault], refs.values())


def narrowed_run(
    fault: str,
    selected: frozenset[str] | None,
    reports: Path,
    numprocesses: str,
    pytest_args: Sequence[str],
) -> tuple[str, list[str]]:
    """The processes and pytest arguments of a fault's run on ``selected`` (None: all)."""
    if selected is None:
        return numprocesses, list(pytest_args)
    listing = reports / _SELECTIONS_DIR / f"{fault}.txt"
    listing.parent.mkdir(parents=True, exist_ok=True)
    listing.write_text("".join(f"{i}\n" for i in sorted(selected)), encoding="utf-8")
    if numprocesses == "auto" and len(selected) < _ONE_PROCESS_BELOW:
        numprocesses = "0"
    return numprocesses, [*pytest_args, "--conformance-scenarios", str(listing)]


def selfcheck(args: argparse.Namespace) -> int:
    """Every chosen server in turn, then the table; 0 when every one matched, else 1."""
    if args.list_faults:
        print(fault_table())
        return 0
    check_numprocesses(args.numprocesses)
    faults = _chosen_faults(args.fault)
    reports = writable_reports(Path(args.reports).resolve())
    scenarios = generate_scenarios(load_contract())
    refs = scenario_refs(scenarios)
    extra = _pytest_args(args.pytest_args)
    check_selection(extra, scenarios)
    outcomes: list[Outcome] = []
    started = time.monotonic()
    play = None if args.play is None else str(Path(args.play).resolve())
    if args.demanding and play is None:
        play = str(DEMANDING_PROFILE)
    reach: SwitchReach | None = None
    count = len(faults) + (0 if args.skip_faithful else 1)
    if not args.skip_faithful:
        print(f"selfcheck [1/{count}] {FAITHFUL} ...", end=" ", flush=True)
        trace = None if args.full else reports / _TRACE_DIR
        outcome = run_one(
            None,
            refs,
            reports / _FAITHFUL_DIR,
            args.numprocesses,
            extra,
            play,
            trace,
            demanding=args.demanding,
        )
        _progress(outcome, "")
        outcomes.append(outcome)
        reach = _reach(outcome, trace)
    runs = []
    for fault in faults:
        selected = None if args.full else fault_selection(fault, reach, refs)
        numprocesses, pytest_args = narrowed_run(fault, selected, reports, args.numprocesses, extra)
        chosen = f" on {len(selected)} of {len(refs)} scenarios" if selected is not None else ""
        runs.append(
            (fault, chosen, (fault, refs, reports / fault, numprocesses, pytest_args, play))
        )
    # the fault runs side by side (--jobs): most are a few scenarios in one process, which
    # leaves the other CPUs idle; each is printed in turn as it ends
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [
            (
                fault,
                chosen,
                pool.submit(
                    run_one,
                    *call,
                    demanding=args.demanding,
                    unreached=_unreached(fault, reach, refs, play),
                ),
            )
            for fault, chosen, call in runs
        ]
        for position, (fault, chosen, future) in enumerate(futures, start=count - len(runs) + 1):
            print(f"selfcheck [{position}/{count}] {fault} ...", end=" ", flush=True)
            outcome = future.result()
            _progress(outcome, chosen)
            outcomes.append(outcome)
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
