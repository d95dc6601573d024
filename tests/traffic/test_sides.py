"""Whose fault it is (issue 29 item 7): judged traffic keeps the TPP's findings and the bank's
apart, each side with its own verdict; the basket's worst case rests on the judge's reading (a
status outside spec 2.4's list, a mixed basket read as PATC) at should; an unknown status is
reported as unknown, never counted as accepted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.contract import Contract, load_contract
from conformance.exchange import Exchange
from conformance.report.compliance_page import verdict_word
from conformance.report.compliance_render import render_html, render_markdown
from conformance.report.verdicts import Finding
from conformance.traffic.answer_checks import judge_answer
from conformance.traffic.model import (
    BANK,
    TPP,
    GradedViolation,
    JudgedExchange,
    chosen_refusal,
)
from conformance.traffic.reports import side_verdict, summary, terminal_lines, traffic_cause
from conformance.traffic.state import (
    MIXED_READING,
    OUTSIDE_LIST_READING,
    TrafficState,
    worst_case,
)

NDCT = "/v1/payments/norwegian-domestic-credit-transfers"


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def answer(status: int, body: Any, path: str = NDCT, request: Any = None) -> Exchange:
    return Exchange(
        method="POST",
        url=f"http://bank.test{path}",
        request_headers=(("Content-Type", "application/json"),),
        request_body=json.dumps(request or {}).encode(),
        signing_string=None,
        status=status,
        response_headers=(("Content-Type", "application/json"),),
        response_body=json.dumps(body).encode(),
        elapsed=0.01,
        signer="standard",
        base_url="http://bank.test",
    )


# --- the basket's worst case: stated, or the judge's reading -----------------------------------


@pytest.mark.parametrize(
    ("statuses", "status", "reading"),
    [
        (["RCVD", "RCVD"], "RCVD", ""),
        (["ACTC", "ACTC"], "ACTC", ""),
        (["RJCT", "ACSC"], "RJCT", ""),  # a rejected payment is the worst whatever the others
        (["RCVD", "ACTC"], "PATC", MIXED_READING),
        (["ACSC", "ACTC"], "ACTC", OUTSIDE_LIST_READING),
        (["CANC", "ACTC"], "RJCT", OUTSIDE_LIST_READING),
        (["PDNG", "RCVD"], "PATC", OUTSIDE_LIST_READING),
    ],
)
def test_the_worst_case_names_the_reading_it_rests_on(
    statuses: list[str], status: str, reading: str
) -> None:
    case = worst_case(statuses)
    assert (case.status, case.reading) == (status, reading)


def _basket(contract: Contract, statuses: list[str], basket_status: str) -> list[Finding]:
    """Payments created with ``statuses``, then a basket of them answered ``basket_status``:
    the state's findings on the basket."""
    state = TrafficState(contract)
    ids = [f"p-{index}" for index in range(len(statuses))]
    for pid, status in zip(ids, statuses, strict=True):
        created = answer(201, {"paymentId": pid, "transactionStatus": status})
        assert state.observe(created, contract.operations["E16"], {}, {}) == []
    body = {"paymentIds": ids}
    basket = answer(201, {"basketId": "b-1", "transactionStatus": basket_status}, request=body)
    return state.observe(basket, contract.operations["E1"], {}, body)


def test_a_basket_wrong_where_spec_2_4_states_it_is_must(contract: Contract) -> None:
    (finding,) = _basket(contract, ["RCVD", "RCVD"], "ACTC")
    assert (finding.side, finding.rule, finding.level) == (BANK, "STATE-basket-worst-case", "must")
    assert finding.quotes and not finding.reading


def test_a_mixed_basket_read_as_patc_is_the_judges_reading_at_should(contract: Contract) -> None:
    (finding,) = _basket(contract, ["RCVD", "ACTC"], "RCVD")
    assert (finding.rule, finding.level, finding.reading) == (
        "STATE-basket-worst-case",
        "should",
        MIXED_READING,
    )
    assert not finding.quotes
    (outside,) = _basket(contract, ["ACSC", "ACSC"], "PATC")
    assert (outside.level, outside.reading) == ("should", OUTSIDE_LIST_READING)


