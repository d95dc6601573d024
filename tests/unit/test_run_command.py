"""``conformance run`` (conformance.commands.run): arguments, checks before pytest, the bundled
server, and one end-to-end run against the reference server that writes every report."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.latency_proxy import latency_proxy
from conformance.bankside.bundled import bundled_reference_server, write_run_identity
from conformance.bankside.preflight import PreflightDone
from conformance.commands import run as run_command
from conformance.commands.run import pytest_arguments
from conformance.contract import load_contract
from conformance.errors import ConformanceError, ProfileError, TargetError
from conformance.exchange import replay_program
from conformance.report import writable_reports
from conformance.report.replays import Rerun
from conformance.scenario import DEFAULT_SEED, parse_seed, run_seed
from conformance.signing import load_ca
from conformance.suite import SUITE_DIR
from reference_server.app import Application
from reference_server.transport.http import start

ROOT = Path(__file__).resolve().parents[2]

#: Runs ``conformance run`` through the command's own ``register`` (as conformance.cli does).
# Ctrl-C interrupts the run as in a terminal, even when the tests themselves were started where
# SIGINT is ignored (a background job of a shell without job control), which a child inherits.
DRIVER = """
import argparse, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from conformance.commands import run
from conformance.errors import ConformanceError
parser = argparse.ArgumentParser(prog="conformance")
run.register(parser.add_subparsers(dest="command", required=True))
args = parser.parse_args(sys.argv[1:])
try:
    sys.exit(args.func(args))
except ConformanceError as error:
    print(f"conformance: {error.message}", file=sys.stderr)
    sys.exit(error.exit_code)
