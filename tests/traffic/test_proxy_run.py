"""Issue 24's tests through real runs: the suite's own bundled run sent through the proxy (judging
in this process) gives no finding against the faithful reference server, and the same run against
a faulted server gives each fault's findings, blamed on the bank."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.traffic.model import BANK, TPP

from .conftest import Identities, run_through_proxy

#: Fault → (bank rule, a phrase its finding carries) that the proxy must report for it.
FAULT_FINDINGS = {
    "skip-digest-check": ("BANK-refusal", "TPP-digest-mismatch"),
    "kid-error-401": ("BANK-refusal-status", "ERR-2-kid-"),
    "basket-best-case": ("STATE-basket-worst-case", "worst case"),
    "allow-periodic-in-basket": ("BANK-refusal", "ERR-1-reference-mix-invalid"),
    "unstable-transaction-ids": ("SB-booked-transaction-ids-stable", "changed id"),
    "sca-start-not-started": ("BANK-sca-started", "not STARTED"),
    "delete-pdng-allowed": ("ERR-6-pending-payment-not-deletable", "PDNG"),
}


@pytest.mark.slow
def test_the_bundled_run_through_the_proxy_blames_nothing_on_the_faithful_server(
    identities: Identities, tmp_path: Path
) -> None:
    run = run_through_proxy(identities, tmp_path)
    assert run.returncode == 0, run.output
    assert len(run.judged) > 2000
    assert run.findings(BANK) == []
    # The suite's negative scenarios are TPP mistakes on purpose: found, and refused by the bank.
    tpp_must = [item for item, _rule, level in run.findings(TPP) if level == "must"]
    assert len(tpp_must) > 500
    assert all(400 <= item.exchange.status < 500 for item in tpp_must)
    judged = [item for item in run.judged if not item.skipped]
    assert sum(1 for item in judged if not item.findings) > 1000


@pytest.mark.slow
def test_a_faulted_server_gets_each_faults_findings_blamed_on_the_bank(
    identities: Identities, tmp_path: Path
) -> None:
    run = run_through_proxy(
        identities,
        tmp_path,
        faults=tuple(FAULT_FINDINGS),
        selection=["-m", "E16 or E1 or E2 or E3 or PC"],
    )
    assert run.returncode == 1, run.output  # the suite fails too
    bank = [finding for item in run.judged for finding in item.findings if finding.side == BANK]
    for fault, (rule, phrase) in FAULT_FINDINGS.items():
        assert any(f.rule == rule and phrase in f.title for f in bank), (fault, bank)
    assert {f.rule for f in bank} <= {rule for rule, _ in FAULT_FINDINGS.values()}
    assert all(f.level == "must" for f in bank)


@pytest.mark.slow
def test_html_error_pages_are_the_banks_error_body_findings(
    identities: Identities, tmp_path: Path
) -> None:
    run = run_through_proxy(
        identities, tmp_path, faults=("html-errors",), selection=["-m", "E16 and header"]
    )
    rules = {rule for _item, rule, _level in run.findings(BANK)}
    assert rules == {"BANK-error-body"}
    errors = [item for item in run.judged if item.exchange.status >= 400 and not item.skipped]
    assert errors and all(
        any(f.rule == "BANK-error-body" for f in item.findings) for item in errors
    )