def test_an_unknown_payment_status_is_reported_as_unknown_never_as_accepted(
    contract: Contract,
) -> None:
    # counted as accepted, ["ACTC", "XYZ"] would be all accepted: ACTC, and no finding at all
    (finding,) = _basket(contract, ["ACTC", "XYZ"], "ACTC")
    assert finding.rule == "STATE-unknown-status" and finding.side == BANK
    assert "'XYZ'" in finding.title and "unknown status" in finding.title
    assert "not judged" in finding.title


def test_an_unknown_http_status_is_neither_an_acceptance_nor_a_server_error(
    contract: Contract,
) -> None:
    broken = Finding(
        "must", "a Digest of another body", "spec 5", side=TPP, rule="TPP-digest-mismatch"
    )
    violation = GradedViolation(broken, chosen_refusal())
    findings = judge_answer(answer(999, {}), contract.operations["E16"], contract, [violation])
    rules = [finding.rule for finding in findings]
    assert "BANK-unknown-status" in rules and "BANK-server-error" not in rules
    assert not any("accepted" in finding.title for finding in findings)
    refusal = next(finding for finding in findings if finding.rule == "BANK-refusal")
    assert refusal.title.startswith("answered with an unknown status (HTTP 999)")
    # a 2xx is the one acceptance
    (accepted,) = judge_answer(answer(201, {}), contract.operations["E16"], contract, [violation])[
        :1
    ]
    assert accepted.title.startswith("accepted (HTTP 201)")


# --- each side its own verdict ------------------------------------------------------------------


def _judged(index: int, *findings: Finding) -> JudgedExchange:
    return JudgedExchange(index, answer(401, {"status": 401, "code": "x"}), "E16", findings)


def _digest(place: str = "Digest") -> Finding:
    return Finding(
        "must", "Digest mismatch", "spec 5", side=TPP, rule="TPP-digest-mismatch", place=place
    )


def test_a_tpps_bad_digest_never_makes_the_bank_not_conformant() -> None:
    judged = [_judged(1, _digest()), _judged(2, _digest()), _judged(3)]
    bank, tpp = side_verdict(BANK, judged), side_verdict(TPP, judged)
    assert bank["verdict"] == "CONFORMANT" and bank["must"] == 0
    assert bank["line"].startswith("Bank (its answers): CONFORMANT at must level")
    assert tpp["verdict"] == "NOT CONFORMANT"
    assert (tpp["must"], tpp["exchanges_with_must"], tpp["judged"]) == (2, 2, 3)
    assert tpp["line"].startswith(
        "TPP (its requests): NOT CONFORMANT at must level: 2 must findings in 2 of the 3"
    )
    # one break of the TPP in two exchanges is one cause; another place is another
    assert traffic_cause(_digest()) == traffic_cause(_digest())
    assert traffic_cause(_digest()) != traffic_cause(_digest("Signature"))
    listed = summary(judged)["findings"]
    assert {item["cause"] for item in listed} == {traffic_cause(_digest())}


def test_nothing_judged_is_no_verdict() -> None:
    skipped = JudgedExchange(1, answer(200, {}, "/health"), None, skipped="outside /v1")
    assert side_verdict(BANK, [skipped])["verdict"] == "NOT JUDGED"
    assert side_verdict(TPP, [])["verdict"] == "NOT JUDGED"


