"""``conformance certs``: write a test CA and a TPP signing certificate with PSD2 roles (spec 5),
including the variants the negative scenarios need (role sets, expired, chosen serial), and beside
it a QWAC-style TLS client certificate for mutual TLS from the same CA and the CA's revocation
list; revoke a certificate (``--revoke``), or check a TPP's own certificate the way a bank will
(``--lint``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
from pathlib import Path

from conformance.commands import COMMANDS, Subparsers
from conformance.commands.usage import positive_int
from conformance.errors import CertificateError
from conformance.signing import (
    PSD2_ROLES,
    CertificateAuthority,
    generate_ca,
    generate_qwac,
    generate_server_certificate,
    generate_tpp_identity,
    load_ca,
    load_certificate,
    verify_chain,
    write_identity,
)
from conformance.signing.lint import kind_of, lint_certificate
from conformance.signing.revocation import write_crl

#: The environment variable whose value opens a PKCS#12 file given to ``--lint``.
_LINT_PASSWORD_ENV = "CONFORMANCE_KEY_PASSWORD"
#: The CA's revocation list, beside ca.pem.
CRL_NAME = "ca.crl"

#: An expired certificate ended this long before now, so clock skew cannot make it valid again.
_EXPIRED_MARGIN = dt.timedelta(days=1)

_LABELS = {
    "certificate": "TPP certificate",
    "key": "TPP private key",
    "pkcs12": "TPP PKCS#12",
    "ca_certificate": "CA certificate",
    "ca_key": "CA private key",
}
_QWAC_LABELS = {
    "certificate": "QWAC (TLS client) certificate",
    "key": "QWAC private key",
    "pkcs12": "QWAC PKCS#12",
}


def parse_roles(text: str) -> frozenset[str]:
    """``PSP_PI,PSP_AI`` -> the role set; an empty string is the empty set (spec 5 negatives)."""
    roles = frozenset(part.strip().upper() for part in text.split(",") if part.strip())
    unknown = sorted(roles - set(PSD2_ROLES))
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown PSD2 role {', '.join(unknown)}; choose from {','.join(PSD2_ROLES)}"
        )
    return roles


def parse_serial(text: str) -> int:
    """A serial number in hexadecimal, as keyId shows it (spec 5); ``0x`` is optional."""
    digits = text.lower().removeprefix("0x")
    try:
        value = int(digits, 16)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a hexadecimal serial number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"a serial number must be positive: {text!r}")
    return value


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "certs",
        help=COMMANDS["certs"],
        description=(
            "Write a test CA (ca.pem, ca.key) and a TPP signing certificate carrying the PSD2 "
            "QCStatement of ETSI TS 119 495 (tpp.pem, tpp.key, tpp.p12) to a directory, and "
            "print the keyId the Signature header will name (spec 5). Beside it, from the same "
            "CA, a QWAC-style TLS client certificate for mutual TLS (qwac.pem, qwac.key, "
            "qwac.p12: QcType web, the same roles, extended key usage clientAuth); give it as "
            "--tls-cert or the profile's tls_certificate. A new CA comes with its (empty) "
            "revocation list, ca.crl; --revoke adds to it. --lint checks a TPP's own "
            "certificate instead of writing any."
        ),
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--out", type=Path, metavar="DIR", help="where to write")
    qc = parser.add_mutually_exclusive_group()
    qc.add_argument(
        "--roles",
        type=parse_roles,
        default=frozenset(PSD2_ROLES),
        metavar="ROLES",
        help=(
            f"comma-separated PSD2 roles, any of {','.join(PSD2_ROLES)} "
            '(default: all four; "" for an empty role list)'
        ),
    )
    qc.add_argument(
        "--no-qc-statement",
        action="store_true",
        help="leave the PSD2 QCStatement out of the certificate entirely",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write a new CA into --out even when it already holds ca.key or tpp.key "
        "(otherwise refused: they would be overwritten)",
    )
    parser.add_argument(
        "--expired",
        action="store_true",
        help="make the TPP certificate's validity end a day ago",
    )
    parser.add_argument(
        "--days",
        type=positive_int,
        default=365,
        metavar="N",
        help="validity of the TPP certificate in days (default 365)",
    )
    parser.add_argument(
        "--serial", type=parse_serial, metavar="HEX", help="serial number of the TPP certificate"
    )
    parser.add_argument(
        "--organisation-id",
        default="PSDNO-FSA-123456789",
        help="subject organizationIdentifier (default PSDNO-FSA-123456789)",
    )
    parser.add_argument(
        "--common-name", default="Conformance Test TPP", help="subject CN of the TPP certificate"
    )
    parser.add_argument("--nca-name", default="Finanstilsynet", help="nCAName of the QCStatement")
    parser.add_argument("--nca-id", default="NO-FSA", help="nCAId of the QCStatement")
    parser.add_argument(
        "--ca-cert",
        type=Path,
        metavar="PEM",
        help="issue under this existing CA certificate instead of a new CA (needs --ca-key)",
    )
    parser.add_argument("--ca-key", type=Path, metavar="PEM", help="the existing CA's private key")
    parser.add_argument(
        "--ca-name",
        metavar="NAME",
        help="common name of the new CA (default 'Conformance Test CA'); a name outside ASCII "
        '("Conformance Test CA Ærø") makes the CA the RFC 2047 scenarios need '
        "(--trust-anchor-utf8, spec 5 item 3)",
    )
    parser.add_argument(
        "--p12-password", metavar="TEXT", help="encrypt tpp.p12 and qwac.p12 with this password"
    )
    parser.add_argument(
        "--no-qwac", action="store_true", help="write no TLS client certificate (qwac.*)"
    )
    parser.add_argument(
        "--server",
        metavar="HOSTS",
        help="also write a TLS server certificate for these comma-separated host names and "
        "addresses (server.pem, server.key), from the same CA: what `conformance proxy "
        "--server-cert` serves HTTPS to the app with (the app trusts ca.pem)",
    )
    parser.add_argument(
        "--revoke",
        action="append",
        default=[],
        metavar="SERIAL|FILE",
        help="revoke this certificate (a hexadecimal serial, or the certificate file) in the "
        "CA's revocation list DIR/ca.crl, keeping what it revoked before, and write nothing "
        "else; the CA is --ca-cert/--ca-key, else DIR/ca.pem and DIR/ca.key (repeatable). "
        "Give the list to the bank, or to the reference server as --crl",
    )
    what.add_argument(
        "--lint",
        action="append",
        metavar="FILE",
        help="instead of writing: check a TPP's certificate (PEM, DER or PKCS#12 opened with "
        f"${_LINT_PASSWORD_ENV}) as a bank will: the PSD2 QCStatement's encoding, the roles, the "
        "NCA's name and id, QcType, key usage, the organizationIdentifier format, the validity; "
        "one line per finding, exit code 1 on an error (repeatable)",
    )
    parser.add_argument(
        "--lint-as",
        choices=("seal", "qwac"),
        help="with --lint: judge the certificate as the signing seal or as the TLS client's QWAC "
        "(default: what it says it is)",
    )
    parser.set_defaults(func=run)


def _certificate_authority(args: argparse.Namespace) -> CertificateAuthority:
    if (args.ca_cert is None) != (args.ca_key is None):
        raise CertificateError("--ca-cert and --ca-key go together: give both or neither")
    if args.ca_cert is not None:
        if args.ca_name is not None:
            raise CertificateError("--ca-name names a new CA; an existing one (--ca-cert) has one")
        return load_ca(args.ca_cert, args.ca_key)
    if args.ca_name is not None:
        if not args.ca_name.strip():
            raise CertificateError("--ca-name must not be empty")
        return generate_ca(args.ca_name)
    return generate_ca()


def _describe_roles(roles: frozenset[str] | None) -> str:
    if roles is None:
        return "none (no PSD2 QCStatement)"
    return ",".join(role for role in PSD2_ROLES if role in roles) or "empty role list"


def run(args: argparse.Namespace, *, now: dt.datetime | None = None) -> int:
    """Generate and write the files, revoke, or lint; ``now`` is injectable for tests."""
    moment = now or dt.datetime.now(dt.UTC)
    if args.lint:
        return lint(args.lint, args.lint_as, now=moment)
    if args.revoke:
        return revoke(args, now=moment)
    new_ca = args.ca_cert is None
    if new_ca and not args.force and args.out is not None:
        kept = [args.out / name for name in ("ca.key", "tpp.key") if (args.out / name).exists()]
        if kept:
            raise CertificateError(
                f"{kept[0]} exists: a new CA would overwrite it (and every certificate it "
                "issued would no longer chain); issue from it with --ca-cert and --ca-key, write "
                "to another --out, or give --force"
            )
    try:
        return _generate(args, moment, new_ca=new_ca)
    except (OverflowError, ValueError) as error:
        raise CertificateError(f"the certificates cannot be made: {error}") from None


def _generate(args: argparse.Namespace, moment: dt.datetime, *, new_ca: bool) -> int:
    """Make and write the CA (unless given), the TPP identity, the QWAC and the server
    certificate."""
    ca = _certificate_authority(args)
    not_before = not_after = None
    if args.expired:
        not_after = moment - _EXPIRED_MARGIN
        not_before = not_after - dt.timedelta(days=args.days)
    identity = generate_tpp_identity(
        ca,
        roles=args.roles,
        qc_statement=not args.no_qc_statement,
        nca_name=args.nca_name,
        nca_id=args.nca_id,
        organisation_id=args.organisation_id,
        common_name=args.common_name,
        serial=args.serial,
        now=moment,
        valid_days=args.days,
        not_before=not_before,
        not_after=not_after,
    )
    written = write_identity(identity, args.out, ca=ca, p12_password=args.p12_password)
    for name, path in written.items():
        print(f"wrote {_LABELS.get(name, name)}: {path}")
    if new_ca:
        crl = args.out / CRL_NAME
        write_crl(ca, crl, now=moment)
        print(f"wrote CA revocation list (none revoked): {crl}")
    if not args.no_qwac:
        qwac = generate_qwac(
            ca,
            roles=args.roles,
            nca_name=args.nca_name,
            nca_id=args.nca_id,
            organisation_id=args.organisation_id,
            common_name=args.common_name,
            not_before=not_before,
            not_after=not_after,
            valid_days=args.days,
            now=moment,
        )
        tls = write_identity(qwac, args.out, p12_password=args.p12_password, stem="qwac")
        for name in ("certificate", "key", "pkcs12"):
            print(f"wrote {_QWAC_LABELS[name]}: {tls[name]}")
    if args.server:
        hosts = [host.strip() for host in args.server.split(",") if host.strip()]
        server = write_identity(
            generate_server_certificate(ca, hosts, valid_days=args.days),
            args.out,
            stem="server",
        )
        print(f"wrote TLS server certificate ({', '.join(hosts)}): {server['certificate']}")
        print(f"wrote TLS server key: {server['key']}")
    certificate = identity.certificate
    print(f"PSD2 roles: {_describe_roles(identity.roles)}")
    print(
        f"valid: {certificate.not_valid_before_utc.isoformat()} to "
        f"{certificate.not_valid_after_utc.isoformat()}"
    )
    print(f"keyId: {identity.key_id}")
    return 0


def _revoked_serial(text: str, ca: CertificateAuthority) -> tuple[int, str]:
    """The serial ``--revoke`` names (a certificate file of ``ca``, or hexadecimal) and how it
    was named."""
    path = Path(text)
    if path.is_file():
        certificate = load_certificate(path)
        problem = verify_chain(certificate, ca.certificate, now=certificate.not_valid_before_utc)
        if problem is not None:
            raise CertificateError(
                f"{path} is not a certificate of the CA whose list is written: {problem}"
            )
        return certificate.serial_number, str(path)
    try:
        return parse_serial(text), "serial"
    except argparse.ArgumentTypeError:
        raise CertificateError(
            f"--revoke {text!r} is neither a certificate file nor a hexadecimal serial"
        ) from None


def revoke(args: argparse.Namespace, *, now: dt.datetime) -> int:
    """``--revoke``: the CA's list with these serials added, written to DIR/ca.crl."""
    if args.ca_cert is None and args.ca_key is None:
        args.ca_cert, args.ca_key = args.out / "ca.pem", args.out / "ca.key"
        if not args.ca_cert.is_file() or not args.ca_key.is_file():
            raise CertificateError(
                f"--revoke needs the CA: --ca-cert and --ca-key, or ca.pem and ca.key in {args.out}"
            )
    ca = _certificate_authority(args)
    named = [_revoked_serial(text, ca) for text in args.revoke]
    crl = args.out / CRL_NAME
    revoked = write_crl(ca, crl, (serial for serial, _ in named), now=now)
    for serial, source in named:
        print(f"revoked {serial:X}" + ("" if source == "serial" else f" ({source})"))
    print(f"wrote CA revocation list ({len(revoked)} revoked): {crl}")
    return 0


_KIND_NAMES = {"seal": "signing certificate (QSealC)", "qwac": "TLS client certificate (QWAC)"}


def lint(files: list[str], kind: str | None, *, now: dt.datetime) -> int:
    """``--lint``: each file's findings, one line each; 1 when any is an error."""
    password = os.environ.get(_LINT_PASSWORD_ENV) or None
    errors = 0
    for text in files:
        certificate = load_certificate(Path(text), password=password)
        chosen = kind or kind_of(certificate)
        subject = certificate.subject.rfc4514_string()
        print(f"{text}: judged as a {_KIND_NAMES[chosen]}, subject {subject}")
        findings = lint_certificate(certificate, kind=chosen, now=now)  # type: ignore[arg-type]
        for finding in findings:
            print(f"  {finding.line()}")
        found = sum(1 for finding in findings if finding.level == "error")
        warned = sum(1 for finding in findings if finding.level == "warning")
        print(f"  {found} error{'s' * (found != 1)}, {warned} warning{'s' * (warned != 1)}")
        errors += found
    return 1 if errors else 0
