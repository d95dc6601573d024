"""A payment creation under ``[sca] start = "creation"`` that carries no SCA link fails the
creation's positive scenario (spec 5 item 6, must with a redirect; should with the profile's
decoupled approach), instead of only blocking every scenario whose set-up needs the link."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from unit.test_checks import exchange

from conformance.checks import ConformanceFailure
from conformance.exchange import Exchange
from conformance.findings import collecting_findings
from conformance.profile import ScaSettings
from conformance.runners.positive import check_sca_link_at_creation


def _created(status: int, links: dict[str, Any]) -> Exchange:
    return exchange(status, {"paymentId": "p-1", "transactionStatus": "RCVD", "_links": links})


def _ctx(**sca: Any) -> Any:
    return SimpleNamespace(profile=SimpleNamespace(sca=ScaSettings(**sca)))


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
