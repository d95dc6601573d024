"""``conformance run``: start the bundled reference server unless a target is given, check the
target, run the suite through ``pytest.main`` and return pytest's exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import os
import shlex
import signal
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from conformance.bankside.bundled import (
    BundledIdentity,
    BundledTls,
    ReplayServer,
    ServerWatch,
    bundled_reference_server,
    identity_folder,
    tls_trust_anchor_arguments,
    trust_anchor_arguments,
    write_run_identity,
    write_tls_identity,
)
from conformance.bankside.concurrency import Concurrency, choose_concurrency, is_loopback
from conformance.bankside.preflight import PreflightDone, certificate_warnings, preflight
from conformance.commands import COMMANDS, Subparsers
from conformance.commands.usage import (
    add_list_faults,
    check_faults,
    check_numprocesses,
    check_selection,
    fault_table,
    selection_options,
)
from conformance.errors import ConformanceError, RunInterrupted, exit_codes_text
from conformance.exchange import replay_program
from conformance.report import writable_reports
from conformance.report.replays import Rerun
from conformance.run_options import RUN, RUN_OPTIONS, TARGET, TLS
from conformance.scenario import DEFAULT_SEED, run_seed
from conformance.suite import SUITE_DIR
from reference_server.cli import add_fault_argument, add_reading_arguments

if TYPE_CHECKING:
    from conformance.evidence.sealing import SealKey
    from conformance.profile import TargetProfile

__all__ = [
    "add_arguments",
    "add_play_argument",
    "add_target_arguments",
    "add_tls_arguments",
    "check_command_line",
    "pytest_arguments",
    "register",
    "run",
]

#: Installed pytest plugins the suite does not use, switched off for its runs (``-p no:NAME``):
#: Faker's (an autouse session fixture in every item's closure) and anyio's (per-test hooks).
_UNUSED_PLUGINS = ("-p", "no:faker", "-p", "no:anyio")

_DESCRIPTION = """\
Run the conformance suite and write the reports. Without --target (and --profile) the bundled
reference server is started on a free port and the suite runs against it. Arguments after --
go to pytest as they are, e.g. `conformance run -- -k E12 -n 0` or `-- -m "E16 and must"`.
The exit code says what happened (the table below, also the README's)."""


# --- the command --------------------------------------------------------------------------------


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help=COMMANDS["run"],
        description=_DESCRIPTION,
        epilog=exit_codes_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The run's options: the settings it shares with the pytest plugin
    (:mod:`conformance.run_options`), the bundled server's own, ``-n`` and the pytest
    arguments."""
    add_target_arguments(parser)
    add_tls_arguments(parser)
    parser.add_argument(
        "--tls",
        action="store_true",
        help="bundled reference server only: serve HTTPS and require a TLS client certificate "
        "(mutual TLS, as a bank's test environment does); the run shows a QWAC-style "
        "certificate made for it",
    )
    add_play_argument(
        parser,
        "bundled reference server only: it plays the bank this profile describes "
        "(python -m reference_server --profile), and the suite runs with that profile: a "
        "profile checked offline, faults included",
    )
    add_reading_arguments(parser, bundled=True)
    parser.add_argument(
        "-n",
        "--numprocesses",
        dest="numprocesses",
        metavar="N",
        default=None,
        help="pytest-xdist workers: a number, 'auto' (one per CPU) or 0 for one process; by "
        "default one per CPU (fewer under the profile's rate_limit)",
    )
    for option in RUN.values():
        changes = {"type": _threads} if option.name == "threads" else {}
        parser.add_argument(option.flag, **option.keywords(**changes))
    add_fault_argument(
        parser, "bundled reference server only: switch on one of its deliberate faults"
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="print pytest's failure block of every failed scenario (its whole exchange) before "
        "the causes, as `-- --tb=long` does; by default the terminal gives the causes, then one "
        "line per failed scenario, and the reports keep every exchange",
    )
    add_list_faults(parser)
    add_seal_arguments(parser)
    parser.add_argument(
        "--last-failed",
        action="store_true",
        help="run again only the scenarios that failed or erred in the previous run (its "
        "compliance.json in --reports; with --strict, those with should findings too), into the "
        "same reports folder: a partial run, never eligible for certification",
    )
    parser.add_argument(
        "pytest_args",
        nargs=argparse.REMAINDER,
        metavar="-- PYTEST_ARGS",
        help="arguments for pytest, after --",
    )


def add_seal_arguments(parser: argparse.ArgumentParser) -> None:
    """``--seal``, ``--seal-key``, ``--seal-previous``, ``--tsa``: the sealed record of the run."""
    parser.add_argument(
        "--seal",
        metavar="CERT",
        help="write the sealed record of the run to <reports>/evidence/ (compliance.json, every "
        "exchange masked, the profile, the verdicts, the digests), sealed by a detached JWS "
        "with this certificate chain (PEM, the sealing certificate first); needs --seal-key; "
        "conformance verify checks it",
    )
    parser.add_argument("--seal-key", metavar="KEY", help="private key of --seal (PEM)")
    parser.add_argument(
        "--seal-previous",
        metavar="DIR",
        help="the bank's previous sealed record, whose digest the new one names (default: the "
        "record already in <reports>/evidence/, which is moved to evidence-<digest>/)",
    )
    parser.add_argument(
        "--tsa",
        metavar="URL",
        help="a time-stamping authority (RFC 3161, HTTP POST): its token over the seal is kept "
        "as evidence/timestamp.tsr, and conformance verify --tsa-trust validates the seal's "
        "chain at the token's time instead of the time of verification; needs --seal",
    )


def check_command_line(args: argparse.Namespace, command: str) -> None:
    """The mistakes that would otherwise reach pytest or the server, as one line each before
    anything runs: ``-n``, the fault names, a ``-m``/``-k`` that pytest cannot read, names an
    unknown marker, or selects nothing (:mod:`conformance.commands.usage`)."""
    check_numprocesses(args.numprocesses)
    args.fault = check_faults(args.fault, command)
    if getattr(args, "baseline", None) is not None:
        # on use: a baseline is read only when one is given
        from conformance.report.baseline import load_baseline

        load_baseline(Path(args.baseline))  # a mistake in it said before anything runs
    if any(True for _ in selection_options(args.pytest_args)):
        # on use: the scenarios are generated only when a selection is to be checked
        from conformance.contract import load_contract
        from conformance.generate import generate_scenarios

        check_selection(args.pytest_args, generate_scenarios(load_contract()))


def add_target_arguments(parser: argparse.ArgumentParser, *names: str, **helps: str) -> None:
    """The target's options (``--target``, ``--profile``, ``--cert``, ``--key``), each declared
    once in :data:`conformance.run_options.TARGET`, for ``run``, ``call`` and ``discover``:
    those ``names`` (all when none is given); ``helps`` words one for a command's use of it
    (``profile=...``), its flag, metavar and default unchanged."""
    for name in names or tuple(TARGET):
        option = TARGET[name]
        changes = {"help": helps[name]} if name in helps else {}
        parser.add_argument(option.flag, **option.keywords(**changes))


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """``--tls-cert``, ``--tls-key``, ``--tls-ca`` (``run``, ``call`` and ``discover``)."""
    for option in TLS.values():
        parser.add_argument(option.flag, **option.keywords())


def add_play_argument(parser: argparse.ArgumentParser, purpose: str) -> None:
    """``--play PROFILE``: the bundled reference server plays the bank a profile describes
    (``run``, ``selfcheck``); ``purpose`` says what else it does there. ``fleet run --play``
    is a switch (each bank plays its own profile), not this option."""
    parser.add_argument("--play", metavar="PROFILE", help=purpose)


def _threads(text: str) -> int:
    """``--threads``: a whole number from 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"--threads takes a whole number from 1, not {text!r}")
    return value


