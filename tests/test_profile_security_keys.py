"""The profile keys of certificates and tokens (profiles/README.md): ``[key_id]``, ``[oauth]``,
``[negative_certificates]``; each read, each mistake one clear ProfileError, and each reaching the
part of the suite that uses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.bankside.client import TargetClient
from conformance.errors import ProfileError
from conformance.profile import load_profile
from conformance.signing import KeyIdStyle, default_identity


def write(folder: Path, text: str, name: str = "target.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_key_id_style_is_read_and_reaches_the_signer(tmp_path: Path) -> None:
    text = (
        'base_url = "http://h"\n[key_id]\nserial = "upper"\nissuer = "reversed"\n'
        "url_encoded = true\n"
    )
    profile = load_profile(write(tmp_path, text))
    assert profile.key_id == KeyIdStyle(upper_serial=True, reversed_issuer=True, url_encoded=True)
    with TargetClient.from_profile(profile) as client:
        signer = client.make_signer()
    serial = format(default_identity().certificate.serial_number, "X")
    # certificate order (O before CN), spaces percent-encoded
    wanted = f"SN={serial},CA=O=PSD2%20Conformance%20Suite,CN=Conformance%20Test%20CA"
    assert signer.key_id == wanted  # type: ignore[attr-defined]


def test_key_id_style_defaults_to_lower_case_and_rfc4514(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, 'base_url = "http://h"\n'))
    assert profile.key_id == KeyIdStyle()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[key_id]\nserial = "mixed"\n', r"key_id\.serial must be one of lower, upper"),
        ('[key_id]\nissuer = "ldap"\n', r"key_id\.issuer must be one of rfc4514, reversed"),
        ("[key_id]\nurl_encoded = 1\n", r"key_id\.url_encoded must be true or false"),
        ("[key_id]\ncase = 1\n", r"unknown key 'case' in \[key_id\]"),
    ],
)
def test_key_id_mistakes_are_named(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ProfileError, match=expected):
        load_profile(write(tmp_path, 'base_url = "http://h"\n' + text))
