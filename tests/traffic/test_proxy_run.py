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
    "kid-error-401": ("BANK-refusal-status", "ERR-2-kid-missing-empty"),
    "basket-best-case": ("STATE-basket-worst-case", "worst case"),
    "allow-periodic-in-basket": ("BANK-refusal", "ERR-1-reference-mix-invalid"),
    "unstable-transaction-ids": ("SB-booked-transaction-ids-stable", "changed id"),
    "sca-start-not-started": ("BANK-sca-started", "not STARTED"),
    "delete-pdng-allowed": ("ERR-6-pending-payment-not-deletable", "PDNG"),
}
#: The faults found at should in this selection: its faulted basket mixes an accepted and a
#: received payment, whose worst case (PATC) rests on our reading of spec 2.4 (issue 29 item 7;
#: a basket with a rejected payment is must: tests/traffic/test_sides.py).
FOUND_AT_SHOULD = frozenset({"basket-best-case"})


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
    # as in a suite run, a must quotes the spec (quotes.json) and a should names its reading
    findings = [finding for item in judged for finding in item.findings]
    unquoted = sorted({f.rule for f in findings if f.level == "must" and not f.quotes})
    assert unquoted == []
    assert all(f.reading for f in findings if f.level == "should")


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
    # every fault is found at must (issue 19 item 6: detection power stays)
    for fault, (rule, phrase) in FAULT_FINDINGS.items():
        # on a miss, the suite's own lines for the rule say whether its scenario ran at all
        key = "-".join(rule.split("-")[:2])
        suite_lines = [line for line in run.output.splitlines() if key in line]
        level = "should" if fault in FOUND_AT_SHOULD else "must"
        assert any(f.rule == rule and phrase in f.title and f.level == level for f in bank), (
            fault,
            bank,
            suite_lines[-20:],
        )
    assert {f.rule for f in bank} <= {rule for rule, _ in FAULT_FINDINGS.values()}
    # a must quotes the spec; what rests on our reading is should and names it, as in a suite
    # run (kid-error-401 answers an invalid KID 401 too: what makes a KID invalid is a reading)
    assert all(f.quotes and not f.reading for f in bank if f.level == "must")
    should = [f for f in bank if f.level == "should"]
    assert should and all(f.reading and not f.quotes for f in should)
    assert {f.title.split(" with HTTP")[0] for f in should} >= {
        "refused a request that breaks ERR-2-kid-invalid"
    }


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
