"""``POST /_control/consents/{consentId}/age``: one consent made older (spec 8 ages), the others
and the server's clock untouched, so that scenarios running meanwhile are not affected."""

from __future__ import annotations

import pytest

from server import bodies
from server.payment_support import World
from server.test_consents_accounts import add_transactions, details, valid_consent


def _age(world: World, consent_id: str, days: object) -> dict:
    answer = world.browser.post(f"/_control/consents/{consent_id}/age", json={"days": days})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_an_aged_consent_expires_alone_and_the_clock_stays(world: World) -> None:
    psu, other = world.new_psu(), world.new_psu()
    old, young = valid_consent(world, psu), valid_consent(world, other)
    before = world.now()
    shown = _age(world, old, 181)
    assert shown["consentId"] == old
    assert shown["consentStatus"] == "expired"  # SCA older than 180 days (spec 8)
    assert abs((world.now() - before).total_seconds()) < 60  # the clock did not move
    refused = world.client.get("/v1/accounts", headers={"Consent-ID": old})
    assert refused.status_code == 401
    assert refused.json()["code"] == "CONSENT_EXPIRED"
    assert world.client.get("/v1/accounts", headers={"Consent-ID": young}).status_code == 200


def test_a_consent_aged_past_90_days_serves_details_only_with_the_psu(world: World) -> None:
    psu = world.new_psu()
    (created,) = add_transactions(world, psu, bodies.account_transaction(psu.account))
    consent_id = valid_consent(world, psu)
    assert _age(world, consent_id, 91)["consentStatus"] == "valid"
    refused = details(world, psu, created["id"])
    assert refused.status_code == 401
    assert refused.json()["code"] == "CONSENT_EXPIRED"
    present = details(world, psu, created["id"], **{"PSU-IP-Address": "192.0.2.1"})
    assert present.status_code == 200


@pytest.mark.parametrize("days", [-1, "91", True, None])
def test_the_age_control_wants_a_whole_number_of_days(world: World, days: object) -> None:
    psu = world.new_psu()
    consent_id = valid_consent(world, psu)
    answer = world.browser.post(f"/_control/consents/{consent_id}/age", json={"days": days})
    assert answer.status_code == 400
    assert answer.json()["code"] == "FORMAT_ERROR"


def test_the_age_control_answers_404_for_an_unknown_consent(world: World) -> None:
    answer = world.browser.post("/_control/consents/no-such-consent/age", json={"days": 1})
    assert answer.status_code == 404
