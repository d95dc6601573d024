"""Mistakes on the command line that never reach pytest or the server: each is one line with its
fix, before anything runs, and no "reports in" line about an earlier run's files (the review's
mistakes table: ``-n bogus``, a ``-m`` typo, a fault name typo, a profile key typo)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conformance import cli
from conformance.commands.usage import check_selection, selection_options
from conformance.contract import load_contract
from conformance.errors import ConformanceError
from conformance.generate import generate_scenarios


def _one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    started = time.monotonic()
    code = cli.main(argv)
    assert time.monotonic() - started < 10
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing ran: no header, no "reports in"
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return code, lines[0]


def test_a_bogus_worker_count_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, line = _one_line(["run", "-n", "bogus", "--reports", str(tmp_path)], capsys)
    assert code == 2
    assert line == (
        "conformance: -n takes a number of workers, 'auto' (one per CPU) or 0 (one process), "
        "not 'bogus'"
    )
    assert not list(tmp_path.iterdir())


def test_a_marker_typo_names_the_marker_meant(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["run", "--reports", str(tmp_path), "--", "-m", "E16 and muts"]
    code, line = _one_line(argv, capsys)
    assert code == 2
    assert "no scenario has the marker 'muts' (did you mean 'must'?)" in line


def test_a_keyword_that_selects_nothing_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, line = _one_line(["selfcheck", "--", "-k", "E16 and nosuchthing"], capsys)
    assert code == 2
    assert line.endswith("selects no scenario (nothing would run)")


def test_an_unreadable_expression_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, line = _one_line(["run", "--", "-m", "E16 and ("], capsys)
    assert code == 2
    assert line.startswith("conformance: -m 'E16 and (' cannot be read:")


def test_a_fault_typo_is_caught_before_the_server_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for command in ("run", "selfcheck"):
        code, line = _one_line([command, "--fault", "kid-eror-401"], capsys)
        assert code == 2
        assert line == (
            "conformance: unknown fault 'kid-eror-401' (did you mean 'kid-error-401'?); "
            f"`conformance {command} --list-faults` lists them"
        )


def test_list_faults_on_run_and_selfcheck(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "selfcheck"):
        assert cli.main([command, "--list-faults"]) == 0
        shown = capsys.readouterr().out
        assert "kid-error-401" in shown and "spec 7" in shown


def test_a_profile_key_typo_names_the_key_meant(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    profile = tmp_path / "typo.toml"
    profile.write_text(
        'name = "t"\nbase_url = "http://127.0.0.1:9"\nredirect_url = "https://tpp.example/"\n',
        encoding="utf-8",
    )
    code, line = _one_line(["run", "--profile", str(profile)], capsys)
    assert code == 2
    assert "unknown key 'redirect_url' at the top level (did you mean 'redirect_uri'?)" in line


def test_the_selection_options_are_read_in_every_form() -> None:
    args = ["-q", "-m", "E16", "-kE12", "-n", "2", "--numprocesses=auto", "tests"]
    assert list(selection_options(args)) == [
        ("-m", "E16"),
        ("-k", "E12"),
        ("-n", "2"),
        ("-n", "auto"),
    ]


def test_a_valid_selection_passes_and_pytests_own_n_is_checked_too() -> None:
    scenarios = generate_scenarios(load_contract())
    check_selection(["-m", "E16 and must", "-k", "maxLength"], scenarios)
    check_selection(["-k", "e16"], scenarios)  # pytest's -k is case-insensitive
    with pytest.raises(ConformanceError, match="-n takes a number"):
        check_selection(["-n", "many"], scenarios)
