"""``conformance fleet report``: the runs found under some folders merged into one report: the
matrix of causes × banks, each cause platform or bank by the stated threshold, each bank's
history (new, fixed, persisting), the trend pictures, and the banks without a verdict named
with why. Built of small hand-made compliance.json documents (no suite run)."""

from __future__ import annotations

import itertools
import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.errors import ConformanceError
from conformance.fleet.collect import collect_runs
from conformance.fleet.merge import build_fleet, platform_threshold
from conformance.fleet.outcome import JUDGED, NOT_RUN, TIMED_OUT, BankOutcome, read_outcome
from conformance.fleet.render import render_fleet_html, render_fleet_markdown
from conformance.fleet.trend import (
    Series,
    bank_trend_svg,
    label_span,
    line_chart,
    platform_trend_svg,
)

SHARED = "cause-shared"
OWN = "cause-own"


def _cause(cause: str, level: str = "must", count: int = 2) -> dict[str, Any]:
    return {
        "id": cause,
        "level": level,
        "title": f"title of {cause}",
        "spec": "spec 7",
        "count": count,
    }


def _write_run(
    folder: Path, bank: str, started: str, *causes: dict[str, Any], interrupted: str | None = None
) -> Path:
    folder.mkdir(parents=True)
    document = {
        "run": {
            "started": started,
            "complete": interrupted is None,
            "selection": {},
            "interrupted": interrupted,
            "duration_seconds": 12.5,
        },
        "profile": {"name": f"Bank {bank}", "source": f"/profiles/{bank}.toml"},
        "totals": {"passed": 10, "failed": 2},
        "causes": list(causes),
        "scenarios": [],
    }
    (folder / "compliance.json").write_text(json.dumps(document), encoding="utf-8")
    (folder / "compliance.html").write_text("<html></html>", encoding="utf-8")
    return folder


def _outcome(folder: Path, bank: str, status: str, why: str, started: str, round: str) -> None:
    BankOutcome(
        bank=bank,
        name=f"Bank {bank}",
        profile=f"/profiles/{bank}.toml",
        status=status,
        why=why,
        exit_code=None if status == TIMED_OUT else 3,
        started=started,
        finished=started,
        seconds=5.0,
        round=round,
    ).write(folder)


@pytest.fixture
def two_rounds(tmp_path: Path) -> Path:
    """Round 1: banks a, b, c, d all have SHARED; a also has OWN. Round 2: a's OWN is fixed,
    b gains a should cause of its own, c refused the suite's certificate, d timed out."""
    one, two = tmp_path / "2026-11-27", tmp_path / "2026-11-28"
    _write_run(one / "a", "a", "2026-11-27T02:00:00+00:00", _cause(SHARED), _cause(OWN))
    for bank in "bcd":
        _write_run(one / bank, bank, "2026-11-27T02:00:01+00:00", _cause(SHARED))
    _write_run(two / "a", "a", "2026-11-28T02:00:00+00:00", _cause(SHARED))
    _write_run(
        two / "b", "b", "2026-11-28T02:00:01+00:00", _cause(SHARED), _cause("cause-b", "should")
    )
    (two / "c").mkdir(parents=True)
    _outcome(
        two / "c",
        "c",
        NOT_RUN,
        "exit code 3: NOT JUDGED: the target refused the suite's own signing certificate",
        "2026-11-28T02:00:02+00:00",
        "2026-11-28",
    )
    (two / "d").mkdir(parents=True)
    _outcome(
        two / "d",
        "d",
        TIMED_OUT,
        "no verdict within the deadline of 60 s",
        "2026-11-28T02:00:03+00:00",
        "2026-11-28",
    )
    return tmp_path


def test_the_threshold_is_half_the_banks_with_a_verdict_and_two_at_least() -> None:
    assert [platform_threshold(n) for n in (0, 1, 2, 3, 4, 5, 9)] == [2, 2, 2, 2, 2, 3, 5]


def test_causes_are_platform_or_bank_in_the_latest_run_of_each_bank(two_rounds: Path) -> None:
    fleet = build_fleet(collect_runs([two_rounds]), two_rounds / "out")
    scopes = {cause["id"]: (cause["scope"], cause["banks"]) for cause in fleet["causes"]}
    assert scopes == {SHARED: ("platform", ["a", "b"]), "cause-b": ("bank", ["b"])}
    assert fleet["banks_judged"] == 2
    assert "here at 2 of 2" in fleet["threshold"]["words"]


