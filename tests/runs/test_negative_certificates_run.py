"""Issue 25's "done when" for a TPP without a CA key: a run whose profile names ready-made
certificates (``[negative_certificates]``: expired, no_role, other_ca, revoked, as a qualified
trust service provider hands out) and gives no CA key at all judges the expired, missing-role,
other-CA and revoked scenarios; the certificates are made with ``conformance certs`` as a TPP
would make its own, the CA key removed before the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.bankside.bundled import bundled_reference_server

#: Two operations of each role (payments need PSP_PI, accounts PSP_AI) keep the run short.
SELECTION = (
    "(expired-certificate or missing-role or certificate-other-ca or revoked-certificate) "
    "and not qwac and (E16 or PS or AL or CS)"
)
CASES = ("expired-certificate", "missing-role", "certificate-other-ca", "revoked-certificate")
PASSWORD_ENV = "CONFORMANCE_TEST_NEGATIVE_PASSWORD"


def certs(*argv: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "certs", *argv],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_ready_made_certificates_judge_the_negative_scenarios_without_a_ca_key(
    tmp_path: Path,
) -> None:
    ids, neg = tmp_path / "ids", tmp_path / "neg"
    certs("--out", str(ids), "--no-qwac")
    ca = ("--ca-cert", str(ids / "ca.pem"), "--ca-key", str(ids / "ca.key"), "--no-qwac")
    pkcs12 = ("--p12-password", "negative-secret")
    certs("--out", str(neg / "expired"), *ca, "--expired", *pkcs12)
    certs("--out", str(neg / "no-role"), *ca, "--roles", "PSP_AS,PSP_IC")
    certs("--out", str(neg / "revoked"), *ca)
    certs("--out", str(neg / "other-ca"), "--no-qwac")
    certs("--out", str(ids), "--revoke", str(neg / "revoked" / "tpp.pem"))
    for key in (*ids.rglob("ca.key"), *neg.rglob("ca.key")):
        key.unlink()  # the TPP holds no CA key
    profile = tmp_path / "qtsp.toml"
    profile.write_text(
        f"""
base_url = "http://127.0.0.1:1"
reference_server = true
certificate = "{ids / "tpp.pem"}"
key = "{ids / "tpp.key"}"

[negative_certificates]
expired = "{neg / "expired" / "tpp.p12"}"
no_role = "{neg / "no-role" / "tpp.pem"}"
no_role_key = "{neg / "no-role" / "tpp.key"}"
other_ca = "{neg / "other-ca" / "tpp.pem"}"
other_ca_key = "{neg / "other-ca" / "tpp.key"}"
revoked = "{neg / "revoked" / "tpp.pem"}"
revoked_key = "{neg / "revoked" / "tpp.key"}"
password_env = "{PASSWORD_ENV}"
""",
        encoding="utf-8",
    )
    reports = tmp_path / "reports"
    with bundled_reference_server(
        trust=ids / "ca.pem", crl=ids / "ca.crl", log_path=tmp_path / "server.log"
    ) as url:
        done = subprocess.run(
            [sys.executable, "-m", "conformance", "run", "--profile", str(profile), "--target",
             url, "--reports", str(reports), "-n", "0", "--strict", "--", "-k", SELECTION],
            capture_output=True, text=True, timeout=600, check=False,
            env={**os.environ, PASSWORD_ENV: "negative-secret"},
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    scenarios = json.loads((reports / "compliance.json").read_text("utf-8"))["scenarios"]
    verdicts = {s["id"]: s["verdict"] for s in scenarios}
    assert {"passed"} == set(verdicts.values()), verdicts
    for case in CASES:  # every case judged, on payments and accounts alike
        judged = [i for i in verdicts if f"-auth-{case}-" in i]
        assert {i.split("-", 1)[0] for i in judged} == {"E16", "PS", "AL", "CS"}, case
    log = (tmp_path / "server.log").read_text("utf-8")
    assert "negative-secret" not in log
    texts = "".join(p.read_text("utf-8", "replace") for p in reports.rglob("*") if p.is_file())
    assert "negative-secret" not in texts
