"""A TPP's own certificate checked as a bank will (``conformance certs --lint``, the preflight's
expiry warning), and the CA's revocation list (``conformance certs --revoke``, read back as the
reference server reads it)."""

from __future__ import annotations

import argparse
import datetime as dt
from functools import cache
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes

from conformance.commands import certs as certs_command
from conformance.errors import CertificateError
from conformance.signing import (
    CertificateAuthority,
    TppIdentity,
    generate_ca,
    generate_qwac,
    generate_tpp_identity,
    load_ca,
    load_identity,
)
from conformance.signing.certificates import tpp_subject
from conformance.signing.der import encode_oid, encode_sequence, encode_tlv
from conformance.signing.lint import LintNote, expiry_warning, kind_of, lint_certificate
from conformance.signing.qcstatement import PSD2_QC_STATEMENT_OID, QC_STATEMENTS_OID
from conformance.signing.revocation import RevocationLists, load_crls, write_crl

NOW = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)


@cache
def _ca() -> CertificateAuthority:
    return generate_ca(now=NOW)


@cache
def _seal() -> TppIdentity:
    return generate_tpp_identity(_ca(), now=NOW)


def _errors(findings: list[LintNote]) -> list[str]:
    return [finding.text for finding in findings if finding.level == "error"]


def _warnings(findings: list[LintNote]) -> list[str]:
    return [finding.text for finding in findings if finding.level == "warning"]


# ---------------------------------------------------------------------------- lint


def test_the_suites_own_seal_and_qwac_pass_the_lint() -> None:
    seal = lint_certificate(_seal().certificate, now=NOW)
    qwac_certificate = generate_qwac(_ca(), not_before=NOW, valid_days=365).certificate
    qwac = lint_certificate(qwac_certificate, now=NOW)
    assert _errors(seal) == _warnings(seal) == []
    assert _errors(qwac) == _warnings(qwac) == []
    assert kind_of(_seal().certificate) == "seal" and kind_of(qwac_certificate) == "qwac"
    assert any("QcType eseal" in f.text for f in seal)
    assert any("clientAuth" in f.text for f in qwac)


def test_a_qwac_judged_as_a_seal_is_an_error_and_a_seal_as_qwac_too() -> None:
    qwac = generate_qwac(_ca(), not_before=NOW).certificate
    as_seal = _errors(lint_certificate(qwac, kind="seal", now=NOW))
    assert any("QcType web, used for signing requests" in text for text in as_seal)
    as_qwac = _errors(lint_certificate(_seal().certificate, kind="qwac", now=NOW))
    assert any("QcType eseal" in text for text in as_qwac)
    assert any("no extended key usage clientAuth" in text for text in as_qwac)


def test_validity_expiry_soon_and_not_yet_valid() -> None:
    ending = generate_tpp_identity(_ca(), not_before=NOW - dt.timedelta(days=300), valid_days=310)
    assert _warnings(lint_certificate(ending.certificate, now=NOW)) == [
        "the certificate expires on 2026-03-11 (in 10 days): renew it before a long run"
    ]
    expired = generate_tpp_identity(_ca(), not_before=NOW - dt.timedelta(days=40), valid_days=30)
    assert _errors(lint_certificate(expired.certificate, now=NOW))[0].startswith("expired on")
    later = generate_tpp_identity(_ca(), not_before=NOW + dt.timedelta(days=2))
    assert _errors(lint_certificate(later.certificate, now=NOW))[0].startswith("not valid before")
    assert expiry_warning(_seal().certificate, "signing certificate", now=NOW) is None


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"roles": ()}, "lists no role"),
        ({"nca_id": "NORWAY"}, "nCAId 'NORWAY' is not country-NCA"),
        ({"nca_id": "SE-FI"}, "names another authority than nCAId SE-FI"),
        ({"organisation_id": "NO-123456789"}, "is not PSD + country"),
        ({"qc_statement": False}, "no qcStatements extension"),
    ],
)
def test_statement_and_organisation_mistakes_are_errors(
    options: dict[str, object], expected: str
) -> None:
    identity = generate_tpp_identity(_ca(), now=NOW, key=_seal().private_key, **options)  # type: ignore[arg-type]
    errors = _errors(lint_certificate(identity.certificate, now=NOW))
    assert any(expected in text for text in errors), errors


def _with_statements(value: bytes) -> x509.Certificate:
    """A seal whose qcStatements extension holds ``value`` as it is."""
    ca, key = _ca(), _seal().private_key
    return (
        x509.CertificateBuilder()
        .subject_name(tpp_subject("Odd TPP", "PSDNO-FSA-123456789"))
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(7)
        .not_valid_before(NOW - dt.timedelta(days=1))
        .not_valid_after(NOW + dt.timedelta(days=300))
        .add_extension(x509.UnrecognizedExtension(QC_STATEMENTS_OID, value), critical=False)
        .sign(ca.private_key, hashes.SHA256())
    )


def test_a_printable_string_role_name_is_an_encoding_error() -> None:
    # RoleOfPSP with roleOfPspName as PrintableString (tag 0x13), not UTF8String: an encoding
    # some gateways refuse (ETSI TS 119 495 asks for UTF8String)
    role = encode_sequence(encode_oid("0.4.0.19495.1.2"), encode_tlv(0x13, b"PSP_PI"))
    psd2 = encode_sequence(
        encode_sequence(role), encode_tlv(0x0C, b"Finanstilsynet"), encode_tlv(0x0C, b"NO-FSA")
    )
    value = encode_sequence(encode_sequence(encode_oid(PSD2_QC_STATEMENT_OID), psd2))
    errors = _errors(lint_certificate(_with_statements(value), now=NOW))
    assert any("malformed" in text and "roleOfPspName" in text for text in errors), errors