def test_the_page_and_the_terminal_give_each_side_its_verdict_and_counts(tmp_path: Any) -> None:
    from datetime import UTC, datetime

    from conformance.traffic.reports import TrafficRun, write_reports

    mistake = _digest()
    late = Finding(
        "should", "answered 418", "spec 7", side=BANK, rule="BANK-status", place="status"
    )
    judged = [_judged(1, mistake), _judged(2, mistake, late), _judged(3)]
    now = datetime(2026, 1, 29, 8, 0, tzinfo=UTC)
    run = TrafficRun("HAR test.har", "http://bank.test", now, now, {})
    document = write_reports(tmp_path, judged, run, load_contract())
    markdown = render_markdown(document)
    assert markdown.startswith("# Traffic report: the TPP's requests and the bank's answers")
    assert "**TPP (its requests): NOT CONFORMANT at must level" in markdown
    assert "**Bank (its answers): CONFORMANT at must level: no must finding" in markdown
    # the counts agree with the causes listed under them
    tpp = markdown.split("## TPP: must findings")[1].split("\n## ")[0]
    assert "TPP's must findings: 2 findings, 1 cause, in 2 exchanges" in tpp
    assert tpp.count("### Cause ") == 1
    bank = markdown.split("## Bank: should findings")[1].split("\n## ")[0]
    assert "Bank's should findings: 1 finding, 1 cause, in 1 exchange" in bank
    assert bank.count("### Cause ") == 1
    assert "## Bank: must findings" in markdown.split("## TPP: should")[1]
    assert "Must failures (the spec states it" not in markdown  # no verdict of both together
    assert verdict_word(document) == "TPP NOT CONFORMANT; Bank CONFORMANT"
    page = render_html(document)
    assert '<p class="verdict ok">Bank (its answers): CONFORMANT' in page
    assert '<p class="verdict bad">TPP (its requests): NOT CONFORMANT' in page
    sides = document["traffic"]["sides"]
    assert (sides["TPP"]["verdict"], sides["bank"]["verdict"]) == ("NOT CONFORMANT", "CONFORMANT")
    lines = terminal_lines(document)
    assert lines[0].startswith("TPP (its requests): NOT CONFORMANT")
    assert lines[1].startswith("Bank (its answers): CONFORMANT")
    assert "TPP's must findings: 2 findings, 1 cause, in 2 exchanges" in lines
    junit = (tmp_path / "junit.xml").read_text(encoding="utf-8")
    assert f'name="cause" value="{traffic_cause(mistake)}"' in junit


def _keys(node: Any) -> set[str]:
    """Every key of a JSON document, at any depth."""
    if isinstance(node, dict):
        return set(node) | {key for value in node.values() for key in _keys(value)}
    if isinstance(node, list):
        return {key for value in node for key in _keys(value)}
    return set()


def test_a_traffic_finding_is_a_finding_with_its_side_and_its_reading(tmp_path: Any) -> None:
    """One finding type (issue 39): a judged exchange's findings are the reports' ``Finding``
    with the side that broke the rule, and the reading a should rests on is called ``reading``
    everywhere; no report carries a second key for it."""
    from datetime import UTC, datetime

    from conformance.traffic.reports import TrafficRun, write_reports

    late = Finding(
        "should", "answered 418", "spec 7", "why", side=BANK, rule="BANK-status", place="status"
    )
    now = datetime(2026, 1, 29, 8, 0, tzinfo=UTC)
    run = TrafficRun("HAR test.har", "http://bank.test", now, now, {})
    document = write_reports(tmp_path, [_judged(1, _digest(), late)], run, load_contract())
    written = json.loads((tmp_path / "compliance.json").read_text(encoding="utf-8"))
    assert "basis" not in _keys(written) and "basis" not in _keys(document)
    listed = written["traffic"]["findings"]
    assert [(f["side"], f["rule"], f["reading"]) for f in listed] == [
        (TPP, "TPP-digest-mismatch", ""),
        (BANK, "BANK-status", "why"),
    ]
    (scenario,) = written["scenarios"]
    assert [f["side"] for f in scenario["findings"]] == [TPP, BANK]
    assert Finding.from_dict(late.as_dict()) == late
    assert late.line() == "bank should BANK-status at status: answered 418"
    assert "side" not in Finding("must", "x", "spec 7").as_dict()  # a scenario's, as before