def test_history_tells_new_fixed_and_persisting_per_bank(two_rounds: Path) -> None:
    fleet = build_fleet(collect_runs([two_rounds]), two_rounds / "out")
    banks = {bank["label"]: bank for bank in fleet["banks"]}
    assert banks["a"]["changes"] | {"note": ""} == {
        "since": "2026-11-27T02:00:00+00:00",
        "new": [],
        "fixed": [OWN],
        "persisting": [SHARED],
        "note": "",
    }
    assert banks["b"]["changes"]["new"] == ["cause-b"]
    assert f"  - fixed: `{OWN}` title of {OWN}\n" in render_fleet_markdown(fleet)
    # a bank without a verdict now: nothing is called fixed
    assert banks["c"]["changes"]["fixed"] == [] and "no verdict" in banks["c"]["changes"]["note"]
    assert [point["must"] for point in banks["a"]["trend"]] == [2, 1]
    assert [(p["platform"], p["bank"], p["no_verdict"]) for p in fleet["platform_trend"]] == [
        (1, 1, 0),
        (1, 1, 2),
    ]


def test_banks_without_a_verdict_are_named_with_why(two_rounds: Path) -> None:
    fleet = build_fleet(collect_runs([two_rounds]), two_rounds / "out")
    markdown = render_fleet_markdown(fleet)
    assert "- **c** (not run): exit code 3: NOT JUDGED: the target refused" in markdown
    assert "- **d** (timed out): no verdict within the deadline of 60 s" in markdown
    html = render_fleet_html(fleet)
    assert "Banks without a (complete) verdict" in html and "timed out" in html


def test_each_cell_links_to_that_bank_s_report(two_rounds: Path) -> None:
    out = two_rounds / "out"
    fleet = build_fleet(collect_runs([two_rounds]), out)
    assert {bank["label"]: bank["report"] for bank in fleet["banks"]} == {
        "a": "../2026-11-28/a/compliance.html",
        "b": "../2026-11-28/b/compliance.html",
        "c": None,
        "d": None,
    }
    assert 'href="../2026-11-28/a/compliance.html">✗ 2</a>' in render_fleet_html(fleet)


def test_the_pictures_are_well_formed_svg_with_a_cross_where_no_verdict(two_rounds: Path) -> None:
    fleet = build_fleet(collect_runs([two_rounds]), two_rounds / "out")
    banks = {bank["label"]: bank for bank in fleet["banks"]}
    for svg in (platform_trend_svg(fleet["platform_trend"]), *map(bank_trend_svg, banks.values())):
        assert ElementTree.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"
    assert "<title>not run</title>" in bank_trend_svg(banks["c"])
    assert "<polyline" in bank_trend_svg(banks["a"])


def test_the_first_and_last_rounds_labels_hang_inward(two_rounds: Path) -> None:
    """A round's label is centred on its point, except the first and the last, which would
    be cut off at the picture's edges."""
    fleet = build_fleet(collect_runs([two_rounds]), two_rounds / "out")
    svg = ElementTree.fromstring(platform_trend_svg(fleet["platform_trend"]))
    labels = [text for text in svg.iter("{http://www.w3.org/2000/svg}text")
              if text.get("font-size") == "9"]  # fmt: skip
    assert [text.get("text-anchor") for text in labels] == ["start", "end"]


def test_rounds_are_labelled_as_given_and_a_round_without_a_name_by_its_time(
    tmp_path: Path,
) -> None:
    """Issue 44: the rounds named ``r1``/``r2`` (``--round``) read so in the pictures, not as
    timestamps; a round named by its fleet's start time (no ``--round``) reads as that time."""
    for round_name, day in (("r1", "27"), ("r2", "28"), ("2026-11-29T02:00:00+00:00", "29")):
        folder = tmp_path / f"round-{day}" / "a"
        started = f"2026-11-{day}T02:00:00+00:00"
        _write_run(folder, "a", started, _cause(SHARED))
        _outcome(folder, "a", JUDGED, "", started, round_name)
    fleet = build_fleet(collect_runs([tmp_path]), tmp_path / "out")
    for svg in (platform_trend_svg(fleet["platform_trend"]), bank_trend_svg(fleet["banks"][0])):
        labels = [text.text for text in ElementTree.fromstring(svg).iter(
            "{http://www.w3.org/2000/svg}text") if text.get("font-size") == "9"]  # fmt: skip
        assert labels == ["r1", "r2", "11-29 02:00"]


def test_a_cross_on_the_first_round_keeps_clear_of_the_axis_labels(two_rounds: Path) -> None:
    """Issue 44: a no-verdict cross on the first round overlapped the axis's "0"."""
    svg = ElementTree.fromstring(line_chart([], ["r1", "r2"], title="t", gaps=["not run", ""]))
    ns = "{http://www.w3.org/2000/svg}"
    zero = next(text for text in svg.iter(f"{ns}text") if text.text == "0")
    cross = [float(line.get("x1", 0)) for g in svg.iter(f"{ns}g") for line in g.iter(f"{ns}line")]
    assert min(cross) > float(zero.get("x", 0)) + 4


