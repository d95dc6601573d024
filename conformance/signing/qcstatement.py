"""The PSD2 QCStatement of ETSI TS 119 495 (``id-etsi-psd2-qcStatement``): the TPP's roles and its
competent authority, encoded into a certificate and read back (cached per certificate).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography import x509

from conformance.errors import CertificateError
from conformance.signing.der import (
    DerError,
    decode_oid,
    decode_sequence,
    decode_utf8,
    encode_oid,
    encode_sequence,
    encode_utf8,
)

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


def normalise_roles(roles: Iterable[str]) -> tuple[str, ...]:
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


#: ETSI EN 319 412-5: esi4-qcStatement-1 (QcCompliance), esi4-qcStatement-6 (QcType) and its
#: types: qct-esign, qct-eseal (a QSealC), qct-web (a QWAC).
QC_COMPLIANCE_OID = "0.4.0.1862.1.1"
QC_TYPE_OID = "0.4.0.1862.1.6"
QC_TYPES: dict[str, str] = {
    "esign": "0.4.0.1862.1.6.1",
    "eseal": "0.4.0.1862.1.6.2",
    "web": "0.4.0.1862.1.6.3",
}


def encode_psd2_qc_statements(
    roles: Iterable[str], nca_name: str, nca_id: str, *, qc_type: str | None = None
) -> bytes:
    """The DER value of the qcStatements extension holding the PSD2 QCStatement; with
    ``qc_type`` (``eseal``, ``web``) QcCompliance and that QcType come first (a QWAC is ``web``).

    Roles are written in the order of :data:`PSD2_ROLES` whatever order they come in, so the
    encoding of a role set is unique. The empty set gives an empty RolesOfPSP, which
    ETSI TS 119 495 does not allow: that is on purpose, for negative scenarios.
    """
    role_list = encode_sequence(
        *(
            encode_sequence(encode_oid(PSD2_ROLE_OIDS[role]), encode_utf8(role))
            for role in normalise_roles(roles)
        )
    )
    psd2_qc_type = encode_sequence(role_list, encode_utf8(nca_name), encode_utf8(nca_id))
    statement = encode_sequence(encode_oid(PSD2_QC_STATEMENT_OID), psd2_qc_type)
    if qc_type is None:
        return encode_sequence(statement)
    if qc_type not in QC_TYPES:
        raise CertificateError(f"unknown QcType {qc_type!r}; expected one of {', '.join(QC_TYPES)}")
    compliance = encode_sequence(encode_oid(QC_COMPLIANCE_OID))
    kind = encode_sequence(encode_oid(QC_TYPE_OID), encode_sequence(encode_oid(QC_TYPES[qc_type])))
    return encode_sequence(compliance, kind, statement)


def decode_psd2_statement(extension_value: bytes) -> Psd2Statement | None:
    """The PSD2 statement inside a qcStatements extension value; None when it holds none.

    Other QCStatements (QcCompliance, QcType, ...) are skipped. Malformed DER, a statementInfo
    of the wrong shape, or two PSD2 statements raise :class:`CertificateError`.
    """
    try:
        return _decode_psd2_statement(extension_value)
    except DerError as error:
        raise CertificateError(f"the qcStatements extension is malformed: {error}") from None


def _decode_psd2_statement(extension_value: bytes) -> Psd2Statement | None:
    found: Psd2Statement | None = None
    for index, element in enumerate(decode_sequence(extension_value, "QCStatements")):
        parts = decode_sequence(element, f"QCStatement {index}")
        if not parts:
            raise DerError(f"QCStatement {index} has no statementId")
        if decode_oid(parts[0], f"the statementId of QCStatement {index}") != PSD2_QC_STATEMENT_OID:
            continue
        if found is not None:
            raise DerError("there is more than one PSD2 QCStatement")
        if len(parts) != 2:
            raise DerError("the PSD2 QCStatement must have exactly one statementInfo (PSD2QcType)")
        found = _decode_psd2_qc_type(parts[1])
    return found


def _decode_psd2_qc_type(element: bytes) -> Psd2Statement:
    fields = decode_sequence(element, "PSD2QcType")
    if len(fields) != 3:
        raise DerError(f"PSD2QcType has {len(fields)} fields, expected 3 (roles, nCAName, nCAId)")
    entries = []
    for index, role in enumerate(decode_sequence(fields[0], "RolesOfPSP")):
        pair = decode_sequence(role, f"RoleOfPSP {index}")
        if len(pair) != 2:
            raise DerError(f"RoleOfPSP {index} has {len(pair)} fields, expected 2")
        entries.append(
            RoleOfPsp(
                oid=decode_oid(pair[0], f"roleOfPspOid {index}"),
                name=decode_utf8(pair[1], f"roleOfPspName {index}"),
            )
        )
    return Psd2Statement(
        roles=frozenset(_ROLE_BY_OID.get(entry.oid, entry.oid) for entry in entries),
        nca_name=decode_utf8(fields[1], "nCAName"),
        nca_id=decode_utf8(fields[2], "nCAId"),
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


#: The QcType names by OID (ETSI EN 319 412-5).
_QC_TYPE_BY_OID = {oid: name for name, oid in QC_TYPES.items()}


@dataclass(frozen=True)
class QcStatements:
    """What a qcStatements extension says, as a bank reads it: QcCompliance (ETSI EN 319 412-5
    esi4-qcStatement-1), the QcTypes (``esign``, ``eseal``, ``web``, else the dotted OID) and
    the PSD2 statement of ETSI TS 119 495; ``statement_ids`` every statementId in order."""

    compliance: bool
    types: frozenset[str]
    psd2: Psd2Statement | None
    statement_ids: tuple[str, ...]

    @property
    def web(self) -> bool:
        """A QWAC's QcType: the certificate authenticates a web site or a TLS client."""
        return "web" in self.types

    @property
    def seal(self) -> bool:
        """A QSealC's QcType: the certificate seals (signs) on behalf of a legal person."""
        return "eseal" in self.types


