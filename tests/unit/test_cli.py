"""The ``conformance`` command line: every command reachable, only the chosen one imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conformance import cli
from conformance.commands import COMMANDS


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_gets_its_full_parser(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.build_parser([name, "--help"]).parse_args([name, "--help"])
    assert stopped.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"usage: conformance {name} [-h]")
    # A stub would show only "[-h]"; every command has options of its own.
    assert shown.count("--") > 1


def test_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for name, summary in COMMANDS.items():
        assert f"{name} {summary}" in shown


def test_an_unknown_command_is_argparses_invalid_choice(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(["bogus"])
    assert stopped.value.code == 2
    assert "invalid choice: 'bogus'" in capsys.readouterr().err


def test_only_the_chosen_command_module_is_imported() -> None:
    probe = (
        "import sys\n"
        "from conformance import cli\n"
        "cli.build_parser(['serve', '--port', '0'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('conformance.commands.')))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert shown == "['conformance.commands.serve']"