"""


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="conformance")
    run_command.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["run", *argv])


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def refuses(url: str) -> bool:
    try:
        httpx.get(url, timeout=2.0)
    except httpx.ConnectError:
        return True
    return False


# --- arguments -----------------------------------------------------------------------------------


def test_the_command_registers_with_its_defaults() -> None:
    args = parse("--", "-k", "E12", "-n", "0")
    assert args.func is run_command.run
    assert args.pytest_args == ["--", "-k", "E12", "-n", "0"]
    assert args.reports == "reports"
    assert args.seed is None and args.strict is False
    assert args.numprocesses is None  # chosen after the preflight (bankside.concurrency)


def test_pytest_arguments_name_the_suite_the_reports_and_keep_the_users_last(
    tmp_path: Path,
) -> None:
    args = pytest_arguments(
        target="https://bank.example",
        profile="/p/bank.toml",
        cert=None,
        key=None,
        seed=7,
        strict=True,
        reports=tmp_path,
        numprocesses="auto",
        extra=["--", "-k", "E12", "-n", "0"],
    )
    assert args[0] == str(SUITE_DIR)
    assert args[args.index("-p") + 1] == "conformance.plugin"
    assert args[args.index("--target") + 1] == "https://bank.example"
    assert args[args.index("--profile") + 1] == "/p/bank.toml"
    assert "--cert" not in args
    assert args[args.index("--seed") + 1] == "7"
    assert "--conformance-strict" in args
    assert args[args.index("--junitxml") + 1] == str(tmp_path / "junit.xml")
    assert args[args.index("--alluredir") + 1] == str(tmp_path / "allure-results")
    assert args[args.index("--reports") + 1] == str(tmp_path)
    assert args[-4:] == ["-k", "E12", "-n", "0"]  # after our "-n auto": the user's wins
    assert args.index("auto") < len(args) - 4
    # the terminal stays readable: the causes and one line per failed scenario, no pytest
    # failure blocks (a --tb of the user's, after ours, brings them back), unless --verbose
    assert {"--tb=no", "-rN", "--conformance-brief"} <= set(args)
    verbose = pytest_arguments(
        target=None, profile=None, cert=None, key=None, seed=7, strict=False, reports=tmp_path,
        numprocesses=None, verbose=True, extra=["--", "--tb=long"],
    )  # fmt: skip
    assert not {"--tb=no", "-rN", "--conformance-brief"} & set(verbose)
    assert verbose[-1] == "--tb=long"


def test_the_run_identity_has_a_second_ca_named_outside_ascii(tmp_path: Path) -> None:
    """The bundled server trusts both CAs; the suite gets both, with their keys (spec 5 item 3)."""
    identity = write_run_identity(tmp_path)
    utf8 = load_ca(identity.utf8_ca_certificate, identity.utf8_ca_key)
    assert not utf8.certificate.subject.rfc4514_string().isascii()
    main = load_ca(identity.ca_certificate, identity.ca_key)
    assert main.certificate.subject != utf8.certificate.subject
    assert identity.trusted == (identity.ca_certificate, identity.utf8_ca_certificate)
    args = pytest_arguments(
        target=None,
        profile=None,
        cert=None,
        key=None,
        seed=0,
        strict=False,
        reports=tmp_path,
        numprocesses=None,
        trust_anchor=identity,
    )
    assert args[args.index("--trust-anchor") + 1] == str(identity.ca_certificate)
    assert args[args.index("--trust-anchor-utf8") + 1] == str(identity.utf8_ca_certificate)
    assert args[args.index("--trust-anchor-utf8-key") + 1] == str(identity.utf8_ca_key)


def test_the_seed_of_a_run_is_fixed_for_the_bundled_server_and_random_for_a_target() -> None:
    assert run_seed(None, bundled=True) == DEFAULT_SEED
    drawn = {run_seed(None, bundled=False) for _ in range(5)}
    assert len(drawn) > 1
    assert run_seed("42", bundled=False) == run_seed(42, bundled=True) == 42


def test_the_seed() -> None:
    assert parse_seed(None) == DEFAULT_SEED == 20260129
    assert parse_seed("42") == 42
    assert parse_seed(7) == 7
    drawn = {parse_seed("random") for _ in range(5)}
    assert len(drawn) > 1
    for bad in ("abc", "-1", "1.5"):
        with pytest.raises(ConformanceError, match="--seed"):
            parse_seed(bad)


# --- checks before pytest ------------------------------------------------------------------------


@pytest.fixture
def no_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(args: list[str]) -> int:
        raise AssertionError(f"pytest.main must not be called: {args}")

    monkeypatch.setattr(pytest, "main", fail)


@pytest.mark.usefixtures("no_pytest")
def test_an_unreachable_target_stops_before_pytest(tmp_path: Path) -> None:
    port = closed_port()
    args = parse("--target", f"http://127.0.0.1:{port}", "--reports", str(tmp_path))
    with pytest.raises(TargetError, match=f"http://127.0.0.1:{port}/ refused"):
        run_command.run(args)


@pytest.mark.usefixtures("no_pytest")
def test_a_bad_profile_stops_before_pytest(tmp_path: Path) -> None:
    profile = tmp_path / "bank.toml"
    profile.write_text('base_url = "ftp://bank"\n', encoding="utf-8")
    with pytest.raises(ProfileError, match="base_url must be an http"):
        run_command.run(parse("--profile", str(profile), "--reports", str(tmp_path)))


@pytest.mark.usefixtures("no_pytest")
def test_a_missing_certificate_stops_before_pytest(tmp_path: Path) -> None:
    args = parse("--target", "http://127.0.0.1:9", "--cert", str(tmp_path / "none.pem"))
    with pytest.raises(ConformanceError, match=r"none\.pem"):
        run_command.run(args)


@pytest.mark.usefixtures("no_pytest")
def test_faults_need_the_bundled_server() -> None:
    with pytest.raises(ConformanceError, match="--fault"):
        run_command.run(parse("--target", "http://127.0.0.1:9", "--fault", "kid-error-401"))


def test_the_exit_code_is_pytests(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, Any] = {}

    def fake_main(args: list[str], plugins: list[object]) -> int:
        seen["args"], seen["plugins"] = args, plugins
        return 5

    # six answers, the first a cold start: the target is 25 ms away
    samples = (0.4, 0.025, 0.024, 0.026, 0.025, 0.025)
    monkeypatch.setattr(run_command, "preflight", lambda profile, count=1, **_: samples[:count])
    monkeypatch.setattr(run_command, "is_loopback", lambda url: False)
    monkeypatch.setattr(pytest, "main", fake_main)
    args = parse("--target", "https://bank.example", "--seed", "9", "--reports", str(tmp_path))
    assert run_command.run(args) == 5
    # the choice, printed: one worker per CPU, the round trips overlapped in each
    choice = next(line for line in capsys.readouterr().out.splitlines() if "in flight" in line)
    assert choice.startswith("conformance: ")
    assert "25 ms away" in choice
    assert seen["args"][seen["args"].index("--conformance-threads") + 1] == "10"
    assert seen["args"][seen["args"].index("--seed") + 1] == "9"
    assert seen["args"][seen["args"].index("--target") + 1] == "https://bank.example"
    # The target was preflighted here: the plugin is told so, for exactly these options; and
    # how the run was started, for a scenario's replay (issue 44: no seed, the bank keeps data)
    assert seen["plugins"] == [
        PreflightDone.naming(target="https://bank.example", profile=None, cert=None, key=None),
        Rerun(
            f"{replay_program()} run --reports {tmp_path / 'rerun'} --target https://bank.example"
        ),
    ]


def test_a_slow_loopback_target_gets_scenarios_in_flight(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a bank behind a tunnel: a loopback address whose every answer comes 25 ms late; the
    # preflight times it for real (six probes) and the run keeps scenarios in flight
    seen: dict[str, Any] = {}

    def fake_main(args: list[str], plugins: list[object]) -> int:
        seen["args"] = args
        return 0

    monkeypatch.setattr(pytest, "main", fake_main)
    running = start(Application())
    try:
        with latency_proxy(running.url, 0.025) as proxy:
            assert proxy.url.startswith("http://127.0.0.1:")
            args = parse("--target", proxy.url, "--reports", str(tmp_path), "-n", "2")
            assert run_command.run(args) == 0
    finally:
        running.stop()
    choice = next(line for line in capsys.readouterr().out.splitlines() if "in flight" in line)
    assert "the target (a loopback address) is " in choice, choice
    assert int(seen["args"][seen["args"].index("--conformance-threads") + 1]) > 1


# --- the bundled server --------------------------------------------------------------------------


def test_the_bundled_server_starts_answers_and_stops(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with bundled_reference_server(log_path=log) as url:
        assert url.startswith("http://127.0.0.1:")
        answer = httpx.get(url + "/v1/nothing-here", timeout=5.0)
        assert answer.headers["content-type"].startswith("application/json")
    assert refuses(url)
    assert log.is_file()


def test_a_server_that_cannot_start_is_one_clear_error(tmp_path: Path) -> None:
    with (
        pytest.raises(ConformanceError, match="stopped at start"),
        bundled_reference_server(faults=["no-such-fault"], log_path=tmp_path / "log"),
    ):
        pass


# --- end to end ----------------------------------------------------------------------------------


def conformance_run(*argv: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, "run", *argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def started_url(output: str) -> str:
    for line in output.splitlines():
        if "bundled reference server started at " in line:
            return line.rsplit(" ", 1)[-1]
    raise AssertionError(output)


def test_a_run_against_the_reference_server_writes_every_report(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    process = conformance_run(
        "--reports", str(reports), "--", "-m", "E12 and auth", "-n", "0", cwd=tmp_path
    )
    output, _ = process.communicate(timeout=300)
    assert process.returncode in (0, 1), output  # a verdict either way, not a crash
    assert "Traceback" not in output
    url = started_url(output)
    assert refuses(url)  # stopped at the end
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    assert document["scenarios"]
    assert {s["operation"] for s in document["scenarios"]} == {"E12"}
    assert {s["kind"] for s in document["scenarios"]} == {"auth"}
    assert document["target"] == url
    assert document["profile"]["name"] == "Bundled reference server"
    assert document["run"]["seed"] == DEFAULT_SEED
    assert (reports / "compliance.md").is_file()
    assert "<testsuite" in (reports / "junit.xml").read_text(encoding="utf-8")
    assert list((reports / "allure-results").glob("*-result.json"))
    assert (reports / "reference-server.log").stat().st_size > 0
    identity = reports / "identity"  # the run's throwaway identity, kept for its replays
    for path in reports.rglob("*"):
        if path.is_file() and identity not in path.parents:
            assert "PRIVATE KEY" not in path.read_text(encoding="utf-8", errors="replace"), path
    for key in identity.rglob("*.key"):
        assert key.stat().st_mode & 0o077 == 0, key


def test_a_bundled_runs_replay_works_as_printed(tmp_path: Path) -> None:
    """After a bundled run its server is gone. A failure's ``reproduce:`` line runs the scenario
    again with the run's faults (issue 44: a server like it starts empty, without what the run
    made). Each exchange's own replay (``call``) is kept too: the reports name the ``conformance
    serve`` command that starts a server like it (same port, trust, faults), and the identity
    files it signs with are kept in ``reports/identity/``; started so, that replay gives the
    judged answer again and, with ``--scenario``, judges it as the run did ("still breaks",
    exit 1). The scenario is a must one (spec 8: a creditorName of at most 70 characters)."""
    reports = tmp_path / "reports"
    scenario = "E16-creditorName-maxLength-71-rejected"
    process = conformance_run(
        "--reports", str(reports), "--fault", "long-creditor-name-accepted",
        "--", "-k", scenario, "-n", "0", cwd=tmp_path,
    )  # fmt: skip
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 1, output
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    serve = document["run"]["replay_server"]
    assert " serve --port " in serve and "--fault long-creditor-name-accepted" in serve
    assert f"start one like it first (same port, trust and faults; empty): {serve}" in output
    (failure,) = [s for s in document["scenarios"] if s["verdict"] == "failed"]
    assert failure["reproduce"].endswith(
        f"run --reports reports/rerun --fault long-creditor-name-accepted -- -k {scenario}"
    ), failure["reproduce"]
    (replay,) = [
        line
        for path in (reports / "allure-results").glob("*-attachment.*")
        for line in path.read_text(encoding="utf-8").splitlines()
        if " call POST " in line
    ]
    assert f"--cert {reports}/identity/tpp.pem" in replay
    assert (reports / "identity" / "tpp.pem").is_file()
    # as printed: each names the program as the run was started (here the venv's script, by
    # its path, since the venv is not on the PATH), so a shell runs it as it is
    server = subprocess.Popen(shlex.split(serve), cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        assert "listening on" in server.stdout.readline()
        done = subprocess.run(
            [*shlex.split(replay), "--scenario", scenario], cwd=tmp_path, capture_output=True,
            text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()
    assert "<<< HTTP 201" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 1 and f"still breaks {scenario} (" in done.stdout, done.stdout


def test_a_failing_run_prints_its_causes_then_one_line_per_failed_scenario(
    tmp_path: Path,
) -> None:
    """No pytest failure block by default: the cause (with its example exchange), then one line
    per failed scenario; ``--verbose`` prints the blocks as well."""
    selection = ("--", "-k", "E16 and creditor-name", "-n", "0")
    brief = conformance_run(
        "--reports", str(tmp_path / "brief"), "--fault", "long-creditor-name-accepted",
        *selection, cwd=tmp_path,
    )  # fmt: skip
    output, _ = brief.communicate(timeout=300)
    assert brief.returncode == 1, output
    lines = output.splitlines()
    cause = next(i for i, line in enumerate(lines) if line.startswith("CAUSE 1 ("))
    failed = [i for i, line in enumerate(lines) if line.startswith("FAILED E16-")]
    assert failed and cause < failed[0], output
    assert "E16-LIM-creditor-name-max-70-rejected (cause-" in output
    assert "= FAILURES =" not in output and "short test summary" not in output
    verbose = conformance_run(
        "--reports", str(tmp_path / "verbose"), "--fault", "long-creditor-name-accepted",
        "--verbose", *selection, cwd=tmp_path,
    )  # fmt: skip
    output, _ = verbose.communicate(timeout=300)
    assert verbose.returncode == 1, output
    assert "= FAILURES =" in output and "failed scenarios (one line each)" not in output


@pytest.mark.slow  # several whole runs: make test-slow
def test_a_tls_run_serves_https_with_mutual_tls_and_gives_the_plain_verdicts(
    tmp_path: Path,
) -> None:
    """``--tls``: the bundled server over HTTPS requiring a client certificate; the run shows
    its QWAC and reaches the same verdicts as over plain HTTP, but for the checks of the QWAC,
    which only a TLS run can judge (not applicable over plain HTTP, passed over mutual TLS)."""
    verdicts = []
    for flags in ((), ("--tls",)):
        reports = tmp_path / ("tls" if flags else "plain")
        process = conformance_run(
            *flags,
            "--reports",
            str(reports),
            "--",
            "-k",
            "E12 and (auth or valid)",
            "-n",
            "0",
            cwd=tmp_path,
        )
        output, _ = process.communicate(timeout=300)
        assert process.returncode == 0, output
        assert started_url(output).startswith("https://" if flags else "http://")
        document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
        verdicts.append({s["id"]: s["verdict"] for s in document["scenarios"]})
    plain, tls = verdicts
    qwac = {i for i in plain if "-auth-qwac-" in i}
    assert qwac and {plain[i] for i in qwac} == {"not applicable"}
    assert {tls[i] for i in qwac} == {"passed"}
    assert {i: v for i, v in plain.items() if i not in qwac} == {
        i: v for i, v in tls.items() if i not in qwac
    }
    assert len(plain) > 10
    log = (tmp_path / "tls" / "reference-server.log").read_text(encoding="utf-8")
    assert "TLS handshake" not in log  # no refused handshake: every connection showed the QWAC


def test_tls_needs_the_bundled_server() -> None:
    with pytest.raises(ConformanceError, match="--tls"):
        run_command.run(parse("--target", "http://127.0.0.1:9", "--tls"))


def test_the_bundled_run_judges_the_rfc2047_signature_scenarios(tmp_path: Path) -> None:
    """Spec 5 item 3: the run's UTF-8-named CA makes them applicable, and the server passes."""
    reports = tmp_path / "reports"
    process = conformance_run(
        "--reports", str(reports), "--", "-k", "rfc2047-signature", "-n", "0", cwd=tmp_path
    )
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    verdicts = {s["id"]: s["verdict"] for s in document["scenarios"]}
    assert len(verdicts) == len(load_contract().operations)  # one per operation
    assert set(verdicts.values()) == {"passed"}, verdicts


