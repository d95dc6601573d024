"""Mutual TLS through real TLS: the reference server over HTTPS requiring a client certificate,
the harness with a QWAC-style client certificate apart from the signing one (PEM, or PKCS#12
whose password comes from an environment variable), refused handshakes named in one sentence,
the profile's TLS keys, and ``conformance certs`` writing the QWAC."""

from __future__ import annotations

import datetime as dt
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from conformance.bankside.bundled import BundledTls, write_tls_identity
from conformance.bankside.client import TargetClient
from conformance.bankside.tls import client_context
from conformance.errors import CertificateError, ProfileError, TargetError
from conformance.profile import TargetProfile, load_profile, profile_from_options
from conformance.profile.tls_settings import TlsSettings
from conformance.signing import (
    QC_STATEMENTS_OID,
    generate_ca,
    generate_qwac,
    load_ca,
    read_psd2_roles,
    write_identity,
)
from conformance.signing.der import encode_oid
from conformance.signing.qcstatement import QC_TYPES
from reference_server.app import Application
from reference_server.transport.http import RunningServer, start
from reference_server.transport.tls import server_context

PASSWORD_ENV = "CONFORMANCE_TEST_QWAC_PASSWORD"


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> BundledTls:
    return write_tls_identity(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def server(bundled: BundledTls) -> Iterator[RunningServer]:
    """The reference server over HTTPS, requiring a client certificate of the client CA."""
    context = server_context(bundled.server_certificate, bundled.server_key, [bundled.client_ca])
    running = start(Application(), tls=context)
    yield running
    running.stop()


def answer(
    server: RunningServer, settings: TlsSettings, environ: dict[str, str] | None = None
) -> int:
    """The HTTP status of one request through TLS with ``settings`` (TargetError if refused)."""
    with TargetClient(server.url, verify=client_context(settings, environ)) as client:
        return client.request("GET", "/v1/accounts").status


def test_the_server_speaks_https(server: RunningServer) -> None:
    assert server.url.startswith("https://127.0.0.1:")


def test_a_client_certificate_of_the_client_ca_is_let_in(
    server: RunningServer, bundled: BundledTls
) -> None:
    settings = TlsSettings(
        ca_certificate=bundled.server_ca,
        certificate=bundled.client_certificate,
        key=bundled.client_key,
    )
    assert answer(server, settings) == 401  # through TLS; the request itself is unsigned


def test_without_a_client_certificate_the_handshake_is_refused(
    server: RunningServer, bundled: BundledTls
) -> None:
    with pytest.raises(TargetError, match="requires a TLS client certificate") as refused:
        answer(server, TlsSettings(ca_certificate=bundled.server_ca))
    assert "tls_certificate" in refused.value.message


def test_a_client_certificate_of_another_ca_is_refused(
    server: RunningServer, bundled: BundledTls, tmp_path: Path
) -> None:
    written = write_identity(generate_qwac(generate_ca("Another CA")), tmp_path, stem="qwac")
    settings = TlsSettings(
        ca_certificate=bundled.server_ca, certificate=written["certificate"], key=written["key"]
    )
    with pytest.raises(TargetError, match="does not trust the CA of the TLS client certificate"):
        answer(server, settings)


def test_an_expired_client_certificate_is_refused(bundled: BundledTls, tmp_path: Path) -> None:
    ca = generate_ca("Expiring QWAC CA")
    now = dt.datetime.now(dt.UTC)
    expired = generate_qwac(
        ca, not_before=now - dt.timedelta(days=30), not_after=now - dt.timedelta(days=1)
    )
    written = write_identity(expired, tmp_path, ca=ca, stem="qwac")
    context = server_context(
        bundled.server_certificate, bundled.server_key, [written["ca_certificate"]]
    )
    running = start(Application(), tls=context)
    try:
        settings = TlsSettings(
            ca_certificate=bundled.server_ca, certificate=written["certificate"], key=written["key"]
        )
        with pytest.raises(TargetError, match="as expired"):
            answer(running, settings)
    finally:
        running.stop()


def test_a_pkcs12_client_certificate_opens_with_the_password_from_the_environment(
    server: RunningServer, bundled: BundledTls, tmp_path: Path
) -> None:
    ca = load_ca(bundled.client_ca, bundled.client_ca.with_suffix(".key"))
    written = write_identity(generate_qwac(ca), tmp_path, p12_password="s3cret", stem="qwac")
    settings = TlsSettings(
        ca_certificate=bundled.server_ca, certificate=written["pkcs12"], password_env=PASSWORD_ENV
    )
    assert answer(server, settings, {PASSWORD_ENV: "s3cret"}) == 401
    with pytest.raises(CertificateError, match=f"{PASSWORD_ENV}, which is not set"):
        client_context(settings, {})
    with pytest.raises(CertificateError, match=f"the password in {PASSWORD_ENV} is wrong"):
        client_context(settings, {PASSWORD_ENV: "wrong"})


def test_without_a_profile_variable_the_tls_password_comes_from_the_standard_one(
    server: RunningServer, bundled: BundledTls, tmp_path: Path
) -> None:
    """``CONFORMANCE_TLS_KEY_PASSWORD`` beside ``CONFORMANCE_KEY_PASSWORD``: a PKCS#12 QWAC given
    with ``--tls-cert`` alone opens with it, and without it the message names it."""
    ca = load_ca(bundled.client_ca, bundled.client_ca.with_suffix(".key"))
    written = write_identity(generate_qwac(ca), tmp_path, p12_password="s3cret", stem="qwac")
    settings = TlsSettings(ca_certificate=bundled.server_ca, certificate=written["pkcs12"])
    assert answer(server, settings, {"CONFORMANCE_TLS_KEY_PASSWORD": "s3cret"}) == 401
    with pytest.raises(
        CertificateError,
        match="needs a password \\(give it in the environment variable "
        "CONFORMANCE_TLS_KEY_PASSWORD\\)",
    ):
        client_context(settings, {})


def test_plain_http_to_a_tls_port_names_https(server: RunningServer) -> None:
    plain = server.url.replace("https://", "http://")
    with (
        pytest.raises(TargetError, match="if it speaks TLS, give https://"),
        TargetClient.from_profile(TargetProfile(name="tls", base_url=plain)) as client,
    ):
        client.check_reachable()


def test_the_server_is_not_trusted_without_its_ca(
    server: RunningServer, bundled: BundledTls
) -> None:
    settings = TlsSettings(certificate=bundled.client_certificate, key=bundled.client_key)
    with pytest.raises(TargetError, match="is not trusted"):
        answer(server, settings)


def test_ca_trust_add_keeps_the_system_store(bundled: BundledTls) -> None:
    replaced = client_context(TlsSettings(ca_certificate=bundled.server_ca))
    added = client_context(TlsSettings(ca_certificate=bundled.server_ca, ca_trust="add"))
    assert isinstance(replaced, ssl.SSLContext) and isinstance(added, ssl.SSLContext)
    assert replaced.cert_store_stats()["x509_ca"] == 1
    system = ssl.create_default_context().cert_store_stats()["x509_ca"]
    assert added.cert_store_stats()["x509_ca"] == system + 1
    assert client_context(TlsSettings()) is True  # nothing set: httpx's defaults


def test_a_key_that_does_not_fit_is_one_clear_error(bundled: BundledTls) -> None:
    settings = TlsSettings(certificate=bundled.client_certificate, key=bundled.server_key)
    with pytest.raises(CertificateError, match="cannot be used"):
        client_context(settings)


def test_the_profile_reads_the_tls_keys_and_flags_go_over_them(
    bundled: BundledTls, tmp_path: Path
) -> None:
    path = tmp_path / "bank.toml"
    path.write_text(
        'base_url = "https://bank.example/psd2"\n'
        f'ca_certificate = "{bundled.server_ca}"\n'
        'ca_trust = "add"\n'
        f'tls_certificate = "{bundled.client_certificate}"\n'
        f'tls_key = "{bundled.client_key}"\n'
        f'tls_key_password_env = "{PASSWORD_ENV}"\n'
        "rate_limit = 20\n",
        encoding="utf-8",
    )
    profile = load_profile(path)
    assert profile.tls == TlsSettings(
        ca_certificate=bundled.server_ca,
        ca_trust="add",
        certificate=bundled.client_certificate,
        key=bundled.client_key,
        password_env=PASSWORD_ENV,
    )
    assert profile.connection.rate_limit == 20.0
    merged = profile_from_options(
        profile=path, tls_cert=bundled.server_certificate, tls_ca=bundled.client_ca, environ={}
    )
    assert merged.tls.certificate == bundled.server_certificate
    assert merged.tls.key is None  # a certificate from the command line carries its own key
    assert merged.tls.ca_certificate == bundled.client_ca
    with pytest.raises(ProfileError, match="--tls-key needs --tls-cert"):
        profile_from_options(profile=path, tls_key=bundled.client_key, environ={})


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('ca_trust = "system"', "ca_trust must be one of replace, add"),
        ("rate_limit = 0", "rate_limit must be a positive number"),
        ('tls_key = "{key}"', "tls_key is given without tls_certificate"),
        ('tls_certificate = "missing.pem"', "tls_certificate names 'missing.pem'"),
    ],
)
def test_bad_tls_keys_are_one_clear_error(
    bundled: BundledTls, tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "bank.toml"
    text = 'base_url = "https://bank.example"\n' + line.format(key=bundled.client_key) + "\n"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProfileError, match=message):
        load_profile(path)


