"""Deliberately broken signers for the negative scenarios of spec 5: each overrides one step of
:class:`~conformance.signing.signer.SignatureAuth`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import httpx
from cryptography.hazmat.primitives.asymmetric import rsa

from conformance.signing.canonical import sign_signing_string
from conformance.signing.signer import SignatureAuth


@cache
def _throwaway_key() -> rsa.RSAPrivateKey:
    """An RSA-2048 key that belongs to no certificate (made once per process)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class StaleDigestSigner(SignatureAuth):
    """Digest of another body (the body before a last edit): expect DIGEST_MISMATCH (5.4).
    The Digest is sent even without a body, so the fault never vanishes on a GET."""

    def wants_digest(self, body: bytes) -> bool:
        return True

    def digest_input(self, body: bytes) -> bytes:
        return body + b"\n"


class WrongKeySigner(SignatureAuth):
    """Signs with a key that is not the certificate's: expect BAD_SIGNATURE (spec 5.2)."""

    def signature(self, signing_string: str) -> str:
        return sign_signing_string(signing_string, _throwaway_key())


class KeyIdSerialMismatchSigner(SignatureAuth):
    """keyId names another serial than the certificate's: expect KEYID_MISMATCH (spec 5.2)."""

    @property
    def key_id(self) -> str:
        serial = self.credentials.certificate.serial_number + 1
        return f"SN={serial:x},CA={self.credentials.issuer}"


class KeyIdIssuerMismatchSigner(SignatureAuth):
    """keyId names another CA than the certificate's issuer: expect KEYID_MISMATCH (spec 5.2)."""

    other_issuer = "CN=Not The Issuing CA,O=PSD2 Conformance Suite,C=NO"

    @property
    def key_id(self) -> str:
        return f"SN={self.credentials.serial_hex},CA={self.other_issuer}"


class IncompleteHeadersSigner(SignatureAuth):
    """Leaves a present spec 5 header out of the list (``omitted`` when present, else the last
    one): expect HEADERS_INCOMPLETE (spec 5.2)."""

    omitted = "x-request-id"

    def header_names(self, present: Mapping[str, str]) -> tuple[str, ...]:
        names = super().header_names(present)
        dropped = self.omitted if self.omitted in names else names[-1]
        return tuple(name for name in names if name != dropped)


class WrongAlgorithmSigner(SignatureAuth):
    """Names an algorithm the RSA certificate does not have: expect UNSUPPORTED_ALGORITHM."""

    algorithm_name = "hmac-sha256"


class NoSignatureSigner(SignatureAuth):
    """Sends the certificate but no Signature header: expect MISSING_HEADER (spec 5.2)."""

    def outgoing(self, request: httpx.Request) -> httpx.Request:
        del request.headers["Signature"]
        return request


class NoDigestSigner(SignatureAuth):
    """Signs a body without a Digest header: expect MISSING_HEADER Digest (spec 5.4)."""

    def wants_digest(self, body: bytes) -> bool:
        return False


class BodyChangedAfterSigningSigner(SignatureAuth):
    """Sends a body one byte longer than the one signed and digested: expect DIGEST_MISMATCH."""

    def outgoing(self, request: httpx.Request) -> httpx.Request:
        headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
        return httpx.Request(
            request.method,
            request.url,
            headers=headers,
            content=request.content + b" ",
            extensions=request.extensions,
        )
