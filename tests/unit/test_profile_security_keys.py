"""The profile keys of certificates and tokens (profiles/README.md): ``[key_id]``, ``[oauth]``,
``[negative_certificates]``; each read, each mistake one clear ProfileError, and each reaching the
part of the suite that uses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.bankside.client import TargetClient
from conformance.errors import CertificateError, ProfileError
from conformance.profile import NegativeCertificate, load_profile, profile_from_options
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
    wanted = f"SN={serial},CA=O=PSD2%20Conformance%20Suite,CN=Conformance%20Generated%20Test%20CA"
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


def test_negative_certificates_are_read_relative_to_the_profile(tmp_path: Path) -> None:
    for name in ("expired.p12", "no-role.pem", "no-role.key"):
        (tmp_path / name).write_text("placeholder\n")
    text = (
        'base_url = "http://h"\n[negative_certificates]\nexpired = "expired.p12"\n'
        'no_role = "no-role.pem"\nno_role_key = "no-role.key"\npassword_env = "NEG_PASSWORD"\n'
    )
    settings = load_profile(write(tmp_path, text)).negative_certificates
    assert settings.get("expired") == NegativeCertificate(tmp_path / "expired.p12")
    assert settings.get("no_role") == NegativeCertificate(
        tmp_path / "no-role.pem", tmp_path / "no-role.key"
    )
    assert settings.get("revoked") is None
    assert settings.password({"NEG_PASSWORD": "s3cret"}) == "s3cret"
    with pytest.raises(CertificateError, match="NEG_PASSWORD, which is not set"):
        settings.password({})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[negative_certificates]\nexpired = "nowhere.pem"\n', r"expired names 'nowhere\.pem'"),
        ('[negative_certificates]\nrevoked_key = "k.pem"\n', r"revoked_key is given without"),
        ('[negative_certificates]\nstale = "x"\n', r"unknown key 'stale'"),
    ],
)
def test_negative_certificate_mistakes_are_named(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "k.pem").write_text("placeholder\n")
    with pytest.raises(ProfileError, match=expected):
        load_profile(write(tmp_path, 'base_url = "http://h"\n' + text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[oauth]\nclient_id = "c"\nauth = "client_secret"\n', r"oauth\.token_url is required"),
        (
            '[oauth]\ntoken_url = "/t"\nclient_id = "c"\nauth = "password"\n',
            r"oauth\.auth must be one of tls_client_auth, private_key_jwt, client_secret",
        ),
        (
            '[oauth]\ntoken_url = "/t"\nclient_id = "c"\nauth = "client_secret"\n',
            r"oauth\.client_secret_env is required",
        ),
        (
            '[oauth]\ntoken_url = "/t"\nclient_id = "c"\nauth = "private_key_jwt"\n'
            'client_secret_env = "X"\n',
            r"client_secret_env is only used",
        ),
        (
            '[oauth]\ntoken_url = "t"\nclient_id = "c"\nauth = "private_key_jwt"\n',
            r"a path must start with '/'",
        ),
        (
            '[oauth]\ntoken_url = "/t"\nclient_id = "c"\nauth = "private_key_jwt"\n'
            'client_secret = "in-the-file"\n',
            r"unknown key 'client_secret' in \[oauth\]",
        ),
        ('[sca]\napproach = "oauth"\n', r'sca\.approach is "oauth": the \[oauth\] table'),
    ],
)
def test_oauth_mistakes_are_named(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ProfileError, match=expected):
        load_profile(write(tmp_path, 'base_url = "http://h"\n' + text))


def test_the_token_endpoint_can_be_pointed_elsewhere_and_authorization_is_masked(
    tmp_path: Path,
) -> None:
    text = (
        'base_url = "https://api.bank.example/psd2"\n[oauth]\n'
        'token_url = "https://auth.bank.example/token"\nclient_id = "c"\n'
        'auth = "client_secret"\nclient_secret_env = "BANK_SECRET"\n'
    )
    path = write(tmp_path, text)
    profile = profile_from_options(profile=path, environ={"BANK_SECRET": "x"})
    assert profile.oauth is not None
    assert profile.oauth.token_endpoint(profile.base_url) == "https://auth.bank.example/token"
    moved = profile_from_options(
        profile=path, environ={"CONFORMANCE_TOKEN_URL": "http://127.0.0.1:8000/oauth2/token"}
    )
    assert moved.oauth is not None and moved.oauth.token_url.startswith("http://127.0.0.1")
    assert "authorization" in profile.secret_headers
    assert profile.oauth.client_secret({"BANK_SECRET": "s"}) == "s"
    with pytest.raises(ProfileError, match="BANK_SECRET, which is not set"):
        profile.oauth.client_secret({})
