"""The demanding reading (``--demanding``: the server playing
``profiles/reference-server-demanding.toml``, whose ``readings`` are the strict rows of
``model/readings.py``): each place the server refuses more, requires more or answers in another
form where the spec is silent, through signed HTTP against it, and the same request against the
bundled (faithful) server where the contrast is the point."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.contract import Contract
from conformance.profile import DEMANDING_PROFILE, load_profile
from reference_server.app import Application
from reference_server.model.bank_style import style_of
from reference_server.model.readings import READINGS, STRICT, of_direction
from reference_server.transport.http import RunningServer, start
from server import bodies
from server import payment_support as support
from server.conftest import ErrorCapture
from server.payment_support import NDCT, World

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demanding_server() -> Iterator[RunningServer]:
    """One server for the module playing the demanding profile (every strict reading); stopped
    at the module's end."""
    running = start(Application(bank=style_of(load_profile(DEMANDING_PROFILE))))
    yield running
    running.stop()


@pytest.fixture
def world(
    demanding_server: RunningServer, server_errors: ErrorCapture, contract: Contract
) -> Iterator[World]:
    yield from support.world_on(demanding_server, server_errors, contract, checked=False)


@pytest.fixture
def faithful(
    full_server: RunningServer, server_errors: ErrorCapture, contract: Contract
) -> Iterator[World]:
    yield from support.world_on(full_server, server_errors, contract, checked=False)


def _corporate_agreement(
    server: World, owner: str = "customerNumber"
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A corporation (SCU), its account (SA) and its agreement (SAG), its owner named by
    ``owner`` (its customerNumber or customerId)."""
    client = server.client
    made = client.post("/v1/sandbox/customers", json=bodies.customer("CORPORATE")).json()
    corporation = made[0] if isinstance(made, list) else made
    account = client.post(
        "/v1/sandbox/accounts", json=bodies.account(corporation["customerNumber"])
    )
    assert account.status_code == 201, account.text
    agreement = client.post(
        "/v1/sandbox/agreements", json={"name": "Firma avtale", "owner": corporation[owner]}
    )
    assert agreement.status_code == 201, agreement.text
    return corporation, account.json(), agreement.json()


# -- the table ----------------------------------------------------------------------------------


def test_the_demanding_profile_says_what_the_demands_need_told() -> None:
    """Each strict reading with a profile key is what the demanding profile declares."""
    profile = load_profile(DEMANDING_PROFILE)
    assert profile.sca.start == "creation"  # sca-started-at-creation
    assert profile.setup_templates["SCA"]["status"] == "enabled"  # card-account-status-required
    assert profile.agreement_owner == "customerNumber"  # owner-as-customer-number
    keyed = {
        name
        for name, reading in READINGS.items()
        if name in of_direction(STRICT) and reading.profile_key
    }
    assert keyed == {
        "sca-started-at-creation",
        "card-account-status-required",
        "owner-as-customer-number",
    }


# -- one-engagement-per-account -----------------------------------------------------------------


def test_a_second_engagement_for_one_customer_and_account_is_a_conflict(
    world: World, faithful: World
) -> None:
    for server, second in ((faithful, 201), (world, 409)):
        psu = server.new_psu()
        _, account, agreement = _corporate_agreement(server)
        path = f"/v1/sandbox/agreements/{agreement['id']}/engagements"
        body = bodies.engagement(psu.customer_id, account["iban"])
        first = server.client.post(path, json=body)
        assert first.status_code == 201, first.text
        again = server.client.post(path, json=bodies.engagement(psu.customer_id, account["iban"]))
        assert again.status_code == second, again.text
    other = world.new_psu("Ola Nordmann")  # another customer, same account: a first engagement
    made = world.client.post(path, json=bodies.engagement(other.customer_id, account["iban"]))
    assert made.status_code == 201, made.text


# -- one-balance-per-type -----------------------------------------------------------------------


def test_two_balances_of_one_type_are_refused(world: World, faithful: World) -> None:
    twice = [
        {"balanceAmount": {"currency": "NOK", "amount": amount}, "balanceType": "expected"}
        for amount in (5, 7)
    ]
    for server, status in ((faithful, 200), (world, 400)):
        psu = server.new_psu()
        changed = server.client.put(
            f"/v1/sandbox/accounts/{psu.account['id']}/balances", json=twice
        )
        assert changed.status_code == status, changed.text
    refused = world.client.post(
        "/v1/sandbox/accounts", json=bodies.account(psu.customer_number, balances=twice)
    )
    assert refused.status_code == 400
    assert "a second balance of type expected" in refused.json()["message"]


# -- card-account-status-required ---------------------------------------------------------------


def test_a_card_account_needs_its_status(world: World, faithful: World) -> None:
    for server, status in ((faithful, 201), (world, 400)):
        psu = server.new_psu()
        made = server.client.post(
            "/v1/sandbox/card-accounts", json=bodies.card_account(psu.customer_number)
        )
        assert made.status_code == status, made.text
    given = world.client.post(
        "/v1/sandbox/card-accounts",
        json=bodies.card_account(psu.customer_number, status="enabled"),
    )
    assert given.status_code == 201, given.text


# -- owner-as-customer-number and numeric-sandbox-ids -------------------------------------------


def test_an_owner_reads_back_as_its_customer_number_and_ids_are_numeric(
    world: World, faithful: World
) -> None:
    corporation, account, agreement = _corporate_agreement(world)
    assert agreement["owner"] == corporation["customerNumber"]
    read = world.client.get(f"/v1/sandbox/agreements/{agreement['id']}").json()
    assert read["owner"] == corporation["customerNumber"]
    assert re.fullmatch(r"\d{12}", agreement["id"]) and re.fullmatch(r"\d{12}", account["id"])
    corporation, account, agreement = _corporate_agreement(faithful, "customerId")
    assert agreement["owner"] == corporation["customerId"]
    assert not re.fullmatch(r"\d+", agreement["id"])


def test_an_owner_named_by_its_customer_id_is_refused(world: World) -> None:
    made = world.client.post("/v1/sandbox/customers", json=bodies.customer("CORPORATE")).json()
    corporation = made[0] if isinstance(made, list) else made
    refused = world.client.post(
        "/v1/sandbox/agreements", json={"name": "Firma avtale", "owner": corporation["customerId"]}
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["code"] == "FORMAT_ERROR"


# -- sca-started-at-creation --------------------------------------------------------------------


def test_a_payment_starts_its_sca_at_creation_and_pa_is_already_started(
    world: World, faithful: World
) -> None:
    psu = world.new_psu()
    created = world.create("E16", world.ndct_body(psu), psu)
    assert created.status_code == 201, created.text
    assert "scaRedirect" in created.json()["_links"]
    payment_id = created.json()["paymentId"]
    again = world.authorise_payment(payment_id, psu)
    assert again.status_code == 409, again.text
    assert again.json()["tppMessages"][0]["code"] == "CONFLICT"
    psu = faithful.new_psu()
    plain = faithful.create("E16", faithful.ndct_body(psu), psu)
    assert "scaRedirect" not in plain.json()["_links"]
    started = faithful.authorise_payment(plain.json()["paymentId"], psu, NDCT)
    assert started.status_code == 201, started.text