def test_ctrl_c_stops_the_bundled_server(tmp_path: Path) -> None:
    process = conformance_run("--reports", str(tmp_path), "--", "-n", "0", cwd=tmp_path)
    assert process.stdout is not None
    url = None
    deadline = time.monotonic() + 60
    while url is None and time.monotonic() < deadline:
        line = process.stdout.readline()
        if "bundled reference server started at " in line:
            url = line.strip().rsplit(" ", 1)[-1]
    assert url is not None
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=60)
    assert process.returncode != 0, output[-3000:]
    assert refuses(url)


def test_the_suite_module_is_where_the_command_looks() -> None:
    assert (SUITE_DIR / "test_conformance.py").is_file()
    assert SUITE_DIR.parent == ROOT / "conformance"


def test_reports_that_cannot_be_written_stop_the_run_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance import cli

    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    assert cli.main(["run", "--reports", str(blocker / "reports")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"conformance: cannot write reports to {blocker / 'reports'}: ")
    assert "--reports" in error and "Traceback" not in error
    made = writable_reports(tmp_path / "new" / "reports")
    assert made.is_dir() and list(made.iterdir()) == []  # created, and the probe file is gone


@pytest.mark.slow  # several whole runs: make test-slow
def test_a_target_can_be_run_against_twice(tmp_path: Path) -> None:
    """A target keeps what a run created: the second run (a new random seed by default) passes
    where the same seed again fails in its set-up (the account exists already)."""
    selection = ["-n", "0", "--", "-k", "E12-valid-request-accepted or CS-valid-request-accepted"]
    with bundled_reference_server(log_path=tmp_path / "server.log") as url:

        def run(name: str, *seed: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-c", DRIVER, "run", "--target", url, "--profile",
                 str(ROOT / "profiles" / "reference-server.toml"), "--strict",
                 "--reports", str(tmp_path / name), *seed, *selection],
                capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip

        for name in ("first", "second"):
            done = run(name)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
            assert "2 passed" in done.stdout
        assert run("pinned-1", "--seed", "77").returncode == 0
        again = run("pinned-2", "--seed", "77")
        assert again.returncode != 0
        refused = "Set-up failed: creating a sandbox account (SA) was answered HTTP 400"
        assert refused in again.stdout
        # a refused set-up is "blocked" with its cause, once at the top, not a failed rule
        assert "BLOCKED " in again.stdout
        document = json.loads((tmp_path / "pinned-2" / "compliance.json").read_text("utf-8"))
        verdicts = {s["verdict"] for s in document["scenarios"]}
        assert "blocked" in verdicts and "failed" not in verdicts
        assert document["totals"]["blocked"] >= 1
        markdown = (tmp_path / "pinned-2" / "compliance.md").read_text("utf-8")
        assert "## Blocked (set-up refused" in markdown and refused in markdown


def test_a_run_whose_set_up_fails_everywhere_is_not_judged(tmp_path: Path) -> None:
    """A server that trusts another CA than the one the run signs with refuses every set-up
    request: the verdict is NOT JUDGED with that cause, exit 3, the last line of the run. (The
    profile leaves out the operations the preflight probes, which would stop the run before any
    scenario: tests/unit/test_interrupted_run.py.)"""
    other = write_run_identity(tmp_path / "other")
    profile = tmp_path / "no-probes.toml"
    text = (ROOT / "profiles" / "reference-server.toml").read_text(encoding="utf-8")
    profile.write_text(text.replace('optional = ["SI"]', 'unsupported = ["AL", "E9"]'), "utf-8")
    selection = ["-n", "0", "--", "-k", "E12-valid-request-accepted or CS-valid-request-accepted"]
    with bundled_reference_server(trust=other.trusted, log_path=tmp_path / "server.log") as url:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, "run", "--target", url, "--profile", str(profile),
             "--reports", str(tmp_path / "r"), *selection],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        refused = subprocess.run(
            [sys.executable, "-c", DRIVER, "run", "--target", url,
             "--reports", str(tmp_path / "refused"), *selection],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    # with the probes, the preflight stops it: the suite's own certificate refused, named
    assert refused.returncode == 3, refused.stdout[-2000:] + refused.stderr[-2000:]
    assert refused.stderr.startswith(
        "conformance: NOT JUDGED: the target refused the suite's own signing certificate"
    )
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("NOT JUDGED: set-up failed: creating a ")
    assert "was answered HTTP 401 CERTIFICATE_INVALID" in last
    assert "to unblock: the bank refused the run's identity" in last
    assert "(2 of the 2 scenarios to judge blocked by it" in last


@pytest.mark.slow
def test_a_real_targets_secrets_are_masked_in_every_report(tmp_path: Path) -> None:
    """A profile that is not the reference server's masks secrets by default: the consent ids
    the server handed out (read from its log) appear in no report file, masked or not."""
    profile = tmp_path / "bank.toml"
    text = (ROOT / "profiles" / "reference-server.toml").read_text(encoding="utf-8")
    profile.write_text(text.replace("reference_server = true", ""), encoding="utf-8")
    log = tmp_path / "server.log"
    with bundled_reference_server(log_path=log) as url:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, "run", "--target", url, "--profile", str(profile),
             "--reports", str(tmp_path / "reports"), "-n", "0", "--",
             "-k", "CS-valid-request-accepted or AT-valid-request-accepted"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    consents = set(re.findall(r"/v1/consents/([0-9a-f-]{36})", log.read_text(encoding="utf-8")))
    assert consents
    texts = [
        path.read_text(encoding="utf-8", errors="replace")
        for path in (tmp_path / "reports").rglob("*")
        if path.is_file()
    ]
    assert any("Consent-ID: ***" in text for text in texts)
    for consent in consents:
        assert not any(consent in text for text in texts), consent


@pytest.mark.slow  # several whole runs: make test-slow
def test_a_target_that_throttles_one_request_in_40_gives_the_unthrottled_verdicts(
    tmp_path: Path,
) -> None:
    """A gateway's rate limit (429 with Retry-After on every 40th request) is waited out: the
    verdicts equal those of the same selection without it, and the report counts the waits."""
    from reference_server.app import Application, Throttle
    from reference_server.transport.http import start

    verdicts = []
    for every in (0, 40):
        running = start(Application(throttle=Throttle(every, retry_after=0)))
        try:
            done = subprocess.run(
                [sys.executable, "-c", DRIVER, "run", "--target", running.url, "--profile",
                 str(ROOT / "profiles" / "reference-server.toml"), "--seed", "5",
                 "--reports", str(tmp_path / str(every)), "-n", "0", "--",
                 "-m", "E16 or E1 or PS"],
                capture_output=True, text=True, timeout=600, check=False,
            )  # fmt: skip
        finally:
            running.stop()
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        document = json.loads((tmp_path / str(every) / "compliance.json").read_text("utf-8"))
        verdicts.append({s["id"]: s["verdict"] for s in document["scenarios"]})
        throttled = document["run"]["throttled_answers"]
        assert (throttled > 0) if every else (throttled == 0)
    assert verdicts[0] == verdicts[1] and len(verdicts[0]) > 100


def test_a_waived_scenario_is_reported_waived_with_its_reason(tmp_path: Path) -> None:
    """A waiver of the profile: not run, not passed, its reason in the reports."""
    from reference_server.app import Application
    from reference_server.transport.http import start

    profile = tmp_path / "bank.toml"
    text = (ROOT / "profiles" / "reference-server.toml").read_text(encoding="utf-8")
    profile.write_text(
        text + '\n[[waivers]]\nscenarios = ["E12-valid-*"]\nreason = "BANK-1: known issue"\n',
        encoding="utf-8",
    )
    running = start(Application())
    try:
        done = subprocess.run(
            [sys.executable, "-c", DRIVER, "run", "--target", running.url, "--profile",
             str(profile), "--reports", str(tmp_path / "r"), "-n", "0", "--",
             "-k", "E12-valid-request-accepted or E16-auth-sha512-digest-accepted"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    finally:
        running.stop()
    assert done.returncode == 0, done.stdout[-2000:]
    assert "WAIVED 1 scenario(s): BANK-1: known issue" in done.stdout
    document = json.loads((tmp_path / "r" / "compliance.json").read_text("utf-8"))
    verdicts = {s["id"]: (s["verdict"], s["reason"]) for s in document["scenarios"]}
    assert verdicts["E12-valid-request-accepted"] == ("waived", "BANK-1: known issue")
    assert verdicts["E16-auth-sha512-digest-accepted"][0] == "passed"
    assert document["totals"]["waived"] == 1
    markdown = (tmp_path / "r" / "compliance.md").read_text("utf-8")
    assert "## Waived by the profile" in markdown


@pytest.mark.slow  # several whole runs: make test-slow
def test_play_runs_the_bundled_server_as_a_profiles_bank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--play P``: the bundled server plays P's bank (its gateway header required) and the
    suite runs with P; a fault still fails its scenarios there."""
    monkeypatch.setenv("EXAMPLE_BANK_CLIENT_ID", "play-secret")
    example = ROOT / "profiles" / "examples" / "gateway-bank.toml"
    for fault, expected in ((None, 0), ("kid-error-401", 1)):
        reports = tmp_path / (fault or "faithful")
        faults = ["--fault", fault] if fault else []
        process = conformance_run(
            "--play", str(example), *faults, "--reports", str(reports), "--",
            "-k", "E16-ERR-2 or E12-valid", "-n", "0", cwd=tmp_path,
        )  # fmt: skip
        output, _ = process.communicate(timeout=300)
        assert process.returncode == expected, output
        document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
        assert document["profile"]["name"].startswith("Example: a bank behind an API gateway")
        if fault is None:  # judged and passed: every request carried the gateway's header
            assert {s["verdict"] for s in document["scenarios"]} == {"passed"}


def test_play_needs_the_bundled_server() -> None:
    with pytest.raises(ConformanceError, match="--play"):
        run_command.run(parse("--target", "http://127.0.0.1:9", "--play", "x.toml"))


def test_permissive_needs_the_bundled_server() -> None:
    with pytest.raises(ConformanceError, match="--permissive"):
        run_command.run(parse("--target", "http://127.0.0.1:9", "--permissive"))


def test_demanding_needs_the_bundled_server() -> None:
    with pytest.raises(ConformanceError, match="--demanding"):
        run_command.run(parse("--target", "http://127.0.0.1:9", "--demanding"))
