"""A baseline of known failures that expires (``conformance run --baseline FILE``): kept by cause
id (stable across runs), each with an owner, a ticket and an expiry date; a run fails only on
causes not in it, an expired entry fails the run, and a cause that did not show is "not
observed" when the run did not reach it."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.errors import ConformanceError
from conformance.plugin.reporting import _held_to_baseline
from conformance.problems import Problem, cause_id
from conformance.report.baseline import baseline_lines, judge_baseline, load_baseline

TODAY = dt.date(2026, 11, 28)

BASELINE = """
[[known]]
cause = "cause-aaaaaaaa"
owner = "Kari Nordmann"
ticket = "BANK-1"
expires = 2026-12-31
scenarios = ["E16-a"]

[[known]]
cause = "cause-bbbbbbbb"
owner = "Ola Nordmann"
ticket = "BANK-2"
expires = 2026-12-31
scenarios = ["E16-b"]

[[known]]
cause = "cause-cccccccc"
owner = "Ola Nordmann"
ticket = "BANK-3"
expires = 2026-12-31
scenarios = ["E16-c"]

[[known]]
cause = "cause-dddddddd"
owner = "Kari Nordmann"
ticket = "BANK-4"
expires = 2026-11-27
"""


def _baseline(tmp_path: Path, text: str = BASELINE) -> Path:
    path = tmp_path / "baseline.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _cause(cause: str, *scenarios: str, level: str = "must") -> dict[str, Any]:
    return {"id": cause, "level": level, "scenarios": list(scenarios)}


def _scenario(scenario: str, verdict: str) -> dict[str, Any]:
    return {"id": scenario, "verdict": verdict}


def test_each_entry_is_observed_fixed_not_observed_or_expired(tmp_path: Path) -> None:
    baseline = load_baseline(_baseline(tmp_path))
    said = judge_baseline(
        baseline,
        [_cause("cause-aaaaaaaa", "E16-a"), _cause("cause-eeeeeeee", "E16-e")],
        [
            _scenario("E16-a", "failed"),
            _scenario("E16-b", "passed"),  # reached, and its cause did not show: fixed
            _scenario("E16-e", "failed"),
        ],  # E16-c not run: its cause is not observed, not fixed
        strict=False,
        today=TODAY,
    )
    statuses = {entry["cause"]: entry["status"] for entry in said["entries"]}
    assert statuses == {
        "cause-aaaaaaaa": "observed",
        "cause-bbbbbbbb": "fixed",
        "cause-cccccccc": "not observed",
        "cause-dddddddd": "expired",
    }
    assert said["new"] == ["cause-eeeeeeee"]
    assert said["expired"] == ["cause-dddddddd"]
    assert said["holds"] is False
    lines = baseline_lines({"baseline": said})
    assert lines[0].startswith("BASELINE BROKEN (")
    assert "  NEW cause-eeeeeeee" in lines
    assert any(line.startswith("  NOT OBSERVED cause-cccccccc (owner Ola") for line in lines)
    assert any(line.startswith("  EXPIRED cause-dddddddd") for line in lines)


def test_only_causes_outside_the_baseline_fail_the_run(tmp_path: Path) -> None:
    baseline = load_baseline(_baseline(tmp_path, BASELINE.split('[[known]]\ncause = "cause-d')[0]))
    known = [_cause("cause-aaaaaaaa", "E16-a")]
    failed = [_scenario("E16-a", "failed")]
    said = judge_baseline(baseline, known, failed, strict=False, today=TODAY)
    assert said["holds"] is True
    # a should finding counts only under --strict
    should = [*known, _cause("cause-ffffffff", "E16-a", level="should")]
    assert judge_baseline(baseline, should, failed, strict=False, today=TODAY)["holds"]
    assert not judge_baseline(baseline, should, failed, strict=True, today=TODAY)["holds"]
    # a failure no cause names cannot be known
    unnamed = [*failed, _scenario("E16-z", "failed")]
    said = judge_baseline(baseline, known, unnamed, strict=False, today=TODAY)
    assert said["uncovered"] == ["E16-z"] and not said["holds"]
    # the day after its expiry date, an entry no longer covers its cause
    later = judge_baseline(baseline, known, failed, strict=False, today=dt.date(2027, 1, 1))
    assert later["expired"] == ["cause-aaaaaaaa", "cause-bbbbbbbb", "cause-cccccccc"]
    assert later["new"] == [] and not later["holds"]  # in the baseline: expired, not new
    lines = baseline_lines({"baseline": later})
    assert lines[0].startswith("BASELINE BROKEN (")
    assert "0 new cause(s) not in it; 3 entries past its expiry date; " in lines[0]
    assert not any(line.startswith("  NEW ") for line in lines)
    assert (
        "  EXPIRED cause-aaaaaaaa (owner Kari Nordmann, ticket BANK-1, expired 2026-12-31; its "
        "cause showed in this run)" in lines
    )
    assert any(line.startswith("  EXPIRED cause-bbbbbbbb (") for line in lines)


class _Collector:
    def __init__(self, path: Path, document: dict[str, Any]) -> None:
        path.write_text(json.dumps(document), encoding="utf-8")
        self.written = (path, path)


@pytest.mark.parametrize(
    ("holds", "totals", "status", "expected"),
    [
        (True, {"error": 0, "blocked": 0}, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.OK),
        (True, {"error": 1, "blocked": 0}, pytest.ExitCode.TESTS_FAILED, 1),
        (True, {"error": 0, "blocked": 2}, pytest.ExitCode.TESTS_FAILED, 1),
        (False, {"error": 0, "blocked": 0}, pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED),
        (False, {"error": 0, "blocked": 0}, pytest.ExitCode.TESTS_FAILED, 1),
    ],
)
def test_the_exit_code_follows_the_baseline(
    tmp_path: Path, holds: bool, totals: dict[str, int], status: int, expected: int
) -> None:
    collector = _Collector(tmp_path / "c.json", {"baseline": {"holds": holds}, "totals": totals})
    assert _held_to_baseline(collector, status) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('[[known]]\ncause = "cause-aaaaaaaa"\nowner = "K"\nticket = "T"\n', "needs expires"),
        ('[[known]]\ncause = "x"\nowner = "K"\nticket = "T"\nexpires = 2026-01-01\n',
         "is not a cause id"),
        ('[[known]]\ncause = "cause-aaaaaaaa"\nowner = "K"\nticket = "T"\nexpires = "soon"\n',
         "expires is a TOML date"),
        ('[[known]]\ncause = "cause-aaaaaaaa"\nowner = "K"\nticket = "T"\n'
         'expires = 2026-01-01\nowners = "typo"\n', "unknown key 'owners'"),
        ('[[known]]\ncause = "cause-aaaaaaaa"\nticket = "T"\nexpires = 2026-01-01\n',
         "needs owner"),
        # security-5.md L7: an owner that is a number, a ticket of blanks
        ('[[known]]\ncause = "cause-aaaaaaaa"\nowner = 42\nticket = "T"\nexpires = 2026-01-01\n',
         "owner is text"),
        ('[[known]]\ncause = "cause-aaaaaaaa"\nowner = "K"\nticket = "   "\n'
         'expires = 2026-01-01\n', "ticket is text"),
        # L7: an entry that never expires defeats the baseline
        ('[[known]]\ncause = "cause-aaaaaaaa"\nowner = "K"\nticket = "T"\n'
         'expires = 9999-12-31\n', "more than 366 days ahead"),
    ],
)  # fmt: skip
def test_a_malformed_baseline_is_refused_naming_the_entry(
    tmp_path: Path, text: str, error: str
) -> None:
    with pytest.raises(ConformanceError, match=r"\[\[known\]\] number 1") as raised:
        load_baseline(_baseline(tmp_path, text))
    assert error in raised.value.message


def test_a_cause_id_is_the_same_in_every_run_and_process() -> None:
    """A baseline names causes by id: the id is a digest of what broke (check, place, kind),
    never of a value, a scenario or the process (hash seeds differ between runs)."""
    problem = Problem("schema", "creditorName", "maxLength", "71 characters")
    here = cause_id(problem, "SCH-maxLength")
    code = (
        "from conformance.problems import Problem, cause_id;"
        "print(cause_id(Problem('schema', 'creditorName', 'maxLength', 'other text'), 'SCH-x'))"
    )
    elsewhere = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    ).stdout.strip()  # fmt: skip
    assert here == elsewhere == "cause-" + here.removeprefix("cause-")
    assert here == "cause-6a75cc35"  # pinned: a change here breaks every bank's baseline


@pytest.mark.slow
def test_a_run_with_its_known_failure_in_the_baseline_passes_and_an_expired_one_fails(
    tmp_path: Path,
) -> None:
    reports = tmp_path / "reports"
    base = [
        sys.executable, "-m", "conformance", "run", "--reports", str(reports), "-n", "0",
        "--fault", "long-creditor-name-accepted",
    ]  # fmt: skip
    selection = ["--", "-k", "creditorName and maxLength"]
    first = subprocess.run([*base, *selection], capture_output=True, text=True, check=False)
    assert first.returncode == 1, first.stdout[-2000:]
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    (cause,) = [c["id"] for c in document["causes"] if c["level"] == "must"]
    ahead = (dt.date.today() + dt.timedelta(days=60)).isoformat()  # within a year
    entry = f'[[known]]\ncause = "{cause}"\nowner = "K"\nticket = "BANK-1"\nexpires = {ahead}\n'
    expired = entry.replace(cause, "cause-00000000").replace(ahead, "2000-01-01")
    for text, code, head in ((entry, 0, "BASELINE HOLDS"), (entry + expired, 1, "BASELINE BROKEN")):
        path = _baseline(tmp_path, text)
        done = subprocess.run(
            [*base, "--baseline", str(path), *selection], capture_output=True, text=True,
            check=False,
        )  # fmt: skip
        assert done.returncode == code, done.stdout[-2000:]
        assert head in done.stdout
        said = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))["baseline"]
        assert said["entries"][0]["status"] == "observed"
    assert said["entries"][1]["status"] == "expired"


def test_the_guides_example_entry_has_not_expired(tmp_path: Path) -> None:
    """Issue 44: the example of certify-with-evidence.md, run as written, is a baseline whose
    entry holds today (its date is relative to today), not one already past its date."""
    guide = Path(__file__).resolve().parents[2] / "docs/guides/certify-with-evidence.md"
    found = re.findall(r"^```sh baseline-example\n(.*?)^```", guide.read_text("utf-8"), re.S | re.M)
    (block,) = found
    subprocess.run(["bash", "-c", block], cwd=tmp_path, check=True)
    (entry,) = load_baseline(tmp_path / "known-failures.toml").known
    assert entry.expires > dt.date.today() + dt.timedelta(days=30)


def test_a_baseline_with_a_utf8_bom_is_read(tmp_path: Path) -> None:
    """security-5.md L7: a UTF-8 BOM was refused with "Invalid statement (at line 1, column 1)"."""
    text = '[[known]]\ncause = "cause-aaaaaaaa"\nowner = "K"\nticket = "T"\nexpires = 2026-01-01\n'
    path = tmp_path / "bom.toml"
    path.write_text("\ufeff" + text, encoding="utf-8")
    assert load_baseline(path).known[0].owner == "K"