#: The pytest plugin's flag of each setting the command passes on (``strict``:
#: ``--conformance-strict``).
_PLUGIN_FLAG = {name: option.plugin_flag for name, option in RUN_OPTIONS.items()}

#: Probes the preflight sends to every target: the first is discarded (a cold start), the others'
#: fastest and median choose the concurrency (``conformance.bankside.concurrency``). More, up to
#: PREFLIGHT_MOST, until PREFLIGHT_BUDGET seconds have passed since the first: a target on this
#: machine is timed 21 times in a few milliseconds, one 300 ms away six times.
PREFLIGHT_SAMPLES = 6
PREFLIGHT_MOST = 21
PREFLIGHT_BUDGET = 0.25


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def pytest_arguments(
    *,
    target: str | None,
    profile: str | None,
    cert: str | None,
    key: str | None,
    seed: int,
    tls: dict[str, str | None] | None = None,
    strict: bool,
    reports: Path,
    numprocesses: str | None,
    threads: int = 1,
    smoke: bool = False,
    cleanup: bool = False,
    trust_anchor: BundledIdentity | None = None,
    tls_trust_anchor: BundledTls | None = None,
    server_pid: int | None = None,
    evidence: bool = False,
    baseline: str | None = None,
    scenarios: Path | None = None,
    traffic: bool = False,
    verbose: bool = False,
    extra: Sequence[str] = (),
) -> list[str]:
    """The pytest command line of a run (the user's ``extra`` last, so that theirs win: a
    ``--tb`` or ``-r`` there brings pytest's failure blocks or short summary back)."""
    # Verdicts come with their own messages, so pytest's assertion rewriting is not needed (and
    # the modules this process imported before pytest.main could not be rewritten anyway: a
    # warning); the cache would land in the installed package. The pytest plugins that Faker
    # and anyio (a dependency of httpx) install are not used by the suite, yet every process
    # would import them and every scenario item would pass through their fixtures and hooks.
    args = [str(SUITE_DIR), "-p", "conformance.plugin", "-p", "no:cacheprovider"]
    args += [*_UNUSED_PLUGINS, "--assert=plain"]
    args += _target_arguments(target, profile, cert, key, tls)
    if trust_anchor is not None:
        args += trust_anchor_arguments(trust_anchor)
    if tls_trust_anchor is not None:
        args += tls_trust_anchor_arguments(tls_trust_anchor)
    args += [_PLUGIN_FLAG["seed"], str(seed), _PLUGIN_FLAG["reports"], str(reports)]
    if strict:
        args.append(_PLUGIN_FLAG["strict"])
    if cleanup:
        args.append(_PLUGIN_FLAG["cleanup"])
    args += _report_arguments(reports)
    if numprocesses is not None and _has("xdist"):
        args += ["-n", str(numprocesses)]
    if threads != 1:
        args += [_PLUGIN_FLAG["threads"], str(threads)]
    if smoke:
        args.append(_PLUGIN_FLAG["smoke"])
    if server_pid is not None:  # the bundled server: every process stops when it is gone
        args += ["--conformance-server-pid", str(server_pid)]
    args += ["--conformance-evidence"] if evidence else []  # --seal: every exchange kept
    args += [_PLUGIN_FLAG["baseline"], baseline] if baseline else []
    args += ["--conformance-scenarios", str(scenarios)] if scenarios else []
    args += [_PLUGIN_FLAG["traffic"]] if traffic else []
    # The terminal stays readable: the causes, then one line per failed scenario (the plugin's
    # list), not pytest's failure block of each (hundreds of thousands of lines for one bug).
    args += [] if verbose else ["--tb=no", "-rN", "--conformance-brief"]
    extra = list(extra)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    return args + extra


