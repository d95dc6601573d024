"""What the mailable single-file Allure report is rendered from (issue 44 item 6): the passed
scenarios of an operation as one entry, attachments cut at a stated size and carried once,
failures' tracebacks and the pytest fixtures left out; the run's own allure-results untouched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.report.allure_single import ATTACHMENT_CUT, mailable_results


def _result(results: Path, name: str, status: str, **extra: Any) -> None:
    document = {
        "uuid": name,
        "name": f"title of {name}",
        "fullName": name,
        "status": status,
        "labels": [
            {"name": "epic", "value": "4.3 Operations"},
            {"name": "feature", "value": extra.pop("feature", "E16 Create NDCT payment")},
            {"name": "host", "value": "vm"},
        ],
        "start": 1,
        "stop": 2,
        **extra,
    }
    (results / f"{name}-result.json").write_text(json.dumps(document), encoding="utf-8")


def _results(tmp_path: Path) -> Path:
    results = tmp_path / "allure-results"
    results.mkdir()
    (results / "long-attachment.txt").write_text("x" * (ATTACHMENT_CUT * 3), encoding="utf-8")
    (results / "same-1-attachment.txt").write_text("the same exchange", encoding="utf-8")
    (results / "same-2-attachment.txt").write_text("the same exchange", encoding="utf-8")
    (results / "a-container.json").write_text('{"befores": []}', encoding="utf-8")
    (results / "environment.properties").write_text("Verdict=x\n", encoding="utf-8")
    exchange = [{"name": "01 POST", "source": "same-1-attachment.txt", "type": "text/plain"}]
    _result(results, "E16-a-accepted", "passed", attachments=exchange)
    _result(results, "E16-b-accepted", "passed")
    _result(results, "E1-c-accepted", "passed", feature="E1 Create signing basket")
    _result(
        results,
        "E16-d-rejected",
        "failed",
        statusDetails={"message": "m" * 20_000, "trace": "Traceback ..."},
        attachments=[
            {"name": "exchanges", "source": "long-attachment.txt", "type": "text/plain"},
            {"name": "again", "source": "same-1-attachment.txt", "type": "text/plain"},
            {"name": "twice", "source": "same-2-attachment.txt", "type": "text/plain"},
        ],
    )
    _result(
        results,
        "E16-e-rejected",
        "skipped",
        statusDetails={"message": "not applicable: the profile says E16 is not offered"},
    )
    return results


def _read(folder: Path) -> dict[str, dict[str, Any]]:
    return {
        str(document["fullName"]): document
        for document in (
            json.loads(path.read_text(encoding="utf-8")) for path in folder.glob("*-result.json")
        )
    }


def test_the_passed_scenarios_of_an_operation_are_one_entry(tmp_path: Path) -> None:
    carried = _read(mailable_results(_results(tmp_path), tmp_path / "carried"))
    group = carried["passed: 4.3 Operations / E16 Create NDCT payment"]
    assert group["status"] == "passed"
    assert group["name"] == "E16 Create NDCT payment: 2 scenario(s) passed"
    assert "- E16-a-accepted\n- E16-b-accepted" in group["description"]
    assert "passed: 4.3 Operations / E1 Create signing basket" in carried
    assert not any(name.endswith("-accepted") for name in carried)


def test_attachments_are_cut_and_carried_once_and_tracebacks_left_out(tmp_path: Path) -> None:
    results = _results(tmp_path)
    target = mailable_results(results, tmp_path / "carried")
    failed = _read(target)["E16-d-rejected"]
    assert "trace" not in failed["statusDetails"]
    assert len(failed["statusDetails"]["message"]) < 7_000
    assert (
        "compliance.md in the run's reports folder has it whole"
        in (failed["statusDetails"]["message"])
    )
    long, again, twice = (target / item["source"] for item in failed["attachments"])
    text = long.read_text(encoding="utf-8")
    assert text.startswith("x" * ATTACHMENT_CUT) and len(text) < ATTACHMENT_CUT + 300
    assert "allure-results/long-attachment.txt in the run's reports folder" in text
    assert again == twice  # the same content, one file
    assert not list(target.glob("*-container.json"))  # pytest's fixtures: no reader's business
    assert all(label["name"] != "host" for label in failed["labels"])
    assert (target / "environment.properties").is_file()
    # the run's own results stay whole
    assert len((results / "long-attachment.txt").read_text(encoding="utf-8")) == 3 * ATTACHMENT_CUT
    assert (
        "trace"
        in json.loads((results / "E16-d-rejected-result.json").read_text("utf-8"))["statusDetails"]
    )
