"""The ledger of the spec's silences (``schemas/silences.json``) is whole and true: every "not
shown" of ``../shared/spec/interface.md`` has its entry, every quote is found there verbatim,
and every reading, demand, profile, profile key and ``discover`` probe an entry names exists.
The cross-check against the reference server's tables is here, not in
``conformance.contract.silences``: the suite may not import the server."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conformance.contract.silences import PLAYER_KINDS, Silence, load_silences
from conformance.errors import ContractError
from reference_server.model.readings import LENIENT, STRICT, of_direction

ROOT = Path(__file__).resolve().parents[2]
#: The specification under test, beside the repository (absent from an installed wheel).
SPEC = ROOT.parent / "shared" / "spec" / "interface.md"
NOT_SHOWN = "not shown"
#: The entries other work relies on by id (issue 40).
RELIED_ON = ("unbounded-strings", "unshown-header-sets")


@pytest.fixture(scope="module")
def silences() -> tuple[Silence, ...]:
    return load_silences()


@pytest.fixture(scope="module")
def spec_lines() -> list[str]:
    if not SPEC.is_file():
        pytest.skip(f"the spec is not beside the repository ({SPEC}): an installed copy")
    return SPEC.read_text(encoding="utf-8").splitlines()


def test_every_not_shown_of_the_spec_has_one_entry(
    silences: tuple[Silence, ...], spec_lines: list[str]
) -> None:
    """Each "not shown" is one entry of kind not-shown, whose quote holds it and lies within its
    line (the whole table row, or the sentence)."""
    occurrences = [
        (number, line)
        for number, line in enumerate(spec_lines, start=1)
        for _ in range(line.count(NOT_SHOWN))
    ]
    assert len(occurrences) == 31, "interface.md no longer says 'not shown' 31 times"
    covered: dict[int, list[str]] = {}
    for entry in silences:
        if entry.kind != "not-shown":
            continue
        assert entry.quote.count(NOT_SHOWN) == 1, f"{entry.id}: quote one 'not shown'"
        lines = [number for number, line in occurrences if entry.quote in line]
        assert len(lines) == 1, f"{entry.id}: its quote is not within one 'not shown' line"
        covered.setdefault(lines[0], []).append(entry.id)
    missing = [
        f"line {number}: {line.strip()}" for number, line in occurrences if not covered.get(number)
    ]
    assert missing == [], "'not shown' without an entry in schemas/silences.json:\n" + "\n".join(
        missing
    )
    twice = {number: ids for number, ids in covered.items() if len(ids) > 1}
    assert twice == {}, f"one 'not shown' with several entries: {twice}"


def test_every_quote_is_found_verbatim_in_the_spec(
    silences: tuple[Silence, ...], spec_lines: list[str]
) -> None:
    spec = "\n".join(spec_lines)
    assert [entry.id for entry in silences if entry.quote not in spec] == []


def test_the_implicit_silences_hold_no_not_shown(silences: tuple[Silence, ...]) -> None:
    implicit = [entry for entry in silences if entry.kind == "implicit"]
    assert len(implicit) >= 15
    assert [entry.id for entry in implicit if NOT_SHOWN in entry.quote] == []


def test_ids_are_unique_and_the_relied_on_ones_are_there(silences: tuple[Silence, ...]) -> None:
    ids = [entry.id for entry in silences]
    assert len(ids) == len(set(ids))
    assert set(RELIED_ON) <= set(ids)


def test_every_player_exists(silences: tuple[Silence, ...]) -> None:
    """A permissive reading is a row of READINGS the permissive profile plays, a demand one the
    demanding profile plays, a profile is a file; a player still being added (``pending``) is not
    in its table yet (once it is, drop the note)."""
    tables = {"permissive": of_direction(LENIENT), "demanding": of_direction(STRICT)}
    unknown, stale = [], []
    for entry in silences:
        for row in entry.played_by:
            assert row.kind in PLAYER_KINDS
            if row.kind == "profile":
                exists = (ROOT / row.name).is_file()
            elif row.kind in tables:
                exists = row.name in tables[row.kind]
            else:
                exists = True
            if row.pending and exists:
                stale.append(f"{entry.id}: {row.player} exists now, drop its pending note")
            elif not row.pending and not exists:
                unknown.append(f"{entry.id}: {row.player}")
    assert unknown == [], "players that do not exist"
    assert stale == []


def test_every_reading_and_demand_plays_a_choice(silences: tuple[Silence, ...]) -> None:
    """The ledger is the readings' map: each permissive reading and demand plays some choice."""
    named = {row.player for entry in silences for row in entry.played_by}
    assert (
        sorted(
            f"permissive:{name}"
            for name in of_direction(LENIENT)
            if f"permissive:{name}" not in named
        )
        == []
    )
    assert (
        sorted(
            f"demanding:{name}" for name in of_direction(STRICT) if f"demanding:{name}" not in named
        )
        == []
    )


