"""The session's shared whole runs (``tests/runs/shared_runs.py``): a configuration's run is made
once, by the first caller, and read by every later one, also from another process (an xdist
worker) asking at the same time; ``made.log`` lists each run made once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from runs.shared_runs import MADE_LOG, SHARED_RUNS, shared_run

TESTS = Path(__file__).resolve().parents[1]
#: A process that asks for the run ``race`` whose making takes a while and counts itself.
_RACER = """
import subprocess, sys, time
from pathlib import Path
from runs.shared_runs import shared_run

def make(folder):
    with (folder.parent / "makers").open("a") as count:
        count.write("made\\n")
    time.sleep(1.0)
    return subprocess.CompletedProcess([], 0, "the terminal", "")

run = shared_run("race", make)
assert run.returncode == 0 and run.stdout == "the terminal", run
"""


def test_a_run_is_made_once_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SHARED_RUNS, str(tmp_path))
    made: list[Path] = []

    def make(folder: Path) -> subprocess.CompletedProcess[str]:
        made.append(folder)
        (folder / "reports").mkdir()
        (folder / "reports" / "compliance.json").write_text('{"totals": {}}', encoding="utf-8")
        return subprocess.CompletedProcess([], 1, "out", "err")

    first = shared_run("one", make)
    second = shared_run("one", make)
    assert made == [tmp_path / "one"]
    assert first == second
    assert (second.returncode, second.stdout, second.stderr) == (1, "out", "err")
    assert second.document() == {"totals": {}}
    assert [line.split("\t")[0] for line in (tmp_path / MADE_LOG).read_text().splitlines()] == [
        "one"
    ]


def test_processes_asking_at_once_share_one_run(tmp_path: Path) -> None:
    env = {"PYTHONPATH": str(TESTS), SHARED_RUNS: str(tmp_path), "PATH": "/usr/bin:/bin"}
    racers = [
        subprocess.Popen([sys.executable, "-c", _RACER], env=env, stderr=subprocess.PIPE)
        for _ in range(3)
    ]
    for racer in racers:
        _, error = racer.communicate(timeout=60)
        assert racer.returncode == 0, error.decode()
    assert (tmp_path / "makers").read_text().splitlines() == ["made"]
    assert len((tmp_path / MADE_LOG).read_text().splitlines()) == 1


def test_without_the_sessions_folder_it_says_who_sets_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SHARED_RUNS, raising=False)
    with pytest.raises(AssertionError, match=r"root conftest\.py sets it"):
        shared_run("none", lambda folder: subprocess.CompletedProcess([], 0, "", ""))
