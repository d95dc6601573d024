"""Test certificates for spec 5: a CA and TPP signing certificates with chosen roles, serials and
validity, and the chain check a bank makes.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from conformance.errors import CertificateError
from conformance.signing.qcstatement import (
    PSD2_ROLES,
    QC_STATEMENTS_OID,
    encode_psd2_qc_statements,
    normalise_roles,
    read_psd2_roles,
)
from conformance.signing.signer import SigningCredentials

#: Chain verdicts remembered per certificate (a TPP signs with one).
_CACHE_SIZE = 256
_KEY_SIZE = 2048
_PUBLIC_EXPONENT = 65537
#: Certificates start a little in the past, so that a bank whose clock runs behind accepts them.
_CLOCK_SKEW = dt.timedelta(minutes=5)
#: The CA is back-dated a year so that the expired TPP certificates it signs lie inside its validity
#: and a bank rejects them for their own expiry, not for the CA's.
_CA_BACKDATE = dt.timedelta(days=365)
_MAX_SERIAL = 2**159  # RFC 5280 4.1.2.2: at most 20 octets, positive


@dataclass(frozen=True)
class CertificateAuthority:
    """A CA that signs test certificates; the bank under test is configured to trust it."""

    certificate: x509.Certificate
    private_key: rsa.RSAPrivateKey


@dataclass(frozen=True)
class TppIdentity:
    """The certificate and key a TPP signs requests with (spec 5), and the CA that issued it."""

    certificate: x509.Certificate
    private_key: rsa.RSAPrivateKey
    ca_certificate: x509.Certificate | None = None

    @property
    def roles(self) -> frozenset[str] | None:
        """The PSD2 roles of the certificate; None when it carries no PSD2 QCStatement."""
        return read_psd2_roles(self.certificate)

    @property
    def key_id(self) -> str:
        """Spec 5 keyId: ``SN=<serial in hex>,CA=<issuer DN>``.

        The serial is upper-case hexadecimal without leading zeros or ``0x`` (as in the
        Berlin Group example ``SN=9FA1``); the DN is the RFC 4514 form of the issuer.
        """
        return (
            f"SN={self.certificate.serial_number:X},CA={self.certificate.issuer.rfc4514_string()}"
        )

    def signing_credentials(self) -> SigningCredentials:
        """The certificate and key in the form the request signer takes."""
        return SigningCredentials(certificate=self.certificate, private_key=self.private_key)


def _utc(moment: dt.datetime | None) -> dt.datetime:
    """``moment`` as an aware UTC datetime (naive values are taken as UTC); None means now."""
    if moment is None:
        return dt.datetime.now(dt.UTC)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=_PUBLIC_EXPONENT, key_size=_KEY_SIZE)


def _check_serial(serial: int) -> int:
    if isinstance(serial, bool) or not isinstance(serial, int) or not 0 < serial < _MAX_SERIAL:
        raise CertificateError(
            f"a certificate serial number must be a positive integer below 2**159, not {serial!r}"
        )
    return serial


#: The common name of the CA of the identity the harness generates when none is given.
GENERATED_CA_NAME = "Conformance Generated Test CA"


def generate_ca(
    common_name: str = "Conformance Test CA",
    *,
    now: dt.datetime | None = None,
    valid_days: int = 3650,
    key: rsa.RSAPrivateKey | None = None,
) -> CertificateAuthority:
    """A self-signed RSA-2048 CA (basicConstraints CA=true, keyUsage keyCertSign and cRLSign).

    ``key`` reuses an existing key instead of generating one (each RSA key costs ~50-100 ms).
    """
    if valid_days <= 0:
        raise CertificateError(f"a CA must be valid for at least one day, not {valid_days}")
    moment = _utc(now)
    key = new_key() if key is None else key
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "PSD2 Conformance Suite"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(moment - _CA_BACKDATE)
        .not_valid_after(moment + dt.timedelta(days=valid_days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(key_cert_sign=True, crl_sign=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return CertificateAuthority(certificate=certificate, private_key=key)


def _key_usage(
    *,
    digital_signature: bool = False,
    content_commitment: bool = False,
    key_cert_sign: bool = False,
    crl_sign: bool = False,
) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=digital_signature,
        content_commitment=content_commitment,  # nonRepudiation in RFC 5280
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=key_cert_sign,
        crl_sign=crl_sign,
        encipher_only=False,
        decipher_only=False,
    )


def validity(
    not_before: dt.datetime | None,
    not_after: dt.datetime | None,
    now: dt.datetime | None,
    valid_days: int,
) -> tuple[dt.datetime, dt.datetime]:
    """Fill in whichever end is missing from the other (or from the clock), ``valid_days`` apart."""
    span = dt.timedelta(days=valid_days)
    if not_before is None and not_after is None:
        moment = _utc(now)
        start, end = moment - _CLOCK_SKEW, moment + span
    elif not_before is None:
        end = _utc(not_after)
        start = end - span
    elif not_after is None:
        start = _utc(not_before)
        end = start + span
    else:
        start, end = _utc(not_before), _utc(not_after)
    if end <= start:
        raise CertificateError(
            f"the certificate would end ({end.isoformat()}) before it starts ({start.isoformat()})"
        )
    return start, end


def tpp_subject(common_name: str, organisation_id: str) -> x509.Name:
    """Subject of ETSI TS 119 495 5.2.1: country, organisation, organizationIdentifier, CN.

    The country is read from a PSD2 organizationIdentifier (``PSD`` + country + ``-`` ...); it
    is left out when the identifier does not have that form.
    """
    attributes = []
    country = re.fullmatch(r"PSD([A-Z]{2})-.+", organisation_id)
    if country:
        attributes.append(x509.NameAttribute(NameOID.COUNTRY_NAME, country.group(1)))
    attributes += [
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, common_name),
        x509.NameAttribute(NameOID.ORGANIZATION_IDENTIFIER, organisation_id),
        x509.NameAttribute(NameOID.COMMON_NAME, common_name),
    ]
    return x509.Name(attributes)


def generate_tpp_identity(
    ca: CertificateAuthority,
    *,
    roles: Iterable[str] = PSD2_ROLES,
    nca_name: str = "Finanstilsynet",
    nca_id: str = "NO-FSA",
    organisation_id: str = "PSDNO-FSA-123456789",
    common_name: str = "Conformance Test TPP",
    not_before: dt.datetime | None = None,
    not_after: dt.datetime | None = None,
    serial: int | None = None,
    qc_statement: bool = True,
    qc_type: str | None = "eseal",
    now: dt.datetime | None = None,
    valid_days: int = 365,
    key: rsa.RSAPrivateKey | None = None,
) -> TppIdentity:
    """An RSA-2048 TPP signing certificate issued by ``ca`` (spec 5).

    keyUsage is digitalSignature and nonRepudiation; the PSD2 QCStatement carries ``roles``
    (any subset of :data:`PSD2_ROLES`, the empty set included) unless ``qc_statement`` is
    false, in which case the certificate has no qcStatements extension at all; before it come
    QcCompliance and the QcType ``qc_type`` (``eseal``: a QSealC, as ETSI TS 119 495 makes a
    signing certificate; ``web`` makes the QWAC-type certificate a bank must not accept for
    signing; None leaves both out). Give
    ``not_before``/``not_after`` for a chosen validity (in the past for an expired
    certificate); a missing end is ``valid_days`` from the other, or from ``now``. ``key``
    reuses an existing key, for several certificates over one key pair.
    """
    if valid_days <= 0:
        raise CertificateError(
            f"a certificate must be valid for at least one day, not {valid_days}"
        )
    role_list = normalise_roles(roles)
    start, end = validity(not_before, not_after, now, valid_days)
    key = new_key() if key is None else key
    builder = (
        x509.CertificateBuilder()
        .subject_name(tpp_subject(common_name, organisation_id))
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number() if serial is None else _check_serial(serial))
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(digital_signature=True, content_commitment=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.private_key.public_key()),
            critical=False,
        )
    )
    if qc_statement:
        value = encode_psd2_qc_statements(role_list, nca_name, nca_id, qc_type=qc_type)
        builder = builder.add_extension(
            x509.UnrecognizedExtension(QC_STATEMENTS_OID, value), critical=False
        )
    certificate = builder.sign(ca.private_key, hashes.SHA256())
    return TppIdentity(certificate=certificate, private_key=key, ca_certificate=ca.certificate)


@functools.cache
def default_ca() -> CertificateAuthority:
    """The CA behind :func:`default_identity`, made once per process. Its name is its own
    (:data:`GENERATED_CA_NAME`), not that of ``conformance certs``' CA: a server told to trust
    only the latter names the issuer it refuses, and the two are not mistaken for each other."""
    return generate_ca(GENERATED_CA_NAME)


@functools.cache
def default_identity() -> TppIdentity:
    """The identity the harness signs with when the user gives none: all four roles, made once."""
    return generate_tpp_identity(default_ca())


def verify_chain(
    certificate: x509.Certificate,
    ca_certificate: x509.Certificate,
    *,
    now: dt.datetime | None = None,
) -> str | None:
    """None when ``ca_certificate`` issued ``certificate`` and both are valid at ``now``.

    Otherwise one sentence saying why not, in the words a bank's rejection would use.
    """
    moment = _utc(now)
    problem = _issuance_problem(certificate, ca_certificate)
    if problem is not None:
        return problem
    for what, cert in (("certificate", certificate), ("CA certificate", ca_certificate)):
        not_before, not_after = _validity_window(cert)
        if moment < not_before:
            return f"the {what} is not valid before {not_before.isoformat()}"
        if moment > not_after:
            return f"the {what} expired on {not_after.isoformat()}"
    return None


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _validity_window(certificate: x509.Certificate) -> tuple[dt.datetime, dt.datetime]:
    """The validity window, read once per certificate (a pure function of its DER)."""
    return certificate.not_valid_before_utc, certificate.not_valid_after_utc


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _issuance_problem(
    certificate: x509.Certificate, ca_certificate: x509.Certificate
) -> str | None:
    """The part of :func:`verify_chain` that does not depend on the time: names, CA flag and
    the CA's signature over the certificate (an RSA check per request otherwise).

    Cached per (certificate, CA): a pure function of the two DER encodings, so no clock
    change, reset or restart can make a remembered verdict wrong; validity against ``now`` is
    checked on every call by the caller.
    """
    issuer = certificate.issuer.rfc4514_string()
    ca_name = ca_certificate.subject.rfc4514_string()
    if certificate.issuer != ca_certificate.subject:
        return f"the certificate was issued by '{issuer}', not by the CA '{ca_name}'"
    try:
        constraints = ca_certificate.extensions.get_extension_for_class(x509.BasicConstraints)
        is_ca = constraints.value.ca
    except x509.ExtensionNotFound:
        is_ca = False
    except ValueError as error:
        return f"the CA certificate's extensions cannot be parsed: {error}"
    if not is_ca:
        return f"the certificate '{ca_name}' is not a CA (basicConstraints CA is not true)"
    try:
        certificate.verify_directly_issued_by(ca_certificate)
    except InvalidSignature:
        return f"the certificate's signature does not verify with the public key of '{ca_name}'"
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        return f"the certificate's signature cannot be checked against '{ca_name}': {error}"
    return None
