"""``conformance fleet run``: each bank in its own process group under a deadline; one bank's
hang or failure never stops the others; how each ended is recorded (``fleet-run.json``). The
banks' runs are stood in for by small Python children here (the whole suite: test_fleet_slow)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.fleet import run as fleet_run
from conformance.fleet.outcome import JUDGED, NOT_RUN, TIMED_OUT, read_outcome
from conformance.fleet.run import Bank, FleetOptions, bank_command, banks_of, run_fleet

EXAMPLES = Path(__file__).resolve().parents[2] / "profiles" / "examples"

#: A run that never ends, and leaves a grandchild (a bundled server) that never ends either.
HANGS = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
open(sys.argv[1], "w").write(str(child.pid))
print("conformance: bundled reference server started", flush=True)
time.sleep(120)
"""
REFUSED = """
import contextlib
import os
import signal
import sys
import threading
print("conformance: NOT JUDGED: the target refused the suite's own signing certificate")
sys.exit(3)
"""
JUDGES = """
import pathlib, sys
pathlib.Path(sys.argv[1], "compliance.json").write_text('{"scenarios": []}')
"""


def _alive(pid: int) -> bool:
    """The process exists and is no zombie (a container's init may not reap it at once)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.fixture
def stand_ins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Each bank's run is the script of its folder's name."""
    scripts = {"hangs": HANGS, "refused": REFUSED, "judges": JUDGES}
    pid_file = tmp_path / "grandchild.pid"

    def command(bank: Bank, options: FleetOptions) -> list[str]:
        argument = pid_file if bank.folder == "hangs" else options.reports / bank.folder
        return [sys.executable, "-c", scripts[bank.folder], str(argument)]

    monkeypatch.setattr(fleet_run, "bank_command", command)
    monkeypatch.setattr(fleet_run, "GRACE_SECONDS", 0.5)
    return {"pid": pid_file}


def _options(tmp_path: Path, deadline: float = 60.0) -> FleetOptions:
    return FleetOptions(reports=tmp_path / "fleet", jobs=2, deadline=deadline, round="r1")


def _banks(*names: str) -> list[Bank]:
    return [Bank(name, Path(f"/profiles/{name}.toml"), f"Bank {name}") for name in names]


def test_a_hang_is_stopped_at_its_deadline_whole_and_the_others_are_reported(
    tmp_path: Path, stand_ins: dict[str, Path]
) -> None:
    options = _options(tmp_path, deadline=3.0)
    started = time.monotonic()
    hangs, refused, judges = run_fleet(_banks("hangs", "refused", "judges"), options)
    assert time.monotonic() - started < 30
    assert hangs.status == TIMED_OUT and "deadline of 3 s" in hangs.why
    assert "bundled reference server started" in hangs.why  # what it last said
    grandchild = int(stand_ins["pid"].read_text())
    for _ in range(50):  # the SIGKILL is sent; its arrival is the kernel's
        if not _alive(grandchild):
            break
        time.sleep(0.1)
    assert not _alive(grandchild), "the late bank's process group was not killed"
    assert refused.status == NOT_RUN
    assert refused.why == (
        "exit code 3: conformance: NOT JUDGED: the target refused the suite's own signing "
        "certificate"
    )
    assert judges.status == JUDGED and judges.exit_code == 0
    recorded = read_outcome(options.reports / "refused" / "fleet-run.json")
    assert recorded == refused


