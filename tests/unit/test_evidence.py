"""The sealed record of a run (``conformance run --seal``) and its check (``conformance
verify``): a record verifies untouched, and an edited byte of an exchange, an edited verdict, an
edited profile, a missing exchange, a verdict the judge no longer gives and a foreign seal are
each caught."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from joserfc.jwk import RSAKey

from conformance import cli
from conformance.errors import CertificateError
from conformance.evidence.record import (
    MANIFEST,
    PROFILE_COPY,
    SEAL,
    VERDICTS,
    digest,
    make_room,
    previous_record,
    seal_record,
)
from conformance.evidence.sealing import SealKey, load_seal_key, seal
from conformance.evidence.stale import latest_record, move_aside
from conformance.evidence.verify import Verification, verify_record
from conformance.profile import load_profile
from conformance.report.exchange_record import RECORDING_DIR
from conformance.signing import generate_server_certificate, load_ca
from conformance.traffic.options import load_trust


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("seal")
    for name in ("bank", "other"):
        subprocess.run(
            [sys.executable, "-m", "conformance", "certs", "--out", str(folder / name)],
            capture_output=True, check=True, timeout=60,
        )  # fmt: skip
    return folder


@pytest.fixture(scope="module")
def sealed_run(certificates: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A smoke run of the bundled server, sealed; its reports folder."""
    reports = tmp_path_factory.mktemp("sealed") / "reports"
    bank = certificates / "bank"
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--smoke", "--reports", str(reports),
         "--seal", str(bank / "tpp.pem"), "--seal-key", str(bank / "tpp.key")],
        capture_output=True, text=True, timeout=300, check=False, cwd=reports.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    assert "conformance: sealed record sha256:" in done.stdout
    assert "(the first of its series)" in done.stdout
    # the bundled server certifies no bank: no eligibility above the verdict, in the JSON or JUnit
    lines = done.stdout.splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("SMOKE RUN PASSED"))
    assert "ELIGIBLE" not in lines[verdict - 1], lines[verdict - 3 : verdict + 1]
    assert "ELIGIBLE for certification" not in done.stdout
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    assert document["eligibility"] is None
    assert document["run"]["certifies"] is False
    junit = (reports / "junit.xml").read_text(encoding="utf-8")
    assert 'name="eligible"' not in junit
    return reports


@pytest.fixture
def record(sealed_run: Path, tmp_path: Path) -> Path:
    """A copy of the sealed record, to edit."""
    copy = tmp_path / "evidence"
    shutil.copytree(sealed_run / "evidence", copy)
    return copy


def _verify(record: Path, certificates: Path) -> Verification:
    return verify_record(record, trust=load_trust([certificates / "bank" / "ca.pem"]))


def _reseal(record: Path, certificates: Path, who: str = "bank") -> None:
    """Sign the record again after an edit, its digests brought up to date (what a forger with
    the key would do)."""
    manifest = json.loads((record / MANIFEST).read_text(encoding="utf-8"))
    for name in manifest["files"]:
        manifest["files"][name] = digest((record / name).read_bytes())
    data = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    (record / MANIFEST).write_bytes(data)
    key = load_seal_key(certificates / who / "tpp.pem", certificates / who / "tpp.key")
    (record / SEAL).write_text(seal(data, key) + "\n", encoding="ascii")


