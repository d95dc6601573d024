"""The one table of readings (``reference_server/model/readings.py``): the lenient ones
``--permissive`` plays and the strict ones ``--demanding`` plays, one name check, one question
(``app.reads``), each row consulted by the server and listed in its ``assumptions.md`` section."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reference_server.app import Application
from reference_server.model.readings import DIRECTIONS, LENIENT, READINGS, STRICT, of_direction

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("switch", "direction"), [("permissive", LENIENT), ("demanding", STRICT)])
def test_a_switch_plays_every_reading_of_its_direction_and_no_other(
    switch: str, direction: str
) -> None:
    app = Application(modules=(), **{switch: True})  # type: ignore[arg-type]
    assert app.readings == of_direction(direction)
    assert all(app.reads(name) == (READINGS[name].direction == direction) for name in READINGS)
    assert not any(Application(modules=()).reads(name) for name in READINGS)
    word = DIRECTIONS[direction].word
    with pytest.raises(ValueError, match=f"unknown {word} reading"):
        Application(modules=(), **{switch: ["nope"]})  # type: ignore[arg-type]
    other = next(name for name in READINGS if READINGS[name].direction != direction)
    with pytest.raises(ValueError, match=f"unknown {word} reading"):
        Application(modules=(), **{switch: [other]})  # type: ignore[arg-type]


def test_an_unknown_name_asked_raises() -> None:
    with pytest.raises(ValueError, match="no reading is named"):
        Application(modules=()).reads("sca-by-402")


def test_both_directions_play_together() -> None:
    app = Application(modules=(), permissive=["sca-by-401"], demanding=["numeric-sandbox-ids"])
    assert app.readings == {"sca-by-401", "numeric-sandbox-ids"}


def test_every_reading_is_consulted_by_the_server() -> None:
    sources = "".join(p.read_text("utf-8") for p in (ROOT / "reference_server").rglob("*.py"))
    used = set(re.findall(r'reads\(\s*"([a-z0-9]+(?:-[a-z0-9]+)+)"', sources))
    assert used == set(READINGS)


@pytest.mark.parametrize("direction", [LENIENT, STRICT])
def test_every_reading_is_listed_in_its_section_of_assumptions(direction: str) -> None:
    assumptions = (ROOT / "reference_server" / "assumptions.md").read_text("utf-8")
    heading = DIRECTIONS[direction].heading
    section = assumptions.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    for name in of_direction(direction):
        assert f"`{name}`" in section, name
