"""The checks of a TPP's certificates the reference server makes beyond spec 5
(``reference_server/pipeline/certificates.py``): a revoked certificate (``--crl``), a QWAC-type
certificate used for signing, a QWAC without the operation's role, and a QWAC and a seal of
different organisations, each refused, each let through by its fault; the QWAC ones over real
mutual TLS, which hands the client certificate to the application."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from conformance.bankside.bundled import BundledTls, write_tls_identity
from conformance.bankside.client import TargetClient
from conformance.bankside.tls import client_context_as
from conformance.profile import TlsSettings
from conformance.signing import (
    TppIdentity,
    default_ca,
    default_identity,
    generate_qwac,
    generate_tpp_identity,
    load_ca,
)
from conformance.signing.revocation import RevocationLists, load_crls, write_crl
from reference_server.app import Application
from reference_server.transport.http import RunningServer, start
from reference_server.transport.tls import server_context

ACCOUNTS = "/v1/sandbox/customers"  # a sandbox read: no role needed, no PSU
AL = "/v1/accounts"  # accounts: PSP_AI needed


@cache
def _revoked() -> TppIdentity:
    return generate_tpp_identity(default_ca(), key=default_identity().private_key)


def _status(
    url: str,
    identity: TppIdentity,
    *,
    tls: TlsSettings | None = None,
    qwac: TppIdentity | None = None,
) -> tuple[int, str]:
    verify = True if qwac is None else client_context_as(tls or TlsSettings(), qwac)
    with TargetClient(url, identity=identity, verify=verify) as client:
        answer = client.request("GET", ACCOUNTS)
    return answer.status, answer.response_body.decode()


@pytest.fixture(scope="module")
def crl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("crl") / "ca.crl"
    write_crl(default_ca(), path, [_revoked().certificate.serial_number])
    return path


@pytest.mark.parametrize(
    ("fault", "refused"), [((), True), (("revoked-certificate-accepted",), False)]
)
def test_a_revoked_signing_certificate_is_refused_unless_the_fault_is_on(
    crl: Path, fault: tuple[str, ...], refused: bool
) -> None:
    lists = RevocationLists.of(load_crls(crl), [default_ca().certificate])
    running = start(Application(faults=fault, revocation=lists, trust_ca=default_ca().certificate))
    try:
        status, body = _status(running.url, _revoked())
        assert (status, "revoked by its issuer" in body) == (
            (401, True) if refused else (200, False)
        )
        assert _status(running.url, default_identity())[0] == 200  # the unrevoked one passes
    finally:
        running.stop()


@pytest.mark.parametrize(("fault", "status"), [((), 401), (("qwac-signing-accepted",), 200)])
def test_a_request_signed_with_a_qwac_type_certificate_is_refused(
    fault: tuple[str, ...], status: int
) -> None:
    web = generate_qwac(default_ca(), key=default_identity().private_key)
    running = start(Application(faults=fault))
    try:
        got, body = _status(running.url, web)
        assert got == status
        if status == 401:
            assert "QcType web" in body and "CERTIFICATE_INVALID" in body
    finally:
        running.stop()


# ---------------------------------------------------------------------------- over mutual TLS


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> BundledTls:
    return write_tls_identity(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def servers(tls: BundledTls) -> Iterator[dict[str, RunningServer]]:
    """A faithful server over mutual TLS, and one per QWAC fault."""
    context = server_context(tls.server_certificate, tls.server_key, [tls.client_ca])
    running = {
        name: start(Application(faults=faults), tls=context)
        for name, faults in (
            ("faithful", ()),
            ("roles", ("qwac-roles-unchecked",)),
            ("pairing", ("qwac-seal-pairing-unchecked",)),
        )
    }
    yield running
    for server in running.values():
        server.stop()


def _accounts(url: str, tls: BundledTls, qwac: TppIdentity) -> tuple[int, str]:
    """The account list over a connection showing ``qwac``, signed with the default seal."""
    settings = TlsSettings(ca_certificate=tls.server_ca)
    with TargetClient(
        url, identity=default_identity(), verify=client_context_as(settings, qwac)
    ) as client:
        answer = client.request("GET", AL)
    return answer.status, answer.response_body.decode()


#: The account list's answer without a Consent-ID: past every certificate check.
PAST_THE_CHECKS = 401


def test_the_qwac_of_the_same_organisation_with_its_roles_passes_the_certificate_checks(
    servers: dict[str, RunningServer], tls: BundledTls
) -> None:
    qwac = generate_qwac(load_ca(tls.client_ca, tls.client_ca_key))
    status, body = _accounts(servers["faithful"].url, tls, qwac)
    assert status == PAST_THE_CHECKS and "CONSENT_UNKNOWN" in body, body


def test_a_qwac_without_the_operations_role_is_refused(
    servers: dict[str, RunningServer], tls: BundledTls
) -> None:
    qwac = generate_qwac(load_ca(tls.client_ca, tls.client_ca_key), roles=("PSP_PI",))
    status, body = _accounts(servers["faithful"].url, tls, qwac)
    assert status == 403 and "TLS client certificate (QWAC) carries PSP_PI" in body
    assert (
        _accounts(servers["roles"].url, tls, qwac)[0] == PAST_THE_CHECKS
    )  # the fault lets it through


def test_a_qwac_of_another_organisation_than_the_seal_is_refused(
    servers: dict[str, RunningServer], tls: BundledTls
) -> None:
    qwac = generate_qwac(
        load_ca(tls.client_ca, tls.client_ca_key), organisation_id="PSDNO-FSA-987654321"
    )
    status, body = _accounts(servers["faithful"].url, tls, qwac)
    assert status == 401 and "names PSDNO-FSA-987654321" in body
    assert (
        _accounts(servers["pairing"].url, tls, qwac)[0] == PAST_THE_CHECKS
    )  # the fault lets it through


def test_a_revoked_qwac_is_refused_too(tls: BundledTls, tmp_path: Path) -> None:
    client_ca = load_ca(tls.client_ca, tls.client_ca_key)
    qwac = generate_qwac(client_ca)
    write_crl(client_ca, tmp_path / "qwac.crl", [qwac.certificate.serial_number])
    lists = RevocationLists.of(load_crls(tmp_path / "qwac.crl"), [client_ca.certificate])
    context = server_context(tls.server_certificate, tls.server_key, [tls.client_ca])
    running = start(Application(revocation=lists), tls=context)
    try:
        status, body = _accounts(running.url, tls, qwac)
        assert status == 401 and "the TLS client certificate (serial" in body
    finally:
        running.stop()
