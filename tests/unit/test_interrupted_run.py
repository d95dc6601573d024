"""An interrupted run is never CONFORMANT (issue 29 item 6), and the suite's own certificate
refused stops a run before any scenario, named (item 9).

Ctrl-C, SIGTERM (a CI job's time-out) or the bundled server stopping mid-run leave the verdict
INTERRUPTED (N of M scenarios judged; no verdict), ``"complete": false``, the word in every report
and exit code 130; the whole-run tests interrupt a run a few seconds in, with and without
pytest-xdist.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conformance import cli
from conformance.bankside.bundled import ServerWatch, process_gone
from conformance.errors import INTERRUPTED_EXIT, RunInterrupted
from conformance.report.compare import compare_runs
from conformance.report.compliance import RunInfo, build_document
from conformance.report.compliance_page import overall_verdict, verdict_word
from conformance.report.compliance_render import render_html, render_markdown
from conformance.report.junit import add_run_properties
from conformance.report.verdicts import ScenarioFacts, ScenarioVerdict
from conformance.signing import generate_ca, generate_tpp_identity, write_identity

#: ``conformance`` as a user runs it (conformance.cli), Ctrl-C interrupting it as in a terminal
#: even when these tests were started where SIGINT is ignored (a background job).
DRIVER = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from conformance.cli import main
sys.exit(main())
"""


# --- the verdict of an interrupted run ------------------------------------------------------------


def _verdicts(count: int) -> list[ScenarioVerdict]:
    return [
        ScenarioVerdict(
            ScenarioFacts(f"E12-s{n}", "E12", "R1", "spec 4.1 E12", "must", "positive", "t"),
            "passed",
        )
        for n in range(count)
    ]


def _document(*, interrupted: str | None, to_run: int = 2498, judged: int = 3) -> dict[str, Any]:
    now = dt.datetime.now(dt.UTC)
    run = RunInfo(
        started=now, finished=now, seed=1, strict=False, target="t", to_run=to_run,
        interrupted=interrupted,
    )  # fmt: skip
    return build_document(_verdicts(judged), run)


def test_an_interrupted_run_is_never_conformant_in_any_report() -> None:
    document = _document(interrupted="Ctrl-C or SIGINT")
    assert document["run"]["complete"] is False
    assert document["run"]["interrupted"] == "Ctrl-C or SIGINT"
    assert document["run"]["scenarios_to_run"] == 2498
    line = overall_verdict(document)
    assert line.startswith(
        "INTERRUPTED: 3 of 2498 scenarios judged; no verdict (Ctrl-C or SIGINT). So far 3 passed"
    )
    assert "CONFORMANT" not in line
    assert verdict_word(document) == "INTERRUPTED"  # Allure's Environment block shows it
    for page in (render_markdown(document), render_html(document)):
        assert "INTERRUPTED: 3 of 2498" in page
        assert "INTERRUPTED after 3 of 2498 (Ctrl-C or SIGINT)" in page  # the run's facts
        assert "CONFORMANT" not in page
    assert (
        "interrupted (Ctrl-C or SIGINT)"
        in compare_runs(document, _document(interrupted=None)).notes[0]
    )


def test_a_run_that_judged_every_scenario_keeps_its_verdict() -> None:
    document = _document(interrupted=None, to_run=3)
    assert document["run"]["complete"] is True and document["run"]["interrupted"] is None
    assert overall_verdict(document).startswith("CONFORMANT at must level")


def test_junit_carries_the_run_verdict_as_properties_of_the_pytest_suite(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<?xml version="1.0"?><testsuites><testsuite name="pytest"><testcase name="a"/>'
        '</testsuite><testsuite name="should"/></testsuites>',
        encoding="utf-8",
    )
    add_run_properties(junit, [("verdict", "INTERRUPTED"), ("complete", "false")])
    text = junit.read_text(encoding="utf-8")
    assert (
        '<testsuite name="pytest"><properties><property name="verdict" value="INTERRUPTED" />'
        in text
    )
    assert text.count("<properties>") == 1


