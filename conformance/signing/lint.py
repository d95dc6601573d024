"""A TPP's own certificate checked the way a bank's gateway and its supervisor will check it, before
a run (``conformance certs --lint FILE``, and the preflight's expiry warning).

The checks are those of ETSI TS 119 495 (the PSD2 QCStatement: its encoding, the roles, the
competent authority's name and id; the subject's organizationIdentifier ``PSD`` + country + ``-``
+ NCA + ``-`` + authorisation number), of ETSI EN 319 412-5 (QcCompliance and the QcType: ``eseal``
for the sealing certificate that signs requests, ``web`` for the QWAC shown in the TLS handshake),
the key usage each kind needs (digitalSignature or nonRepudiation to seal; the extended key usage
clientAuth for a TLS client), spec 5's rsa-sha256 for the signing key, and the validity. The spec
itself only speaks of "the TPP certificate" (spec 5 item 1); a finding is graded ``error`` where a
bank refuses such a certificate outright, ``warning`` where some do.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from conformance.errors import CertificateError
from conformance.signing.qcstatement import PSD2_ROLE_OIDS, QcStatements, read_qc_statements

__all__ = [
    "EXPIRY_WARNING_DAYS",
    "CertificateKind",
    "LintNote",
    "expiry_warning",
    "kind_of",
    "lint_certificate",
]

#: A certificate that ends within this many days is worth a warning before a run.
EXPIRY_WARNING_DAYS = 30
#: ``seal``: the QSealC-type certificate that signs requests (spec 5 items 1-2); ``qwac``: the
#: website authentication certificate a TLS client shows (mutual TLS).
CertificateKind = Literal["seal", "qwac"]
Level = Literal["error", "warning", "ok"]

#: ETSI TS 119 495 5.2.1: "PSD", the 2-letter country, "-", the 2-8 letter NCA id, "-", the
#: authorisation number the NCA gave.
_ORGANISATION_ID = re.compile(r"PSD(?P<country>[A-Z]{2})-(?P<nca>[A-Z]{2,8})-(?P<number>.+)")
#: ETSI TS 119 495 5.1: nCAId is the 2-letter country, "-", the 2-8 letter NCA id.
_NCA_ID = re.compile(r"(?P<country>[A-Z]{2})-(?P<nca>[A-Z]{2,8})")
_MIN_RSA_BITS = 2048
_ROLE_NAME_BY_OID = {oid: name for name, oid in PSD2_ROLE_OIDS.items()}


@dataclass(frozen=True)
class LintNote:
    """One line of the lint (a note, not a finding: the certificate is read as a bank would, not
    judged against the spec): ``error`` (a bank refuses the certificate), ``warning`` (some do),
    ``ok`` (a check that held, said once so the reader sees what was checked)."""

    level: Level
    text: str

    def line(self) -> str:
        return f"{self.level}: {self.text}"


def kind_of(certificate: x509.Certificate) -> CertificateKind:
    """``qwac`` when the certificate says it is one (QcType web, or the extended key usage
    clientAuth without QcType eseal), else ``seal``."""
    try:
        statements = read_qc_statements(certificate)
    except CertificateError:
        statements = None
    if statements is not None and statements.web and not statements.seal:
        return "qwac"
    if statements is not None and statements.seal:
        return "seal"
    return "qwac" if ExtendedKeyUsageOID.CLIENT_AUTH in _extended_usages(certificate) else "seal"


def _extended_usages(certificate: x509.Certificate) -> tuple[x509.ObjectIdentifier, ...]:
    try:
        return tuple(certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)
    except (x509.ExtensionNotFound, ValueError):
        return ()


def lint_certificate(
    certificate: x509.Certificate,
    *,
    kind: CertificateKind | None = None,
    now: dt.datetime | None = None,
) -> list[LintNote]:
    """Every finding on ``certificate`` used as ``kind`` (guessed by :func:`kind_of` when None),
    in a fixed order: validity, the QCStatements, the organizationIdentifier, key usage, key."""
    moment = now or dt.datetime.now(dt.UTC)
    chosen = kind or kind_of(certificate)
    findings = _validity(certificate, moment)
    statements, problems = _statements(certificate, chosen)
    findings += problems
    findings += _organisation(certificate, statements)
    findings += _usage(certificate, chosen)
    findings += _key(certificate, chosen)
    return findings


def expiry_warning(
    certificate: x509.Certificate, what: str, *, now: dt.datetime | None = None
) -> str | None:
    """One line when ``certificate`` has ended or ends within :data:`EXPIRY_WARNING_DAYS`."""
    moment = now or dt.datetime.now(dt.UTC)
    end = certificate.not_valid_after_utc
    if end <= moment:
        return f"the {what} expired on {end:%Y-%m-%d}: a bank refuses every request it signs"
    left = end - moment
    if left <= dt.timedelta(days=EXPIRY_WARNING_DAYS):
        days = left.days
        when = "today" if days == 0 else f"in {days} day{'s' if days != 1 else ''}"
        return f"the {what} expires on {end:%Y-%m-%d} ({when}): renew it before a long run"
    return None


def _validity(certificate: x509.Certificate, moment: dt.datetime) -> list[LintNote]:
    start, end = certificate.not_valid_before_utc, certificate.not_valid_after_utc
    if moment < start:
        return [LintNote("error", f"not valid before {start:%Y-%m-%d %H:%M} UTC")]
    if moment > end:
        return [LintNote("error", f"expired on {end:%Y-%m-%d %H:%M} UTC")]
    warning = expiry_warning(certificate, "certificate", now=moment)
    if warning is not None:
        return [LintNote("warning", warning)]
    return [LintNote("ok", f"valid from {start:%Y-%m-%d} to {end:%Y-%m-%d}")]


def _statements(
    certificate: x509.Certificate, kind: CertificateKind
) -> tuple[QcStatements | None, list[LintNote]]:
    """The QCStatements read back (None when absent or unreadable) and their findings."""
    try:
        statements = read_qc_statements(certificate)
    except CertificateError as error:
        return None, [LintNote("error", f"{error.message} (ETSI TS 119 495 encoding)")]
    if statements is None:
        return None, [
            LintNote("error", "no qcStatements extension: a PSD2 certificate carries the PSD2 "
                    "QCStatement with the TPP's roles (ETSI TS 119 495)")
        ]  # fmt: skip
    findings: list[LintNote] = []
    if not statements.compliance:
        findings.append(
            LintNote("warning", "no QcCompliance statement (ETSI EN 319 412-5): not a qualified "
                    "certificate, which a production gateway requires")
        )  # fmt: skip
    wanted = "eseal" if kind == "seal" else "web"
    other = "web" if kind == "seal" else "eseal"
    if other in statements.types and wanted not in statements.types:
        use = "signing requests (a QWAC authenticates TLS)" if kind == "seal" else "mutual TLS"
        findings.append(LintNote("error", f"QcType {other}, used for {use}: QcType {wanted} due"))
    elif wanted not in statements.types:
        findings.append(
            LintNote("warning", f"no QcType {wanted} (ETSI EN 319 412-5): a bank that checks the "
                    f"certificate type refuses it")
        )  # fmt: skip
    else:
        findings.append(LintNote("ok", f"QcType {wanted}"))
    findings += _psd2_statement(statements)
    return statements, findings


def _psd2_statement(statements: QcStatements) -> list[LintNote]:
    psd2 = statements.psd2
    if psd2 is None:
        return [LintNote("error", "no PSD2 QCStatement (ETSI TS 119 495 id-etsi-psd2-qcStatement)")]
    findings: list[LintNote] = []
    if not psd2.role_entries:
        findings.append(LintNote("error", "the PSD2 QCStatement lists no role (RolesOfPSP empty)"))
    for entry in psd2.role_entries:
        name = _ROLE_NAME_BY_OID.get(entry.oid)
        if name is None:
            findings.append(LintNote("error", f"unknown roleOfPspOid {entry.oid}"))
        elif entry.name != name:
            findings.append(
                LintNote("error", f"roleOfPspName {entry.name!r} does not match its OID "
                        f"{entry.oid} ({name})")
            )  # fmt: skip
    if psd2.role_entries and all(e.oid in _ROLE_NAME_BY_OID for e in psd2.role_entries):
        roles = ", ".join(sorted(psd2.roles))
        findings.append(LintNote("ok", f"PSD2 roles {roles}"))
    if not psd2.nca_name.strip():
        findings.append(LintNote("error", "nCAName is empty"))
    if _NCA_ID.fullmatch(psd2.nca_id) is None:
        findings.append(
            LintNote("error", f"nCAId {psd2.nca_id!r} is not country-NCA (2 letters, '-', 2-8 "
                    "capital letters, e.g. NO-FSA)")
        )  # fmt: skip
    return findings


def _organisation(certificate: x509.Certificate, statements: QcStatements | None) -> list[LintNote]:
    found = certificate.subject.get_attributes_for_oid(NameOID.ORGANIZATION_IDENTIFIER)
    if not found:
        return [LintNote("error", "the subject has no organizationIdentifier (2.5.4.97)")]
    value = str(found[0].value)
    match = _ORGANISATION_ID.fullmatch(value)
    if match is None:
        return [
            LintNote("error", f"organizationIdentifier {value!r} is not PSD + country + '-' + NCA "
                    "+ '-' + authorisation number (e.g. PSDNO-FSA-123456789)")
        ]  # fmt: skip
    findings = [LintNote("ok", f"organizationIdentifier {value}")]
    psd2 = statements.psd2 if statements is not None else None
    nca = _NCA_ID.fullmatch(psd2.nca_id) if psd2 is not None else None
    if nca is not None and (nca["country"], nca["nca"]) != (match["country"], match["nca"]):
        findings.append(
            LintNote("error", f"organizationIdentifier {value} names another authority than "
                    f"nCAId {psd2.nca_id if psd2 else ''}")
        )  # fmt: skip
    countries = certificate.subject.get_attributes_for_oid(NameOID.COUNTRY_NAME)
    country = str(countries[0].value) if countries else None
    if country is not None and country != match["country"]:
        findings.append(
            LintNote("warning", f"the subject's country {country} is not the "
                    f"organizationIdentifier's {match['country']}")
        )  # fmt: skip
    return findings


def _usage(certificate: x509.Certificate, kind: CertificateKind) -> list[LintNote]:
    findings: list[LintNote] = []
    try:
        constraints = certificate.extensions.get_extension_for_class(x509.BasicConstraints).value
        if constraints.ca:
            findings.append(LintNote("error", "basicConstraints says CA: a TPP certificate is not"))
    except x509.ExtensionNotFound:
        pass
    try:
        usage: x509.KeyUsage | None = certificate.extensions.get_extension_for_class(
            x509.KeyUsage
        ).value
    except x509.ExtensionNotFound:
        usage = None
    if kind == "seal":
        if usage is None or not (usage.digital_signature or usage.content_commitment):
            findings.append(
                LintNote("error", "key usage allows neither digitalSignature nor nonRepudiation: "
                        "the certificate cannot seal requests")
            )  # fmt: skip
        else:
            findings.append(LintNote("ok", "key usage to seal (digitalSignature/nonRepudiation)"))
        return findings
    if ExtendedKeyUsageOID.CLIENT_AUTH not in _extended_usages(certificate):
        findings.append(
            LintNote("error", "no extended key usage clientAuth: a TLS server refuses it as a "
                    "client certificate")
        )  # fmt: skip
    else:
        findings.append(LintNote("ok", "extended key usage clientAuth"))
    if usage is not None and not usage.digital_signature:
        findings.append(LintNote("warning", "key usage lacks digitalSignature (TLS client)"))
    return findings


def _key(certificate: x509.Certificate, kind: CertificateKind) -> list[LintNote]:
    key = certificate.public_key()
    if not isinstance(key, rsa.RSAPublicKey):
        if kind == "seal":
            return [
                LintNote("error", f"a {type(key).__name__} key: spec 5 item 2 expects rsa-sha256")
            ]
        return []
    if key.key_size < _MIN_RSA_BITS:
        return [LintNote("error", f"an RSA key of {key.key_size} bits (at least {_MIN_RSA_BITS})")]
    return [LintNote("ok", f"RSA key of {key.key_size} bits")]