def test_the_untouched_record_verifies(record: Path, certificates: Path) -> None:
    result = _verify(record, certificates)
    assert result.verified, result.problems
    assert result.rejudged > 0
    assert result.sealed_by.startswith("CN=Conformance Test TPP")
    kept = {path.name for path in (record / "exchanges").iterdir()}
    compliance = json.loads((record / "compliance.json").read_text(encoding="utf-8"))
    assert len(kept) == len(compliance["scenarios"])  # every scenario's exchanges
    manifest = json.loads((record / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["previous"] is None
    assert manifest["contract_digest"].startswith("sha256:")
    assert manifest["profile"]["sha256"] == "sha256:" + compliance["profile"]["sha256"]
    assert cli.main(["verify", str(record), "--trust", str(certificates / "bank" / "ca.pem")]) == 0
    assert cli.main(["verify", str(record)]) == 3  # who sealed it is not established


def test_one_edited_byte_of_an_exchange_is_caught(record: Path, certificates: Path) -> None:
    path = next((record / "exchanges").glob("E12-valid-request-accepted.json"))
    data = bytearray(path.read_bytes())
    where = data.index(b'"status": 20') + len(b'"status": 20')
    data[where] = ord("4") if data[where] != ord("4") else ord("5")
    path.write_bytes(bytes(data))
    result = _verify(record, certificates)
    assert not result.verified
    assert result.problems == [
        f"exchanges/{path.name}: edited since it was sealed (its digest differs)"
    ]
    assert cli.main(["verify", str(record)]) == 1


def test_one_edited_verdict_is_caught(record: Path, certificates: Path) -> None:
    path = record / "compliance.json"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"verdict": "passed"', '"verdict": "failed"', 1), encoding="utf-8")
    result = _verify(record, certificates)
    assert result.problems == ["compliance.json: edited since it was sealed (its digest differs)"]
    # sealed again by the bank's own key after the edit: the verdicts no longer agree
    _reseal(record, certificates)
    result = _verify(record, certificates)
    assert len(result.problems) == 1
    assert result.problems[0].startswith("verdicts: the scenario verdicts of verdicts.json and")


def test_the_edited_profile_is_caught(record: Path, certificates: Path) -> None:
    path = record / PROFILE_COPY
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    result = _verify(record, certificates)
    assert result.problems == [f"{PROFILE_COPY}: edited since it was sealed (its digest differs)"]


def test_a_missing_or_added_exchange_is_caught(record: Path, certificates: Path) -> None:
    path = next((record / "exchanges").glob("E12-valid-request-accepted.json"))
    moved = path.with_name("extra.json")
    path.rename(moved)
    result = _verify(record, certificates)
    assert f"exchanges/{path.name}: sealed, and missing" in result.problems
    assert "exchanges/extra.json: not part of the sealed record" in result.problems


def test_a_sealed_verdict_the_judge_does_not_give_again_is_caught(
    record: Path, certificates: Path
) -> None:
    verdicts = json.loads((record / VERDICTS).read_text(encoding="utf-8"))
    first = next(item for item in verdicts["exchanges"] if item["findings"])
    first["findings"] = []  # a finding of the judge removed, and the record sealed again
    (record / VERDICTS).write_text(json.dumps(verdicts), encoding="utf-8")
    _reseal(record, certificates)
    result = _verify(record, certificates)
    assert len(result.problems) == 1
    assert (
        f"{first['file']} exchange {first['position']} judged again differs" in (result.problems[0])
    )


def test_a_seal_of_another_key_or_ca_is_caught(record: Path, certificates: Path) -> None:
    _reseal(record, certificates, who="other")  # a valid seal, by a CA the verifier does not trust
    result = _verify(record, certificates)
    assert result.problems and result.problems[0].startswith("chain: the chain ends at")
    manifest = record / MANIFEST
    manifest.write_bytes(manifest.read_bytes().replace(b'"previous": null', b'"previous": "x"'))
    result = _verify(record, certificates)
    assert result.problems[0].startswith("seal: the seal does not verify")


def test_the_next_record_names_this_one_and_keeps_it(
    sealed_run: Path, certificates: Path, tmp_path: Path
) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(sealed_run, reports)
    first = digest((reports / "evidence" / MANIFEST).read_bytes())
    (reports / RECORDING_DIR / "exchanges").mkdir(parents=True)  # what the next run recorded
    shutil.copytree(reports / "evidence" / "exchanges", reports / RECORDING_DIR / "exchanges",
                    dirs_exist_ok=True)  # fmt: skip
    key = load_seal_key(certificates / "bank" / "tpp.pem", certificates / "bank" / "tpp.key")
    record = seal_record(
        reports, key, profile=None, previous=None, started=datetime(2000, 1, 1, tzinfo=UTC)
    )
    assert record.previous == first
    assert record.moved == reports / f"evidence-{first.removeprefix('sha256:')[:12]}"
    assert not (reports / RECORDING_DIR).exists()
    trust = load_trust([certificates / "bank" / "ca.pem"])
    assert verify_record(record.moved, trust=trust).verified  # the earlier one, kept
    later = verify_record(reports / "evidence", trust=trust, previous=record.moved)
    assert later.verified, later.problems
    assert f"follows the record {first}" in later.notes


def test_a_profile_that_extends_another_is_kept_with_its_base(
    sealed_run: Path, certificates: Path, tmp_path: Path
) -> None:
    """The record keeps the base beside its copy of the profile, each digest sealed, so the copy
    reads as the run read it and the verifier re-judges with it."""
    reports = tmp_path / "reports"
    shutil.copytree(sealed_run, reports)
    profiles = Path(__file__).resolve().parents[2] / "profiles"
    (reports / RECORDING_DIR / "exchanges").mkdir(parents=True)
    shutil.copytree(reports / "evidence" / "exchanges", reports / RECORDING_DIR / "exchanges",
                    dirs_exist_ok=True)  # fmt: skip
    key = load_seal_key(certificates / "bank" / "tpp.pem", certificates / "bank" / "tpp.key")
    played = profiles / "reference-server-permissive.toml"
    seal_record(
        reports, key, profile=played, previous=None, started=datetime(2000, 1, 1, tzinfo=UTC)
    )
    evidence = reports / "evidence"
    base = evidence / "reference-server.toml"
    assert base.read_bytes() == (profiles / "reference-server.toml").read_bytes()
    manifest = json.loads((evidence / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["files"]["reference-server.toml"] == digest(base.read_bytes())
    assert load_profile(evidence / PROFILE_COPY).extends == base
    trust = load_trust([certificates / "bank" / "ca.pem"])
    assert verify_record(evidence, trust=trust).verified
    base.write_bytes(base.read_bytes().replace(b"8000", b"8001"))
    assert not verify_record(evidence, trust=trust).verified  # the base is sealed too


def test_a_record_names_the_previous_one(record: Path, certificates: Path, tmp_path: Path) -> None:
    reports = record.parent
    first = previous_record(reports, None)
    assert first == digest((record / MANIFEST).read_bytes())
    kept = make_room(reports)
    assert kept is not None and (kept / MANIFEST).is_file() and not record.exists()
    assert previous_record(reports, kept) == first
    # a verifier told which record comes before checks the name
    other = tmp_path / "other-manifest.json"
    other.write_text("{}", encoding="utf-8")
    result = verify_record(kept, previous=other)
    assert any(problem.startswith("previous: the record names None") for problem in result.problems)


def test_a_seal_key_that_is_not_the_certificates_is_refused_before_the_run(
    certificates: Path, tmp_path: Path
) -> None:
    bank, other = certificates / "bank", certificates / "other"
    with pytest.raises(CertificateError, match="is not the key of the first certificate"):
        load_seal_key(bank / "tpp.pem", other / "tpp.key")
    reports = str(tmp_path / "reports")
    assert cli.main(["run", "--reports", reports, "--seal", str(bank / "tpp.pem")]) == 2
    assert not (tmp_path / "reports" / "compliance.json").exists()


def _forge(record: Path, certificates: Path, *, expired: bool = False) -> None:
    """security-5.md's forge_seal.py: flip a scenario's verdict in both verdict files, mint a
    "Big Bank ASA" certificate (issued by the TPP's end-entity certificate, or by the CA with a
    validity that ended 30 days ago and ``sealed_at`` inside it) and seal the record with it."""
    now = datetime.now(UTC)
    bank = certificates / "bank"
    ca = x509.load_pem_x509_certificate((bank / "ca.pem").read_bytes())
    tpp = x509.load_pem_x509_certificate((bank / "tpp.pem").read_bytes())

    def private(name: str) -> rsa.RSAPrivateKey:
        key = serialization.load_pem_private_key((bank / name).read_bytes(), None)
        assert isinstance(key, rsa.RSAPrivateKey)
        return key

    compliance = json.loads((record / "compliance.json").read_text(encoding="utf-8"))
    scenario = compliance["scenarios"][0]
    scenario["verdict"] = "failed"
    verdicts = json.loads((record / VERDICTS).read_text(encoding="utf-8"))
    verdicts["scenarios"][scenario["id"]] = "failed"
    (record / "compliance.json").write_text(json.dumps(compliance), encoding="utf-8")
    (record / VERDICTS).write_text(json.dumps(verdicts), encoding="utf-8")
    manifest = json.loads((record / MANIFEST).read_text(encoding="utf-8"))
    for name in manifest["files"]:
        manifest["files"][name] = digest((record / name).read_bytes())
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Big Bank ASA"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Big Bank ASA")])  # fmt: skip
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, True, False, False, False, False, False, False, False),
            critical=True,
        )
    )
    if expired:
        certificate = (
            builder.issuer_name(ca.subject)
            .not_valid_before(now - timedelta(days=400))
            .not_valid_after(now - timedelta(days=30))
            .sign(private("ca.key"), hashes.SHA256())
        )
        chain: tuple[x509.Certificate, ...] = (certificate, ca)
        manifest["sealed_at"] = (now - timedelta(days=60)).isoformat(timespec="seconds")
    else:
        certificate = (
            builder.issuer_name(tpp.subject)
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=365))
            .sign(private("tpp.key"), hashes.SHA256())
        )
        chain = (certificate, tpp, ca)
    data = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    (record / MANIFEST).write_bytes(data)
    forged = SealKey(RSAKey.import_key(key), "RS256", chain)
    (record / SEAL).write_text(seal(data, forged) + "\n", encoding="ascii")


