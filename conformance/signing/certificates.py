"""Test certificates for spec 5: a CA and a TPP signing certificate with the PSD2 QCStatement.

Spec 5 authenticates every request with a signature made by the TPP's certificate (sent in
TPP-Signature-Certificate, named by ``keyId="SN=<serial_hex>,CA=<CA DN>"``). A bank that follows
the PSD2 framework also reads the TPP's roles from the certificate: the QCStatement of
ETSI TS 119 495 (``id-etsi-psd2-qcStatement``, 0.4.0.19495.2)::

    QCStatements ::= SEQUENCE OF QCStatement                      -- RFC 3739, ext 1.3.6.1.5.5.7.1.3
    QCStatement  ::= SEQUENCE { statementId OBJECT IDENTIFIER,
                                statementInfo ANY DEFINED BY statementId OPTIONAL }
    PSD2QcType   ::= SEQUENCE { rolesOfPSP RolesOfPSP, nCAName NCAName, nCAId NCAId }
    RolesOfPSP   ::= SEQUENCE OF RoleOfPSP
    RoleOfPSP    ::= SEQUENCE { roleOfPspOid RoleOfPspOid, roleOfPspName RoleOfPspName }
    RoleOfPspOid ::= OBJECT IDENTIFIER                  -- id-psd2-role-psp-as/pi/ai/ic
    RoleOfPspName, NCAName, NCAId ::= UTF8String (SIZE (1..256))

``cryptography`` does not know this extension, so this module carries a tiny DER codec for just
the types above (SEQUENCE, OBJECT IDENTIFIER, UTF8String, definite lengths in short and long
form) and adds the result as an :class:`x509.UnrecognizedExtension`.

The certificates are test material: the negative scenarios of spec 5 need an expired
certificate, one signed by a CA the bank does not trust, chosen serial numbers and chosen role
sets, so every one of those is a parameter here, and the clock can be injected.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.types import (
    CertificatePublicKeyTypes,
    PrivateKeyTypes,
)
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from conformance.errors import CertificateError

if TYPE_CHECKING:
    from conformance.signing import SigningCredentials

__all__ = [
    "PSD2_QC_STATEMENT_OID",
    "PSD2_ROLES",
    "PSD2_ROLE_OIDS",
    "QC_STATEMENTS_OID",
    "CertificateAuthority",
    "Psd2Statement",
    "RoleOfPsp",
    "TppIdentity",
    "decode_psd2_statement",
    "default_ca",
    "default_identity",
    "encode_psd2_qc_statements",
    "generate_ca",
    "generate_tpp_identity",
    "load_ca",
    "load_identity",
    "read_psd2_roles",
    "read_psd2_statement",
    "verify_chain",
    "write_identity",
]

#: The four PSD2 roles of ETSI TS 119 495, in the order of their OIDs.
PSD2_ROLES: tuple[str, ...] = ("PSP_AS", "PSP_PI", "PSP_AI", "PSP_IC")

#: RoleOfPspOid per role name (ETSI TS 119 495: id-psd2-role-psp-as ... id-psd2-role-psp-ic).
PSD2_ROLE_OIDS: dict[str, str] = {
    "PSP_AS": "0.4.0.19495.1.1",
    "PSP_PI": "0.4.0.19495.1.2",
    "PSP_AI": "0.4.0.19495.1.3",
    "PSP_IC": "0.4.0.19495.1.4",
}
_ROLE_BY_OID = {oid: name for name, oid in PSD2_ROLE_OIDS.items()}

#: id-etsi-psd2-qcStatement (ETSI TS 119 495).
PSD2_QC_STATEMENT_OID = "0.4.0.19495.2"
#: id-pe-qcStatements (RFC 3739), the X.509 extension that holds the QCStatements.
QC_STATEMENTS_OID = x509.ObjectIdentifier("1.3.6.1.5.5.7.1.3")

_KEY_SIZE = 2048
_PUBLIC_EXPONENT = 65537
#: Certificates start a little in the past, so that a bank whose clock runs behind accepts them.
_CLOCK_SKEW = dt.timedelta(minutes=5)
#: The CA is back-dated a year so that the expired TPP certificates it signs lie inside its validity
#: and a bank rejects them for their own expiry, not for the CA's.
_CA_BACKDATE = dt.timedelta(days=365)
_MAX_SERIAL = 2**159  # RFC 5280 4.1.2.2: at most 20 octets, positive


# --------------------------------------------------------------------------------------------
# DER, just enough for QCStatements (X.690 8.1-8.3, 8.19, 8.23; DER rules of X.690 10)
# --------------------------------------------------------------------------------------------

_TAG_OID = 0x06
_TAG_UTF8 = 0x0C
_TAG_SEQUENCE = 0x30


class _DerError(ValueError):
    """The bytes are not the DER this module expects; the message says where and why."""


def _encode_length(length: int) -> bytes:
    """Short form below 128, otherwise 0x80|n followed by n big-endian octets (X.690 8.1.3)."""
    if length < 0:
        raise ValueError(f"a DER length cannot be negative: {length}")
    if length < 0x80:
        return bytes([length])
    octets = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(octets)]) + octets


def _encode_tlv(tag: int, content: bytes) -> bytes:
    return bytes([tag]) + _encode_length(len(content)) + content


def _encode_sequence(*items: bytes) -> bytes:
    return _encode_tlv(_TAG_SEQUENCE, b"".join(items))


def _encode_utf8(text: str) -> bytes:
    return _encode_tlv(_TAG_UTF8, text.encode("utf-8"))


def _encode_oid(dotted: str) -> bytes:
    """X.690 8.19: the first two arcs share one sub-identifier (40*a + b), each in base 128."""
    try:
        arcs = [int(part) for part in dotted.split(".")]
    except ValueError:
        raise ValueError(f"not a dotted object identifier: {dotted!r}") from None
    if len(arcs) < 2 or arcs[0] not in (0, 1, 2) or (arcs[0] < 2 and arcs[1] >= 40):
        raise ValueError(f"not a valid object identifier: {dotted!r}")
    if any(arc < 0 for arc in arcs):
        raise ValueError(f"object identifier arcs cannot be negative: {dotted!r}")
    content = bytearray()
    for value in [40 * arcs[0] + arcs[1], *arcs[2:]]:
        groups = [value & 0x7F]
        value >>= 7
        while value:
            groups.append(0x80 | (value & 0x7F))
            value >>= 7
        content.extend(reversed(groups))
    return _encode_tlv(_TAG_OID, bytes(content))


def _read_tlv(data: bytes, offset: int) -> tuple[int, bytes, int]:
    """The element at ``offset``: (tag, content, next offset). Definite, minimal lengths only."""
    if offset >= len(data):
        raise _DerError(f"expected an element at offset {offset}, found the end of the data")
    tag = data[offset]
    if tag & 0x1F == 0x1F:
        raise _DerError(f"high-tag-number form at offset {offset} is not expected here")
    position = offset + 1
    if position >= len(data):
        raise _DerError(f"the element at offset {offset} has no length")
    first = data[position]
    position += 1
    if first < 0x80:
        length = first
    elif first == 0x80:
        raise _DerError(f"indefinite length at offset {offset} is not allowed in DER")
    else:
        count = first & 0x7F
        octets = data[position : position + count]
        if len(octets) != count:
            raise _DerError(f"the length of the element at offset {offset} is truncated")
        length = int.from_bytes(octets, "big")
        if length < 0x80 or octets[0] == 0:
            raise _DerError(f"the length at offset {offset} is not in its shortest form (DER)")
        position += count
    end = position + length
    if end > len(data):
        raise _DerError(
            f"the element at offset {offset} claims {length} octets, "
            f"only {len(data) - position} remain"
        )
    return tag, data[position:end], end


def _read_single(data: bytes, expected_tag: int, what: str) -> bytes:
    """The content of ``data``, which must be exactly one element with ``expected_tag``."""
    tag, content, end = _read_tlv(data, 0)
    if tag != expected_tag:
        raise _DerError(f"{what} has tag 0x{tag:02X}, expected 0x{expected_tag:02X}")
    if end != len(data):
        raise _DerError(f"{len(data) - end} unexpected octets after {what}")
    return content


def _split(content: bytes) -> list[bytes]:
    """The encoded elements (whole TLVs) inside a constructed value, in order."""
    elements = []
    offset = 0
    while offset < len(content):
        _, _, end = _read_tlv(content, offset)
        elements.append(content[offset:end])
        offset = end
    return elements


def _decode_oid(element: bytes, what: str) -> str:
    content = _read_single(element, _TAG_OID, what)
    if not content:
        raise _DerError(f"{what} is an empty object identifier")
    values: list[int] = []
    value = 0
    fresh = True
    for octet in content:
        if fresh and octet == 0x80:
            raise _DerError(f"{what} has a sub-identifier with a leading 0x80 octet (not DER)")
        value = (value << 7) | (octet & 0x7F)
        fresh = not octet & 0x80
        if fresh:
            values.append(value)
            value = 0
    if not fresh:
        raise _DerError(f"{what} ends in the middle of a sub-identifier")
    first = values[0]
    head = [0, first] if first < 40 else [1, first - 40] if first < 80 else [2, first - 80]
    return ".".join(str(arc) for arc in head + values[1:])


def _decode_utf8(element: bytes, what: str) -> str:
    content = _read_single(element, _TAG_UTF8, what)
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        raise _DerError(f"{what} is not valid UTF-8") from None


def _decode_sequence(element: bytes, what: str) -> list[bytes]:
    return _split(_read_single(element, _TAG_SEQUENCE, what))


# --------------------------------------------------------------------------------------------
# The PSD2 QCStatement
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoleOfPsp:
    """One RoleOfPSP entry exactly as the certificate holds it."""

    oid: str
    name: str


@dataclass(frozen=True)
class Psd2Statement:
    """The PSD2QcType read back from a certificate.

    ``roles`` is keyed by the role OID, which is authoritative in ETSI TS 119 495: a known OID
    becomes its name (``PSP_PI``), an unknown one its dotted OID. ``role_entries`` keeps the
    entries as written, so a check can also compare each roleOfPspName with its OID.
    """

    roles: frozenset[str]
    nca_name: str
    nca_id: str
    role_entries: tuple[RoleOfPsp, ...]


def _normalise_roles(roles: Iterable[str]) -> tuple[str, ...]:
    """The roles in canonical order (PSD2_ROLES), each once; unknown names are a user error."""
    if isinstance(roles, str):
        raise CertificateError(
            f"roles must be a collection of role names, not the string {roles!r}"
        )
    wanted = set(roles)
    unknown = sorted(wanted - set(PSD2_ROLES))
    if unknown:
        raise CertificateError(
            f"unknown PSD2 role {', '.join(unknown)}; expected some of {', '.join(PSD2_ROLES)}"
        )
    return tuple(role for role in PSD2_ROLES if role in wanted)


def encode_psd2_qc_statements(roles: Iterable[str], nca_name: str, nca_id: str) -> bytes:
    """The DER value of the qcStatements extension holding only the PSD2 QCStatement.

    Roles are written in the order of :data:`PSD2_ROLES` whatever order they come in, so the
    encoding of a role set is unique. The empty set gives an empty RolesOfPSP, which
    ETSI TS 119 495 does not allow: that is on purpose, for negative scenarios.
    """
    role_list = _encode_sequence(
        *(
            _encode_sequence(_encode_oid(PSD2_ROLE_OIDS[role]), _encode_utf8(role))
            for role in _normalise_roles(roles)
        )
    )
    psd2_qc_type = _encode_sequence(role_list, _encode_utf8(nca_name), _encode_utf8(nca_id))
    statement = _encode_sequence(_encode_oid(PSD2_QC_STATEMENT_OID), psd2_qc_type)
    return _encode_sequence(statement)


def decode_psd2_statement(extension_value: bytes) -> Psd2Statement | None:
    """The PSD2 statement inside a qcStatements extension value; None when it holds none.

    Other QCStatements (QcCompliance, QcType, ...) are skipped. Malformed DER, a statementInfo
    of the wrong shape, or two PSD2 statements raise :class:`CertificateError`.
    """
    try:
        return _decode_psd2_statement(extension_value)
    except _DerError as error:
        raise CertificateError(f"the qcStatements extension is malformed: {error}") from None


def _decode_psd2_statement(extension_value: bytes) -> Psd2Statement | None:
    found: Psd2Statement | None = None
    for index, element in enumerate(_decode_sequence(extension_value, "QCStatements")):
        parts = _decode_sequence(element, f"QCStatement {index}")
        if not parts:
            raise _DerError(f"QCStatement {index} has no statementId")
        if (
            _decode_oid(parts[0], f"the statementId of QCStatement {index}")
            != PSD2_QC_STATEMENT_OID
        ):
            continue
        if found is not None:
            raise _DerError("there is more than one PSD2 QCStatement")
        if len(parts) != 2:
            raise _DerError("the PSD2 QCStatement must have exactly one statementInfo (PSD2QcType)")
        found = _decode_psd2_qc_type(parts[1])
    return found


def _decode_psd2_qc_type(element: bytes) -> Psd2Statement:
    fields = _decode_sequence(element, "PSD2QcType")
    if len(fields) != 3:
        raise _DerError(f"PSD2QcType has {len(fields)} fields, expected 3 (roles, nCAName, nCAId)")
    entries = []
    for index, role in enumerate(_decode_sequence(fields[0], "RolesOfPSP")):
        pair = _decode_sequence(role, f"RoleOfPSP {index}")
        if len(pair) != 2:
            raise _DerError(f"RoleOfPSP {index} has {len(pair)} fields, expected 2")
        entries.append(
            RoleOfPsp(
                oid=_decode_oid(pair[0], f"roleOfPspOid {index}"),
                name=_decode_utf8(pair[1], f"roleOfPspName {index}"),
            )
        )
    return Psd2Statement(
        roles=frozenset(_ROLE_BY_OID.get(entry.oid, entry.oid) for entry in entries),
        nca_name=_decode_utf8(fields[1], "nCAName"),
        nca_id=_decode_utf8(fields[2], "nCAId"),
        role_entries=tuple(entries),
    )


#: Certificates whose PSD2 statement and chain verdicts are remembered (a TPP signs with one).
_CACHE_SIZE = 256


def read_psd2_statement(certificate: x509.Certificate) -> Psd2Statement | None:
    """The PSD2 QCStatement of ``certificate``; None when it has no such statement."""
    # First by identity: the verifier hands out the same certificate object for the same
    # header, and hashing a certificate (for the cache below) digests its DER every time.
    entry = _STATEMENTS_BY_IDENTITY.get(id(certificate))
    if entry is not None and entry[0] is certificate:
        return entry[1]
    statement = _psd2_statement(certificate)
    if len(_STATEMENTS_BY_IDENTITY) >= _CACHE_SIZE:
        _STATEMENTS_BY_IDENTITY.clear()
    # The entry keeps the certificate alive, so its id cannot be reused while it is held.
    _STATEMENTS_BY_IDENTITY[id(certificate)] = (certificate, statement)
    return statement


_STATEMENTS_BY_IDENTITY: dict[int, tuple[x509.Certificate, Psd2Statement | None]] = {}


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _psd2_statement(certificate: x509.Certificate) -> Psd2Statement | None:
    """:func:`read_psd2_statement`, cached per certificate: a server reads the roles on every
    request, and decoding the extension costs more than the request's RSA check.

    Safe because the statement is a pure function of the certificate's DER bytes (certificates
    hash and compare by them) and :class:`Psd2Statement` is immutable; nothing invalidates an
    entry, the least recently used goes when :data:`_CACHE_SIZE` are held. A malformed
    extension raises every time (exceptions are not kept).
    """
    try:
        extension = certificate.extensions.get_extension_for_oid(QC_STATEMENTS_OID)
    except x509.ExtensionNotFound:
        return None
    except ValueError as error:
        raise CertificateError(f"the certificate's extensions cannot be parsed: {error}") from None
    value = extension.value
    if not isinstance(value, x509.UnrecognizedExtension):  # a future cryptography may parse it
        raise CertificateError(
            "the qcStatements extension cannot be read: this cryptography version parses it itself"
        )
    return decode_psd2_statement(value.value)


def read_psd2_roles(certificate: x509.Certificate) -> frozenset[str] | None:
    """The PSD2 roles of ``certificate``; None when it has no PSD2 QCStatement at all."""
    statement = read_psd2_statement(certificate)
    return None if statement is None else statement.roles


# --------------------------------------------------------------------------------------------
# CA and TPP identities
# --------------------------------------------------------------------------------------------


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
        from conformance.signing import SigningCredentials

        return SigningCredentials(certificate=self.certificate, private_key=self.private_key)


def _utc(moment: dt.datetime | None) -> dt.datetime:
    """``moment`` as an aware UTC datetime (naive values are taken as UTC); None means now."""
    if moment is None:
        return dt.datetime.now(dt.UTC)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=_PUBLIC_EXPONENT, key_size=_KEY_SIZE)


def _check_serial(serial: int) -> int:
    if isinstance(serial, bool) or not isinstance(serial, int) or not 0 < serial < _MAX_SERIAL:
        raise CertificateError(
            f"a certificate serial number must be a positive integer below 2**159, not {serial!r}"
        )
    return serial


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
    key = _new_key() if key is None else key
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


def _validity(
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


def _tpp_subject(common_name: str, organisation_id: str) -> x509.Name:
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
    now: dt.datetime | None = None,
    valid_days: int = 365,
    key: rsa.RSAPrivateKey | None = None,
) -> TppIdentity:
    """An RSA-2048 TPP signing certificate issued by ``ca`` (spec 5).

    keyUsage is digitalSignature and nonRepudiation; the PSD2 QCStatement carries ``roles``
    (any subset of :data:`PSD2_ROLES`, the empty set included) unless ``qc_statement`` is
    false, in which case the certificate has no qcStatements extension at all. Give
    ``not_before``/``not_after`` for a chosen validity (in the past for an expired
    certificate); a missing end is ``valid_days`` from the other, or from ``now``. ``key``
    reuses an existing key, for several certificates over one key pair.
    """
    if valid_days <= 0:
        raise CertificateError(
            f"a certificate must be valid for at least one day, not {valid_days}"
        )
    role_list = _normalise_roles(roles)
    start, end = _validity(not_before, not_after, now, valid_days)
    key = _new_key() if key is None else key
    builder = (
        x509.CertificateBuilder()
        .subject_name(_tpp_subject(common_name, organisation_id))
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
        value = encode_psd2_qc_statements(role_list, nca_name, nca_id)
        builder = builder.add_extension(
            x509.UnrecognizedExtension(QC_STATEMENTS_OID, value), critical=False
        )
    certificate = builder.sign(ca.private_key, hashes.SHA256())
    return TppIdentity(certificate=certificate, private_key=key, ca_certificate=ca.certificate)


@functools.cache
def default_ca() -> CertificateAuthority:
    """The CA behind :func:`default_identity`, made once per process."""
    return generate_ca()


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


# --------------------------------------------------------------------------------------------
# Files: PEM, PKCS#12
# --------------------------------------------------------------------------------------------

_PKCS12_SUFFIXES = (".p12", ".pfx")
_PEM_KEY = re.compile(
    rb"-----BEGIN ((?:RSA |EC |ENCRYPTED )?PRIVATE KEY)-----.+?-----END \1-----", re.DOTALL
)
_PEM_CERT_MARKER = b"-----BEGIN CERTIFICATE-----"


def _read_bytes(path: Path, what: str) -> bytes:
    if not path.exists():
        raise CertificateError(f"the {what} file {path} does not exist")
    if path.is_dir():
        raise CertificateError(f"the {what} path {path} is a directory, not a file")
    try:
        return path.read_bytes()
    except OSError as error:
        raise CertificateError(f"the {what} file {path} cannot be read: {error.strerror}") from None


def _password_bytes(password: str | bytes | None) -> bytes | None:
    return password.encode("utf-8") if isinstance(password, str) else password


def _load_certificates(data: bytes, path: Path) -> list[x509.Certificate]:
    """Every certificate in a PEM file (in order), or the one in a DER file."""
    try:
        if _PEM_CERT_MARKER in data:
            return x509.load_pem_x509_certificates(data)
        return [x509.load_der_x509_certificate(data)]
    except ValueError:
        raise CertificateError(
            f"{path} does not hold a readable X.509 certificate (PEM or DER)"
        ) from None


def _load_private_key(data: bytes, path: Path, password: bytes | None) -> rsa.RSAPrivateKey:
    """The private key in ``data`` (a PEM block anywhere in it, or DER)."""
    match = _PEM_KEY.search(data)
    if match is None and b"-----BEGIN" in data:
        raise CertificateError(f"{path} holds no PEM private key")
    try:
        if match is not None:
            key = _parse_key(match.group(0), password, pem=True)
        else:
            key = _parse_key(data, password, pem=False)
    except TypeError:  # encrypted but no password given
        raise CertificateError(
            f"the private key in {path} is encrypted; give its password"
        ) from None
    except (ValueError, UnsupportedAlgorithm):
        if password is None:
            raise CertificateError(f"{path} holds no readable private key (PEM or DER)") from None
        raise CertificateError(
            f"the private key in {path} cannot be read: wrong password, or not a private key"
        ) from None
    return _require_rsa(key, path)


def _parse_key(data: bytes, password: bytes | None, *, pem: bool) -> PrivateKeyTypes:
    """Parse a PEM or DER key; a password given for an unencrypted key is ignored, not refused."""
    loader = serialization.load_pem_private_key if pem else serialization.load_der_private_key
    try:
        return loader(data, password)
    except TypeError:
        if password is None:
            raise
        return loader(data, None)


def _require_rsa(key: PrivateKeyTypes, path: Path) -> rsa.RSAPrivateKey:
    if not isinstance(key, rsa.RSAPrivateKey):
        raise CertificateError(
            f"the private key in {path} is not an RSA key; spec 5 signs with rsa-sha256"
        )
    return key


def _public_der(key: CertificatePublicKeyTypes) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _check_pair(
    certificate: x509.Certificate, key: rsa.RSAPrivateKey, cert_path: Path, key_path: Path
) -> None:
    if _public_der(certificate.public_key()) != _public_der(key.public_key()):
        where = f"in {key_path}" if key_path != cert_path else f"in {cert_path}"
        raise CertificateError(
            f"the private key {where} does not belong to the certificate in {cert_path}"
        )


def _issuer_of(
    certificate: x509.Certificate, others: Iterable[x509.Certificate]
) -> x509.Certificate | None:
    """The certificate among ``others`` whose subject is ``certificate``'s issuer."""
    return next((other for other in others if other.subject == certificate.issuer), None)


