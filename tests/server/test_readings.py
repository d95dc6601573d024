"""The one table of readings (``reference_server/model/readings.py``), played as data of the bank
the server plays: a profile's ``readings`` (``--permissive`` and ``--demanding`` the shorthands of
the two profiles that play every reading of one direction), one name check, one question
(``app.reads``), each row consulted by the server and listed in its ``assumptions.md`` section."""

from __future__ import annotations

import argparse
import re
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.profile import DEMANDING_PROFILE, PERMISSIVE_PROFILE, load_profile
from reference_server import cli
from reference_server.app import Application
from reference_server.model.bank_style import BankStyle, style_of
from reference_server.model.readings import (
    DIRECTIONS,
    LENIENT,
    READINGS,
    STRICT,
    direction_of,
    of_direction,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("direction", [LENIENT, STRICT])
def test_a_reading_profile_plays_every_reading_of_its_direction_and_no_other(
    direction: str,
) -> None:
    app = Application(modules=(), bank=style_of(load_profile(DIRECTIONS[direction].profile)))
    assert app.readings == of_direction(direction)
    assert all(app.reads(name) == (direction_of(name) == direction) for name in READINGS)
    assert not any(Application(modules=()).reads(name) for name in READINGS)


def test_every_reading_is_played_by_exactly_one_direction() -> None:
    assert of_direction(LENIENT) and of_direction(STRICT)
    assert not of_direction(LENIENT) & of_direction(STRICT)
    assert of_direction(LENIENT) | of_direction(STRICT) == set(READINGS)


def test_an_unknown_reading_in_a_profile_stops_the_server() -> None:
    with pytest.raises(ValueError, match=r"unknown reading.*nope"):
        Application(modules=(), bank=BankStyle(readings=frozenset({"nope"})))


def test_an_unknown_name_asked_raises() -> None:
    with pytest.raises(ValueError, match="no reading is named"):
        Application(modules=()).reads("sca-by-402")


def test_readings_of_both_directions_play_together() -> None:
    bank = BankStyle(readings=frozenset({"sca-by-401", "numeric-sandbox-ids"}))
    assert Application(modules=(), bank=bank).readings == {"sca-by-401", "numeric-sandbox-ids"}


def _server_args(*argv: str) -> argparse.Namespace:
    return cli.build_parser().parse_args(list(argv))


@pytest.mark.parametrize(
    ("flag", "profile"), [("--permissive", PERMISSIVE_PROFILE), ("--demanding", DEMANDING_PROFILE)]
)
def test_a_reading_flag_is_the_shorthand_of_its_profile(flag: str, profile: Path) -> None:
    """``--permissive`` alone plays the permissive profile, as ``--profile`` that file does;
    with ``--profile`` another bank, that bank plays the readings on top of its own."""
    assert cli._played_profile(_server_args(flag)) == profile
    by_flag = cli._with_flagged_readings(_server_args(flag), style_of(load_profile(profile)))
    assert by_flag == style_of(load_profile(profile))
    other = ROOT / "profiles" / "examples" / "berlin-group-naming.toml"
    args = _server_args(flag, "--profile", str(other))
    assert cli._played_profile(args) == other
    played = cli._with_flagged_readings(args, style_of(load_profile(other)))
    assert played == replace(style_of(load_profile(other)), readings=load_profile(profile).readings)


def test_both_flags_play_both_directions_on_the_bundled_bank() -> None:
    args = _server_args("--permissive", "--demanding")
    assert cli._played_profile(args) is None
    played = cli._with_flagged_readings(args, None)
    assert played == BankStyle(readings=of_direction(LENIENT) | of_direction(STRICT))


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
