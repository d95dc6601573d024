"""``conformance report``: render the Allure HTML report of the last run with the Allure command
line (``allure`` on the PATH, else ``npx --yes allure@3``), or say what to install.

The report carries the history of the reports made before it in the same directory, so that
Allure's trend charts and each test's history tab show how the target moved from run to run.
Allure 3 keeps it in one JSONL file (``reports/allure-history.jsonl``, named by the
``historyPath`` of the ``allurerc.json`` written beside it); Allure 2 reads the previous
report's ``history/`` folder copied into the results before it generates.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from conformance.commands import COMMANDS, Subparsers
from conformance.errors import ConformanceError
from conformance.report.allure_files import allure3_config
from conformance.report.allure_single import mailable_results

__all__ = [
    "ALLURE_NPM_PACKAGE",
    "HISTORY_FILE",
    "allure_command",
    "register",
    "run",
    "without_analytics",
]

#: The npm package of the Allure 3 command line, pinned to its major version.
ALLURE_NPM_PACKAGE = "allure@3"
#: Generating the report of a full run takes seconds; the first npx use also downloads Allure.
_TIMEOUT = 900.0
_RESULTS = "allure-results"
_REPORT = "allure-report"
#: Allure 3's history of every report made in a reports directory (one JSON line per report).
HISTORY_FILE = "allure-history.jsonl"
_CONFIG = "allurerc.json"
#: Where the results one mailable file carries are put while the report is rendered.
_CARRIED = "allure-results-carried"
_VERSION = re.compile(r"(\d+)\.\d+")


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help=COMMANDS["report"],
        description="Render reports/allure-results into reports/allure-report/index.html, one "
        "file that opens in a browser without a server and can be mailed (at most 10 MB: "
        "the passed scenarios of an operation are one entry, long attachments are cut; "
        "allure-results/ keeps everything), with the Allure command line (an `allure` on the "
        "PATH, else `npx --yes allure@3`).",
    )
    parser.add_argument(
        "--reports",
        metavar="DIR",
        default="reports",
        help="the reports directory of the run (default: reports)",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="show every scenario on its own page with all its exchanges (a file of tens of MB "
        "for a whole run); by default the passed scenarios of an operation are one entry and "
        "long attachments are cut, so that the file can be mailed (at most 10 MB)",
    )
    parser.set_defaults(func=run)


def allure_command(results: Path, output: Path) -> list[str] | None:
    """The command that renders ``results`` into ``output``, or None when no Allure is at hand.

    ``-o`` is the output option of both Allure 2 and Allure 3; the output directory is emptied
    beforehand by :func:`run` (Allure 2 would want ``--clean``, which Allure 3 does not know).
    Allure 3 gets ``--config`` with the history file (see the module).
    """
    allure = shutil.which("allure")
    if allure is not None:
        command = [allure, "generate", str(results), "-o", str(output)]
        if allure_major(allure) < 3:  # Allure 2.24 and later: one file, as Allure 3 is told
            return [*command, "--single-file"]
        return command + _history_config(results.parent)
    npx = shutil.which("npx")
    if npx is not None:
        command = [npx, "--yes", ALLURE_NPM_PACKAGE, "generate", str(results), "-o", str(output)]
        return command + _history_config(results.parent)
    return None


@functools.cache
def allure_major(executable: str) -> int:
    """The major version of an ``allure`` on the PATH (2 when it does not say)."""
    try:
        said = subprocess.run(
            [executable, "--version"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return 2
    match = _VERSION.search(said)
    return int(match.group(1)) if match else 2


def _history_config(reports: Path) -> list[str]:
    """``--config FILE``: the Allure 3 configuration :func:`write_history_config` writes."""
    return ["--config", str(reports / _CONFIG)]


def write_history_config(reports: Path) -> Path:
    """The Allure 3 configuration of the report: named after the target and profile, grouped
    spec part › operation › rule, the run's facts as variables, and ``historyPath`` the reports
    directory's history file (``allure_files.allure3_config``)."""
    config = reports / _CONFIG
    compliance = reports / "compliance.json"
    try:
        run = json.loads(compliance.read_text(encoding="utf-8")) if compliance.is_file() else None
    except (OSError, json.JSONDecodeError):
        run = None
    document = allure3_config(run, reports / HISTORY_FILE)
    config.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return config


