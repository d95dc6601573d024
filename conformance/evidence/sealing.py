"""The seal: a detached JWS (RFC 7515, appendix F) over the manifest's bytes, signed with the
sealing key, its certificate chain in the protected header (``x5c``, leaf first); and the check
of a seal and its chain."""

from __future__ import annotations

import base64
import itertools
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, RSAKey

from conformance.errors import CertificateError

__all__ = ["SealKey", "checked_chain", "load_seal_key", "seal", "verified_seal"]

#: The JWS ``typ`` of a sealed record.
SEAL_TYPE: Final = "psd2-conformance-evidence+jws"
#: A protected header with a certificate chain is longer than joserfc's default limit (512).
_REGISTRY = jws.JWSRegistry(algorithms=["RS256", "ES256", "ES384", "ES512"])
_REGISTRY.max_header_length = 64 * 1024
_EC_ALGORITHMS: Final = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


@dataclass(frozen=True)
class SealKey:
    """The sealing key and its certificate chain (leaf first)."""

    key: RSAKey | ECKey
    algorithm: str
    chain: tuple[x509.Certificate, ...]


def load_seal_key(cert_path: Path, key_path: Path, password: str | None = None) -> SealKey:
    """The chain of ``cert_path`` (PEM: the sealing certificate first, then its CAs) and the
    private key of ``key_path`` (PEM, RSA or EC), which must be the certificate's."""
    try:
        chain = tuple(x509.load_pem_x509_certificates(cert_path.read_bytes()))
        private = serialization.load_pem_private_key(
            key_path.read_bytes(), None if password is None else password.encode()
        )
    except (OSError, ValueError, TypeError) as error:
        raise CertificateError(f"cannot read the seal's certificate or key: {error}") from None
    if not chain:
        raise CertificateError(f"{cert_path} holds no certificate")
    public = (
        chain[0]
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    mine = private.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    if public != mine:
        raise CertificateError(f"{key_path} is not the key of the first certificate of {cert_path}")
    if isinstance(private, rsa.RSAPrivateKey):
        return SealKey(RSAKey.import_key(private), "RS256", chain)
    if isinstance(private, ec.EllipticCurvePrivateKey) and private.curve.name in _EC_ALGORITHMS:
        pem = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return SealKey(ECKey.import_key(pem), _EC_ALGORITHMS[private.curve.name], chain)
    raise CertificateError(f"{key_path}: a seal is an RSA or an EC (P-256/384/521) key")


def seal(payload: bytes, key: SealKey) -> str:
    """The detached compact JWS of ``payload``: ``header..signature``."""
    header = {
        "alg": key.algorithm,
        "typ": SEAL_TYPE,
        "x5c": [
            base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode("ascii")
            for cert in key.chain
        ],
    }
    compact = jws.serialize_compact(header, payload, key.key, registry=_REGISTRY)
    head, _, signature = compact.split(".")
    return f"{head}..{signature}"


def verified_seal(value: str, payload: bytes) -> tuple[x509.Certificate, ...]:
    """The chain (leaf first) of a seal whose signature over ``payload`` verifies with its leaf;
    anything else is a :class:`CertificateError` saying what."""
    parts = value.strip().split(".")
    if len(parts) != 3 or parts[1]:
        raise CertificateError("seal.jws is not a detached compact JWS (header..signature)")
    try:
        header = jws.extract_compact(
            value.strip().encode(), payload=payload, registry=_REGISTRY
        ).headers()
        chain = tuple(
            x509.load_der_x509_certificate(base64.b64decode(item)) for item in header["x5c"]
        )
    except (JoseError, KeyError, TypeError, ValueError) as error:
        raise CertificateError(f"the seal's header cannot be read: {error}") from None
    if not chain:
        raise CertificateError("the seal's header carries no certificate (x5c)")
    public = chain[0].public_key()
    key: RSAKey | ECKey
    if isinstance(public, rsa.RSAPublicKey):
        key = RSAKey.import_key(public)
    elif isinstance(public, ec.EllipticCurvePublicKey):
        key = ECKey.import_key(
            public.public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
    else:
        raise CertificateError("the seal's certificate holds neither an RSA nor an EC key")
    try:
        jws.deserialize_compact(value.strip(), key, payload=payload, registry=_REGISTRY)
    except (JoseError, ValueError) as error:
        raise CertificateError(
            f"the seal does not verify over manifest.json with its certificate: {error}"
        ) from None
    return chain


def checked_chain(
    chain: tuple[x509.Certificate, ...],
    at: datetime,
    trust: tuple[x509.Certificate, ...] = (),
) -> list[str]:
    """What is wrong with a seal's chain at the moment ``at`` it was sealed ([] when nothing):
    each certificate issued by the next, each valid then, and, with ``trust``, the last one
    issued by (or being) a trusted CA."""
    problems: list[str] = []
    moment = at.astimezone(UTC)
    for certificate in chain:
        if not certificate.not_valid_before_utc <= moment <= certificate.not_valid_after_utc:
            problems.append(
                f"{certificate.subject.rfc4514_string()} was not valid at {moment.isoformat()}"
            )
    for child, parent in itertools.pairwise(chain):
        if not _issued_by(child, parent):
            problems.append(
                f"{child.subject.rfc4514_string()} is not issued by "
                f"{parent.subject.rfc4514_string()}"
            )
    if trust:
        last = chain[-1]
        if not any(last == anchor or _issued_by(last, anchor) for anchor in trust):
            problems.append(
                f"the chain ends at {last.subject.rfc4514_string()}, issued by "
                f"{last.issuer.rfc4514_string()}, which --trust does not name"
            )
    return problems


def _issued_by(child: x509.Certificate, parent: x509.Certificate) -> bool:
    try:
        child.verify_directly_issued_by(parent)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True
