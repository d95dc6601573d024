"""The generated references are in sync with what they are generated from (``make docs``,
``scripts/reference_docs.py``): the CLI reference with the argparse parsers, the profile reference
with the profile model's field descriptions, the silences reference with ``schemas/silences.json``,
the README's exit-code table with ``conformance.errors.EXIT_CODES``; and that table is the one
``conformance run --help`` prints."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from script_support import load_script

from conformance.cli import main
from conformance.errors import EXIT_CODES, INTERRUPTED_EXIT, ConformanceError, TargetError
from conformance.profile.key_docs import NOT_A_KEY, rows_of
from conformance.profile.model import TargetProfile
from conformance.report.verdicts import NOT_JUDGED_EXIT

ROOT = Path(__file__).resolve().parents[2]


GENERATOR = load_script("reference_docs")


@pytest.mark.parametrize("path", sorted(GENERATOR.generated(), key=str), ids=lambda p: p.name)
def test_the_generated_file_is_in_sync(path: Path) -> None:
    expected = GENERATOR.generated()[path]
    assert path.read_text(encoding="utf-8") == expected, (
        f"{path.relative_to(ROOT)} is stale: run `make docs`"
    )


def test_every_profile_field_is_described() -> None:
    undescribed = [
        field.name for field in dataclasses.fields(TargetProfile) if rows_of(field.metadata) is None
    ]
    assert undescribed == [], "give each a row in conformance/profile/key_docs.py"


def test_the_profile_reference_names_the_keys_the_loader_reads() -> None:
    page = (ROOT / "docs" / "reference" / "profile.md").read_text(encoding="utf-8")
    for key in (
        "`base_url`",
        "`[sca] mode`",
        "`[[waivers]] scenarios`",
        "`[prepared] aged_consent_id`",
    ):
        assert f"| {key}" in page
    described = sum(1 for field in dataclasses.fields(TargetProfile) if field.metadata != NOT_A_KEY)
    assert described > 30


def test_the_exit_codes_are_the_ones_the_code_returns() -> None:
    codes = [code for code, _ in EXIT_CODES]
    assert codes[:4] == ["0", "1", str(ConformanceError.exit_code), str(TargetError.exit_code)]
    assert str(NOT_JUDGED_EXIT) in codes and codes[-1] == str(INTERRUPTED_EXIT)
    assert len(set(codes)) == len(codes)  # an interrupt has its own code, apart from usage (2)


def test_run_help_prints_the_exit_code_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for code, meaning in EXIT_CODES:
        assert f"{code} {' '.join(meaning.split())}" in shown


def test_a_stale_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(GENERATOR, "ROOT", tmp_path)
    monkeypatch.setattr(GENERATOR, "generated", lambda: {stale: "new\n"})
    assert GENERATOR.main(["--check"]) == 1
    assert stale.read_text(encoding="utf-8") == "old\n"
    assert GENERATOR.main([]) == 0
    assert stale.read_text(encoding="utf-8") == "new\n"


def test_the_requirements_reference_lists_every_requirement() -> None:
    """One row per requirement: each row of ``rules.json``, each requirement every operation has
    (``Contract.requirements``) and each rule id a scenario has."""
    from conformance.contract import load_contract
    from conformance.generate import generate_scenarios

    contract = load_contract()
    flows = {row.name for row in contract.flows}
    expected = (
        {rule.id for rule in contract.rules}
        | {scenario.rule for scenario in generate_scenarios(contract)}
        | {key[0] for key in contract.requirements if key[0] not in flows}
    )
    page = (ROOT / "docs" / "reference" / "requirements.md").read_text(encoding="utf-8")
    rows = [line.split(" | ")[0].removeprefix("| ") for line in page.splitlines()]
    listed = [row for row in rows if row in expected]
    assert sorted(listed) == sorted(expected)
