"""Verifying a signed request (spec 5), as the reference server and the tests do: the first
requirement it breaks, as a :class:`VerificationFailure`.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hmac
from collections.abc import Callable, Mapping, Sequence
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
    SigningCertificate,
    issuer_text_matches,
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


@dataclass(frozen=True)
class _Problem:
    """A failed requirement: why, in words, and the header concerned (when one is)."""

    failure: VerificationFailure
    detail: str
    header: str | None = None


@dataclass(frozen=True)
class _Signed:
    """A request whose Signature parsed and whose certificate decoded: what the steps judge."""

    lowered: Mapping[str, str]
    body: bytes
    parameters: SignatureParameters
    facts: SigningCertificate
    moment: datetime
    required_signed: Sequence[str]
    signing_string: str | None
    string_error: SigningStringError | None

    def failed(self, problem: _Problem) -> Verification:
        return Verification(
            False,
            problem.failure,
            problem.detail,
            header=problem.header,
            signing_string=self.signing_string,
            certificate=self.facts.certificate,
            parameters=self.parameters,
        )


def _certificate_in_validity(signed: _Signed) -> _Problem | None:
    facts = signed.facts
    if facts.not_before <= signed.moment <= facts.not_after:
        return None
    return _Problem(
        VerificationFailure.BAD_CERTIFICATE,
        f"the signing certificate is not valid at {signed.moment.isoformat()}: valid from "
        f"{facts.not_before.isoformat()} to {facts.not_after.isoformat()} (spec 5.1)",
    )


def _algorithm_is_rsa_sha256(signed: _Signed) -> _Problem | None:
    algorithm = signed.parameters.algorithm
    if algorithm is not None and algorithm.lower() != SIGNATURE_ALGORITHM:
        return _Problem(
            VerificationFailure.UNSUPPORTED_ALGORITHM,
            f"algorithm={algorithm!r}; spec 5.2 expects rsa-sha256, the algorithm of the "
            "certificate",
        )
    public_key = signed.facts.public_key
    if not isinstance(public_key, rsa.RSAPublicKey):
        return _Problem(
            VerificationFailure.UNSUPPORTED_ALGORITHM,
            f"the certificate key is not RSA ({type(public_key).__name__}); spec 5.2 expects "
            "rsa-sha256 to name the certificate's algorithm",
        )
    return None


def _key_id_names_the_certificate(signed: _Signed) -> _Problem | None:
    facts = signed.facts
    try:
        serial, issuer_text = parsed_key_id(signed.parameters.key_id)
    except ValueError as exc:
        return _Problem(VerificationFailure.KEYID_MISMATCH, str(exc))
    if serial != facts.serial:
        return _Problem(
            VerificationFailure.KEYID_MISMATCH,
            f"keyId serial {serial:x} is not the certificate serial "
            f"{facts.serial:x} (spec 5.2 keyId SN=<serial_hex>)",
        )
    if not issuer_text_matches(issuer_text, facts.issuer_key):
        return _Problem(
            VerificationFailure.KEYID_MISMATCH,
            f"keyId CA {issuer_text!r} is not the certificate issuer "
            f"{facts.certificate.issuer.rfc4514_string()!r} (spec 5.2 keyId CA=<CA DN>)",
        )
    return None


def _digest_matches_the_body(signed: _Signed) -> _Problem | None:
    digest_value = signed.lowered.get("digest")
    if digest_value is None:
        if not signed.body:
            return None
        return _Problem(
            VerificationFailure.MISSING_HEADER,
            f"Digest: absent from a request with a {len(signed.body)}-byte body (spec 5.4)",
            header="Digest",
        )
    problem = _check_digest(digest_value, signed.body)
    return None if problem is None else _Problem(*problem)


def _spec5_headers_are_signed(signed: _Signed) -> _Problem | None:
    listed = set(signed.parameters.headers)
    for name in signed.required_signed:
        if name.lower() in signed.lowered and name.lower() not in listed:
            return _Problem(
                VerificationFailure.HEADERS_INCOMPLETE,
                f"{name} is present in the request but not in the Signature headers list "
                f"{' '.join(signed.parameters.headers)!r} (spec 5.2)",
                header=name.lower(),
            )
    return None


def _listed_headers_are_present(signed: _Signed) -> _Problem | None:
    error = signed.string_error
    if error is None:
        return None
    if error.header_name.startswith("("):
        return _Problem(VerificationFailure.MALFORMED_SIGNATURE, str(error))
    return _Problem(
        VerificationFailure.MISSING_HEADER,
        f"{error} (draft-cavage-http-signatures-10 section 2.3)",
        header=error.header_name,
    )


def _signature_verifies(signed: _Signed) -> _Problem | None:
    assert signed.signing_string is not None  # the previous step saw to it
    public_key = signed.facts.public_key
    assert isinstance(public_key, rsa.RSAPublicKey)  # _algorithm_is_rsa_sha256 saw to it
    if verify_signature(signed.signing_string, signed.parameters.signature, public_key):
        return None
    return _Problem(
        VerificationFailure.BAD_SIGNATURE,
        "the signature does not verify with the certificate's key over the signing string "
        "(spec 5.2: Base64(RSA-SHA256(signing string)))",
    )


#: The checks after the Signature header parsed and the certificate decoded, in the order they
#: are judged; the first problem is the verdict.
_STEPS: tuple[Callable[[_Signed], _Problem | None], ...] = (
    _certificate_in_validity,
    _algorithm_is_rsa_sha256,
    _key_id_names_the_certificate,
    _digest_matches_the_body,
    _spec5_headers_are_signed,
    _listed_headers_are_present,
    _signature_verifies,
)


def verify_request(
    method: str,
    target: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    required_signed: Sequence[str] = SPEC5_SIGNED_HEADERS,
    now: datetime | None = None,
    check_validity: bool = True,
) -> Verification:
    """Verify a received request against spec 5; report the first failure.

    Order of checks: TPP-Signature-Certificate and Signature present (MISSING_HEADER); Signature
    parsed after RFC 2047 decoding (MALFORMED_SIGNATURE); certificate decoded and valid at
    ``now`` (BAD_CERTIFICATE; ``now`` defaults to the current time); then :data:`_STEPS`:
    algorithm rsa-sha256 and an RSA certificate key (UNSUPPORTED_ALGORITHM); keyId serial and
    issuer against the certificate (KEYID_MISMATCH); Digest present when there is a body,
    SHA-256/SHA-512, matching (MISSING_HEADER, UNSUPPORTED_DIGEST_ALGORITHM, DIGEST_MISMATCH);
    every header of ``required_signed`` present in the request is listed (HEADERS_INCOMPLETE);
    every listed header present (MISSING_HEADER); the RSA-SHA256 signature (BAD_SIGNATURE).

    ``target`` is the path and query as received; ``headers`` values are as received (still
    RFC 2047-encoded: they are signed that way). ``check_validity`` False leaves the
    certificate's validity period unjudged (a verifier that authenticates by the signature alone,
    spec 5 items 1-2 naming no more).
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
    try:
        facts = signing_certificate(certificate_value)
    except ValueError as exc:
        return Verification(
            False,
            VerificationFailure.BAD_CERTIFICATE,
            f"TPP-Signature-Certificate is not a base64 DER (or PEM) certificate: {exc} (spec 5.1)",
            signing_string=signing_string,
            parameters=parameters,
        )
    signed = _Signed(
        lowered=lowered,
        body=body,
        parameters=parameters,
        facts=facts,
        moment=now or datetime.now(UTC),
        required_signed=required_signed,
        signing_string=signing_string,
        string_error=string_error,
    )
    steps = (
        _STEPS if check_validity else tuple(s for s in _STEPS if s is not _certificate_in_validity)
    )
    for step in steps:
        problem = step(signed)
        if problem is not None:
            return signed.failed(problem)
    return Verification(
        True, signing_string=signing_string, certificate=facts.certificate, parameters=parameters
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