def load_identity(
    cert_path: str | os.PathLike[str],
    key_path: str | os.PathLike[str] | None = None,
    *,
    password: str | bytes | None = None,
) -> TppIdentity:
    """A TPP identity from files.

    - PKCS#12 (``.p12``/``.pfx``): one file holding key, certificate and maybe the CA;
      ``key_path`` must be None and ``password`` opens it.
    - PEM (or DER): the certificate file, optionally followed by its CA in the same file, and
      the key either in ``key_path`` or in the certificate file itself; ``password`` decrypts
      an encrypted key.

    The CA certificate is kept when the files hold it (matched by issuer name).
    """
    cert_file = Path(cert_path)
    secret = _password_bytes(password)
    if cert_file.suffix.lower() in _PKCS12_SUFFIXES:
        if key_path is not None:
            raise CertificateError(
                f"{cert_file} is a PKCS#12 file, which holds its own key; give no separate key file"
            )
        return _load_pkcs12(cert_file, secret)
    data = _read_bytes(cert_file, "certificate")
    certificates = _load_certificates(data, cert_file)
    certificate = certificates[0]
    if key_path is None:
        if _PEM_KEY.search(data) is None:
            raise CertificateError(f"{cert_file} holds no private key; give the key file as well")
        key_file = cert_file
        key = _load_private_key(data, cert_file, secret)
    else:
        key_file = Path(key_path)
        key = _load_private_key(_read_bytes(key_file, "private key"), key_file, secret)
    _check_pair(certificate, key, cert_file, key_file)
    return TppIdentity(
        certificate=certificate,
        private_key=key,
        ca_certificate=_issuer_of(certificate, certificates[1:]),
    )