def test_a_chain_whose_ca_is_an_end_entity_certificate_is_refused(
    record: Path, certificates: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """security-5.md C1: the TPP's own seal certificate (CA false) issues "Big Bank ASA"."""
    _forge(record, certificates)
    result = _verify(record, certificates)
    assert not result.verified
    assert result.sealed_by == "O=Big Bank ASA,CN=Big Bank ASA"
    assert result.problems and result.problems[0].startswith("chain: ")
    trust = str(certificates / "bank" / "ca.pem")
    assert cli.main(["verify", str(record), "--trust", trust]) == 1
    out = capsys.readouterr().out
    assert "\nVERIFIED" not in out and "NOT VERIFIED" in out


def test_a_certificate_expired_before_verification_cannot_seal(
    record: Path, certificates: Path
) -> None:
    """security-5.md C2: the sealer's backdated sealed_at does not make an expired certificate
    valid; the chain is validated now."""
    _forge(record, certificates, expired=True)
    result = _verify(record, certificates)
    assert not result.verified
    problems = result.problems
    assert any("chain: " in one and "valid at validation time" in one for one in problems), problems


def test_a_sealed_at_in_the_future_is_refused(record: Path, certificates: Path) -> None:
    """security-5.md attempt 51: a seal time ahead of the verifier's clock."""
    manifest = json.loads((record / MANIFEST).read_text(encoding="utf-8"))
    manifest["sealed_at"] = (datetime.now(UTC) + timedelta(days=20)).isoformat()
    (record / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    _reseal(record, certificates)
    result = _verify(record, certificates)
    assert len(result.problems) == 1 and "is later than now" in result.problems[0]


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda manifest: manifest.update(sealed_at="yesterday"), "not a date"),
        (lambda manifest: {k: v for k, v in manifest.items() if k != "sealed_at"}, "not a date"),
        (lambda manifest: manifest.update(files=[]), "not a manifest"),
        (lambda manifest: [manifest], "not a manifest"),
        (lambda manifest: b"{not json", "not JSON"),
    ],
    ids=["sealed-at-not-a-date", "sealed-at-missing", "files-a-list", "a-list", "not-json"],
)
def test_a_sealed_malformed_manifest_is_one_line(
    record: Path, certificates: Path, edit: Any, said: str
) -> None:
    """security-5.md L2 (attempts 53-57): a manifest sealed with a legitimate key but malformed
    is one problem, not a traceback."""
    manifest = json.loads((record / MANIFEST).read_text(encoding="utf-8"))
    edited = edit(manifest)
    if isinstance(edited, bytes):
        data = edited
    else:
        data = (json.dumps(manifest if edited is None else edited) + "\n").encode()
    (record / MANIFEST).write_bytes(data)
    bank = certificates / "bank"
    (record / SEAL).write_text(seal(data, load_seal_key(bank / "tpp.pem", bank / "tpp.key")))
    result = _verify(record, certificates)
    assert len(result.problems) == 1 and said in result.problems[0], result.problems


