"""The seal: a detached JWS (RFC 7515, appendix F) over the manifest's bytes, signed with the
sealing key, its certificate chain in the protected header (``x5c``, leaf first); and the check
of a seal and its chain."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.verification import (
    Criticality,
    ExtensionPolicy,
    Policy,
    PolicyBuilder,
    Store,
    VerificationError,
)
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, RSAKey

from conformance.errors import CertificateError

__all__ = [
    "SealKey",
    "checked_chain",
    "load_seal_key",
    "own_root",
    "revoked",
    "seal",
    "verified_seal",
]

#: The JWS ``typ`` of a sealed record.
SEAL_TYPE: Final = "psd2-conformance-evidence+jws"
#: A protected header with a certificate chain is longer than joserfc's default limit (512).
_REGISTRY = jws.JWSRegistry(algorithms=["RS256", "ES256", "ES384", "ES512"])
_REGISTRY.max_header_length = 64 * 1024
#: How many certificates a seal's chain may hold above the seal's own.
_MAX_CHAIN_DEPTH: Final = 8
#: The purposes of a TLS certificate: one that names only these may not seal.
_TLS_ONLY: Final = frozenset({ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH})
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
    """What is wrong with a seal's chain at the moment ``at`` ([] when nothing), as RFC 5280 path
    validation finds it (:mod:`cryptography.x509.verification`): each certificate issued by the
    next, every certificate above the seal's a CA (basicConstraints CA, keyUsage keyCertSign,
    its path length), each valid at ``at``, and the seal's certificate one that may seal
    (:func:`_seal_policy`). With ``trust`` the chain must lead to one of those CAs; without, to
    the self-signed certificate it ends at: the chain is then checked within itself only, and
    not at all when it ends at a certificate that is not self-signed (see :func:`own_root`).

    ``at`` is the moment of verification: the sealer's own ``sealed_at`` proves nothing, and a
    certificate that expired (or is not yet valid) cannot seal a record that verifies."""
    anchors = trust or own_root(chain)
    if not anchors:
        return []
    verifier = (
        PolicyBuilder()
        .store(Store(list(anchors)))
        .time(at.astimezone(UTC))
        .max_chain_depth(_MAX_CHAIN_DEPTH)
        .extension_policies(
            ca_policy=ExtensionPolicy.webpki_defaults_ca(), ee_policy=_seal_policy()
        )
        .build_client_verifier()
    )
    try:
        verifier.verify(chain[0], list(chain[1:]))
    except VerificationError as error:
        return [_chain_problem(chain, str(error), trusted=bool(trust))]
    return []


def revoked(
    chain: tuple[x509.Certificate, ...],
    trust: tuple[x509.Certificate, ...],
    crls: tuple[x509.CertificateRevocationList, ...],
) -> list[str]:
    """Each certificate of the chain a list of ``crls`` names as revoked; a list whose issuer
    is not in the chain or ``trust``, or whose signature does not verify, is a problem too."""
    issuers = {certificate.subject: certificate for certificate in (*chain, *trust)}
    problems: list[str] = []
    for crl in crls:
        issuer = issuers.get(crl.issuer)
        # the types of key a CRL can be signed with are narrower than a certificate's (X25519)
        if issuer is None or not crl.is_signature_valid(issuer.public_key()):  # type: ignore[arg-type]
            problems.append(
                f"the revocation list of {crl.issuer.rfc4514_string()} is not signed by a "
                "certificate of the chain or --trust"
            )
            continue
        for certificate in chain:
            if certificate.issuer != crl.issuer:
                continue
            entry = crl.get_revoked_certificate_by_serial_number(certificate.serial_number)
            if entry is not None:
                when = entry.revocation_date_utc.isoformat()
                problems.append(
                    f"{certificate.subject.rfc4514_string()} was revoked on {when} "
                    f"(the list of {crl.issuer.rfc4514_string()})"
                )
    return problems


def own_root(chain: tuple[x509.Certificate, ...]) -> tuple[x509.Certificate, ...]:
    """The chain's last certificate when it is self-signed (a root the chain brings itself)."""
    last = chain[-1]
    if len(chain) > 1 and last.subject == last.issuer and _issued_by(last, last):
        return (last,)
    return ()


def _chain_problem(chain: tuple[x509.Certificate, ...], reason: str, *, trusted: bool) -> str:
    """One line for a refused chain: its certificates, and the validator's reason."""
    names = " → ".join(certificate.subject.rfc4514_string() for certificate in chain)
    if trusted and reason.startswith("validation failed: candidates exhausted"):
        last = chain[-1]
        return (
            f"the chain ends at {last.subject.rfc4514_string()}, issued by "
            f"{last.issuer.rfc4514_string()}, which --trust does not name, or a certificate "
            f"of it may not issue the next (chain {names}): {reason}"
        )
    return f"the chain {names} does not validate: {reason}"


def _seal_policy() -> ExtensionPolicy:
    """Which end-entity certificate may seal: not a CA, keyUsage digitalSignature or
    nonRepudiation (contentCommitment), and no extendedKeyUsage that makes it a TLS certificate
    only (serverAuth or clientAuth and nothing else). Other extensions are left to the PKI."""
    return (
        ExtensionPolicy.permit_all()
        .may_be_present(x509.BasicConstraints, Criticality.AGNOSTIC, _not_a_ca)
        .require_present(x509.KeyUsage, Criticality.AGNOSTIC, _usage_may_seal)
        .may_be_present(x509.ExtendedKeyUsage, Criticality.AGNOSTIC, _purpose_may_seal)
    )


def _not_a_ca(
    _policy: Policy, _certificate: x509.Certificate, value: x509.BasicConstraints | None
) -> None:
    if value is not None and value.ca:
        raise ValueError("the seal's certificate is a CA (basicConstraints CA is true)")


def _usage_may_seal(_policy: Policy, _certificate: x509.Certificate, value: x509.KeyUsage) -> None:
    if not (value.digital_signature or value.content_commitment):
        raise ValueError(
            "the seal's certificate may not sign: its keyUsage has neither digitalSignature "
            "nor nonRepudiation"
        )


def _purpose_may_seal(
    _policy: Policy, _certificate: x509.Certificate, value: x509.ExtendedKeyUsage | None
) -> None:
    if value is not None and value and set(value) <= _TLS_ONLY:
        raise ValueError(
            "the seal's certificate is a TLS certificate (its extendedKeyUsage is "
            + ", ".join(sorted(purpose._name for purpose in value))
            + " only)"
        )


def _issued_by(child: x509.Certificate, parent: x509.Certificate) -> bool:
    try:
        child.verify_directly_issued_by(parent)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True
