"""``conformance report`` (conformance.commands.report): the Allure HTML, or how to get it."""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import pytest

from conformance.commands import report as report_command
from conformance.errors import ConformanceError


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="conformance")
    report_command.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["report", *argv])


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    results = tmp_path / "allure-results"
    results.mkdir()
    (results / "0001-result.json").write_text("{}", encoding="utf-8")
    return tmp_path


def writes_index(output: Path) -> list[str]:
    """A stand-in for the Allure command line: writes output/index.html."""
    code = (
        "import pathlib, sys; p = pathlib.Path(sys.argv[1]); p.mkdir(parents=True); "
        "(p / 'index.html').write_text('<html></html>')"
    )
    return [sys.executable, "-c", code, str(output)]


def test_without_results_it_says_to_run_first(tmp_path: Path) -> None:
    with pytest.raises(ConformanceError, match="run `conformance run` first"):
        report_command.run(parse("--reports", str(tmp_path)))


def test_without_allure_it_says_how_to_get_it(
    reports: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report_command.shutil, "which", lambda name: None)
    err = io.StringIO()
    code = report_command.run(parse("--reports", str(reports)), stderr=err)
    assert code == 1
    message = err.getvalue()
    assert "npx --yes allure@3 generate" in message
    assert str(reports / "allure-results") in message and "Node.js" in message
    assert "Traceback" not in message


def test_npx_is_used_when_there_is_no_allure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        report_command.shutil, "which", lambda name: "/usr/bin/npx" if name == "npx" else None
    )
    command = report_command.allure_command(Path("r/allure-results"), Path("r/allure-report"))
    assert command == [
        "/usr/bin/npx",
        "--yes",
        "allure@3",
        "generate",
        "r/allure-results",
        "-o",
        "r/allure-report",
    ]


def test_the_report_is_written_and_the_old_one_replaced(reports: Path) -> None:
    output = reports / "allure-report"
    output.mkdir()
    (output / "index.html").write_text("old", encoding="utf-8")
    (output / "stale.js").write_text("old", encoding="utf-8")
    out = io.StringIO()
    code = report_command.run(
        parse("--reports", str(reports)), stdout=out, command=writes_index(output)
    )
    assert code == 0
    assert (output / "index.html").read_text(encoding="utf-8") == "<html></html>"
    assert not (output / "stale.js").exists()
    assert str(output / "index.html") in out.getvalue()


def test_a_directory_that_is_not_a_report_is_left_alone(reports: Path) -> None:
    output = reports / "allure-report"
    output.mkdir()
    (output / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ConformanceError, match="holds no Allure report"):
        report_command.run(parse("--reports", str(reports)), command=writes_index(output))
    assert (output / "notes.txt").exists()


def test_a_failing_allure_is_one_clear_error(reports: Path) -> None:
    failing = [sys.executable, "-c", "import sys; sys.exit('allure: bad results')"]
    with pytest.raises(ConformanceError, match=r"exit code 1.*bad results"):
        report_command.run(parse("--reports", str(reports)), command=failing)