@pytest.mark.parametrize("width", [360, 560])
@pytest.mark.parametrize(
    "name", ["r{}", "11-{:02d} 02:00", "nightly-2026-11-{:02d}"], ids=["short", "time", "long"]
)
def test_no_two_round_labels_overlap_however_many_rounds(width: int, name: str) -> None:
    """Issue 44 ("no overlapping marks"): a fleet's history of many rounds draws only the
    labels that fit side by side (the first and the last always), each inside the picture."""
    ns = "{http://www.w3.org/2000/svg}"
    for count in range(1, 41):
        labels = [name.format(index + 1) for index in range(count)]
        series = [Series("must causes", "#d93025", tuple(range(count)))]
        svg = ElementTree.fromstring(line_chart(series, labels, title="t", width=width))
        drawn = [text for text in svg.iter(f"{ns}text") if text.get("font-size") == "9"]
        reach = [
            label_span(text.text or "", float(text.get("x", 0)), text.get("text-anchor", ""))
            for text in drawn
        ]
        assert drawn[0].text == labels[0] and drawn[-1].text == labels[-1], count
        assert all(right < left for (_, right), (left, _) in itertools.pairwise(reach)), count
        assert reach[0][0] >= 0 and reach[-1][1] <= width, count
        if count <= 3 and len(labels[-1]) <= 11:
            assert len(drawn) == count  # a short history of short names keeps every label


def test_an_interrupted_run_is_a_partial_verdict(tmp_path: Path) -> None:
    _write_run(tmp_path / "a", "a", "2026-11-28T02:00:00+00:00", _cause(OWN), interrupted="SIGTERM")
    (run,) = collect_runs([tmp_path])
    assert run.status == JUDGED and not run.judged
    assert run.why == "the run was interrupted (SIGTERM): a partial run"


def test_the_command_writes_the_three_files(two_rounds: Path, capsys: Any) -> None:
    out = two_rounds / "report"
    assert (
        main(
            [
                "fleet",
                "report",
                str(two_rounds / "2026-11-27"),
                str(two_rounds / "2026-11-28"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert json.loads((out / "fleet.json").read_text())["format"] == "psd2-conformance/fleet/1"
    assert (out / "fleet.md").is_file() and (out / "fleet.html").is_file()
    assert "4 banks: 2 gave a verdict" in capsys.readouterr().out


def test_folders_without_runs_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConformanceError, match=r"no compliance\.json or fleet-run\.json under"):
        collect_runs([tmp_path])


def test_an_outcome_record_reads_back(tmp_path: Path) -> None:
    _outcome(tmp_path, "a", NOT_RUN, "why", "2026-11-28T02:00:00+00:00", "r")
    outcome = read_outcome(tmp_path / "fleet-run.json")
    assert outcome is not None and outcome.status == NOT_RUN and outcome.round == "r"
    (tmp_path / "other.json").write_text("{}")
    assert read_outcome(tmp_path / "other.json") is None


def test_a_cause_must_at_one_bank_and_should_at_another_says_both(tmp_path: Path) -> None:
    """A bank that promised what the spec leaves open has the cause at must level."""
    _write_run(tmp_path / "a", "a", "2026-11-28T02:00:00+00:00", _cause(SHARED, "must"))
    _write_run(tmp_path / "b", "b", "2026-11-28T02:00:00+00:00", _cause(SHARED, "should"))
    fleet = build_fleet(collect_runs([tmp_path]), tmp_path)
    assert [(c["scope"], c["level"]) for c in fleet["causes"]] == [("platform", "must/should")]
    html = render_fleet_html(fleet)
    assert 'class="cell has must"' in html and 'class="cell has should"' in html


def test_two_profiles_of_one_name_in_two_files_are_two_banks(tmp_path: Path) -> None:
    for stem in ("first", "second"):
        folder = _write_run(tmp_path / stem, "x", "2026-11-28T02:00:00+00:00", _cause(OWN))
        document = json.loads((folder / "compliance.json").read_text())
        document["profile"]["source"] = f"/profiles/{stem}.toml"
        (folder / "compliance.json").write_text(json.dumps(document))
    fleet = build_fleet(collect_runs([tmp_path]), tmp_path)
    assert [(bank["label"], bank["bank"]) for bank in fleet["banks"]] == [
        ("first", "Bank x"),
        ("second", "Bank x"),
    ]
    assert fleet["causes"][0]["scope"] == "platform"


def test_smoke_runs_are_said_to_be_no_conformance_verdict(tmp_path: Path) -> None:
    folder = _write_run(tmp_path / "a", "a", "2026-11-28T02:00:00+00:00", _cause(OWN))
    document = json.loads((folder / "compliance.json").read_text())
    document["run"]["selection"] = {"smoke": "one positive and one negative scenario"}
    (folder / "compliance.json").write_text(json.dumps(document))
    markdown = render_fleet_markdown(build_fleet(collect_runs([tmp_path]), tmp_path))
    assert "(1 of the verdicts from smoke runs or selections: no conformance verdict)" in markdown
    assert "(1 cause, smoke run)" in markdown