def decode_qc_statements(extension_value: bytes) -> QcStatements:
    """Every QCStatement of a qcStatements extension value; malformed DER or a PSD2 statement
    of the wrong shape raise :class:`CertificateError`."""
    try:
        compliance = False
        types: set[str] = set()
        ids: list[str] = []
        for index, element in enumerate(decode_sequence(extension_value, "QCStatements")):
            parts = decode_sequence(element, f"QCStatement {index}")
            if not parts:
                raise DerError(f"QCStatement {index} has no statementId")
            statement = decode_oid(parts[0], f"the statementId of QCStatement {index}")
            ids.append(statement)
            if statement == QC_COMPLIANCE_OID:
                compliance = True
            elif statement == QC_TYPE_OID:
                if len(parts) != 2:
                    raise DerError("the QcType statement must hold one SEQUENCE OF QcType OIDs")
                for position, kind in enumerate(decode_sequence(parts[1], "QcType")):
                    oid = decode_oid(kind, f"QcType {position}")
                    types.add(_QC_TYPE_BY_OID.get(oid, oid))
        psd2 = _decode_psd2_statement(extension_value)
    except DerError as error:
        raise CertificateError(f"the qcStatements extension is malformed: {error}") from None
    return QcStatements(compliance, frozenset(types), psd2, tuple(ids))


def read_qc_statements(certificate: x509.Certificate) -> QcStatements | None:
    """The QCStatements of ``certificate``; None when it has no qcStatements extension."""
    return _qc_statements(certificate)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _qc_statements(certificate: x509.Certificate) -> QcStatements | None:
    """:func:`read_qc_statements`, cached per certificate for the same reason as
    :func:`_psd2_statement` (a server reads the QcType on every request): a pure function of
    the certificate's DER, an immutable value; a malformed extension raises every time."""
    try:
        extension = certificate.extensions.get_extension_for_oid(QC_STATEMENTS_OID)
    except x509.ExtensionNotFound:
        return None
    except ValueError as error:
        raise CertificateError(f"the certificate's extensions cannot be parsed: {error}") from None
    value = extension.value
    if not isinstance(value, x509.UnrecognizedExtension):
        raise CertificateError(
            "the qcStatements extension cannot be read: this cryptography version parses it itself"
        )
    return decode_qc_statements(value.value)


def read_qc_types(certificate: x509.Certificate) -> frozenset[str]:
    """The QcTypes of ``certificate`` (``eseal``, ``web``, ...); empty when it states none."""
    statements = read_qc_statements(certificate)
    return frozenset() if statements is None else statements.types