def _carry_history(output: Path, results: Path) -> None:
    """Allure 2: the previous report's ``history/`` goes into the results it generates from."""
    previous = output / "history"
    if previous.is_dir():
        shutil.copytree(previous, results / "history", dirs_exist_ok=True)


def _how_to_get_it(results: Path, output: Path) -> str:
    return "\n".join(
        [
            "conformance: the Allure command line is not installed, so the HTML report was not "
            "made.",
            "  With Node.js 18 or later (https://nodejs.org), run:",
            f"    npx --yes {ALLURE_NPM_PACKAGE} generate {results} -o {output}",
            "  or install it once (npm install -g allure) and run `conformance report` again.",
            f"  The compliance matrix ({results.parent / 'compliance.md'}) and junit.xml need "
            "nothing of this.",
        ]
    )


#: What Allure 3 puts in every report to count its users with Google Analytics (the script it
#: loads, and the inline block that configures it); 3.18 has no switch for it (Allure 2 reads
#: ALLURE_NO_ANALYTICS, which is set too). A certification report opened on a bank's machine
#: calls no third party, so :func:`without_analytics` takes both out of the rendered page.
_ANALYTICS = (
    re.compile(
        r'\s*<script[^>]*\bsrc="https://www\.googletagmanager\.com/[^"]*"[^>]*>\s*</script>'
    ),
    re.compile(r"\s*<script>\s*window\.dataLayer\s*=.*?</script>", re.S),
)


def without_analytics(page: str) -> str:
    """``page`` without Allure's Google Analytics scripts (:data:`_ANALYTICS`)."""
    for pattern in _ANALYTICS:
        page = pattern.sub("", page)
    return page


def _strip_analytics(index: Path) -> None:
    page = index.read_text(encoding="utf-8")
    cleaned = without_analytics(page)
    if cleaned != page:
        index.write_text(cleaned, encoding="utf-8")


def _clear(output: Path) -> None:
    """Empty the previous report; refuse to touch a directory that is not one."""
    if not output.exists():
        return
    if not output.is_dir():
        raise ConformanceError(f"{output} exists and is not a directory; move it away first")
    if any(output.iterdir()) and not (output / "index.html").exists():
        raise ConformanceError(
            f"{output} is not empty and holds no Allure report (no index.html); move it away first"
        )
    shutil.rmtree(output)


def run(
    args: argparse.Namespace,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    command: Sequence[str] | None = None,
) -> int:
    """Render the report; 0 when it was written, 1 when no Allure is installed."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    reports = Path(args.reports)
    results = reports / _RESULTS
    output = reports / _REPORT
    if not results.is_dir() or not any(results.glob("*-result.json")):
        raise ConformanceError(
            f"no Allure results in {results}: run `conformance run` first "
            f"(or pytest with --alluredir {results})"
        )
    chosen = list(command) if command is not None else allure_command(results, output)
    if chosen is None:
        print(_how_to_get_it(results, output), file=err)
        return 1
    if "--config" in chosen:
        write_history_config(reports)
    _carry_history(output, results)
    _clear(output)
    if command is None and not getattr(args, "full", False):  # what a mailable file carries
        chosen = allure_command(mailable_results(results, reports / _CARRIED), output) or chosen
    try:
        return _render(chosen, results, output, out, err)
    finally:
        shutil.rmtree(reports / _CARRIED, ignore_errors=True)


def _render(chosen: list[str], results: Path, output: Path, out: TextIO, err: TextIO) -> int:
    """Run the Allure command line; 0 when the report was written."""
    try:
        finished = subprocess.run(
            chosen,
            env={**os.environ, "ALLURE_NO_ANALYTICS": "true"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        print(_how_to_get_it(results, output), file=err)
        return 1
    except subprocess.TimeoutExpired:
        raise ConformanceError(
            f"`{' '.join(chosen)}` did not finish within {_TIMEOUT:g} s"
        ) from None
    if finished.returncode != 0 or not (output / "index.html").exists():
        said = (finished.stderr or finished.stdout).strip().splitlines()[-3:]
        raise ConformanceError(
            f"`{' '.join(chosen)}` failed (exit code {finished.returncode})"
            + (": " + " / ".join(said) if said else "")
        )
    _strip_analytics(output / "index.html")
    print(f"Allure report written to {output / 'index.html'}", file=out)
    print(
        "  one file with the results inside: open it in a browser as it is, or send it on",
        file=out,
    )
    return 0
