"""Verifying a signed request (spec 5), as the reference server and the tests do: the first
requirement it breaks, as a :class:`VerificationFailure`.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import rsa

from conformance.signing.canonical import (
    DIGEST_ALGORITHMS,
    SIGNATURE_ALGORITHM,
    SPEC5_SIGNED_HEADERS,
    SigningStringError,
    decode_header_value,
    lowercased,
    signing_string_of,
    verify_signature,
)
from conformance.signing.keyid import (
    SignatureParameters,
    dn_text_key,
    keys_match,
    parse_signature_header,
    parsed_key_id,
    signing_certificate,
)


class VerificationFailure(enum.StrEnum):
    """Why a request's signature is rejected; the first failed check in the order of
    :func:`verify_request`."""

    MISSING_HEADER = enum.auto()
    MALFORMED_SIGNATURE = enum.auto()
    BAD_CERTIFICATE = enum.auto()
    UNSUPPORTED_ALGORITHM = enum.auto()
    KEYID_MISMATCH = enum.auto()
    DIGEST_MISMATCH = enum.auto()
    UNSUPPORTED_DIGEST_ALGORITHM = enum.auto()
    HEADERS_INCOMPLETE = enum.auto()
    BAD_SIGNATURE = enum.auto()


@dataclass(frozen=True)
class Verification:
    """The verdict on one request. ``header`` names the header concerned for MISSING_HEADER and
    HEADERS_INCOMPLETE; ``signing_string`` is the string the verifier rebuilt (when the listed
    headers allowed it), ``certificate`` and ``parameters`` what it parsed."""

    ok: bool
    failure: VerificationFailure | None = None
    detail: str = ""
    header: str | None = None
    signing_string: str | None = None
    certificate: x509.Certificate | None = None
    parameters: SignatureParameters | None = None


def _check_digest(value: str, body: bytes) -> tuple[VerificationFailure, str] | None:
    """Spec 5.4: every SHA-256/SHA-512 instance digest in ``value`` matches ``body``."""
    supported = 0
    for item in value.split(","):
        name, sep, encoded = item.strip().partition("=")
        algorithm = name.strip().upper()
        if not sep or algorithm not in DIGEST_ALGORITHMS:
            continue
        supported += 1
        try:
            received = base64.b64decode(encoded.strip(), validate=True)
        except binascii.Error:
            return VerificationFailure.DIGEST_MISMATCH, f"Digest {algorithm} value is not base64"
        expected = DIGEST_ALGORITHMS[algorithm](body).digest()
        if not hmac.compare_digest(received, expected):
            computed = base64.b64encode(expected).decode("ascii")
            return (
                VerificationFailure.DIGEST_MISMATCH,
                f"Digest {item.strip()!r} does not match the {len(body)}-byte body, whose "
                f"{algorithm} is {computed} (spec 5.4)",
            )
    if not supported:
        return (
            VerificationFailure.UNSUPPORTED_DIGEST_ALGORITHM,
            f"Digest {value!r} has no SHA-256 or SHA-512 value (spec 5.4, RFC 5843)",
        )
    return None


def verify_request(
    method: str,
    target: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    required_signed: Sequence[str] = SPEC5_SIGNED_HEADERS,
    now: datetime | None = None,
) -> Verification:
    """Verify a received request against spec 5; report the first failure.

    Order of checks: TPP-Signature-Certificate and Signature present (MISSING_HEADER); Signature
    parsed after RFC 2047 decoding (MALFORMED_SIGNATURE); certificate decoded and valid at
    ``now`` (BAD_CERTIFICATE; ``now`` defaults to the current time); algorithm rsa-sha256 and an
    RSA certificate key (UNSUPPORTED_ALGORITHM); keyId serial and issuer against the certificate
    (KEYID_MISMATCH); Digest present when there is a body, SHA-256/SHA-512, matching
    (MISSING_HEADER, UNSUPPORTED_DIGEST_ALGORITHM, DIGEST_MISMATCH); every header of
    ``required_signed`` present in the request is listed (HEADERS_INCOMPLETE); every listed
    header present (MISSING_HEADER); the RSA-SHA256 signature (BAD_SIGNATURE).

    ``target`` is the path and query as received; ``headers`` values are as received (still
    RFC 2047-encoded: they are signed that way).
    """
    lowered = lowercased(headers)

    certificate_value = lowered.get("tpp-signature-certificate")
    if certificate_value is None:
        return _missing("TPP-Signature-Certificate", "spec 5.1")
    signature_value = lowered.get("signature")
    if signature_value is None:
        return _missing("Signature", "spec 5.2")

    try:
        parameters = parse_signature_header(decode_header_value(signature_value.strip()))
    except ValueError as exc:
        return Verification(False, VerificationFailure.MALFORMED_SIGNATURE, f"{exc} (spec 5.2)")

    # Rebuilt up front so that every later verdict can show it in the report.
    signing_string: str | None = None
    string_error: SigningStringError | None = None
    try:
        signing_string = signing_string_of(method, target, lowered, parameters.headers)
    except SigningStringError as exc:
        string_error = exc

    def fail(
        failure: VerificationFailure,
        detail: str,
        *,
        header: str | None = None,
        certificate: x509.Certificate | None = None,
    ) -> Verification:
        return Verification(
            False,
            failure,
            detail,
            header=header,
            signing_string=signing_string,
            certificate=certificate,
            parameters=parameters,
        )

    try:
        facts = signing_certificate(certificate_value)
    except ValueError as exc:
        return fail(
            VerificationFailure.BAD_CERTIFICATE,
            f"TPP-Signature-Certificate is not a base64 DER (or PEM) certificate: {exc} (spec 5.1)",
        )
    certificate = facts.certificate
    moment = now or datetime.now(UTC)
    if not facts.not_before <= moment <= facts.not_after:
        return fail(
            VerificationFailure.BAD_CERTIFICATE,
            f"the signing certificate is not valid at {moment.isoformat()}: valid from "
            f"{facts.not_before.isoformat()} to {facts.not_after.isoformat()} (spec 5.1)",
            certificate=certificate,
        )

    public_key = facts.public_key
    algorithm = parameters.algorithm
    if algorithm is not None and algorithm.lower() != SIGNATURE_ALGORITHM:
        return fail(
            VerificationFailure.UNSUPPORTED_ALGORITHM,
            f"algorithm={algorithm!r}; spec 5.2 expects rsa-sha256, the algorithm of the "
            "certificate",
            certificate=certificate,
        )
    if not isinstance(public_key, rsa.RSAPublicKey):
        return fail(
            VerificationFailure.UNSUPPORTED_ALGORITHM,
            f"the certificate key is not RSA ({type(public_key).__name__}); spec 5.2 expects "
            "rsa-sha256 to name the certificate's algorithm",
            certificate=certificate,
        )

    try:
        serial, issuer_text = parsed_key_id(parameters.key_id)
    except ValueError as exc:
        return fail(VerificationFailure.KEYID_MISMATCH, str(exc), certificate=certificate)
    if serial != facts.serial:
        return fail(
            VerificationFailure.KEYID_MISMATCH,
            f"keyId serial {serial:x} is not the certificate serial "
            f"{facts.serial:x} (spec 5.2 keyId SN=<serial_hex>)",
            certificate=certificate,
        )
    if not keys_match(dn_text_key(issuer_text), facts.issuer_key):
        return fail(
            VerificationFailure.KEYID_MISMATCH,
            f"keyId CA {issuer_text!r} is not the certificate issuer "
            f"{certificate.issuer.rfc4514_string()!r} (spec 5.2 keyId CA=<CA DN>)",
            certificate=certificate,
        )

    digest_value = lowered.get("digest")
    if digest_value is None:
        if body:
            return fail(
                VerificationFailure.MISSING_HEADER,
                f"Digest: absent from a request with a {len(body)}-byte body (spec 5.4)",
                header="Digest",
                certificate=certificate,
            )
    else:
        problem = _check_digest(digest_value, body)
        if problem is not None:
            failure, detail = problem
            return fail(failure, detail, certificate=certificate)

    listed = set(parameters.headers)
    for name in required_signed:
        if name.lower() in lowered and name.lower() not in listed:
            return fail(
                VerificationFailure.HEADERS_INCOMPLETE,
                f"{name} is present in the request but not in the Signature headers list "
                f"{' '.join(parameters.headers)!r} (spec 5.2)",
                header=name.lower(),
                certificate=certificate,
            )

    if string_error is not None:
        if string_error.header_name.startswith("("):
            return fail(
                VerificationFailure.MALFORMED_SIGNATURE, str(string_error), certificate=certificate
            )
        return fail(
            VerificationFailure.MISSING_HEADER,
            f"{string_error} (draft-cavage-http-signatures-10 section 2.3)",
            header=string_error.header_name,
            certificate=certificate,
        )
    assert signing_string is not None
    if not verify_signature(signing_string, parameters.signature, public_key):
        return fail(
            VerificationFailure.BAD_SIGNATURE,
            "the signature does not verify with the certificate's key over the signing string "
            "(spec 5.2: Base64(RSA-SHA256(signing string)))",
            certificate=certificate,
        )
    return Verification(
        True, signing_string=signing_string, certificate=certificate, parameters=parameters
    )


def _missing(header: str, part: str) -> Verification:
    return Verification(
        False,
        VerificationFailure.MISSING_HEADER,
        f"{header}: header absent ({part})",
        header=header,
    )


def verify_httpx_request(
    request: httpx.Request,
    *,
    required_signed: Sequence[str] = SPEC5_SIGNED_HEADERS,
    now: datetime | None = None,
) -> Verification:
    """:func:`verify_request` over an ``httpx.Request`` as it would be sent (tests, the client)."""
    return verify_request(
        request.method,
        request.url.raw_path.decode("ascii"),
        request.headers,
        request.read(),
        required_signed=required_signed,
        now=now,
    )
