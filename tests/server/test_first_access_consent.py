"""A played bank whose consent is given at the first account access (``[consent] model =
"first-access"``): no consent endpoint; a TPP session's first access to AL, AT or E8 is answered
401 with ``_links.scaRedirect`` (spec 5 item 6), the PSU's SCA gives the consent of the session,
and the session's requests are served; spec 8's limits hold on it. Through signed HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from conformance.contract import Contract
from conformance.generate import factories
from reference_server.app import Application
from reference_server.model.bank_style import BankStyle
from reference_server.transport.http import RunningServer, start
from server import bodies
from server import payment_support as support
from server.conftest import make_client
from server.payment_support import World

#: The session every test's consent is bound to (BASE_HEADERS sends "session-1" otherwise).
SESSION = "first-access-session"


@pytest.fixture(scope="module")
def first_access_server() -> Iterator[RunningServer]:
    """The module's server playing a first-access bank, stopped at the module's end."""
    running = start(Application(bank=BankStyle(consent_model="first-access")))
    yield running
    running.stop()


@pytest.fixture
def bank(first_access_server: RunningServer, contract: Contract) -> Iterator[World]:
    running = first_access_server
    running.app.reset()
    made = World(running.app, running.url, contract)
    yield made
    made.close()


def accounts(world: World, psu: support.Psu, session: str = SESSION) -> httpx.Response:
    return world.client.get(
        "/v1/accounts", headers={"PSU-ID": psu.customer_id, "TPP-Session-ID": session}
    )


def given(world: World, psu: support.Psu, session: str = SESSION) -> httpx.Response:
    """The session's first access, answered 401 with the SCA link, then the PSU's approval."""
    first = accounts(world, psu, session)
    assert first.status_code == 401, first.text
    assert world.approve(first.json()["_links"]["scaRedirect"]["href"], psu)["scaStatus"] == (
        "FINALISED"
    )
    return first


def test_the_first_access_is_answered_401_with_the_sca_link(bank: World) -> None:
    psu = bank.new_psu()
    first = accounts(bank, psu)
    assert first.status_code == 401
    document = first.json()
    assert document["code"] == "CONSENT_UNKNOWN"
    assert document["_links"]["scaRedirect"]["verbs"] == ["GET"]
    assert accounts(bank, psu).status_code == 401  # no SCA yet: still no consent


def test_after_sca_the_session_is_served_the_psus_accounts(bank: World) -> None:
    psu = bank.new_psu()
    given(bank, psu)
    listed = accounts(bank, psu)
    assert listed.status_code == 200, listed.text
    assert [item["resourceId"] for item in listed.json()["accounts"]] == [psu.account["id"]]
    transactions = bank.client.get(
        f"/v1/accounts/{psu.account['id']}/transactions",
        params={"bookingStatus": "booked"},
        headers={"PSU-ID": psu.customer_id, "TPP-Session-ID": SESSION},
    )
    assert transactions.status_code == 200, transactions.text


def test_the_consent_is_bound_to_its_session_tpp_and_psu(
    bank: World, first_access_server: RunningServer
) -> None:
    psu = bank.new_psu()
    given(bank, psu)
    assert accounts(bank, psu, "another-session").status_code == 401
    other = bank.new_psu("Ola Nordmann")
    assert accounts(bank, other).status_code == 401  # another PSU in the same session
    with make_client(first_access_server.url, bank.contract) as sessionless:
        without = sessionless.get("/v1/accounts", headers={"PSU-ID": psu.customer_id})
    assert without.status_code == 400
    assert without.json()["code"] == "HTTP_HEADER_REQUIRED"


def test_e8_reads_through_the_sessions_consent(bank: World) -> None:
    psu = bank.new_psu()
    answer = bank.client.post(
        f"/v1/sandbox/accounts/{psu.account['id']}/transactions",
        json=[bodies.account_transaction(psu.account, amount=250)],
    )
    assert answer.status_code == 201, answer.text
    given(bank, psu)
    transaction_id = answer.json()[0]["id"]
    path = f"/v1/accounts/{psu.account['id']}/transactions/{transaction_id}"
    served = bank.client.get(path, headers={"TPP-Session-ID": SESSION})
    assert served.status_code == 200, served.text
    elsewhere = bank.client.get(path, headers={"TPP-Session-ID": "another-session"})
    assert elsewhere.status_code == 401
    assert "scaRedirect" in elsewhere.json()["_links"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/consents"),
        ("GET", "/v1/consents/some-id"),
        ("GET", "/v1/consents/some-id/status"),
        ("POST", "/v1/consents/some-id/authorisations"),
        ("DELETE", "/v1/consents/some-id"),
    ],
)
def test_there_is_no_consent_endpoint(bank: World, method: str, path: str) -> None:
    psu = bank.new_psu()
    body = factories.consent_request(bank.seed(), [psu.iban]) if method == "POST" else None
    answer = bank.client.request(method, path, json=body, headers={"PSU-ID": psu.customer_id})
    assert answer.status_code == 404, answer.text
    assert answer.json()["code"] == "RESOURCE_UNKNOWN"


def test_an_sca_older_than_180_days_is_renewed_through_a_new_redirect(bank: World) -> None:
    psu = bank.new_psu()
    given(bank, psu)
    aged = bank.browser.post(f"/_control/consents/{SESSION}/age", json={"days": 181})
    assert aged.status_code == 200, aged.text
    assert aged.json()["consentStatus"] == "expired"
    refused = accounts(bank, psu)
    assert refused.status_code == 401
    assert refused.json()["code"] == "CONSENT_EXPIRED"  # spec 8: renewal of SCA every 180 days
    bank.approve(refused.json()["_links"]["scaRedirect"]["href"], psu)
    assert accounts(bank, psu).status_code == 200


def test_e8_without_the_psu_on_a_consent_older_than_90_days_is_refused(bank: World) -> None:
    psu = bank.new_psu()
    answer = bank.client.post(
        f"/v1/sandbox/accounts/{psu.account['id']}/transactions",
        json=[bodies.account_transaction(psu.account, amount=250)],
    )
    given(bank, psu)
    path = f"/v1/accounts/{psu.account['id']}/transactions/{answer.json()[0]['id']}"
    assert bank.client.get(path, headers={"TPP-Session-ID": SESSION}).status_code == 200
    bank.browser.post(f"/_control/consents/{SESSION}/age", json={"days": 91})
    refused = bank.client.get(path, headers={"TPP-Session-ID": SESSION})
    assert refused.status_code == 401
    assert refused.json()["code"] == "CONSENT_EXPIRED"
    with_psu = bank.client.get(
        path, headers={"TPP-Session-ID": SESSION, "PSU-IP-Address": "192.0.2.10"}
    )
    assert with_psu.status_code == 200  # spec 8's 90 days bind only calls without the PSU