def _load_pkcs12(path: Path, password: bytes | None) -> TppIdentity:
    data = _read_bytes(path, "PKCS#12")
    try:
        bundle = pkcs12.load_pkcs12(data, password)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        reason = (
            "it needs a password, or is not a PKCS#12 file"
            if password is None
            else "the password is wrong, or it is not a PKCS#12 file"
        )
        raise CertificateError(f"{path} cannot be opened: {reason}") from None
    if bundle.cert is None:
        raise CertificateError(f"the PKCS#12 file {path} holds no certificate with its key")
    if bundle.key is None:
        raise CertificateError(f"the PKCS#12 file {path} holds no private key")
    certificate = bundle.cert.certificate
    key = _require_rsa(bundle.key, path)
    _check_pair(certificate, key, path, path)
    others = [entry.certificate for entry in bundle.additional_certs]
    return TppIdentity(
        certificate=certificate, private_key=key, ca_certificate=_issuer_of(certificate, others)
    )


def load_ca(
    cert_path: str | os.PathLike[str],
    key_path: str | os.PathLike[str],
    *,
    password: str | bytes | None = None,
) -> CertificateAuthority:
    """A CA from its PEM certificate and key, to issue more certificates a bank already trusts."""
    cert_file, key_file = Path(cert_path), Path(key_path)
    certificate = _load_certificates(_read_bytes(cert_file, "CA certificate"), cert_file)[0]
    key = _load_private_key(
        _read_bytes(key_file, "CA private key"), key_file, _password_bytes(password)
    )
    _check_pair(certificate, key, cert_file, key_file)
    return CertificateAuthority(certificate=certificate, private_key=key)