def test_the_cli_gives_an_interruption_its_own_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from conformance.commands import run as run_command

    def interrupted(args: object) -> int:
        raise RunInterrupted("SIGTERM")

    monkeypatch.setattr(run_command, "run", interrupted)
    assert cli.main(["run"]) == INTERRUPTED_EXIT == 130
    assert capsys.readouterr().err == "conformance: interrupted (SIGTERM)\n"


def test_a_watched_server_that_stops_says_so_and_a_stop_of_ours_does_not() -> None:
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    with subprocess.Popen(sleeper, text=True) as process:
        watch = ServerWatch()
        watch.follow(process, Path("server.log"))
        assert watch.pid == process.pid and not process_gone(process.pid)
        process.kill()
        deadline = time.monotonic() + 10
        while watch.stopped is None and time.monotonic() < deadline:
            time.sleep(0.05)
    assert watch.stopped == (
        "the bundled reference server stopped during the run, exit code -9; its log: server.log"
    )
    assert process_gone(process.pid)  # waited for: gone
    with subprocess.Popen(sleeper, text=True) as process:
        ours = ServerWatch()
        ours.follow(process, None)
        ours.ending.set()
        process.kill()
    time.sleep(0.2)
    assert ours.stopped is None


# --- whole runs, interrupted a few seconds in -----------------------------------------------------


def _run(*argv: str, cwd: Path, new_session: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, "run", *argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        start_new_session=new_session,
    )


#: The thread reading each run's output, and the output, by process id.
_READERS: dict[int, threading.Thread] = {}
_OUTPUT: dict[int, str] = {}


def _drain(process: subprocess.Popen[str], into: list[str]) -> threading.Thread:
    """Read the run's output as it comes (a full pipe would stall it)."""
    assert process.stdout is not None
    stream = process.stdout

    def read() -> None:
        into.extend(stream)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    _READERS[process.pid] = thread
    return thread


def _after_some_scenarios(
    reports: Path, process: subprocess.Popen[str], requests: int = 60
) -> None:
    """Wait until the bundled server has answered ``requests`` requests (scenarios have run)."""
    log = reports / "reference-server.log"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if log.is_file() and log.read_text(encoding="utf-8").count("\n") >= requests:
            return
        time.sleep(0.2)
    raise AssertionError("the run answered too few requests to be interrupted mid-run")


def _interrupted(reports: Path, process: subprocess.Popen[str], output: list[str]) -> str:
    """The run ended as interrupted: exit 130, the verdict line last, complete false in
    compliance.json and INTERRUPTED in JUnit's properties; its reason."""
    process.wait(timeout=240)
    _READERS.pop(process.pid).join(timeout=30)
    assert process.stdout is not None
    process.stdout.close()
    text = "".join(output)
    assert process.returncode == INTERRUPTED_EXIT, text[-3000:]
    _OUTPUT[process.pid] = text
    verdict = text.strip().splitlines()[-1]
    assert (
        verdict.startswith("INTERRUPTED: ") and " of 2498 scenarios judged; no verdict (" in verdict
    )
    assert "CONFORMANT" not in verdict
    assert (reports / "compliance.json").is_file(), text[-4000:]
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    run = document["run"]
    assert run["complete"] is False and run["selection"] == {}
    assert run["scenarios_to_run"] == 2498 and 0 < len(document["scenarios"]) < 2498
    assert verdict.startswith(f"INTERRUPTED: {len(document['scenarios'])} of 2498 ")
    junit = (reports / "junit.xml").read_text(encoding="utf-8")
    assert '<property name="verdict" value="INTERRUPTED" />' in junit
    assert "INTERRUPTED" in (reports / "compliance.md").read_text(encoding="utf-8")
    return str(run["interrupted"])


