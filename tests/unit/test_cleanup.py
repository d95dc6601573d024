"""``conformance run --cleanup`` (conformance.plugin.cleanup): what a run created is noted from
its exchanges, its unauthorised payments are cancelled afterwards as the identity that made
them, authorised ones are left, and consents are kept (with the reason) while the contract has
no operation that deletes one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.bankside.cleanup import consent_delete as _consent_delete
from conformance.bankside.cleanup import created_by as _created
from conformance.commands.run import pytest_arguments
from conformance.contract import load_contract
from conformance.exchange import Exchange

CERT = "Y2VydA=="


def exchange(method: str, path: str, status: int, body: object, **headers: str) -> Exchange:
    return Exchange(
        method=method,
        url=f"http://bank.test{path}",
        request_headers=(("TPP-Signature-Certificate", CERT), *headers.items()),
        request_body=b"",
        signing_string=None,
        status=status,
        response_headers=(),
        response_body=json.dumps(body).encode(),
        elapsed=0.001,
        base_url="http://bank.test",
    )


def test_creations_are_read_from_their_answers() -> None:
    contract = load_contract()
    payment = _created(
        exchange("POST", "/v1/periodic-payments/x", 201, {"paymentId": "p1"}, **{"PSU-ID": "u"}),
        "E17",
        contract,
    )
    assert payment is not None and payment.kind == "payment" and payment.resource_id == "p1"
    assert payment.product == "norwegian-domestic-credit-transfers"  # PS and PC take it
    assert payment.psu_id == "u" and payment.certificate == CERT
    by_401 = _created(exchange("POST", "/v1/payments/x", 401, {"paymentId": "p2"}), "E16", contract)
    assert by_401 is not None and by_401.resource_id == "p2"  # spec 5 item 6's form: it exists
    consent = _created(exchange("POST", "/v1/consents", 201, {"consentId": "c1"}), "CC", contract)
    assert consent is not None and consent.kind == "consent"
    assert _created(exchange("POST", "/v1/consents", 400, {"code": "x"}), "CC", contract) is None
    refused = exchange("POST", "/v1/payments/x", 400, {"paymentId": "p3"})
    assert _created(refused, "E16", contract) is None


def test_the_run_passes_the_option_on() -> None:
    args = pytest_arguments(
        target=None,
        profile=None,
        cert=None,
        key=None,
        seed=1,
        strict=False,
        reports=Path("reports"),
        numprocesses=None,
        cleanup=True,
    )
    assert "--cleanup" in args


@pytest.mark.slow
def test_a_run_cleans_up_what_it_made(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    selection = (
        "E16-ndct-unstructured-accepted or PS-norwegian-domestic-credit-transfers-accepted "
        "or E16-sca-completed-status-advances or CC-minimal-request-accepted"
    )
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--cleanup", "-n", "0",
         "--reports", str(reports), "--", "-k", selection],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    result = json.loads((reports / "cleanup.json").read_text(encoding="utf-8"))
    assert result["payments_cancelled"] >= 2  # the accepted E16 and the worker's PS payment
    assert result["payments_left"] >= 1  # the payment whose SCA was completed
    assert result["could_not"] == []
    if _consent_delete(load_contract()) is None:
        assert result["consents_kept"] >= 1 and result["consents_deleted"] == 0
        assert "the contract has no operation that deletes a consent" in done.stdout
    else:
        assert result["consents_deleted"] >= 1
    assert "clean-up (--cleanup)" in done.stdout
    assert not list(reports.glob("cleanup-*.json"))  # the workers' parts are merged