def _target_arguments(
    target: str | None,
    profile: str | None,
    cert: str | None,
    key: str | None,
    tls: dict[str, str | None] | None,
) -> list[str]:
    """The target, the profile and the identity's files, each given one."""
    args: list[str] = []
    for name, value in (
        ("target", target),
        ("profile", profile),
        ("cert", cert),
        ("key", key),
        *((name.replace("_", "-"), value) for name, value in (tls or {}).items()),
    ):
        if value is not None:
            args += [_PLUGIN_FLAG[name], value]
    return args


def _report_arguments(reports: Path) -> list[str]:
    """Where pytest's own reports go: JUnit, and Allure's results when allure-pytest is
    installed."""
    args = ["--junitxml", str(reports / "junit.xml")]
    if _has("allure_pytest"):
        args += ["--alluredir", str(reports / "allure-results"), "--clean-alluredir"]
    return args


def _absolute(path: str | None) -> str | None:
    """A path from the command line made absolute: xdist workers may start elsewhere."""
    return None if path is None else str(Path(path).expanduser().resolve())


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM ends a run like Ctrl-C does, so that the bundled server is stopped too (the
    plugin has its own handler while pytest runs: :mod:`conformance.plugin.interruption`)."""
    raise RunInterrupted("SIGTERM")


@contextlib.contextmanager
def _token_endpoint_of(server: str, played: str) -> Iterator[None]:
    """While ``--play`` runs: a profile's token endpoint on another host (an absolute
    ``[oauth] token_url``) is the bundled server's, at the same path (it serves its token
    endpoint there), through ``CONFORMANCE_TOKEN_URL`` so that the xdist workers see it too."""
    # on use: `conformance run --help` answers without importing the profile loader
    from conformance.profile import ENV_TOKEN_URL, load_profile

    settings = load_profile(played).oauth
    if settings is None or not urlsplit(settings.token_url).scheme:
        yield
        return
    previous = os.environ.get(ENV_TOKEN_URL)
    os.environ[ENV_TOKEN_URL] = server + urlsplit(settings.token_url).path
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(ENV_TOKEN_URL, None)
        else:
            os.environ[ENV_TOKEN_URL] = previous


def _concurrency(
    args: argparse.Namespace, chosen: Concurrency, *, manual_sca: bool, smoke: bool = False
) -> Concurrency:
    """The harness's choice with the user's ``-n`` and ``--threads`` over it; one scenario at a
    time when a person completes the SCA redirects (``[sca] mode = "manual"``); one process
    for a smoke run (starting workers would cost more than its few scenarios)."""
    workers, threads, reason = chosen.workers, chosen.threads, chosen.reason
    if smoke:
        workers, reason = 0, f"{reason}; a smoke run: one process"
    if not _has("xdist"):
        workers, reason = 0, f"{reason}; pytest-xdist is not installed"
    given = args.numprocesses or _given_to_pytest(args.pytest_args)
    if given is not None:
        workers = _cpus() if given in ("auto", "logical") else _whole(given, workers)
        reason = f"{reason}; workers from -n {given}"
    if args.threads is not None:
        threads, reason = args.threads, f"{reason}; scenarios in flight from --threads"
    if manual_sca and threads != 1:
        threads, reason = 1, f"{reason}; one at a time: a person completes each SCA"
    if given is None and args.threads is None:
        reason = f"{reason}; -n and --threads override"
    return Concurrency(workers, threads, reason)


def _given_to_pytest(extra: Sequence[str]) -> str | None:
    """The ``-n`` given among the pytest arguments (after ``--``; the last one wins there)."""
    found: str | None = None
    for index, arg in enumerate(extra):
        if arg in ("-n", "--numprocesses") and index + 1 < len(extra):
            found = extra[index + 1]
        elif arg.startswith("--numprocesses="):
            found = arg.partition("=")[2]
        elif arg.startswith("-n") and len(arg) > 2 and not arg.startswith("--"):
            found = arg[2:]
    return found


def _cpus() -> int:
    return os.cpu_count() or 1


def _whole(text: str, default: int) -> int:
    try:
        return int(text)
    except ValueError:  # pytest-xdist says what is wrong with it
        return default


def run(args: argparse.Namespace) -> int:
    """Check the target, start the bundled server if needed, run pytest, return its exit code."""
    # on use: `conformance run --help` answers without importing pytest and the contract
    import pytest

    from conformance.fleet.watchdog import watch_parent
    from conformance.profile import ENV_PROFILE, ENV_TARGET, profile_from_options

    watch_parent()  # a bank's run of a fleet stops once its runner is gone (kill -9)
    if args.list_faults:
        print(fault_table())
        return 0
    check_command_line(args, "run")
    bundled = (
        args.target is None
        and args.profile is None
        and not os.environ.get(ENV_TARGET)
        and not os.environ.get(ENV_PROFILE)
    )
    seed = run_seed(args.seed, bundled=bundled)
    reports = writable_reports(Path(args.reports).resolve())
    _check_bundled_only(args, bundled)
    rerun = _last_failed(args, reports)
    if args.last_failed and rerun is None:
        print(f"conformance: no scenario failed or erred in the run of {reports}: none to run")
        return 0
    sealing = _Sealing.of(args, reports)
    _move_aside(reports, sealing)
    previous = signal.getsignal(signal.SIGTERM)
    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        with contextlib.ExitStack() as stack:
            setup = _RunSetup(
                target=args.target,
                profile_path=_absolute(args.profile),
                cert=_absolute(args.cert),
                key=_absolute(args.key),
                tls={
                    name: _absolute(getattr(args, name))
                    for name in ("tls_cert", "tls_key", "tls_ca")
                },
            )
            if bundled:
                _start_bundled(args, stack, reports, setup)
            tls = setup.tls
            profile = profile_from_options(
                target=setup.target,
                cert=setup.cert,
                key=setup.key,
                profile=setup.profile_path,
                tls_cert=tls["tls_cert"],
                tls_key=tls["tls_key"],
                tls_ca=tls["tls_ca"],
            )
            concurrency = _chosen_concurrency(args, profile, bundled=bundled)
            numprocesses = args.numprocesses
            if numprocesses is None and _has("xdist"):
                numprocesses = concurrency.numprocesses
            pytest_args = pytest_arguments(
                target=setup.target,
                profile=setup.profile_path,
                cert=setup.cert,
                key=setup.key,
                seed=seed,
                tls=tls,
                strict=args.strict,
                reports=reports,
                numprocesses=numprocesses,
                threads=concurrency.threads,
                smoke=args.smoke,
                cleanup=args.cleanup,
                trust_anchor=setup.identity,
                tls_trust_anchor=setup.bundled_tls,
                server_pid=None if setup.watch is None else setup.watch.pid,
                evidence=sealing is not None,
                baseline=_absolute(args.baseline),
                scenarios=rerun,
                traffic=args.traffic,
                verbose=args.verbose,
                extra=args.pytest_args,
            )
            checked = PreflightDone.naming(
                target=setup.target,
                profile=setup.profile_path,
                cert=setup.cert,
                key=setup.key,
                **tls,
            )
            # The plugin ends the output: where the reports are, then the verdict (the last
            # line); nothing is printed after it, and nothing at all of reports not written.
            plugins: list[object] = [checked, Rerun(_rerun_command(args, bundled, seed, reports))]
            plugins += [plugin for plugin in (setup.replay, setup.watch) if plugin is not None]
            code = int(pytest.main(pytest_args, plugins=plugins))
            if sealing is not None:
                sealing.finish(reports, setup.profile_path)
            return code
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


def _check_bundled_only(args: argparse.Namespace, bundled: bool) -> None:
    """The options that start or shape the bundled reference server are refused with a target."""
    if bundled:
        return
    if args.fault:
        raise ConformanceError("--fault switches on faults of the bundled reference server only")
    if args.play:
        raise ConformanceError(
            "--play starts the bundled reference server as that profile's bank; for a target "
            "give --profile"
        )
    if args.permissive:
        raise ConformanceError(
            "--permissive starts the bundled reference server playing the permissive reading; "
            "for a target, start it with `conformance serve --permissive` and give --target"
        )
    if args.demanding:
        raise ConformanceError(
            "--demanding starts the bundled reference server playing the demanding reading; "
            "for a target, start it with `conformance serve --demanding` and give --target"
        )
    if args.tls:
        raise ConformanceError(
            "--tls serves the bundled reference server over mutual TLS; for a target give "
            "--tls-cert (and the profile's ca_certificate or --tls-ca)"
        )


def _last_failed(args: argparse.Namespace, reports: Path) -> Path | None:
    """``--last-failed``: the list of the previous run's failed scenarios (None: none, or not
    asked)."""
    if not args.last_failed:
        return None
    # on use: only --last-failed reads the previous run
    from conformance.report.last_failed import last_failed, write_last_failed

    failed = last_failed(reports, strict=args.strict)
    if not failed:
        return None
    print(
        f"conformance: running again the {len(failed)} scenario(s) that failed or erred in the "
        f"previous run (listed in {reports}/last-failed.txt)",
        flush=True,
    )
    return write_last_failed(reports, failed)


def _move_aside(reports: Path, sealing: _Sealing | None) -> None:
    """What an older run left in the reports folder (its sealed record, its traffic) is moved
    aside, so that the folder's record matches its run; a sealed run still follows the newest
    record there, unless --seal-previous names another (``evidence/stale.py``)."""
    from conformance.evidence.stale import latest_record, move_aside

    for line in move_aside(reports):
        print(f"conformance: {line}", flush=True)
    if sealing is not None and sealing.previous is None:
        sealing.previous = latest_record(reports)


@dataclasses.dataclass
class _Sealing:
    """``--seal``: the key (read before the run, so that a wrong one costs no run), the record
    the new one follows, and when the run started."""

    key: SealKey
    previous: Path | None
    started: datetime
    tsa: str | None = None

    @classmethod
    def of(cls, args: argparse.Namespace, reports: Path) -> _Sealing | None:
        if args.seal is None and args.seal_key is None:
            if args.tsa is not None:
                raise ConformanceError("--tsa time-stamps a seal: it needs --seal and --seal-key")
            return None
        if args.seal is None or args.seal_key is None:
            raise ConformanceError("--seal and --seal-key go together")
        # on use: only a sealed run reads keys and loads the traffic judge
        from conformance.evidence.record import clear_recording
        from conformance.evidence.sealing import load_seal_key

        key = load_seal_key(Path(args.seal), Path(args.seal_key))
        clear_recording(reports)
        named = None if args.seal_previous is None else Path(args.seal_previous)
        return cls(key, named, datetime.now(UTC), args.tsa)

    def finish(self, reports: Path, profile: str | None) -> None:
        """Seal the run's record and say where it is."""
        from conformance.evidence.record import seal_record

        record = seal_record(
            reports,
            self.key,
            profile=None if profile is None else Path(profile),
            previous=self.previous,
            started=self.started,
            tsa=self.tsa,
        )
        if record.moved is not None:
            print(f"conformance: the previous sealed record is kept in {record.moved}", flush=True)
        follows = f"follows {record.previous}" if record.previous else "the first of its series"
        if self.tsa is not None:
            follows += f"; time-stamped by {self.tsa}"
        print(
            f"conformance: sealed record {record.digest} in {reports / 'evidence'}/ ({follows}); "
            f"check it with `conformance verify {reports / 'evidence'} --trust CA.pem` (the CA "
            "of the seal's certificate)",
            flush=True,
        )


