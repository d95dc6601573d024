"""Secrets and personal data of a real target are masked in every report text
(``conformance/report/masking.py``): header values, ids seen once and met again in paths and
bodies, SCA link tokens; account numbers and names when the profile asks; nothing but identity
numbers for the bundled reference server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.profile import REFERENCE_PROFILE, load_profile
from conformance.report.masking import (
    MaskPolicy,
    configure_masking,
    mask_value,
    policy_for,
    scrub,
    secrets_masked,
)

CONSENT = "3f2a9c1e-aaaa-bbbb-cccc-1234567890ab"
PSU = "6f2c0a4e-0b8e-4b36-9d7a-1c0f6ad1f001"
EXCHANGE = f"""\
>>> GET https://bank.example/v1/consents/{CONSENT}/status
Consent-ID: {CONSENT}
PSU-ID: {PSU}
PSU-IP-Address: 198.51.100.24
Authorization: Bearer abc.def.ghi
Cookie: session=s3cr3t

Signing string:
    psu-id: {PSU}

<<< HTTP 200 OK (12.0 ms)
Set-Cookie: gw=abcdef; Path=/
Location: https://bank.example/sca/start?session=xyz&token=123

{{"consentId": "{CONSENT}", "_links": {{"scaRedirect": {{"href": \
"https://bank.example/sca?ticket=T0K3N&lang=no"}}}}, "creditorName": "Ola Nordmann", \
"iban": "NO9386011117947", "bban": "86011117947"}}
"""


@pytest.fixture(autouse=True)
def reset() -> Iterator[None]:
    yield
    configure_masking(MaskPolicy())


def test_secrets_are_masked_wherever_they_appear() -> None:
    configure_masking(MaskPolicy(secrets=True))
    text = scrub(EXCHANGE)
    for secret in (CONSENT, PSU, "198.51.100.24", "abc.def.ghi", "s3cr3t", "abcdef", "T0K3N"):
        assert secret not in text, secret
    assert "xyz" not in text and "token=123" not in text
    assert f"/v1/consents/{mask_value(CONSENT)}/status" in text  # the id in the path too
    assert f"Consent-ID: ***{CONSENT[-4:]}" in text  # the last four tell two ids apart
    assert "Ola Nordmann" in text and "NO9386011117947" in text  # not asked for
    assert secrets_masked()


def test_an_id_seen_once_is_masked_in_later_texts() -> None:
    configure_masking(MaskPolicy(secrets=True))
    scrub(f"Consent-ID: {CONSENT}")
    assert CONSENT not in scrub(f"GET /v1/consents/{CONSENT}")


def test_a_placeholder_in_a_reproduction_command_is_kept() -> None:
    configure_masking(MaskPolicy(secrets=True))
    command = (
        'conformance call GET /v1/x -H "X-PSU-IDENTITY: ${PSU_IDENTITY}" -H \'PSU-ID: ' + PSU + "'"
    )
    text = scrub(command)
    assert "${PSU_IDENTITY}" in text and PSU not in text


def test_accounts_and_names_when_the_profile_asks() -> None:
    configure_masking(MaskPolicy(accounts=True, names=True))
    text = scrub(EXCHANGE)
    assert "Ola Nordmann" not in text and '"creditorName": "***"' in text
    assert "NO9386011117947" not in text and "NO***7947" in text
    assert "86011117947" not in text
    assert CONSENT in text  # secrets not asked for here


def test_a_name_cut_short_is_masked_to_its_line_end_never_across_lines() -> None:
    """A failure message shortens a body with "…": the name's closing quote is gone, and the
    mask must not swallow the exchange that follows (the request line, the signature)."""
    configure_masking(MaskPolicy(names=True))
    text = scrub(
        'The target answered: HTTP 201 with [{"creditorName":"Ola \\"N\\" Nordmann","a":1,'
        '"debtorName":"Kari No…\n\nExchange:\n    >>> POST /v1/x\n    Signature: keyId="SN=1"'
    )
    assert "Nordmann" not in text and "Kari" not in text
    assert '"a":1' in text and ">>> POST /v1/x" in text and 'keyId="SN=1"' in text


def test_identity_numbers_are_masked_whatever_the_policy() -> None:
    configure_masking(MaskPolicy())
    assert "01017000027" not in scrub("nationalIdentityNumber: 01017000027")
    assert scrub(EXCHANGE) == EXCHANGE  # nothing of the above without a policy


def test_the_policy_follows_the_profile(tmp_path: Path) -> None:
    assert policy_for(load_profile(REFERENCE_PROFILE)) == MaskPolicy()  # made-up data
    bank = tmp_path / "bank.toml"
    bank.write_text('base_url = "https://bank.example"\n', encoding="utf-8")
    assert policy_for(load_profile(bank)) == MaskPolicy(secrets=True)
    bank.write_text(
        'base_url = "https://bank.example"\n'
        "[mask]\nsecrets = false\naccounts = true\nnames = true\n",
        encoding="utf-8",
    )
    assert policy_for(load_profile(bank)) == MaskPolicy(secrets=False, accounts=True, names=True)


def test_an_api_key_from_the_environment_is_masked_even_when_secrets_are_shown() -> None:
    configure_masking(MaskPolicy(headers=frozenset({"x-ibm-client-id"})))
    text = scrub("X-IBM-Client-Id: demo-client-id\nConsent-ID: " + CONSENT)
    assert "demo-client-id" not in text and "X-IBM-Client-Id: ***" in text
    assert CONSENT in text  # secrets are shown under this policy; the key is not