def test_a_role_name_that_is_not_its_oids_is_an_error() -> None:
    role = encode_sequence(encode_oid("0.4.0.19495.1.2"), encode_tlv(0x0C, b"PSP_AI"))
    psd2 = encode_sequence(
        encode_sequence(role), encode_tlv(0x0C, b"Finanstilsynet"), encode_tlv(0x0C, b"NO-FSA")
    )
    value = encode_sequence(encode_sequence(encode_oid(PSD2_QC_STATEMENT_OID), psd2))
    errors = _errors(lint_certificate(_with_statements(value), now=NOW))
    assert any("'PSP_AI' does not match its OID" in text for text in errors), errors


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="conformance")
    certs_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["certs", *argv])
    return certs_command.run(args, now=NOW)


def test_cli_lint_prints_one_line_per_finding_and_fails_on_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("--out", str(tmp_path)) == 0
    capsys.readouterr()
    assert run_cli("--lint", str(tmp_path / "tpp.pem"), "--lint", str(tmp_path / "qwac.p12")) == 0
    printed = capsys.readouterr().out
    assert "judged as a signing certificate (QSealC)" in printed
    assert "judged as a TLS client certificate (QWAC)" in printed
    assert printed.count("0 errors, 0 warnings") == 2
    assert run_cli("--lint", str(tmp_path / "qwac.pem"), "--lint-as", "seal") == 1
    assert "error: QcType web, used for signing requests" in capsys.readouterr().out


def test_cli_needs_out_or_lint(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run_cli()
    assert exited.value.code == 2
    assert "one of the arguments --out --lint is required" in capsys.readouterr().err


# ---------------------------------------------------------------------------- revocation


def test_a_new_ca_comes_with_an_empty_list_and_revoke_adds_to_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("--out", str(tmp_path)) == 0
    (crl,) = load_crls(tmp_path / "ca.crl")
    assert list(crl) == []
    revoked = tmp_path / "revoked"
    ca_args = ("--ca-cert", str(tmp_path / "ca.pem"), "--ca-key", str(tmp_path / "ca.key"))
    assert run_cli("--out", str(revoked), *ca_args, "--no-qwac") == 0
    assert not (revoked / "ca.crl").exists()  # an existing CA's list is only written on --revoke
    capsys.readouterr()
    assert run_cli("--out", str(tmp_path), "--revoke", str(revoked / "tpp.pem")) == 0
    assert run_cli("--out", str(tmp_path), "--revoke", "0x2A") == 0  # the first entry stays
    printed = capsys.readouterr().out
    assert "wrote CA revocation list (2 revoked)" in printed
    identity = load_identity(revoked / "tpp.pem", revoked / "tpp.key")
    ca = load_ca(tmp_path / "ca.pem", tmp_path / "ca.key")
    lists = RevocationLists.of(load_crls(tmp_path / "ca.crl"), [ca.certificate])
    assert lists.revoked(identity.certificate)
    assert not lists.revoked(load_identity(tmp_path / "tpp.pem", tmp_path / "tpp.key").certificate)


def test_revoke_refuses_a_certificate_of_another_ca_and_needs_the_ca(tmp_path: Path) -> None:
    assert run_cli("--out", str(tmp_path / "a")) == 0
    assert run_cli("--out", str(tmp_path / "b")) == 0
    with pytest.raises(CertificateError, match="not a certificate of the CA whose list"):
        run_cli("--out", str(tmp_path / "a"), "--revoke", str(tmp_path / "b" / "tpp.pem"))
    with pytest.raises(CertificateError, match="needs the CA"):
        run_cli("--out", str(tmp_path / "none"), "--revoke", "1F")
    with pytest.raises(CertificateError, match="neither a certificate file nor"):
        run_cli("--out", str(tmp_path / "a"), "--revoke", "not-hex")


def test_a_list_not_signed_by_its_trusted_ca_is_refused(tmp_path: Path) -> None:
    impostor = CertificateAuthority(_ca().certificate, _seal().private_key)  # another key
    write_crl(impostor, tmp_path / "forged.crl", [5], now=NOW)
    with pytest.raises(CertificateError, match="does not carry that CA's signature"):
        RevocationLists.of(load_crls(tmp_path / "forged.crl"), [_ca().certificate])
    # without that CA among the trusted ones, the list is taken as given
    assert RevocationLists.of(load_crls(tmp_path / "forged.crl")).by_issuer


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--days", "100000000"], "cannot be made"),
        (["--common-name", "x" * 300], "cannot be made"),
    ],
    ids=["days-overflow", "common-name-over-64"],
)
def test_a_certificate_that_cannot_be_made_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], said: str
) -> None:
    """security-5.md L9: an OverflowError or ValueError traceback, exit 1; now exit 2."""
    from conformance.cli import main

    assert main(["certs", "--out", str(tmp_path / "ids"), "--no-qwac", *extra]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_a_new_ca_never_overwrites_a_folder_s_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """security-5.md L10: a second ``certs --out`` into the same folder silently replaced
    ca.key and tpp.key; now refused unless --force."""
    from conformance.cli import main

    out = tmp_path / "ids"
    assert main(["certs", "--out", str(out), "--no-qwac"]) == 0
    key = (out / "ca.key").read_bytes()
    assert main(["certs", "--out", str(out), "--no-qwac"]) == 2
    assert "a new CA would overwrite it" in capsys.readouterr().err
    assert (out / "ca.key").read_bytes() == key
    assert main(["certs", "--out", str(out), "--no-qwac", "--force"]) == 0
    assert (out / "ca.key").read_bytes() != key