@dataclasses.dataclass
class _RunSetup:
    """What the run talks to and signs with: the target, the profile, the signing and TLS files
    (absolute paths); for a bundled run also the identities made for it and the server its
    replays need."""

    target: str | None
    profile_path: str | None
    cert: str | None
    key: str | None
    tls: dict[str, str | None]
    identity: BundledIdentity | None = None
    bundled_tls: BundledTls | None = None
    replay: ReplayServer | None = None
    watch: ServerWatch | None = None


def _start_bundled(
    args: argparse.Namespace, stack: contextlib.ExitStack, reports: Path, setup: _RunSetup
) -> None:
    """Start the bundled reference server for the run (stopped when ``stack`` closes), with the
    run's identities, and point ``setup`` at it."""
    # on use: `conformance run --help` answers without importing the profile loader
    from conformance.profile import DEMANDING_PROFILE, PERMISSIVE_PROFILE, REFERENCE_PROFILE

    # --permissive and --demanding are shorthands for --play their profile; with --play another
    # profile the server plays their readings on top of it (they go to it as flags).
    reading = (
        DEMANDING_PROFILE if args.demanding else PERMISSIVE_PROFILE if args.permissive else None
    )
    played = _absolute(args.play) or (None if reading is None else str(reading))
    setup.profile_path = played or str(REFERENCE_PROFILE)
    # The run's identities stay with its reports (reports/identity/, git-ignored): the replay
    # commands in the reports name them.
    folder = identity_folder(reports)
    identity: BundledIdentity | None = None
    if setup.cert is None:
        identity = write_run_identity(folder)
        setup.cert, setup.key = str(identity.certificate), str(identity.key)
    bundled_tls: BundledTls | None = None
    if args.tls:
        bundled_tls = write_tls_identity(folder / "tls")
        tls = setup.tls
        setup.tls = {
            "tls_cert": tls["tls_cert"] or str(bundled_tls.client_certificate),
            "tls_key": tls["tls_key"] if tls["tls_cert"] else str(bundled_tls.client_key),
            "tls_ca": tls["tls_ca"] or str(bundled_tls.server_ca),
        }
    setup.watch = ServerWatch()
    target = stack.enter_context(
        bundled_reference_server(
            watch=setup.watch,
            faults=args.fault,
            trust=None if identity is None else identity.trusted,
            crl=None if identity is None else identity.crl,
            log_path=reports / "reference-server.log",
            tls=bundled_tls,
            server_args=(
                *(() if played is None else ("--profile", played)),
                *(("--permissive",) if args.permissive else ()),
                *(("--demanding",) if args.demanding else ()),
            ),
        )
    )
    print(f"conformance: bundled reference server started at {target}", flush=True)
    setup.target, setup.identity, setup.bundled_tls = target, identity, bundled_tls
    setup.replay = ReplayServer(
        url=target,
        trust=() if identity is None else identity.trusted,
        faults=tuple(args.fault),
        profile=None if played is None else Path(played),
        tls=bundled_tls,
    )
    if played is not None:
        stack.enter_context(_token_endpoint_of(target, played))


