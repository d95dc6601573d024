"""No secret leaves a run (issue 14): the signing key, the CA key, the TLS key and the PKCS#12
password a run used appear nowhere in its reports, the reference server's log, or what it prints,
not even when the password is wrong. The key material is looked for in every form it could leak
in: the PEM body, the password, and the private numbers in hex and decimal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

PASSWORD = "pw-Sekret-42"
WRONG = "Wr0ng-pw-777"


def _conformance(*args: str, cwd: Path, password: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONFORMANCE_KEY_PASSWORD": password}
    return subprocess.run(
        [sys.executable, "-m", "conformance", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def _secrets(certs: Path) -> list[str]:
    """Every string that would betray a key: PEM body lines, the private numbers, the password."""
    found = [PASSWORD]
    for name in ("tpp.key", "ca.key", "qwac.key"):
        pem = (certs / name).read_bytes()
        found += [line for line in pem.decode().splitlines() if line and "-----" not in line]
        key = serialization.load_pem_private_key(pem, password=None)
        assert isinstance(key, rsa.RSAPrivateKey)
        numbers = key.private_numbers()
        for value in (numbers.d, numbers.p, numbers.q):
            found += [format(value, "x"), format(value, "X"), str(value)[:60]]
    return found


@pytest.mark.slow  # several whole runs: make test-slow
def test_no_key_or_password_appears_in_any_report_log_or_message(tmp_path: Path) -> None:
    made = _conformance(
        "certs", "--out", "certs", "--p12-password", PASSWORD, cwd=tmp_path, password=""
    )
    assert made.returncode == 0, made.stderr
    certs = tmp_path / "certs"
    run = _conformance(
        "run", "--cert", "certs/tpp.p12", "--reports", "reports", "--", "-m", "E16 and auth",
        cwd=tmp_path, password=PASSWORD,
    )  # fmt: skip
    assert run.returncode in (0, 1), run.stdout[-2000:] + run.stderr[-2000:]
    refused = _conformance(
        "run", "--cert", "certs/tpp.p12", "--reports", "refused", cwd=tmp_path, password=WRONG
    )
    assert refused.returncode != 0 and "password" in refused.stderr  # one clear message
    texts = {
        "run output": run.stdout + run.stderr,
        "refusal": refused.stdout + refused.stderr,
        **{
            str(path): path.read_text(encoding="utf-8", errors="replace")
            for folder in (tmp_path / "reports", tmp_path / "refused")
            if folder.is_dir()
            for path in folder.rglob("*")
            if path.is_file()
        },
    }
    assert any("reference-server.log" in name for name in texts)  # the server's log is read too
    secrets = [*_secrets(certs), WRONG]
    leaks = [
        (name, secret[:12])
        for name, text in texts.items()
        for secret in secrets
        if len(secret) >= 8 and secret in text
    ]
    assert leaks == []