def test_certs_writes_a_qwac_beside_the_signing_certificate(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "certs", "--out", str(tmp_path), "--roles", "PSP_PI"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "wrote QWAC (TLS client) certificate" in done.stdout
    qwac = x509.load_pem_x509_certificate((tmp_path / "qwac.pem").read_bytes())
    signing = x509.load_pem_x509_certificate((tmp_path / "tpp.pem").read_bytes())
    usage = qwac.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    statements = qwac.extensions.get_extension_for_oid(QC_STATEMENTS_OID).value
    assert isinstance(statements, x509.UnrecognizedExtension)
    assert encode_oid(QC_TYPES["web"]) in statements.value  # QcType web: a QWAC
    assert (
        encode_oid(QC_TYPES["web"])
        not in signing.extensions.get_extension_for_oid(QC_STATEMENTS_OID).value.value  # type: ignore[attr-defined]
    )
    assert read_psd2_roles(qwac) == frozenset({"PSP_PI"})
    assert qwac.issuer == signing.issuer and qwac.serial_number != signing.serial_number
    assert (tmp_path / "qwac.key").stat().st_mode & 0o077 == 0


def test_a_reproduction_command_names_the_tls_client_certificate(
    server: RunningServer, bundled: BundledTls
) -> None:
    profile = profile_from_options(
        target=server.url,
        tls_cert=bundled.client_certificate,
        tls_key=bundled.client_key,
        tls_ca=bundled.server_ca,
        environ={},
    )
    with TargetClient.from_profile(profile, sign=False) as client:
        exchange = client.request("GET", "/v1/accounts")
    command = exchange.reproduce_command()
    assert f"--tls-cert {bundled.client_certificate}" in command
    assert f"--tls-key {bundled.client_key}" in command
    assert f"--tls-ca {bundled.server_ca}" in command
    assert "PRIVATE KEY" not in command
