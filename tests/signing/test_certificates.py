"""The certificates of conformance.signing (DER, QCStatement, issuing, key files) and the
``conformance certs`` command (spec 5 certificates).

RSA keys cost ~50-100 ms each, so the keys are made once per module and reused through the
``key=`` parameter; only the CLI tests generate fresh ones.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from conformance.commands import certs as certs_command
from conformance.errors import CertificateError
from conformance.signing import (
    PSD2_ROLES,
    QC_STATEMENTS_OID,
    CertificateAuthority,
    RoleOfPsp,
    SigningCredentials,
    TppIdentity,
    decode_psd2_statement,
    default_ca,
    default_identity,
    der,
    encode_psd2_qc_statements,
    generate_ca,
    generate_tpp_identity,
    keyfiles,
    load_ca,
    load_identity,
    read_psd2_roles,
    read_psd2_statement,
    verify_chain,
    write_identity,
)

NOW = dt.datetime(2025, 6, 1, 12, 0, tzinfo=dt.UTC)

# ----------------------------------------------------------------------------------------------
# Hand-derived DER of the qcStatements value for roles {PSP_PI}, nCAName "Finanstilsynet",
# nCAId "NO-FSA" (ETSI TS 119 495 PSD2QcType inside RFC 3739 QCStatements):
#
#   30 39                       QCStatements, SEQUENCE OF, 57 octets
#     30 37                     QCStatement, 55 octets = 8 (statementId) + 2 + 45
#       06 06 04 00 81 98 27 02   statementId 0.4.0.19495.2: 0*40+4 = 04, 00,
#                                 19495 = 1*128^2 + 24*128 + 39 -> 81 98 27, then 02
#       30 2D                   PSD2QcType, 45 octets = 21 + 16 + 8
#         30 13                 RolesOfPSP, 19 octets = 2 + 17
#           30 11               RoleOfPSP, 17 octets = 9 + 8
#             06 07 04 00 81 98 27 01 02     roleOfPspOid 0.4.0.19495.1.2 (psp-pi)
#             0C 06 50 53 50 5F 50 49        roleOfPspName UTF8String "PSP_PI"
#         0C 0E 46 69 6E 61 6E 73 74 69 6C 73 79 6E 65 74   nCAName "Finanstilsynet" (14)
#         0C 06 4E 4F 2D 46 53 41                           nCAId "NO-FSA" (6)
# ----------------------------------------------------------------------------------------------
PSP_PI_QC_STATEMENTS = bytes.fromhex(
    """
    30 39
      30 37
        06 06 04 00 81 98 27 02
        30 2D
          30 13
            30 11
              06 07 04 00 81 98 27 01 02
              0C 06 50 53 50 5F 50 49
          0C 0E 46 69 6E 61 6E 73 74 69 6C 73 79 6E 65 74
          0C 06 4E 4F 2D 46 53 41
    """
)

SUBSETS = [
    pytest.param(frozenset(), id="no-roles"),
    pytest.param(frozenset({"PSP_PI"}), id="PSP_PI"),
    pytest.param(frozenset({"PSP_AI", "PSP_IC"}), id="PSP_AI-PSP_IC"),
    pytest.param(frozenset({"PSP_AS", "PSP_PI", "PSP_AI"}), id="PSP_AS-PSP_PI-PSP_AI"),
    pytest.param(frozenset(PSD2_ROLES), id="all-roles"),
]


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def tpp_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def ca() -> CertificateAuthority:
    return generate_ca(now=NOW)


@pytest.fixture(scope="module")
def other_ca() -> CertificateAuthority:
    return generate_ca("Some Other CA", now=NOW)


@pytest.fixture(scope="module")
def impostor_ca(tpp_key: rsa.RSAPrivateKey) -> CertificateAuthority:
    """Same name as ``ca`` but another key: only the signature tells them apart."""
    return generate_ca(now=NOW, key=tpp_key)


@pytest.fixture(scope="module")
def identity(ca: CertificateAuthority, tpp_key: rsa.RSAPrivateKey) -> TppIdentity:
    return generate_tpp_identity(ca, now=NOW, key=tpp_key, serial=0x9FA1)


@pytest.fixture(scope="module")
def files(identity: TppIdentity, ca: CertificateAuthority, tmp_path_factory) -> dict[str, Path]:
    return write_identity(identity, tmp_path_factory.mktemp("written"), ca=ca)


def public_numbers(key: rsa.RSAPrivateKey) -> rsa.RSAPublicNumbers:
    return key.public_key().public_numbers()


# ---------------------------------------------------------------------------- DER codec


def test_psd2_statement_der_matches_the_hand_derived_bytes() -> None:
    assert encode_psd2_qc_statements({"PSP_PI"}, "Finanstilsynet", "NO-FSA") == (
        PSP_PI_QC_STATEMENTS
    )


def test_role_order_and_duplicates_do_not_change_the_encoding() -> None:
    forward = encode_psd2_qc_statements(["PSP_AS", "PSP_IC"], "N", "I")
    assert encode_psd2_qc_statements(["PSP_IC", "PSP_AS", "PSP_IC"], "N", "I") == forward


@pytest.mark.parametrize(
    ("length", "expected"),
    [
        (0, "00"),
        (1, "01"),
        (127, "7F"),
        (128, "8180"),
        (255, "81FF"),
        (256, "820100"),
        (65535, "82FFFF"),
        (65536, "83010000"),
    ],
)
def test_lengths_use_short_form_below_128_and_minimal_long_form_above(
    length: int, expected: str
) -> None:
    assert der.encode_length(length) == bytes.fromhex(expected)


@pytest.mark.parametrize(
    ("dotted", "expected"),
    [
        ("1.2.840.113549", "06062A864886F70D"),  # rsadsi, the classic X.690 example
        ("2.999.3", "0603883703"),  # X.690 8.19.5: first sub-identifier 2*40+999 = 1079
        ("0.4.0.19495.1.4", "060704008198270104"),
        ("2.5.4.97", "0603550461"),
    ],
)
def test_object_identifiers_encode_and_decode(dotted: str, expected: str) -> None:
    encoded = der.encode_oid(dotted)
    assert encoded == bytes.fromhex(expected)
    assert der.decode_oid(encoded, "oid") == dotted


@pytest.mark.parametrize("dotted", ["", "1", "3.1", "1.40", "0.4.x", "1.-2"])
def test_invalid_object_identifiers_are_refused(dotted: str) -> None:
    with pytest.raises(ValueError):
        der.encode_oid(dotted)


def test_long_names_round_trip_through_long_form_lengths() -> None:
    nca_name = "Æ" * 150  # 300 UTF-8 octets: the UTF8String, PSD2QcType and outer lengths grow
    value = encode_psd2_qc_statements(PSD2_ROLES, nca_name, "NO-FSA")
    assert value[:2] == bytes.fromhex("3082")
    statement = decode_psd2_statement(value)
    assert statement is not None
    assert statement.nca_name == nca_name
    assert statement.roles == frozenset(PSD2_ROLES)


@pytest.mark.parametrize("roles", SUBSETS)
def test_decode_reads_back_what_encode_wrote(roles: frozenset[str]) -> None:
    statement = decode_psd2_statement(encode_psd2_qc_statements(roles, "Finanstilsynet", "NO-FSA"))
    assert statement is not None
    assert statement.roles == roles
    assert (statement.nca_name, statement.nca_id) == ("Finanstilsynet", "NO-FSA")
    assert [entry.name for entry in statement.role_entries] == [
        role for role in PSD2_ROLES if role in roles
    ]


def _statements(*statements: bytes) -> bytes:
    return der.encode_sequence(*statements)


QC_COMPLIANCE = der.encode_sequence(der.encode_oid("0.4.0.1862.1.1"))  # no statementInfo


def _psd2(roles: bytes, nca_name: bytes, nca_id: bytes) -> bytes:
    return der.encode_sequence(
        der.encode_oid("0.4.0.19495.2"), der.encode_sequence(roles, nca_name, nca_id)
    )


def test_other_statements_are_skipped() -> None:
    psd2 = PSP_PI_QC_STATEMENTS[2:]  # the single QCStatement inside the outer SEQUENCE
    statement = decode_psd2_statement(_statements(QC_COMPLIANCE, psd2))
    assert statement is not None
    assert statement.roles == {"PSP_PI"}


def test_statements_without_psd2_give_none() -> None:
    assert decode_psd2_statement(_statements(QC_COMPLIANCE)) is None


def test_unknown_role_oids_are_kept_as_dotted_strings() -> None:
    role = der.encode_sequence(der.encode_oid("0.4.0.19495.1.9"), der.encode_utf8("X"))
    value = _statements(
        _psd2(der.encode_sequence(role), der.encode_utf8("N"), der.encode_utf8("I"))
    )
    statement = decode_psd2_statement(value)
    assert statement is not None
    assert statement.roles == {"0.4.0.19495.1.9"}
    assert statement.role_entries == (RoleOfPsp(oid="0.4.0.19495.1.9", name="X"),)


MALFORMED = [
    pytest.param(PSP_PI_QC_STATEMENTS[:-1], "claims", id="truncated"),
    pytest.param(PSP_PI_QC_STATEMENTS + b"\x00", "unexpected octets", id="trailing-octets"),
    pytest.param(
        bytes.fromhex("3080") + PSP_PI_QC_STATEMENTS[2:] + b"\0\0",
        "indefinite",
        id="indefinite-length",
    ),
    pytest.param(
        bytes.fromhex("308139") + PSP_PI_QC_STATEMENTS[2:], "shortest form", id="non-minimal-length"
    ),
    pytest.param(bytes.fromhex("0400"), "tag 0x04", id="not-a-sequence"),
    pytest.param(
        _statements(
            _psd2(
                der.encode_sequence(),
                der.encode_tlv(0x13, b"Finanstilsynet"),  # PrintableString, not UTF8String
                der.encode_utf8("NO-FSA"),
            )
        ),
        "nCAName has tag 0x13",
        id="nca-name-printable-string",
    ),
    pytest.param(
        _statements(PSP_PI_QC_STATEMENTS[2:], PSP_PI_QC_STATEMENTS[2:]),
        "more than one PSD2",
        id="two-psd2-statements",
    ),
    pytest.param(
        _statements(der.encode_sequence(der.encode_oid("0.4.0.19495.2"))),
        "exactly one statementInfo",
        id="psd2-without-info",
    ),
    pytest.param(
        _statements(
            der.encode_sequence(
                der.encode_oid("0.4.0.19495.2"),
                der.encode_sequence(der.encode_sequence(), der.encode_utf8("N")),
            )
        ),
        "has 2 fields",
        id="psd2-qc-type-missing-nca-id",
    ),
    pytest.param(bytes.fromhex("30053003060188"), "middle of a sub-identifier", id="cut-oid"),
]


@pytest.mark.parametrize(("value", "reason"), MALFORMED)
def test_malformed_statements_raise_certificate_error(value: bytes, reason: str) -> None:
    with pytest.raises(CertificateError, match="qcStatements extension is malformed") as caught:
        decode_psd2_statement(value)
    assert reason in caught.value.message


# ---------------------------------------------------------------------------- generation


@pytest.mark.parametrize("roles", SUBSETS)
def test_certificate_roles_read_back_equal_roles_written(
    ca: CertificateAuthority, tpp_key: rsa.RSAPrivateKey, roles: frozenset[str]
) -> None:
    identity = generate_tpp_identity(ca, roles=roles, key=tpp_key, now=NOW)
    assert read_psd2_roles(identity.certificate) == roles
    assert identity.roles == roles


def test_qc_statement_can_be_left_out(ca: CertificateAuthority, tpp_key) -> None:
    identity = generate_tpp_identity(ca, qc_statement=False, key=tpp_key, now=NOW)
    assert identity.roles is None
    assert read_psd2_statement(identity.certificate) is None
    with pytest.raises(x509.ExtensionNotFound):
        identity.certificate.extensions.get_extension_for_oid(QC_STATEMENTS_OID)


def test_statement_carries_the_nca(ca: CertificateAuthority, tpp_key) -> None:
    identity = generate_tpp_identity(
        ca, roles={"PSP_AI"}, nca_name="Finansinspektionen", nca_id="SE-FINA", key=tpp_key
    )
    statement = read_psd2_statement(identity.certificate)
    assert statement is not None
    assert (statement.nca_name, statement.nca_id) == ("Finansinspektionen", "SE-FINA")


def test_qc_statements_extension_is_non_critical_and_holds_the_encoding(
    identity: TppIdentity,
) -> None:
    extension = identity.certificate.extensions.get_extension_for_oid(QC_STATEMENTS_OID)
    assert extension.critical is False
    assert isinstance(extension.value, x509.UnrecognizedExtension)
    assert extension.value.value == encode_psd2_qc_statements(
        PSD2_ROLES, "Finanstilsynet", "NO-FSA", qc_type="eseal"
    )


def test_ca_certificate_profile(ca: CertificateAuthority) -> None:
    certificate = ca.certificate
    assert certificate.issuer == certificate.subject
    constraints = certificate.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca
    usage = certificate.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.key_cert_sign and usage.crl_sign and not usage.digital_signature
    assert ca.private_key.key_size == 2048
    certificate.verify_directly_issued_by(certificate)  # self-signed


def test_tpp_certificate_profile(identity: TppIdentity, ca: CertificateAuthority) -> None:
    certificate = identity.certificate
    assert certificate.issuer == ca.certificate.subject
    assert identity.ca_certificate == ca.certificate
    assert not certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    usage = certificate.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical
    assert usage.value.digital_signature and usage.value.content_commitment
    assert not usage.value.key_cert_sign
    subject = certificate.subject
    assert subject.get_attributes_for_oid(NameOID.ORGANIZATION_IDENTIFIER)[0].value == (
        "PSDNO-FSA-123456789"
    )
    assert subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "Conformance Test TPP"
    assert subject.get_attributes_for_oid(NameOID.COUNTRY_NAME)[0].value == "NO"
    assert identity.private_key.key_size == 2048
    assert isinstance(certificate.public_key(), rsa.RSAPublicKey)


def test_key_id_names_serial_in_hex_and_the_issuer(identity: TppIdentity) -> None:
    assert identity.certificate.serial_number == 0x9FA1
    assert identity.key_id == "SN=9FA1,CA=CN=Conformance Test CA,O=PSD2 Conformance Suite"


def test_validity_follows_the_injected_clock(identity: TppIdentity) -> None:
    assert identity.certificate.not_valid_before_utc == NOW - dt.timedelta(minutes=5)
    assert identity.certificate.not_valid_after_utc == NOW + dt.timedelta(days=365)


def test_explicit_validity_is_kept(ca: CertificateAuthority, tpp_key) -> None:
    start, end = NOW - dt.timedelta(days=40), NOW - dt.timedelta(days=10)
    identity = generate_tpp_identity(ca, not_before=start, not_after=end, key=tpp_key)
    assert identity.certificate.not_valid_before_utc == start
    assert identity.certificate.not_valid_after_utc == end


def test_one_end_of_the_validity_gives_the_other(ca: CertificateAuthority, tpp_key) -> None:
    identity = generate_tpp_identity(ca, not_after=NOW, valid_days=7, key=tpp_key)
    assert identity.certificate.not_valid_before_utc == NOW - dt.timedelta(days=7)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        pytest.param({"roles": {"PSP_XX"}}, "unknown PSD2 role PSP_XX", id="unknown-role"),
        pytest.param({"roles": "PSP_PI"}, "not the string", id="roles-as-string"),
        pytest.param({"serial": 0}, "positive integer", id="serial-zero"),
        pytest.param({"serial": -5}, "positive integer", id="serial-negative"),
        pytest.param({"serial": 2**159}, "below 2\\*\\*159", id="serial-too-large"),
        pytest.param({"valid_days": 0}, "at least one day", id="zero-days"),
        pytest.param(
            {"not_before": NOW, "not_after": NOW - dt.timedelta(days=1)},
            "before it starts",
            id="end-before-start",
        ),
    ],
)
def test_bad_generation_arguments_raise_certificate_error(
    ca: CertificateAuthority, tpp_key, arguments: dict, message: str
) -> None:
    with pytest.raises(CertificateError, match=message):
        generate_tpp_identity(ca, key=tpp_key, **arguments)


def test_default_identity_is_made_once_with_all_roles() -> None:
    first = default_identity()
    assert default_identity() is first
    assert first.roles == frozenset(PSD2_ROLES)
    assert verify_chain(first.certificate, default_ca().certificate) is None


# ---------------------------------------------------------------------------- chain


def test_chain_verifies_for_the_issuing_ca(identity: TppIdentity, ca: CertificateAuthority) -> None:
    assert verify_chain(identity.certificate, ca.certificate, now=NOW) is None


def test_chain_fails_for_another_ca(identity: TppIdentity, other_ca: CertificateAuthority) -> None:
    reason = verify_chain(identity.certificate, other_ca.certificate, now=NOW)
    assert reason is not None
    assert "issued by 'CN=Conformance Test CA" in reason
    assert "not by the CA 'CN=Some Other CA" in reason


def test_chain_fails_for_a_ca_with_the_same_name_and_another_key(
    identity: TppIdentity, impostor_ca: CertificateAuthority
) -> None:
    reason = verify_chain(identity.certificate, impostor_ca.certificate, now=NOW)
    assert reason is not None
    assert "signature does not verify" in reason


def test_certificate_signed_by_another_ca_verifies_only_against_that_ca(
    other_ca: CertificateAuthority, ca: CertificateAuthority, tpp_key
) -> None:
    stranger = generate_tpp_identity(other_ca, key=tpp_key, now=NOW)
    assert verify_chain(stranger.certificate, other_ca.certificate, now=NOW) is None
    assert verify_chain(stranger.certificate, ca.certificate, now=NOW) is not None


def test_chain_fails_for_an_expired_certificate(ca: CertificateAuthority, tpp_key) -> None:
    expired = generate_tpp_identity(
        ca,
        not_before=NOW - dt.timedelta(days=30),
        not_after=NOW - dt.timedelta(days=1),
        key=tpp_key,
    )
    reason = verify_chain(expired.certificate, ca.certificate, now=NOW)
    assert reason == "the certificate expired on 2025-05-31T12:00:00+00:00"


def test_chain_fails_before_the_validity_starts(identity: TppIdentity, ca) -> None:
    reason = verify_chain(identity.certificate, ca.certificate, now=NOW - dt.timedelta(days=1))
    assert reason is not None
    assert reason.startswith("the certificate is not valid before")


def test_chain_fails_when_the_ca_has_expired(ca: CertificateAuthority, tpp_key) -> None:
    later = NOW + dt.timedelta(days=3651)
    long_lived = generate_tpp_identity(
        ca, not_before=NOW, not_after=later + dt.timedelta(days=1), key=tpp_key
    )
    reason = verify_chain(long_lived.certificate, ca.certificate, now=later)
    assert reason is not None
    assert reason.startswith("the CA certificate expired on")


def test_chain_fails_when_the_issuer_is_not_a_ca(identity: TppIdentity, tpp_key) -> None:
    fake_ca = CertificateAuthority(certificate=identity.certificate, private_key=tpp_key)
    child = generate_tpp_identity(fake_ca, key=tpp_key, now=NOW)
    reason = verify_chain(child.certificate, identity.certificate, now=NOW)
    assert reason is not None
    assert "is not a CA" in reason


# ---------------------------------------------------------------------------- files


def test_write_identity_writes_every_file_with_private_keys_0600(
    files: dict[str, Path],
) -> None:
    assert {name: path.name for name, path in files.items()} == {
        "certificate": "tpp.pem",
        "key": "tpp.key",
        "pkcs12": "tpp.p12",
        "ca_certificate": "ca.pem",
        "ca_key": "ca.key",
    }
    for name in ("key", "ca_key", "pkcs12"):
        assert stat.S_IMODE(os.stat(files[name]).st_mode) == 0o600
    key_text = files["key"].read_text()
    assert key_text.startswith("-----BEGIN PRIVATE KEY-----")  # PKCS#8, unencrypted


def test_pem_round_trip(files: dict[str, Path], identity: TppIdentity) -> None:
    loaded = load_identity(files["certificate"], files["key"])
    assert loaded.certificate == identity.certificate
    assert public_numbers(loaded.private_key) == public_numbers(identity.private_key)
    assert loaded.roles == frozenset(PSD2_ROLES)
    assert loaded.key_id == identity.key_id


def test_pem_file_holding_certificate_ca_and_key(
    files: dict[str, Path], identity: TppIdentity, ca: CertificateAuthority, tmp_path: Path
) -> None:
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(
        files["certificate"].read_bytes()
        + files["ca_certificate"].read_bytes()
        + files["key"].read_bytes()
    )
    loaded = load_identity(bundle)
    assert loaded.certificate == identity.certificate
    assert loaded.ca_certificate == ca.certificate


def test_encrypted_pem_key_needs_its_password(identity: TppIdentity, files, tmp_path) -> None:
    encrypted = tmp_path / "tpp-encrypted.key"
    encrypted.write_bytes(
        identity.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"s3cret"),
        )
    )
    loaded = load_identity(files["certificate"], encrypted, password="s3cret")
    assert public_numbers(loaded.private_key) == public_numbers(identity.private_key)
    with pytest.raises(CertificateError, match="is encrypted; give its password"):
        load_identity(files["certificate"], encrypted)
    with pytest.raises(CertificateError, match="wrong password"):
        load_identity(files["certificate"], encrypted, password="wrong")


def test_pkcs12_round_trip_without_password(files: dict[str, Path], identity, ca) -> None:
    loaded = load_identity(files["pkcs12"])
    assert loaded.certificate == identity.certificate
    assert loaded.ca_certificate == ca.certificate
    assert public_numbers(loaded.private_key) == public_numbers(identity.private_key)


def test_pkcs12_round_trip_with_password(identity: TppIdentity, ca, tmp_path: Path) -> None:
    written = write_identity(identity, tmp_path / "p12", ca=ca, p12_password="pässword")
    pfx = written["pkcs12"].rename(written["pkcs12"].with_suffix(".PFX"))
    loaded = load_identity(pfx, password="pässword")
    assert loaded.certificate == identity.certificate
    assert loaded.ca_certificate == ca.certificate
    with pytest.raises(CertificateError, match="the password is wrong") as caught:
        load_identity(pfx, password="wrong")
    assert str(pfx) in caught.value.message
    with pytest.raises(CertificateError, match="needs a password"):
        load_identity(pfx)


def test_write_identity_without_ca_writes_the_ca_certificate_only(
    identity: TppIdentity, tmp_path: Path
) -> None:
    written = write_identity(identity, tmp_path / "no-ca-key")
    assert set(written) == {"certificate", "key", "pkcs12", "ca_certificate"}


def test_load_ca_round_trip(files: dict[str, Path], ca: CertificateAuthority) -> None:
    loaded = load_ca(files["ca_certificate"], files["ca_key"])
    assert loaded.certificate == ca.certificate
    assert public_numbers(loaded.private_key) == public_numbers(ca.private_key)


def test_signing_credentials_carry_certificate_and_key(identity: TppIdentity) -> None:
    credentials = identity.signing_credentials()
    assert isinstance(credentials, SigningCredentials)
    assert credentials.certificate == identity.certificate
    assert credentials.private_key is identity.private_key


# ---------------------------------------------------------------------------- file errors


@pytest.fixture(scope="module")
def error_files(files: dict[str, Path], other_ca: CertificateAuthority, tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad")
    text = folder / "notes.pem"
    text.write_text("this is not a certificate\n")
    other_key = folder / "other.key"
    other_key.write_bytes(keyfiles._pkcs8(other_ca.private_key))
    ec_key = folder / "ec.key"
    ec_key.write_bytes(
        ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    fake_p12 = folder / "fake.p12"
    fake_p12.write_bytes(b"not pkcs12 at all")
    return {
        "folder": folder,
        "text": text,
        "other_key": other_key,
        "ec_key": ec_key,
        "fake_p12": fake_p12,
        **files,
    }


ERROR_CASES = [
    pytest.param(
        lambda f: (f["folder"] / "missing.pem", None), "does not exist", id="missing-file"
    ),
    pytest.param(lambda f: (f["folder"], None), "is a directory", id="directory"),
    pytest.param(
        lambda f: (f["text"], f["key"]), "does not hold a readable X.509", id="not-a-cert"
    ),
    pytest.param(
        lambda f: (f["certificate"], f["other_key"]),
        "does not belong to the certificate",
        id="key-mismatch",
    ),
    pytest.param(
        lambda f: (f["certificate"], f["ca_certificate"]),
        "holds no PEM private key",
        id="certificate-as-key",
    ),
    pytest.param(
        lambda f: (f["certificate"], None), "holds no private key; give the key file", id="no-key"
    ),
    pytest.param(
        lambda f: (f["certificate"], f["text"]),
        "holds no readable private key",
        id="key-file-without-pem-key",
    ),
    pytest.param(
        lambda f: (f["certificate"], f["folder"] / "gone.key"),
        "does not exist",
        id="missing-key-file",
    ),
    pytest.param(lambda f: (f["certificate"], f["ec_key"]), "not an RSA key", id="ec-key"),
    pytest.param(lambda f: (f["pkcs12"], f["key"]), "holds its own key", id="p12-with-key-file"),
    pytest.param(lambda f: (f["fake_p12"], None), "cannot be opened", id="not-pkcs12"),
]


@pytest.mark.parametrize(("paths", "message"), ERROR_CASES)
def test_file_errors_are_one_clear_sentence_without_key_material(
    error_files: dict[str, Path], paths, message: str
) -> None:
    cert_path, key_path = paths(error_files)
    with pytest.raises(CertificateError, match=message) as caught:
        load_identity(cert_path, key_path)
    text = caught.value.message
    assert "\n" not in text
    assert "-----BEGIN" not in text and "PRIVATE KEY-----" not in text
    assert str(cert_path) in text or (key_path is not None and str(key_path) in text)


def test_ca_key_must_match_ca_certificate(error_files: dict[str, Path]) -> None:
    with pytest.raises(CertificateError, match="does not belong"):
        load_ca(error_files["ca_certificate"], error_files["other_key"])


# ---------------------------------------------------------------------------- CLI


def run_cli(*argv: str, now: dt.datetime | None = None) -> int:
    parser = argparse.ArgumentParser(prog="conformance")
    certs_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["certs", *argv])
    if now is not None:
        return certs_command.run(args, now=now)
    return args.func(args)


def test_cli_writes_files_that_load_identity_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert run_cli("--out", str(out), "--roles", "PSP_PI,psp_ai", "--serial", "0x1F") == 0
    loaded = load_identity(out / "tpp.pem", out / "tpp.key")
    assert loaded.roles == frozenset({"PSP_PI", "PSP_AI"})
    assert loaded.certificate.serial_number == 0x1F
    assert (
        verify_chain(loaded.certificate, load_ca(out / "ca.pem", out / "ca.key").certificate)
        is None
    )
    assert load_identity(out / "tpp.p12").certificate == loaded.certificate
    printed = capsys.readouterr().out
    assert f"keyId: {loaded.key_id}" in printed
    assert f"wrote TPP certificate: {out / 'tpp.pem'}" in printed
    assert "PSD2 roles: PSP_PI,PSP_AI" in printed


def test_cli_reuses_an_existing_ca_without_a_qc_statement(
    files: dict[str, Path], ca: CertificateAuthority, tmp_path: Path
) -> None:
    out = tmp_path / "second"
    assert (
        run_cli(
            "--out",
            str(out),
            "--no-qc-statement",
            "--p12-password",
            "pw",
            "--ca-cert",
            str(files["ca_certificate"]),
            "--ca-key",
            str(files["ca_key"]),
        )
        == 0
    )
    loaded = load_identity(out / "tpp.p12", password="pw")
    assert loaded.roles is None
    assert verify_chain(loaded.certificate, ca.certificate) is None


def test_cli_expired_certificate_is_rejected_by_chain_check(
    files: dict[str, Path], ca: CertificateAuthority, tmp_path: Path
) -> None:
    out = tmp_path / "expired"
    assert (
        run_cli(
            "--out",
            str(out),
            "--expired",
            "--days",
            "10",
            "--roles",
            "",
            "--ca-cert",
            str(files["ca_certificate"]),
            "--ca-key",
            str(files["ca_key"]),
            now=NOW,
        )
        == 0
    )
    loaded = load_identity(out / "tpp.pem", out / "tpp.key")
    assert loaded.roles == frozenset()
    assert loaded.certificate.not_valid_after_utc == NOW - dt.timedelta(days=1)
    assert loaded.certificate.not_valid_before_utc == NOW - dt.timedelta(days=11)
    assert verify_chain(loaded.certificate, ca.certificate, now=NOW) == (
        "the certificate expired on 2025-05-31T12:00:00+00:00"
    )


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["--out", "x", "--roles", "PSP_XX"], id="unknown-role"),
        pytest.param(
            ["--out", "x", "--roles", "PSP_PI", "--no-qc-statement"], id="roles-and-no-qc"
        ),
        pytest.param(["--out", "x", "--days", "0"], id="zero-days"),
        pytest.param(["--out", "x", "--serial", "xyz"], id="bad-serial"),
        pytest.param(["--roles", "PSP_PI"], id="no-out"),
    ],
)
def test_cli_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        run_cli(*argv)
    assert caught.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_cli_ca_cert_without_ca_key_is_a_certificate_error(files, tmp_path: Path) -> None:
    with pytest.raises(CertificateError, match="--ca-cert and --ca-key go together"):
        run_cli("--out", str(tmp_path), "--ca-cert", str(files["ca_certificate"]))


def test_cli_names_a_new_ca_outside_ascii(tmp_path: Path) -> None:
    """The CA of the RFC 2047 scenarios (``--trust-anchor-utf8``, spec 5 item 3)."""
    out = tmp_path / "utf8"
    assert run_cli("--out", str(out), "--ca-name", "Conformance Test CA Ærø") == 0
    authority = load_ca(out / "ca.pem", out / "ca.key")
    names = authority.certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    assert [name.value for name in names] == ["Conformance Test CA Ærø"]
    loaded = load_identity(out / "tpp.pem", out / "tpp.key")
    assert verify_chain(loaded.certificate, authority.certificate) is None
    assert "Ærø" in loaded.key_id


def test_cli_ca_name_is_for_a_new_ca_only(files, tmp_path: Path) -> None:
    with pytest.raises(CertificateError, match="--ca-name names a new CA"):
        run_cli(
            "--out", str(tmp_path), "--ca-name", "X",
            "--ca-cert", str(files["ca_certificate"]), "--ca-key", str(files["ca_key"]),
        )  # fmt: skip
    with pytest.raises(CertificateError, match="--ca-name must not be empty"):
        run_cli("--out", str(tmp_path), "--ca-name", " ")