def test_without_trust_a_record_sealed_by_anyone_is_never_verified(
    record: Path, certificates: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """security-5.md H1: re-sealed with another CA's certificate, verify without --trust says
    who sealed it is not established, never VERIFIED, and exits 3."""
    _reseal(record, certificates, who="other")
    result = verify_record(record)
    assert result.consistent and not result.verified
    assert result.unestablished and "--trust" in result.unestablished[0]
    assert cli.main(["verify", str(record)]) == 3
    out = capsys.readouterr().out
    assert "NOT ESTABLISHED who sealed it" in out
    assert "\nVERIFIED" not in out and not out.startswith("VERIFIED")


def _seal_manifest(record: Path, manifest: dict[str, Any], key: SealKey) -> None:
    data = (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()
    (record / MANIFEST).write_bytes(data)
    (record / SEAL).write_text(seal(data, key) + "\n", encoding="ascii")


def _bank_key(certificates: Path) -> SealKey:
    return load_seal_key(certificates / "bank" / "tpp.pem", certificates / "bank" / "tpp.key")


@pytest.mark.parametrize("name", ["../outside.json", "/etc/hostname"])
def test_a_sealed_name_outside_the_record_is_refused_unread(
    record: Path, certificates: Path, name: str
) -> None:
    """security-5.md L1: a manifest entry that leaves the folder, sealed with the real key."""
    (record.parent / "outside.json").write_text("{}", encoding="utf-8")
    manifest = json.loads((record / MANIFEST).read_text(encoding="utf-8"))
    manifest["files"][name] = digest(b"{}")
    _seal_manifest(record, manifest, _bank_key(certificates))
    result = _verify(record, certificates)
    assert result.problems == [f"{name}: a sealed name outside the record (refused unread)"]


def test_an_added_fifo_or_symlinked_folder_is_refused_and_not_read(
    record: Path, certificates: Path, tmp_path: Path
) -> None:
    """security-5.md M8 (a FIFO added: verify hung for ever) and M9 (a symlink to a folder
    outside, with files under it, and exchanges/ replaced by one: VERIFIED)."""
    os.mkfifo(record / "exchanges" / "zz.json")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "extra.json").write_text("{}", encoding="utf-8")
    (record / "linked").symlink_to(outside, target_is_directory=True)
    done: list[Verification] = []
    thread = threading.Thread(target=lambda: done.append(_verify(record, certificates)))
    thread.start()
    thread.join(60)
    assert done, "verify did not return"
    problems = done[0].problems
    assert "exchanges/zz.json: not part of the sealed record (and not a regular file)" in problems
    assert "linked: not part of the sealed record (and not a regular file)" in problems
    # a sealed folder replaced by a symlink to a copy
    copy = tmp_path / "exchanges-copy"
    shutil.copytree(record / "exchanges", copy, ignore=shutil.ignore_patterns("zz.json"))
    shutil.rmtree(record / "exchanges")
    (record / "exchanges").symlink_to(copy, target_is_directory=True)
    (record / "linked").unlink()
    result = _verify(record, certificates)
    assert "exchanges: not part of the sealed record (and not a regular file)" in result.problems
    assert not result.verified


def test_a_tls_server_certificate_cannot_seal(record: Path, certificates: Path) -> None:
    """security-5.md M10 (attempt 47): a certificate of the trusted CA with extendedKeyUsage
    serverAuth only is no seal certificate."""
    ca = load_ca(certificates / "bank" / "ca.pem", certificates / "bank" / "ca.key")
    server = generate_server_certificate(ca)
    key = SealKey(RSAKey.import_key(server.private_key), "RS256", (server.certificate,))
    manifest = json.loads((record / MANIFEST).read_text(encoding="utf-8"))
    _seal_manifest(record, manifest, key)
    result = _verify(record, certificates)
    assert len(result.problems) == 1 and "is a TLS certificate" in result.problems[0], (
        result.problems
    )


def test_a_certificate_that_may_not_sign_cannot_seal(record: Path, certificates: Path) -> None:
    """security-5.md M10 (attempt 46): the trusted CA's seal certificate issued again with
    keyUsage keyEncipherment only (neither digitalSignature nor nonRepudiation), everything else
    the same, sealed a record that verified."""
    bank = certificates / "bank"
    ca = load_ca(bank / "ca.pem", bank / "ca.key")
    tpp = x509.load_pem_x509_certificate((bank / "tpp.pem").read_bytes())
    encipher_only = x509.KeyUsage(False, False, True, False, False, False, False, False, False)
    builder = x509.CertificateBuilder(
        issuer_name=tpp.issuer, subject_name=tpp.subject, public_key=tpp.public_key(),
        serial_number=x509.random_serial_number(), not_valid_before=tpp.not_valid_before_utc,
        not_valid_after=tpp.not_valid_after_utc,
    )  # fmt: skip
    for extension in tpp.extensions:
        value = encipher_only if isinstance(extension.value, x509.KeyUsage) else extension.value
        builder = builder.add_extension(value, extension.critical)
    certificate = builder.sign(ca.private_key, hashes.SHA256())
    key = SealKey(_bank_key(certificates).key, "RS256", (certificate,))
    _seal_manifest(record, json.loads((record / MANIFEST).read_text(encoding="utf-8")), key)
    result = _verify(record, certificates)
    assert len(result.problems) == 1 and "may not sign" in result.problems[0], result.problems


def test_a_huge_file_is_hashed_as_a_stream(record: Path, certificates: Path) -> None:
    """security-5.md L3 (attempt 74): a sealed exchange replaced by a 1 GiB file cost 1.1 GB of
    memory, the file read whole to hash it; now it is hashed in chunks."""
    import tracemalloc

    exchange = next(iter(sorted((record / "exchanges").glob("*.json"))))
    exchange.unlink()
    with exchange.open("wb") as stream:
        stream.truncate(64 * 1024 * 1024)  # sparse: no disk, 64 MiB to read
    tracemalloc.start()
    try:
        result = _verify(record, certificates)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    name = f"exchanges/{exchange.name}"
    assert result.problems == [f"{name}: edited since it was sealed (its digest differs)"]
    assert peak < 16 * 1024 * 1024, f"{peak} bytes at the peak"


def test_a_revoked_seal_certificate_is_refused_with_the_cas_list(
    record: Path, certificates: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """security-5.md M11: verify could not be given a CRL, and a revoked seal certificate
    verified. With --crl, the certificate the CA's list names is a difference."""
    bank = certificates / "bank"
    ca = load_ca(bank / "ca.pem", bank / "ca.key")
    tpp = x509.load_pem_x509_certificate((bank / "tpp.pem").read_bytes())
    now = datetime.now(UTC)
    crl = (
        x509.CertificateRevocationListBuilder()
        .issuer_name(ca.certificate.subject)
        .last_update(now - timedelta(hours=1))
        .next_update(now + timedelta(days=7))
        .add_revoked_certificate(
            x509.RevokedCertificateBuilder()
            .serial_number(tpp.serial_number)
            .revocation_date(now - timedelta(minutes=5))
            .build()
        )
        .sign(ca.private_key, hashes.SHA256())
    )
    path = tmp_path / "ca.crl"
    path.write_bytes(crl.public_bytes(serialization.Encoding.PEM))
    result = verify_record(record, trust=load_trust([bank / "ca.pem"]), crls=(crl,))
    assert len(result.problems) == 1 and "was revoked on" in result.problems[0]
    trust = str(bank / "ca.pem")
    assert cli.main(["verify", str(record), "--trust", trust, "--crl", str(path)]) == 1
    assert "was revoked on" in capsys.readouterr().out


def test_verify_with_a_policy_recomputes_eligibility(
    record: Path, certificates: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --policy, verify says which checks it did not make; with one, eligibility is
    recomputed from the sealed record: a record of the bundled server certifies no bank, from a
    checkout it names no release manifest, and the scope it sealed is listed."""
    trust = ["--trust", str(certificates / "bank" / "ca.pem")]
    assert cli.main(["verify", str(record), *trust]) == 0
    said = capsys.readouterr().out
    # the sealed verdict line, the record's own eligibility and its scope, before VERIFIED
    assert said.index("sealed verdict: SMOKE RUN PASSED") < said.index("VERIFIED")
    assert "sealed eligibility (the record's own claim): none stated" in said
    assert said.index("scope: operations unsupported: none") < said.index("VERIFIED")
    assert "note: no --policy: not checked whether the suite release that made the record" in said
    policy = tmp_path / "policy.toml"
    policy.write_text('required_operations = ["E16"]\nlongest_age_days = 1\n', encoding="utf-8")
    assert cli.main(["verify", str(record), *trust, "--policy", str(policy)]) == 1
    said = capsys.readouterr().out
    assert "scope: operations unsupported: none" in said
    assert (
        "NOT ELIGIBLE under the policy: a run of the bundled reference server or a played "
        "profile certifies no bank" in said
    )
    assert "the record names no release manifest" in said
    assert said.index("NOT ELIGIBLE under the policy") < said.index("VERIFIED")


def test_an_older_run_s_record_and_traffic_are_moved_aside(record: Path) -> None:
    """A new run finds the older run's evidence/, traffic.har and events.ndjson and moves them
    aside (the record as a series keeps it); a new sealed record still follows it."""
    reports = record.parent
    sealed = digest((record / MANIFEST).read_bytes())
    (reports / "compliance.json").write_text(
        json.dumps({"run": {"started": "2026-11-29T06:10:00+00:00"}}), encoding="utf-8"
    )
    for name in ("traffic.har", "events.ndjson"):
        (reports / name).write_text("older", encoding="utf-8")
    said = move_aside(reports)
    kept = reports / f"evidence-{sealed.removeprefix('sha256:')[:12]}"
    earlier = reports / "earlier-20261129T061000"
    assert said == [
        f"the previous run's sealed record is kept in {kept}",
        f"the previous run's traffic.har and events.ndjson moved to {earlier}",
    ]
    assert not record.exists() and (kept / MANIFEST).is_file()
    assert not (reports / "traffic.har").exists() and not (reports / "events.ndjson").exists()
    assert (earlier / "traffic.har").read_text(encoding="utf-8") == "older"
    assert latest_record(reports) == kept
    assert previous_record(reports, latest_record(reports)) == sealed
    assert move_aside(reports) == []  # nothing older left
