"""Test certificates for TLS: a QWAC-style client certificate for mutual TLS (apart from the
QSealC-style signing certificate of spec 5) and a server certificate for a host, as a bank's test
environment and the reference server over HTTPS use them.

A QWAC (ETSI TS 119 495) carries the PSD2 QCStatement with the TPP's roles, QcCompliance and
QcType ``web``; its extended key usage is TLS client authentication.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Iterable

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from conformance.signing.certificates import (
    CertificateAuthority,
    TppIdentity,
    new_key,
    tpp_subject,
    validity,
)
from conformance.signing.qcstatement import PSD2_ROLES, QC_STATEMENTS_OID, encode_psd2_qc_statements

__all__ = ["generate_qwac", "generate_server_certificate"]


def _usage(*, key_encipherment: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=key_encipherment,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=False,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )


def _builder(
    ca: CertificateAuthority,
    subject: x509.Name,
    public_key: object,
    start: dt.datetime,
    end: dt.datetime,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca.certificate.subject)
        .public_key(public_key)  # type: ignore[arg-type]
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.private_key.public_key()),
            critical=False,
        )
    )


def generate_qwac(
    ca: CertificateAuthority,
    *,
    roles: Iterable[str] = PSD2_ROLES,
    nca_name: str = "Finanstilsynet",
    nca_id: str = "NO-FSA",
    organisation_id: str = "PSDNO-FSA-123456789",
    common_name: str = "Conformance Test TPP",
    not_before: dt.datetime | None = None,
    not_after: dt.datetime | None = None,
    valid_days: int = 365,
    now: dt.datetime | None = None,
    key: rsa.RSAPrivateKey | None = None,
) -> TppIdentity:
    """An RSA-2048 QWAC-style TLS client certificate issued by ``ca`` (keyUsage
    digitalSignature and keyEncipherment, extendedKeyUsage clientAuth, QcCompliance, QcType web
    and the PSD2 QCStatement with ``roles``). Past dates make an expired one; ``key`` reuses an
    existing key."""
    start, end = validity(not_before, not_after, now, valid_days)
    key = new_key() if key is None else key
    statements = encode_psd2_qc_statements(roles, nca_name, nca_id, qc_type="web")
    certificate = (
        _builder(ca, tpp_subject(common_name, organisation_id), key.public_key(), start, end)
        .add_extension(_usage(key_encipherment=True), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .add_extension(x509.UnrecognizedExtension(QC_STATEMENTS_OID, statements), critical=False)
        .sign(ca.private_key, hashes.SHA256())
    )
    return TppIdentity(certificate=certificate, private_key=key, ca_certificate=ca.certificate)


def generate_server_certificate(
    ca: CertificateAuthority,
    hosts: Iterable[str] = ("127.0.0.1", "localhost"),
    *,
    valid_days: int = 30,
) -> TppIdentity:
    """A TLS server certificate for ``hosts`` (names and IP addresses in subjectAltName)."""
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    start, end = validity(None, None, None, valid_days)
    key = new_key()
    first = next(iter(hosts), "localhost")
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, first)])
    certificate = (
        _builder(ca, subject, key.public_key(), start, end)
        .add_extension(_usage(key_encipherment=True), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca.private_key, hashes.SHA256())
    )
    return TppIdentity(certificate=certificate, private_key=key, ca_certificate=ca.certificate)