def test_a_profile_that_cannot_be_read_is_a_bank_not_run(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("name = 'x'\nunknown_key = 1\n")
    (bank,) = banks_of([broken])
    assert bank.name == "broken" and bank.error.startswith("its profile could not be read:")
    outcome = fleet_run.run_bank(bank, _options(tmp_path))
    assert outcome.status == NOT_RUN and outcome.why == bank.error


def test_each_bank_gets_a_folder_of_its_own_and_its_own_run(tmp_path: Path) -> None:
    one, two = EXAMPLES / "gateway-bank.toml", tmp_path / "gateway-bank.toml"
    two.write_text(one.read_text())
    banks = banks_of([one, two])
    assert [bank.folder for bank in banks] == ["gateway-bank", "gateway-bank-2"]
    options = FleetOptions(
        reports=tmp_path / "fleet",
        jobs=1,
        deadline=5,
        round="r",
        play=True,
        faults=("html-errors",),
        bank_faults={"gateway-bank-2": ("location-missing",)},
        run_args=("--smoke",),
    )
    assert bank_command(banks[1], options)[1:] == [
        "-m",
        "conformance",
        "run",
        "--play",
        str(two),
        "--reports",
        str(tmp_path / "fleet" / "gateway-bank-2"),
        "--fault",
        "html-errors",
        "--fault",
        "location-missing",
        "--smoke",
    ]
    assert "--profile" in bank_command(banks[0], FleetOptions(tmp_path, 1, 5, "r"))


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["--bank-fault", "nobank:html-errors", "--play"], "--bank-fault takes BANK:NAME"),
        (["--fault", "html-errors"], "--fault and --bank-fault switch on faults of --play"),
        (["--index", "5"], "--index 5: there are 1 profiles (0 to 0)"),
        (["--fault", "no-such-fault", "--play"], "no-such-fault"),
    ],
)
def test_mistakes_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], words: list[str], said: str
) -> None:
    profile = str(EXAMPLES / "gateway-bank.toml")
    code = main(["fleet", "run", profile, "--reports", str(tmp_path), *words])
    assert code == 2
    assert said in capsys.readouterr().err


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("banks/*.toml", "banks/*.toml matches no profile"),
        ("banks/nope.toml", "the profile banks/nope.toml does not exist"),
        ("banks", "the profile banks is a folder, not a profile"),
    ],
)
def test_a_profile_that_is_not_there_is_a_usage_error_and_nothing_is_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    given: str,
    said: str,
) -> None:
    """Issue 44: ``fleet run profiles/banks/*.toml`` where nothing matches (the shell passes the
    pattern on as it is) made a bank named ``*`` that stayed in the fleet's history."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "banks").mkdir()
    profile = str(EXAMPLES / "gateway-bank.toml")
    code = main(["fleet", "run", profile, given, "--reports", "fleet"])
    assert code == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "fleet").exists()


def test_the_command_runs_the_banks_then_writes_the_report(
    tmp_path: Path, stand_ins: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    profiles = []
    for stem in ("judges", "refused"):
        profiles.append(tmp_path / f"{stem}.toml")
        profiles[-1].write_text(f'name = "Bank {stem}"\nbase_url = "http://127.0.0.1:9"\n')
    reports = tmp_path / "fleet"
    code = main(["fleet", "run", *map(str, profiles), "--reports", str(reports), "--jobs", "2"])
    assert code == 1  # one bank gave no verdict
    said = capsys.readouterr().out
    assert (
        "fleet: judges: judged (exit 0)" in said and "fleet: refused: not run (exit code 3" in said
    )
    assert "2 bank(s) in" in said and "1 gave a verdict" in said
    fleet = (reports / "fleet-report" / "fleet.md").read_text()
    assert "- **refused** (not run): exit code 3: conformance: NOT JUDGED" in fleet


def test_index_runs_one_bank_and_leaves_the_report_to_the_merge(
    tmp_path: Path, stand_ins: dict[str, Path]
) -> None:
    profiles = []
    for stem in ("refused", "judges"):
        profiles.append(tmp_path / f"{stem}.toml")
        profiles[-1].write_text(f'name = "Bank {stem}"\nbase_url = "http://127.0.0.1:9"\n')
    reports = tmp_path / "fleet"
    assert (
        main(["fleet", "run", *map(str, profiles), "--reports", str(reports), "--index", "1"]) == 0
    )
    assert sorted(path.name for path in reports.iterdir()) == ["judges"]


def test_a_fleet_interrupted_stops_every_bank_s_run(
    tmp_path: Path, stand_ins: dict[str, Path]
) -> None:
    """The banks' runs are in sessions of their own (out of reach of the terminal's Ctrl-C):
    the fleet stops them when it is stopped itself."""
    timer = threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_fleet(_banks("hangs"), _options(tmp_path, deadline=60.0))
    finally:
        timer.cancel()
    assert time.monotonic() - started < 30  # not at the deadline: at once
    grandchild = int(stand_ins["pid"].read_text())
    for _ in range(50):
        if not _alive(grandchild):
            break
        time.sleep(0.1)
    assert not _alive(grandchild)


def test_a_bank_whose_runner_died_is_reported_as_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """security-5.md M16: after kill -9 of the runner, the in-flight bank's folder had a run.log
    and no fleet-run.json, and ``fleet report`` left it out ("1 bank: 1 gave a verdict")."""
    from conformance.fleet.collect import collect_runs
    from conformance.fleet.outcome import INTERRUPTED

    seen: list[str] = []

    def killed(command: object, folder: Path, deadline: float) -> None:
        outcome = read_outcome(folder / "fleet-run.json")
        assert outcome is not None
        seen.append(outcome.status)
        raise SystemExit(137)  # the runner dies here: nothing after this line of it runs

    monkeypatch.setattr(fleet_run, "_run", killed)
    options = _options(tmp_path)
    with pytest.raises(SystemExit):
        fleet_run.run_bank(_banks("hang")[0], options)
    assert seen == [INTERRUPTED]
    [run] = collect_runs([options.reports])
    assert run.status == INTERRUPTED and "runner stopped" in run.why


#: A bank's run that watches its runner (as ``conformance run`` does), leaves a grandchild,
#: writes both pids and sleeps.
WATCHES = """
import pathlib, subprocess, sys, time, os
from conformance.fleet.watchdog import watch_parent
watch_parent(poll=0.1, grace=0.5)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
pathlib.Path(sys.argv[1]).write_text(f"{os.getpid()} {child.pid}")
time.sleep(120)
"""
#: The fleet runner, running that one bank (``fleet_run._run``) until it is killed.
RUNNER = """
import pathlib, sys
from conformance.fleet import run
folder = pathlib.Path(sys.argv[2])
folder.mkdir(parents=True, exist_ok=True)
run._run([sys.executable, "-c", sys.argv[1], sys.argv[3]], folder, 120.0)
"""


def test_a_bank_s_run_stops_itself_once_its_runner_is_killed(tmp_path: Path) -> None:
    """security-5.md L4 (attempt 197): after ``kill -9`` of the runner, the bank's run (in a
    process group of its own) went on with no deadline; now it watches its runner and stops
    its whole group once the runner is gone."""
    import subprocess

    pids = tmp_path / "pids"
    runner = subprocess.Popen(
        [sys.executable, "-c", RUNNER, WATCHES, str(tmp_path / "bank"), str(pids)]
    )
    try:
        deadline = time.monotonic() + 30
        while not pids.is_file() or len(pids.read_text().split()) < 2:
            assert time.monotonic() < deadline, "the bank's run did not start"
            time.sleep(0.05)
        child, grandchild = (int(pid) for pid in pids.read_text().split())
        assert _alive(child) and _alive(grandchild)
        runner.kill()
        runner.wait()
        deadline = time.monotonic() + 15
        while (_alive(child) or _alive(grandchild)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child) and not _alive(grandchild), "the orphaned run went on"
    finally:
        runner.kill()
        for pid in (int(p) for p in (pids.read_text().split() if pids.is_file() else ())):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
