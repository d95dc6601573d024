"""The per-certificate caches of the verifier (``conformance.signing``,
``conformance.signing.certificates``).

A server verifies every request; what depends only on the certificate (its parsing, its keyId
issuer comparison, its PSD2 roles, the CA's signature over it) is remembered per certificate.
These tests prove that nothing depending on the request or the time is remembered with it:
validity follows ``now`` on every call, a different keyId or certificate gets its own verdict, a
certificate that does not load is refused every time, and repeated calls give equal answers.
"""

from __future__ import annotations

import base64
import datetime as dt
from functools import cache

import httpx
from cryptography.hazmat.primitives import serialization

from conformance import signing
from conformance.signing import (
    CertificateAuthority,
    KeyIdIssuerMismatchSigner,
    SignatureAuth,
    TppIdentity,
    VerificationFailure,
    generate_ca,
    generate_tpp_identity,
    read_psd2_roles,
    read_psd2_statement,
    verify_chain,
    verify_httpx_request,
    verify_request,
)

NOW = dt.datetime(2026, 3, 1, 10, 0, tzinfo=dt.UTC)


@cache
def _ca() -> CertificateAuthority:
    return generate_ca(now=NOW)


@cache
def _identity(roles: tuple[str, ...] = ("PSP_PI", "PSP_AI")) -> TppIdentity:
    return generate_tpp_identity(
        _ca(),
        roles=roles,
        not_before=NOW - dt.timedelta(days=1),
        not_after=NOW + dt.timedelta(days=30),
    )


def _signed(identity: TppIdentity, signer: type[SignatureAuth] = SignatureAuth) -> httpx.Request:
    request = httpx.Request(
        "POST",
        "https://bank.example/v1/payments/norwegian-domestic-credit-transfers",
        headers={"X-Request-ID": "99391c7e-ad88-49ec-a2ad-99ddcb1f7721"},
        content=b'{"a": 1}',
    )
    return next(signer(identity.signing_credentials()).sync_auth_flow(request))


def test_a_cached_certificate_is_still_judged_at_each_moment() -> None:
    request = _signed(_identity())
    assert verify_httpx_request(request, now=NOW).ok
    later = verify_httpx_request(request, now=NOW + dt.timedelta(days=31))
    assert later.failure is VerificationFailure.BAD_CERTIFICATE
    earlier = verify_httpx_request(request, now=NOW - dt.timedelta(days=2))
    assert earlier.failure is VerificationFailure.BAD_CERTIFICATE
    assert verify_httpx_request(request, now=NOW).ok


def test_the_same_header_gives_the_same_certificate_object() -> None:
    request = _signed(_identity())
    first = verify_httpx_request(request, now=NOW).certificate
    second = verify_httpx_request(request, now=NOW).certificate
    assert first is second
    der = _identity().certificate.public_bytes(serialization.Encoding.DER)
    assert first is not None and first.public_bytes(serialization.Encoding.DER) == der


def test_an_unreadable_certificate_is_refused_every_time() -> None:
    request = _signed(_identity())
    headers = dict(request.headers)
    headers["tpp-signature-certificate"] = base64.b64encode(b"not a certificate").decode()
    for _ in range(2):
        verdict = verify_request(
            "POST", request.url.raw_path.decode(), headers, request.content, now=NOW
        )
        assert verdict.failure is VerificationFailure.BAD_CERTIFICATE


def test_the_keyid_issuer_is_compared_per_request_after_a_success() -> None:
    assert verify_httpx_request(_signed(_identity()), now=NOW).ok
    mismatch = verify_httpx_request(_signed(_identity(), KeyIdIssuerMismatchSigner), now=NOW)
    assert mismatch.failure is VerificationFailure.KEYID_MISMATCH
    assert verify_httpx_request(_signed(_identity()), now=NOW).ok


def test_issuer_text_keys_follow_the_text() -> None:
    issuer = _ca().certificate.subject
    text = issuer.rfc4514_string()
    assert signing.issuer_matches(text, issuer)
    assert signing.issuer_matches(text.upper(), issuer)
    assert not signing.issuer_matches("CN=Someone Else", issuer)
    assert signing.issuer_matches(text, issuer)


def test_roles_are_read_once_per_certificate_and_stay_right() -> None:
    payments_only = _identity(("PSP_PI",))
    both = _identity()
    for _ in range(2):
        assert read_psd2_roles(payments_only.certificate) == frozenset({"PSP_PI"})
        assert read_psd2_roles(both.certificate) == frozenset({"PSP_PI", "PSP_AI"})
    assert read_psd2_statement(both.certificate) is read_psd2_statement(both.certificate)


def test_the_chain_verdict_is_remembered_but_validity_follows_the_clock() -> None:
    identity, ca = _identity(), _ca()
    assert verify_chain(identity.certificate, ca.certificate, now=NOW) is None
    expired = verify_chain(identity.certificate, ca.certificate, now=NOW + dt.timedelta(days=31))
    assert expired is not None and "expired" in expired
    assert verify_chain(identity.certificate, ca.certificate, now=NOW) is None
    other = generate_ca(now=NOW, common_name="Another CA")
    assert "not by the CA" in (verify_chain(identity.certificate, other.certificate, now=NOW) or "")
