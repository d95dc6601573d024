"""A payment creation under ``[sca] start = "creation"`` that carries no SCA link fails the
creation's positive scenario (spec 5 item 6, must with a redirect; should with the profile's
decoupled approach), instead of only blocking every scenario whose set-up needs the link."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from unit.test_checks import exchange

from conformance.checks import ConformanceFailure
from conformance.contract import load_contract
from conformance.exchange import Exchange
from conformance.findings import collecting_findings
from conformance.profile import ScaSettings
from conformance.profile.parts import ScaApproach
from conformance.runners.positive import check_sca_link_at_creation
from conformance.traffic.answer_checks import judge_answer
from conformance.traffic.model import BANK


def _created(status: int, links: dict[str, Any]) -> Exchange:
    return exchange(status, {"paymentId": "p-1", "transactionStatus": "RCVD", "_links": links})


def _ctx(**sca: Any) -> Any:
    return SimpleNamespace(
        profile=SimpleNamespace(sca=ScaSettings(**sca)), contract=load_contract()
    )


REDIRECT = {"scaRedirect": {"href": "https://bank.test/sca/1"}}
STATUS_ONLY = {"status": {"href": "/v1/payments/x/p-1/status"}}


def test_a_creation_without_the_redirect_link_fails_at_must() -> None:
    with pytest.raises(ConformanceFailure) as failed:
        check_sca_link_at_creation(_created(201, STATUS_ONLY), "E16", _ctx(start="creation"))
    assert failed.value.quotes == ("5-6",)


def test_a_creation_with_the_redirect_link_holds() -> None:
    check_sca_link_at_creation(_created(201, REDIRECT), "E18", _ctx(start="creation"))


@pytest.mark.parametrize("start", ["authorisation", "psu-context"])
def test_where_the_profile_starts_sca_elsewhere_nothing_is_asked(start: str) -> None:
    check_sca_link_at_creation(_created(201, STATUS_ONLY), "E16", _ctx(start=start))


def test_other_operations_and_refusals_are_not_asked() -> None:
    check_sca_link_at_creation(_created(201, STATUS_ONLY), "E1", _ctx(start="creation"))
    check_sca_link_at_creation(_created(400, {}), "E16", _ctx(start="creation"))


def test_with_the_decoupled_approach_the_missing_link_is_a_should_finding() -> None:
    with collecting_findings() as findings:
        check_sca_link_at_creation(
            _created(201, STATUS_ONLY), "E17", _ctx(start="creation", approach="decoupled")
        )
    assert len(findings) == 1


@pytest.mark.parametrize(
    ("approach", "level"), [("redirect", "must"), ("decoupled", "should"), ("oauth", "should")]
)
def test_the_traffic_judge_grades_a_missing_link_as_the_creations_scenario(
    approach: ScaApproach, level: str
) -> None:
    """The twin in the traffic judge: the same answer, the same grade (the contract's
    requirement ``SCA-link-at-creation``), as a bank-side finding."""
    contract = load_contract()
    sca = ScaSettings(start="creation", approach=approach)
    created = _created(201, STATUS_ONLY)
    ctx = _ctx(start="creation", approach=approach)
    levels = []
    with collecting_findings() as findings:
        try:
            check_sca_link_at_creation(created, "E16", ctx)
        except ConformanceFailure as failure:
            assert failure.quotes == ("5-6",)
            levels.append("must")
    levels += ["should" for finding in findings if finding.reading]
    assert levels == [level]
    judged = judge_answer(created, contract.operations["E16"], contract, [], sca)
    ours = [f for f in judged if f.rule == "BANK-sca-link-at-creation"]
    assert [(f.level, f.side) for f in ours] == [(level, BANK)]
    assert ours[0].quotes == (("5-6",) if level == "must" else ())


def test_the_traffic_judge_asks_no_link_where_the_profile_starts_sca_elsewhere() -> None:
    contract = load_contract()
    created = _created(201, STATUS_ONLY)
    for sca in (None, ScaSettings(start="creation")):
        judged = judge_answer(created, contract.operations["E1"], contract, [], sca)
        assert not [f for f in judged if f.rule == "BANK-sca-link-at-creation"]
    judged = judge_answer(created, contract.operations["E16"], contract, [], None)
    assert not [f for f in judged if f.rule == "BANK-sca-link-at-creation"]
    with_link = _created(201, REDIRECT)
    judged = judge_answer(
        with_link, contract.operations["E16"], contract, [], ScaSettings(start="creation")
    )
    assert not [f for f in judged if f.rule == "BANK-sca-link-at-creation"]
