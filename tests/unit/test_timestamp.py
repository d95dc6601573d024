"""Trusted time for a sealed record (``run --seal ... --tsa URL``, ``verify --tsa-trust``): an RFC
3161 token over the seal from a time-stamping authority the test starts on the loopback address;
verify checks it and validates the seal's chain at its time; an altered token or time is
refused."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from joserfc.jwk import RSAKey
from tsa_support import Authority, retimed, running_tsa

from conformance import cli
from conformance.errors import CertificateError
from conformance.evidence.record import seal_record
from conformance.evidence.sealing import SealKey
from conformance.evidence.timestamp import TIMESTAMP, checked_timestamp, request_timestamp
from conformance.evidence.verify import verify_record
from conformance.report.compliance import COMPLIANCE_JSON, RunInfo, build_document


@pytest.fixture(scope="module")
def authority() -> Authority:
    return Authority()


@pytest.fixture(scope="module")
def tsa(authority: Authority) -> object:
    with running_tsa(authority) as url:
        yield url


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA (``conformance certs``) and a seal certificate it issued that is valid for two days
    only (from yesterday to tomorrow)."""
    folder = tmp_path_factory.mktemp("bank")
    subprocess.run(
        [sys.executable, "-m", "conformance", "certs", "--out", str(folder)],
        capture_output=True, check=True, timeout=60,
    )  # fmt: skip
    ca = x509.load_pem_x509_certificate((folder / "ca.pem").read_bytes())
    ca_key = serialization.load_pem_private_key((folder / "ca.key").read_bytes(), None)
    assert isinstance(ca_key, rsa.RSAPrivateKey)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Short-lived Seal")]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, True, False, False, False, False, False, False, False),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    (folder / "seal.pem").write_bytes(
        certificate.public_bytes(serialization.Encoding.PEM)
        + ca.public_bytes(serialization.Encoding.PEM)
    )
    (folder / "seal.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return folder


def _seal_key(bank: Path) -> SealKey:
    chain = tuple(x509.load_pem_x509_certificates((bank / "seal.pem").read_bytes()))
    key = serialization.load_pem_private_key((bank / "seal.key").read_bytes(), None)
    assert isinstance(key, rsa.RSAPrivateKey)
    return SealKey(RSAKey.import_key(key), "RS256", chain)


def _record(tmp_path: Path, bank: Path, tsa: str | None) -> Path:
    """A sealed record of a run without scenarios (what sealing needs, nothing more)."""
    reports = tmp_path / "reports"
    reports.mkdir()
    started = datetime.now(UTC) - timedelta(seconds=5)
    info = RunInfo(
        started=started, finished=started + timedelta(seconds=1), seed=1, strict=False,
        target="https://bank.example",
    )  # fmt: skip
    document = build_document([], info)
    (reports / COMPLIANCE_JSON).write_text(json.dumps(document), encoding="utf-8")
    seal_record(reports, _seal_key(bank), profile=None, previous=None, started=started, tsa=tsa)
    return reports / "evidence"


def _ca(bank: Path) -> tuple[x509.Certificate, ...]:
    return (x509.load_pem_x509_certificate((bank / "ca.pem").read_bytes()),)


def test_a_token_from_the_authority_verifies_and_states_its_time(
    authority: Authority, tsa: str
) -> None:
    token = request_timestamp(tsa, b"the seal")
    stamp = checked_timestamp(token, b"the seal", (authority.ca,))
    assert stamp.trusted and stamp.authority == "CN=Test TSA"
    assert abs(stamp.time - datetime.now(UTC)) < timedelta(minutes=1)
    assert not checked_timestamp(token, b"the seal").trusted  # within itself only


@pytest.mark.parametrize("alteration", ["a byte of its signature", "its time", "other data"])
def test_an_altered_token_is_refused(authority: Authority, tsa: str, alteration: str) -> None:
    token = request_timestamp(tsa, b"the seal")
    data = b"the seal"
    if alteration == "a byte of its signature":
        token = token[:-1] + bytes([token[-1] ^ 1])  # the SignerInfo's signature ends the token
    elif alteration == "its time":
        token = retimed(token, datetime.now(UTC) - timedelta(days=30))
    else:
        data = b"another seal"
    with pytest.raises(CertificateError, match=r"does not verify over seal\.jws"):
        checked_timestamp(token, data, (authority.ca,))


def test_a_token_of_an_authority_not_trusted_is_refused(tsa: str) -> None:
    token = request_timestamp(tsa, b"the seal")
    with pytest.raises(CertificateError, match="certificate verify error"):
        checked_timestamp(token, b"the seal", (Authority("Other TSA").ca,))


def test_a_timestamped_seal_verifies_and_its_time_holds_the_chain(
    authority: Authority, tsa: str, bank: Path, tmp_path: Path
) -> None:
    record = _record(tmp_path, bank, tsa)
    assert (record / TIMESTAMP).is_file()
    tsa_ca = (authority.ca,)
    result = verify_record(record, trust=_ca(bank), tsa_trust=tsa_ca)
    assert result.verified, result.problems
    assert result.timestamped is not None
    assert any(note.startswith("time-stamped ") for note in result.notes)
    # a month later the seal certificate has expired: only the token's time keeps the seal valid
    later = datetime.now(UTC) + timedelta(days=30)
    expired = verify_record(record, trust=_ca(bank), now=later)
    assert any("chain: " in problem for problem in expired.problems), expired.problems
    assert verify_record(record, trust=_ca(bank), tsa_trust=tsa_ca, now=later).verified
    authority_pem = authority.write_ca(tmp_path / "tsa-ca.pem")
    trust = ["--trust", str(bank / "ca.pem"), "--tsa-trust", str(authority_pem)]
    assert cli.main(["verify", str(record), *trust]) == 0


@pytest.mark.parametrize("alteration", ["a byte of its signature", "its time", "no token"])
def test_a_seal_whose_token_or_time_is_altered_is_refused(
    authority: Authority, tsa: str, bank: Path, tmp_path: Path, alteration: str
) -> None:
    record = _record(tmp_path, bank, tsa)
    token = (record / TIMESTAMP).read_bytes()
    if alteration == "a byte of its signature":
        (record / TIMESTAMP).write_bytes(token[:-1] + bytes([token[-1] ^ 1]))
    elif alteration == "its time":
        later = datetime.now(UTC) - timedelta(hours=6)
        (record / TIMESTAMP).write_bytes(retimed(token, later))
    else:
        (record / TIMESTAMP).unlink()
    result = verify_record(record, trust=_ca(bank), tsa_trust=(authority.ca,))
    assert not result.verified
    assert any(p.startswith(("timestamp: ", f"{TIMESTAMP}: missing")) for p in result.problems)
    # without --tsa-trust the token's time is not used: the record verifies as before, said so
    if alteration == "no token":
        assert verify_record(record, trust=_ca(bank)).verified


def test_a_seal_stamped_before_its_sealed_at_is_refused(
    authority: Authority, tsa: str, bank: Path, tmp_path: Path
) -> None:
    """A token older than the manifest's sealed_at (an authority asked earlier, for another
    record's seal cannot be over this one; a sealer that moved its sealed_at later is caught)."""
    authority.clock = datetime.now(UTC) - timedelta(hours=2)
    try:
        record = _record(tmp_path, bank, tsa)
    finally:
        authority.clock = None
    result = verify_record(record, trust=_ca(bank), tsa_trust=(authority.ca,))
    assert any("is later than its time-stamp" in problem for problem in result.problems)


def test_tsa_without_a_seal_is_a_usage_mistake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = str(tmp_path / "reports")
    assert cli.main(["run", "--reports", reports, "--tsa", "http://127.0.0.1:9/tsa"]) == 2
    assert "--tsa time-stamps a seal" in capsys.readouterr().err


@pytest.mark.slow
def test_a_sealed_smoke_run_is_time_stamped_and_verifies(
    authority: Authority, tsa: str, bank: Path, tmp_path: Path
) -> None:
    """The whole way: ``run --smoke --seal … --tsa URL``, then ``verify --tsa-trust``."""
    reports = tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--smoke", "--reports", str(reports),
         "--seal", str(bank / "tpp.pem"), "--seal-key", str(bank / "tpp.key"), "--tsa", tsa],
        capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"time-stamped by {tsa}" in done.stdout
    assert (reports / "evidence" / TIMESTAMP).is_file()
    authority_pem = authority.write_ca(tmp_path / "tsa-ca.pem")
    trust = ["--trust", str(bank / "ca.pem"), "--tsa-trust", str(authority_pem)]
    assert cli.main(["verify", str(reports / "evidence"), *trust]) == 0
