"""``conformance report`` (conformance.commands.report): the Allure HTML, or how to get it."""

from __future__ import annotations

import argparse
import base64
import io
import json
import re
import shutil
import subprocess
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
    monkeypatch.setattr("conformance.commands.report.shutil.which", lambda name: None)
    err = io.StringIO()
    code = report_command.run(parse("--reports", str(reports)), stderr=err)
    assert code == 1
    message = err.getvalue()
    assert "npx --yes allure@3 generate" in message
    assert str(reports / "allure-results") in message and "Node.js" in message
    assert "Traceback" not in message


def test_npx_is_used_when_there_is_no_allure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "conformance.commands.report.shutil.which",
        lambda name: "/usr/bin/npx" if name == "npx" else None,
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
        "--config",
        "r/allurerc.json",  # Allure 3: historyPath names r/allure-history.jsonl
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


def test_allure_3_keeps_the_history_of_earlier_reports(reports: Path) -> None:
    """The configuration names the history file in the reports directory; a real Allure 3
    appends each report to it, so the trends of the next report show the earlier runs."""
    config = report_command.write_history_config(reports)
    document = json.loads(config.read_text(encoding="utf-8"))
    assert document["historyPath"] == str((reports / report_command.HISTORY_FILE).resolve())
    output = reports / "allure-report"
    command = [*writes_index(output), "--config", str(config)]
    assert report_command.run(parse("--reports", str(reports)), command=command) == 0


def test_allure_2_gets_the_previous_reports_history(reports: Path) -> None:
    output = reports / "allure-report"
    (output / "history").mkdir(parents=True)
    (output / "index.html").write_text("old", encoding="utf-8")
    (output / "history" / "history-trend.json").write_text("[1]", encoding="utf-8")
    assert report_command.run(parse("--reports", str(reports)), command=writes_index(output)) == 0
    carried = reports / "allure-results" / "history" / "history-trend.json"
    assert carried.read_text(encoding="utf-8") == "[1]"


def test_the_allure_version_is_read_from_the_command(tmp_path: Path) -> None:
    fake = tmp_path / "allure"
    fake.write_text("#!/bin/sh\necho 3.0.0-beta.12\n", encoding="utf-8")
    fake.chmod(0o755)
    assert report_command.allure_major(str(fake)) == 3
    fake.write_text("#!/bin/sh\necho 2.32.0\n", encoding="utf-8")
    report_command.allure_major.cache_clear()
    assert report_command.allure_major(str(fake)) == 2
    report_command.allure_major.cache_clear()


@pytest.mark.slow  # a run and npx allure@3 (which downloads Allure once): make test-slow
@pytest.mark.skipif(shutil.which("npx") is None, reason="needs Node.js (npx allure@3)")
def test_the_rendered_report_is_one_file_that_opens_without_a_server(tmp_path: Path) -> None:
    """``conformance report`` after a run writes ``allure-report/index.html`` with the results
    inside it (Allure 3's single file): nothing it shows is fetched from a file beside it, which a
    browser refuses over file://, and its tree is labelled with the spec parts' titles."""
    reports = tmp_path / "reports"
    conformance = [sys.executable, "-m", "conformance"]
    ran = subprocess.run(
        [*conformance, "run", "--smoke", "--reports", str(reports)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rendered = subprocess.run(
        [*conformance, "report", "--reports", str(reports)],
        cwd=tmp_path, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    page = (reports / "allure-report" / "index.html").read_text(encoding="utf-8")
    embedded = dict(re.findall(r'd\("([^"]+)","([^"]*)"\)', page))
    assert "widgets/tree.json" in embedded  # the data is in the page, not in data/ beside it
    assert not (reports / "allure-report" / "data").exists()
    tree = json.loads(base64.b64decode(embedded["widgets/tree.json"]))
    epics = [tree["groupsById"][node]["name"] for node in tree["root"]["groups"]]
    assert epics and all(re.match(r"\d(\.\d)? [A-Z]", name) for name in epics), epics
    for result in tree["leavesById"].values():
        assert "test_conformance" not in json.dumps(result)
    assert "googletagmanager" not in page  # opened on a bank's machine, it calls no third party


def test_the_report_calls_no_third_party() -> None:
    """Allure 3 puts Google Analytics in every report; the rendered page goes without it."""
    page = (
        "<head></head><body><script>app()</script>\n"
        '    <script async src="https://www.googletagmanager.com/gtag/js?id=G-X"></script>\n'
        "    <script>\n        window.dataLayer = window.dataLayer || [];\n"
        "        function gtag(){dataLayer.push(arguments);}\n        gtag('js', new Date());\n"
        "    </script>\n    <script async>window.allureReportData = {};</script></body>"
    )
    cleaned = report_command.without_analytics(page)
    assert "googletagmanager" not in cleaned and "dataLayer" not in cleaned
    assert "<script>app()</script>" in cleaned and "window.allureReportData" in cleaned
