"""A profile that extends another (``extends``): the readings' profiles are the bundled server's
with their own keys on top, and the merge itself (tables key by key, lists whole, a base in the
same folder, no circle, every key of the base checked as the profile's own)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from conformance.discover.draft import profile_text
from conformance.errors import ProfileError
from conformance.profile import (
    DEMANDING_PROFILE,
    PERMISSIVE_PROFILE,
    REFERENCE_PROFILE,
    TargetProfile,
    load_profile,
    profile_data,
)

#: The fields a profile's own file and its place always set.
_ITS_OWN = {"name", "extends", "readings", "source"}


def _differing(one: TargetProfile, other: TargetProfile) -> set[str]:
    return {
        field.name
        for field in dataclasses.fields(TargetProfile)
        if getattr(one, field.name) != getattr(other, field.name)
    }


@pytest.mark.parametrize(
    ("reading", "keys"),
    [
        (PERMISSIVE_PROFILE, {"sca", "lifecycle", "operation_promises"}),
        (DEMANDING_PROFILE, {"sca", "setup_templates", "agreement_owner"}),
    ],
)
def test_a_reading_profile_extends_the_bundled_one(reading: Path, keys: set[str]) -> None:
    """Everything but what the reading's own file says is the bundled server's profile, so a
    key added to the bundled profile reaches the readings' runs too."""
    bundled, played = load_profile(REFERENCE_PROFILE), load_profile(reading)
    assert played.extends == REFERENCE_PROFILE.resolve()
    assert played.readings and not bundled.readings
    assert _differing(bundled, played) == _ITS_OWN | keys
    assert played.sca.start == "creation"  # the one key both readings need the suite told


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, "utf-8")
    return path


def test_keys_given_win_tables_merge_and_lists_are_replaced(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "base.toml",
        'base_url = "http://127.0.0.1:9"\nproducts = ["ndct", "ncbct"]\ndate_skew = 60\n'
        '[sca]\nmode = "manual"\napproach = "decoupled"\n',
    )
    child = _write(
        tmp_path,
        "child.toml",
        'extends = "base.toml"\nproducts = ["ndct"]\nreadings = ["sca-by-401"]\n'
        '[sca]\nstart = "creation"\n',
    )
    profile = load_profile(child)
    assert profile.extends == tmp_path / "base.toml"
    assert profile.base_url == "http://127.0.0.1:9" and profile.date_skew == 60
    assert profile.products == {"ndct"}
    assert (profile.sca.mode, profile.sca.approach, profile.sca.start) == (
        "manual",
        "decoupled",
        "creation",
    )
    assert profile.readings == {"sca-by-401"}
    assert profile.name == "child" and profile.source == child


def test_a_base_may_extend_another(tmp_path: Path) -> None:
    _write(tmp_path, "root.toml", 'base_url = "http://127.0.0.1:9"\nsandbox = false\n')
    _write(tmp_path, "middle.toml", 'extends = "root.toml"\ntimeout = 5\n')
    profile = load_profile(_write(tmp_path, "leaf.toml", 'extends = "middle.toml"\n'))
    assert (profile.sandbox, profile.connection.timeout) == (False, 5.0)


def test_an_unknown_key_of_the_base_is_an_error(tmp_path: Path) -> None:
    _write(tmp_path, "base.toml", 'base_url = "http://127.0.0.1:9"\nsandbx = false\n')
    with pytest.raises(ProfileError, match="sandbx"):
        load_profile(_write(tmp_path, "child.toml", 'extends = "base.toml"\n'))


def test_profiles_extending_in_a_circle_are_an_error(tmp_path: Path) -> None:
    _write(tmp_path, "a.toml", 'extends = "b.toml"\nbase_url = "http://127.0.0.1:9"\n')
    _write(tmp_path, "b.toml", 'extends = "a.toml"\n')
    with pytest.raises(ProfileError, match="circle"):
        load_profile(tmp_path / "a.toml")


@pytest.mark.parametrize("name", ["../base.toml", "sub/base.toml", "", "missing.toml"])
def test_the_base_is_a_file_of_the_same_folder(tmp_path: Path, name: str) -> None:
    with pytest.raises(ProfileError):
        load_profile(_write(tmp_path, "child.toml", f'extends = "{name}"\n'))


def test_a_copy_elsewhere_says_the_merged_keys(tmp_path: Path) -> None:
    """``profile_data`` (what ``conformance discover`` starts its draft from) merges the bases
    in, so the copy needs none of them and loads as the profile does."""
    data = profile_data(PERMISSIVE_PROFILE)
    assert "extends" not in data and data["base_url"] and data["readings"]
    copy = _write(tmp_path, "copy.toml", profile_text(data))
    assert _differing(load_profile(PERMISSIVE_PROFILE), load_profile(copy)) == {"extends", "source"}
