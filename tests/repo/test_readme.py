"""The README is a front door: short, the newcomer's path on its first screen, no figure that
goes stale (counts and times live in ``bench/RESULTS.md``), every link resolving, and every shell
block that says it works on a fresh clone (info string ``sh fresh-clone``) runs as written.

The blocks' commands run from a folder holding only this checkout's ``.venv`` (so they write
their reports there, not into the checkout). ``make test`` is this very run and is only checked
to be a target; ``make run`` is its ``conformance run``, which the cheap test runs as ``--smoke``;
the slow test reads CI's own ``make run`` (its terminal, which ``.ci/run`` keeps and names in
``CONFORMANCE_MAKE_RUN``) and runs it whole only where there is none. A block marked ``slow``
is for the slow test only: its ``conformance run --fault F`` is the session's one run of that
fault (``tests/runs/shared_runs.py``), which ``tests/runs/test_cause_run.py`` judges too."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from runs.shared_runs import fault_run

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
_BLOCK = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```", re.S | re.M)
_LINK = re.compile(r"\]\((?!https?://|#)([^)#\s]+)")
#: An inline code span: what looks like a link inside one (a regular expression) is none.
_CODE_SPAN = re.compile(r"`[^`\n]+`")
#: A time a README would have to keep up to date: "31 s", "4 min", "9.4 ms", "12 seconds".
#: Names the file holding CI's own ``make run`` terminal and, last, "exit code: N" (.ci/run).
MAKE_RUN = "CONFORMANCE_MAKE_RUN"
_TIME = re.compile(r"\b\d+(?:[.,]\d+)?\s*(?:s|ms|min|mins|minutes?|seconds?|hours?)\b")


def _commands(*, slow: bool) -> list[str]:
    """The commands of the fresh-clone blocks (comments and continuations folded)."""
    found = []
    for block in _BLOCK.finditer(README):
        info = block["info"].split()
        if "fresh-clone" not in info or ("slow" in info) != slow:
            continue
        for line in block["body"].replace("\\\n", " ").splitlines():
            command = line.split(" #", 1)[0].strip()
            if command:
                found.append(command)
    return found


def _run(command: str, cwd: Path, *, whole: bool) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command)
    if words[:2] == ["make", "run"]:  # the target's command (checked below), in this folder
        words = [".venv/bin/conformance", "run", *([] if whole else ["--smoke"])]
    return subprocess.run(words, cwd=cwd, capture_output=True, text=True, timeout=900, check=False)


def _expected(command: str) -> int:
    return 1 if "--fault" in command else 0  # a deliberate fault fails the run, at must


@pytest.fixture
def beside(tmp_path: Path) -> Path:
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    return tmp_path


def test_the_readme_is_a_front_door() -> None:
    lines = README.splitlines()
    assert len(lines) <= 200
    first_screen = "\n".join(lines[:40])
    for step in ("make run", "make test", "reports/compliance.html"):
        assert step in first_screen, f"the newcomer's path: {step} on the first screen"


def test_the_readme_states_no_time() -> None:
    prose = _BLOCK.sub("", README)  # a sample terminal line may hold a measured time
    assert _TIME.findall(prose) == [], "times live in bench/RESULTS.md"


def test_every_relative_link_resolves() -> None:
    for target in _LINK.findall(README):
        assert (ROOT / target).exists(), target


def test_make_has_the_targets_the_readme_names() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for command in _commands(slow=False) + _commands(slow=True):
        words = shlex.split(command)
        if words[0] == "make":
            assert re.search(rf"^{words[1]}:", makefile, re.M), command
    assert re.search(r"^run: .*\n\t\$\(BIN\)/conformance run\n", makefile, re.M)


def test_the_fresh_clone_commands_run_as_written(beside: Path) -> None:
    commands = [c for c in _commands(slow=False) if shlex.split(c)[:2] != ["make", "test"]]
    assert commands
    for command in commands:
        done = _run(command, beside, whole=False)
        assert done.returncode == _expected(command), f"{command}\n{done.stdout}\n{done.stderr}"
        if " run" in f" {command}":  # a run ends with how to open its reports
            assert "open them: reports/compliance.html in a browser" in done.stdout


def _whole(command: str, beside: Path) -> tuple[int, str]:
    """The exit code and terminal of a slow block's whole run: CI's own ``make run``, the
    session's shared run of a fault, or else run here."""
    words = shlex.split(command)
    made = os.environ.get(MAKE_RUN)
    if words[:2] == ["make", "run"] and made:
        text = Path(made).read_text(encoding="utf-8")
        code = re.findall(r"^exit code: (\d+)$", text, re.M)
        assert code, f"{made}: no exit code line (.ci/run writes it)"
        return int(code[-1]), text
    if words[:3] == [".venv/bin/conformance", "run", "--fault"] and len(words) == 4:
        shared = fault_run(words[3])
        return shared.returncode, shared.stdout + shared.stderr
    done = _run(command, beside, whole=True)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow  # whole runs, made once (module docstring): make test-slow
def test_the_slow_fresh_clone_commands_run_as_written(beside: Path) -> None:
    commands = [c for c in _commands(slow=False) if shlex.split(c)[:2] == ["make", "run"]]
    assert commands and _commands(slow=True)
    for command in commands + _commands(slow=True):
        code, output = _whole(command, beside)
        assert code == _expected(command), f"{command}\n{output[-5000:]}"
        assert "open them: reports/compliance.html" in output


def test_every_relative_link_of_the_docs_resolves() -> None:
    pages = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "reports" / "README.md"]
    for page in pages:
        for target in _LINK.findall(_CODE_SPAN.sub("", page.read_text(encoding="utf-8"))):
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: {target}"


def test_the_readme_states_no_count() -> None:
    """Counts go stale with every scenario added: they live in bench/RESULTS.md (Figures)."""
    prose = _BLOCK.sub("", README)
    assert re.findall(r"\b\d{1,3}(?:,\d{3})+\b|(?<![:\d])\b\d{4,}\b", prose) == []  # not a port
    assert "scenarios judged: …" in README  # the sample verdict line names none either