def _profile_keys() -> set[str]:
    """The keys of docs/reference/profile.md's key column, a table's section carried to the
    names after it (`[sca] poll_interval`, `poll_timeout`: also "[sca] poll_timeout")."""
    page = (ROOT / "docs" / "reference" / "profile.md").read_text(encoding="utf-8")
    keys: set[str] = set()
    for line in page.splitlines():
        if not line.startswith("| `"):
            continue
        section = ""
        for key in re.findall(r"`([^`]+)`", line.split(" | ")[0]):
            keys.add(key)
            if key.startswith("["):
                section = key.split("]", 1)[0] + "]"
            elif section:
                keys.add(f"{section} {key}")
    return keys


def test_every_profile_key_and_probe_exists(silences: tuple[Silence, ...]) -> None:
    keys = _profile_keys()
    discover = ROOT / "conformance" / "discover"
    for entry in silences:
        assert ("profile-key" in entry.suite.copes) == bool(entry.suite.keys), entry.id
        assert ("discover" in entry.suite.copes) == bool(entry.suite.probes), entry.id
        for key in entry.suite.keys:
            assert key in keys, f"{entry.id}: no profile key {key!r}"
        for probe in entry.suite.probes:
            assert (discover / f"{probe}.py").is_file(), f"{entry.id}: no discover probe {probe}"


def test_a_not_played_choice_says_why(silences: tuple[Silence, ...]) -> None:
    assert [
        entry.id
        for entry in silences
        for row in entry.played_by
        if row.kind == "not-played" and not row.reason.strip()
    ] == []


# --------------------------------------------------------------------------- the loader


def _copy(tmp_path: Path) -> tuple[Path, dict[str, object]]:
    for name in ("silences.json", "silences.schema.json"):
        shutil.copy(ROOT / "schemas" / name, tmp_path / name)
    return tmp_path, json.loads((tmp_path / "silences.json").read_text(encoding="utf-8"))


def _write(root: Path, doc: dict[str, object]) -> None:
    (root / "silences.json").write_text(json.dumps(doc), encoding="utf-8")


def test_the_loader_refuses_a_repeated_id(tmp_path: Path) -> None:
    root, doc = _copy(tmp_path)
    entries = doc["silences"]
    assert isinstance(entries, list)
    entries.append(entries[0])
    _write(root, doc)
    with pytest.raises(ContractError, match=re.escape("repeats an id")):
        load_silences(root)


def test_the_loader_refuses_a_choice_without_a_player(tmp_path: Path) -> None:
    root, doc = _copy(tmp_path)
    entries = doc["silences"]
    assert isinstance(entries, list)
    entries[0]["choices"].append("a choice nobody plays")
    _write(root, doc)
    with pytest.raises(ContractError, match="a choice nobody plays"):
        load_silences(root)


def test_the_loader_refuses_a_row_of_no_choice(tmp_path: Path) -> None:
    root, doc = _copy(tmp_path)
    entries = doc["silences"]
    assert isinstance(entries, list)
    entries[0]["played_by"][0]["choice"] = "no such choice"
    _write(root, doc)
    with pytest.raises(ContractError, match="is none of"):
        load_silences(root)


def test_the_loader_refuses_a_not_played_row_without_its_reason(tmp_path: Path) -> None:
    root, doc = _copy(tmp_path)
    entries = doc["silences"]
    assert isinstance(entries, list)
    entries[0]["played_by"][0] = {"choice": entries[0]["choices"][0], "player": "not-played"}
    _write(root, doc)
    with pytest.raises(ContractError, match=re.escape("silences.json#/silences/0/played_by/0")):
        load_silences(root)