def test_ctrl_c_mid_run_is_interrupted_not_conformant(tmp_path: Path) -> None:
    """In one process (-n 0)."""
    reports = tmp_path / "reports"
    process = _run("--reports", str(reports), "--", "-n", "0", cwd=tmp_path)
    output: list[str] = []
    _drain(process, output)
    _after_some_scenarios(reports, process)
    process.send_signal(signal.SIGINT)
    reason = _interrupted(reports, process, output)
    assert reason == "Ctrl-C or SIGINT", _OUTPUT[process.pid][-4000:]


def test_sigterm_to_the_whole_job_mid_run_is_interrupted(tmp_path: Path) -> None:
    """As a CI job's time-out sends it: to every process of the job (the xdist workers and the
    bundled server too)."""
    reports = tmp_path / "reports"
    process = _run("--reports", str(reports), "-n", "2", cwd=tmp_path, new_session=True)
    output: list[str] = []
    _drain(process, output)
    _after_some_scenarios(reports, process)
    os.killpg(process.pid, signal.SIGTERM)
    reason = _interrupted(reports, process, output)
    assert reason == "SIGTERM", _OUTPUT[process.pid][-4000:]


def _server_pid(run: subprocess.Popen[str]) -> int:
    """The bundled server's process: the run's child (Linux's /proc)."""
    children = Path(f"/proc/{run.pid}/task/{run.pid}/children")
    if not children.is_file():
        pytest.skip("needs /proc to find the bundled server's process")
    for pid in children.read_text(encoding="utf-8").split():
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"reference_server" in command:
            return int(pid)
    raise AssertionError("no bundled server among the run's processes")


@pytest.mark.parametrize(
    "workers", ["0", pytest.param("2", marks=pytest.mark.slow)], ids=["one-process", "xdist"]
)
def test_the_bundled_server_dying_stops_the_run_in_one_line(tmp_path: Path, workers: str) -> None:
    reports = tmp_path / "reports"
    process = _run("--reports", str(reports), "-n", workers, cwd=tmp_path)
    output: list[str] = []
    _drain(process, output)
    _after_some_scenarios(reports, process)
    server = _server_pid(process)
    os.kill(server, signal.SIGKILL)
    reason = _interrupted(reports, process, output)
    assert reason == (
        "the bundled reference server stopped during the run, exit code -9; its log: "
        f"{reports / 'reference-server.log'}"
    )
    text = "".join(output)
    # the processes stop after the test in flight: a refused connection or two, not hundreds
    assert text.count("refused the connection") <= 8, text[-3000:]


# --- the suite's own certificate refused ----------------------------------------------------------


def _expired_identity(folder: Path) -> dict[str, Path]:
    ca = generate_ca()
    ended = dt.datetime.now(dt.UTC) - dt.timedelta(days=2)
    identity = generate_tpp_identity(ca, not_before=ended - dt.timedelta(days=365), not_after=ended)
    return write_identity(identity, folder, ca=ca)


@pytest.mark.parametrize("smoke", [True, False], ids=["smoke", "run"])
def test_a_refused_own_certificate_stops_the_run_before_any_scenario(
    tmp_path: Path, smoke: bool
) -> None:
    """The bundled server refuses an expired certificate (401 CERTIFICATE_INVALID): one line
    naming the file, its subject, the code and --cert/--key; NOT JUDGED, never a must failure."""
    files = _expired_identity(tmp_path / "ids")
    reports = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, "run", "--reports", str(reports),
         "--cert", str(files["certificate"]), "--key", str(files["key"]),
         *(["--smoke"] if smoke else [])],
        cwd=tmp_path, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    said = done.stderr.strip().splitlines()
    assert len(said) == 1, done.stderr
    line = said[0]
    assert line.startswith(
        "conformance: NOT JUDGED: the target refused the suite's own signing certificate "
        f"{files['certificate']} (subject CN=Conformance Test TPP,"
    )
    assert "401 CERTIFICATE_INVALID" in line and "--cert and --key" in line
    assert "must failure" not in done.stdout + done.stderr
    assert "test session starts" not in done.stdout  # before any scenario
    assert not (reports / "compliance.json").exists()