def _rerun_command(args: argparse.Namespace, bundled: bool, seed: int, reports: Path) -> str:
    """``conformance run`` with what makes this run's target again (its faults and played
    profile, or the bank's target, profile and identity, as given): a flow's replay, whose
    reports go to ``rerun/`` in this run's (this run's stay). A bank target gets a fresh seed
    (the first run's data exists there); the bundled one the same."""
    words = ["run", "--reports", str(Rerun.folder(reports))]
    if bundled:
        words += [word for fault in args.fault for word in ("--fault", fault)]
        words += ["--play", args.play] if args.play else []
        words += [
            flag
            for flag in ("--permissive", "--demanding", "--tls")
            if getattr(args, flag.removeprefix("--"), False)
        ]
        words += ["--seed", str(seed)] if seed != DEFAULT_SEED else []
    for name in ("target", "profile", "cert", "key", "tls_cert", "tls_key", "tls_ca"):
        value = getattr(args, name, None)
        if value is not None:
            words += [f"--{name.replace('_', '-')}", str(value)]
    return f"{replay_program()} {shlex.join(words)}"


def _chosen_concurrency(
    args: argparse.Namespace, profile: TargetProfile, *, bundled: bool
) -> Concurrency:
    """The preflight (its answer times, the certificates' warnings), then the workers and the
    scenarios in flight for the target's measured answer time, printed in one line."""
    samples = preflight(profile, PREFLIGHT_SAMPLES, budget=PREFLIGHT_BUDGET, most=PREFLIGHT_MOST)
    for warning in certificate_warnings(profile):
        print(f"conformance: warning: {warning}", flush=True)
    if bundled:
        where = "the bundled server"
    elif is_loopback(profile.base_url):
        where = "the target (a loopback address)"
    else:
        where = "the target"
    concurrency = _concurrency(
        args,
        choose_concurrency(
            samples=samples,
            where=where,
            rate_limit=profile.connection.rate_limit,
        ),
        manual_sca=profile.sca.mode == "manual",
        smoke=args.smoke,
    )
    print(concurrency.line(), flush=True)
    return concurrency
