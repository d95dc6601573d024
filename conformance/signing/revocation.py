"""Certificate revocation lists (RFC 5280 section 5) for the test CAs: written by ``conformance
certs`` (empty with a new CA, one entry more with each ``--revoke``), read by the reference server
(``--crl``), which refuses a certificate its issuer has revoked.

Spec 5 does not speak of revocation; a bank checks it all the same (PSD2 RTS Art. 34 rests on
eIDAS certificates, whose status a relying party consults). The suite's scenarios that sign with
a revoked certificate are graded should for that reason (docs/explanation/security.md).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from conformance.errors import CertificateError
from conformance.signing.certificates import CertificateAuthority

__all__ = ["RevocationLists", "load_crls", "read_crl_serials", "write_crl"]

#: How long a CRL written here stays current (its nextUpdate).
CRL_VALID_DAYS = 30
_PEM_CRL_MARKER = b"-----BEGIN X509 CRL-----"


def load_crls(path: str | os.PathLike[str]) -> list[x509.CertificateRevocationList]:
    """Every CRL of a PEM file (several may follow one another), or the one of a DER file."""
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as error:
        raise CertificateError(f"cannot read the CRL file {file}: {error.strerror}") from None
    try:
        if _PEM_CRL_MARKER not in data:
            return [x509.load_der_x509_crl(data)]
        crls = []
        for block in data.split(_PEM_CRL_MARKER)[1:]:
            crls.append(x509.load_pem_x509_crl(_PEM_CRL_MARKER + block))
        return crls
    except ValueError:
        raise CertificateError(f"{file} holds no readable CRL (PEM or DER)") from None


def read_crl_serials(crl: x509.CertificateRevocationList) -> frozenset[int]:
    """The serial numbers a CRL revokes."""
    return frozenset(entry.serial_number for entry in crl)


def write_crl(
    ca: CertificateAuthority,
    path: str | os.PathLike[str],
    serials: Iterable[int] = (),
    *,
    now: dt.datetime | None = None,
) -> frozenset[int]:
    """Write the CRL of ``ca`` to ``path`` (PEM), revoking ``serials`` and every serial the CRL
    already there revokes when ``ca`` issued it; returns the serials it now revokes."""
    file = Path(path)
    moment = now or dt.datetime.now(dt.UTC)
    revoked = set(serials)
    dates: dict[int, dt.datetime] = {}
    if file.exists():
        for crl in load_crls(file):
            if crl.issuer == ca.certificate.subject:
                for entry in crl:
                    revoked.add(entry.serial_number)
                    dates[entry.serial_number] = entry.revocation_date_utc
    builder = (
        x509.CertificateRevocationListBuilder()
        .issuer_name(ca.certificate.subject)
        .last_update(moment - dt.timedelta(minutes=5))
        .next_update(moment + dt.timedelta(days=CRL_VALID_DAYS))
    )
    for serial in sorted(revoked):
        builder = builder.add_revoked_certificate(
            x509.RevokedCertificateBuilder()
            .serial_number(serial)
            .revocation_date(dates.get(serial, moment - dt.timedelta(minutes=5)))
            .build()
        )
    crl = builder.sign(ca.private_key, hashes.SHA256())
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(crl.public_bytes(serialization.Encoding.PEM))
    except OSError as error:
        raise CertificateError(f"cannot write the CRL {file}: {error.strerror}") from None
    return frozenset(revoked)


@dataclass(frozen=True)
class RevocationLists:
    """The revoked serials per issuer, from the CRLs a server was given: what it consults for
    every certificate a TPP shows."""

    by_issuer: Mapping[x509.Name, frozenset[int]]

    @classmethod
    def of(
        cls,
        crls: Iterable[x509.CertificateRevocationList],
        trusted: Iterable[x509.Certificate] = (),
    ) -> RevocationLists:
        """Each CRL's revoked serials by its issuer; a CRL whose issuer is one of ``trusted``
        must carry that CA's signature (else :class:`CertificateError`)."""
        cas = {ca.subject: ca for ca in trusted}
        table: dict[x509.Name, set[int]] = {}
        for crl in crls:
            ca = cas.get(crl.issuer)
            if ca is not None and not _signed_by(crl, ca):
                raise CertificateError(
                    f"the CRL of {crl.issuer.rfc4514_string()} does not carry that CA's signature"
                )
            table.setdefault(crl.issuer, set()).update(read_crl_serials(crl))
        return cls(MappingProxyType({name: frozenset(s) for name, s in table.items()}))

    def revoked(self, certificate: x509.Certificate) -> bool:
        """Whether the certificate's issuer lists its serial number as revoked."""
        serials = self.by_issuer.get(certificate.issuer)
        return serials is not None and certificate.serial_number in serials

    def __bool__(self) -> bool:
        return bool(self.by_issuer)


def _signed_by(crl: x509.CertificateRevocationList, ca: x509.Certificate) -> bool:
    key = ca.public_key()
    if not isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
        return False  # the test CAs are RSA; another key type is not checked here
    try:
        return crl.is_signature_valid(key)
    except (InvalidSignature, ValueError, TypeError):
        return False
