"""Trusted time for a sealed record: an RFC 3161 time-stamp token over the seal (``run --seal
... --tsa URL``), kept beside it as ``timestamp.tsr``, and its check (``verify --tsa-trust``).

The token is asked for the bytes of ``seal.jws``: the detached JWS whose signature covers
``manifest.json``, so the token shows that the signed manifest existed at its time. A token over
the manifest alone would show only that the content did, not the signature: a key compromised
later could sign the same manifest again. The seal's certificate chain is then validated at the
token's time instead of the time of verification, when a time-stamping authority the verifier
trusts (``--tsa-trust``) signed it.

The token is built, parsed and checked by ``rfc3161-client`` (the library sigstore-python
uses): the request with a nonce, the answer's status, its message imprint, the CMS signature, the
TSA certificate's critical ``timeStamping`` purpose and its chain to a trusted root at the
token's time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

import httpx
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from rfc3161_client import (
    TimestampRequestBuilder,
    TimeStampResponse,
    VerificationError,
    VerifierBuilder,
    decode_timestamp_response,
)

from conformance.errors import CertificateError, ConformanceError

__all__ = ["TIMESTAMP", "Timestamp", "checked_timestamp", "request_timestamp"]

#: The token's file in a sealed record (a DER TimeStampResp, RFC 3161 section 2.4.2).
TIMESTAMP: Final = "timestamp.tsr"
_QUERY_TYPE: Final = "application/timestamp-query"
_REPLY_TYPE: Final = "application/timestamp-reply"
#: A reason (or its data) in an OpenSSL error stack, as the library prints it.
_REASON: Final = re.compile(r'(?:reason|data): "([^"]+)"')
#: How long a time-stamping authority may take to answer.
_TIMEOUT: Final = 30.0


@dataclass(frozen=True)
class Timestamp:
    """A checked token: when, and by whom (the TSA certificate's subject)."""

    time: datetime
    authority: str
    #: Whether the TSA's chain leads to a CA the verifier trusts (else only within itself).
    trusted: bool


def request_timestamp(url: str, data: bytes) -> bytes:
    """The time-stamp response of the authority at ``url`` for ``data`` (its SHA-512 imprint,
    a nonce, the TSA certificate asked for), checked to answer this request."""
    request = TimestampRequestBuilder().data(data).nonce(nonce=True).cert_request(cert_request=True)
    built = request.build()
    try:
        answer = httpx.post(
            url,
            content=built.as_bytes(),
            headers={"Content-Type": _QUERY_TYPE, "Accept": _REPLY_TYPE},
            timeout=_TIMEOUT,
        )
    except httpx.HTTPError as error:
        raise ConformanceError(f"--tsa {url}: no answer ({error})") from None
    if answer.status_code != 200:
        raise ConformanceError(f"--tsa {url}: HTTP {answer.status_code}, not a time-stamp")
    try:
        response = decode_timestamp_response(answer.content)
    except ValueError as error:
        raise ConformanceError(f"--tsa {url}: not a time-stamp response ({error})") from None
    if response.status not in (0, 1):  # granted, granted with modifications
        said = "; ".join(response.status_string) or "no reason given"
        raise ConformanceError(f"--tsa {url}: refused (status {response.status}: {said})")
    if response.tst_info.nonce != built.nonce:
        raise ConformanceError(f"--tsa {url}: the answer is not to this request (nonce)")
    if response.tst_info.message_imprint.message != built.message_imprint.message:
        raise ConformanceError(f"--tsa {url}: the token is over other data (message imprint)")
    return answer.content


def checked_timestamp(
    token: bytes, data: bytes, trust: tuple[x509.Certificate, ...] = ()
) -> Timestamp:
    """The time a token over ``data`` states, once it verifies: signed by a time-stamping
    certificate whose chain leads to one of ``trust`` at the token's time (without ``trust``,
    to the self-signed certificate the token carries: checked within itself only). Anything
    else is a :class:`CertificateError` saying what."""
    try:
        response = decode_timestamp_response(token)
    except ValueError as error:
        raise CertificateError(f"{TIMESTAMP} is not a time-stamp response ({error})") from None
    carried = _carried(response)
    roots = trust or tuple(cert for cert in carried if cert.issuer == cert.subject)
    if not roots:
        raise CertificateError(
            f"{TIMESTAMP}: its chain ends at no self-signed certificate: give the TSA's CA "
            "with --tsa-trust"
        )
    # Only the roots: rfc3161-client trusts every certificate it is given, so none the token
    # carries is given to it (the TSA certificate is found in the token by its signer).
    builder = VerifierBuilder()
    for root in roots:
        builder = builder.add_root_certificate(root)
    try:
        builder.build().verify_message(response, data)
    except (VerificationError, ValueError) as error:
        raise CertificateError(
            f"{TIMESTAMP} does not verify over seal.jws: {_said(error)}"
        ) from None
    signer = next(iter(response.signed_data.signer_infos))
    leaf = next(
        (
            c
            for c in carried
            if c.issuer == signer.issuer and c.serial_number == signer.serial_number
        ),
        None,
    )
    authority = (
        leaf.subject.rfc4514_string() if leaf is not None else signer.issuer.rfc4514_string()
    )
    time = response.tst_info.gen_time
    time = time if time.tzinfo is not None else time.replace(tzinfo=UTC)
    return Timestamp(time, authority, trusted=bool(trust))


def _said(error: Exception) -> str:
    """The library's error in a line: OpenSSL's error stack cut down to its reasons."""
    text = str(error)
    head, _, stack = text.partition(": ErrorStack(")
    if not stack:
        return text
    reasons = list(dict.fromkeys(_REASON.findall(stack)))[-2:]  # the outermost ones
    return f"{head}: {'; '.join(reasons)}" if reasons else head


def _carried(response: TimeStampResponse) -> tuple[x509.Certificate, ...]:
    """The certificates the token carries (its SignedData's ``certificates``), in a stable
    order."""
    certificates = [
        x509.load_der_x509_certificate(der) for der in response.signed_data.certificates
    ]
    return tuple(sorted(certificates, key=lambda cert: cert.public_bytes(Encoding.DER)))