def _pkcs8(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _write(path: Path, data: bytes, *, secret: bool = False) -> Path:
    """Write ``data``; a secret file is created with mode 0600 and tightened if it existed."""
    if secret:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.chmod(path, 0o600)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
    else:
        path.write_bytes(data)
    return path


def write_identity(
    identity: TppIdentity,
    directory: str | os.PathLike[str],
    *,
    ca: CertificateAuthority | None = None,
    p12_password: str | None = None,
) -> dict[str, Path]:
    """Write the identity (and the CA) to ``directory``; returns what was written, by role.

    Keys of the result: ``certificate`` (tpp.pem), ``key`` (tpp.key: PKCS#8, unencrypted, mode
    0600), ``pkcs12`` (tpp.p12 holding key, certificate and CA; encrypted with ``p12_password``
    when given), ``ca_certificate`` (ca.pem, when the CA is known) and ``ca_key`` (ca.key, mode
    0600, only when ``ca`` is given). Existing files are overwritten.
    """
    folder = Path(directory)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CertificateError(f"cannot create the directory {folder}: {error.strerror}") from None
    ca_certificate = ca.certificate if ca is not None else identity.ca_certificate
    encryption: serialization.KeySerializationEncryption = (
        serialization.NoEncryption()
        if p12_password is None
        else serialization.BestAvailableEncryption(p12_password.encode("utf-8"))
    )
    pem = serialization.Encoding.PEM
    written: dict[str, Path] = {}
    try:
        written["certificate"] = _write(folder / "tpp.pem", identity.certificate.public_bytes(pem))
        written["key"] = _write(folder / "tpp.key", _pkcs8(identity.private_key), secret=True)
        written["pkcs12"] = _write(
            folder / "tpp.p12",
            pkcs12.serialize_key_and_certificates(
                name=b"tpp",
                key=identity.private_key,
                cert=identity.certificate,
                cas=None if ca_certificate is None else [ca_certificate],
                encryption_algorithm=encryption,
            ),
            secret=True,
        )
        if ca_certificate is not None:
            written["ca_certificate"] = _write(folder / "ca.pem", ca_certificate.public_bytes(pem))
        if ca is not None:
            written["ca_key"] = _write(folder / "ca.key", _pkcs8(ca.private_key), secret=True)
    except OSError as error:
        raise CertificateError(
            f"cannot write the certificate files to {folder}: {error.strerror}"
        ) from None
    return written
