"""The consent lifecycle (CG read, CD delete: terminatedByTpp, refused on AL, AT and E8), the
consent models a played bank takes (``[consent] model``), and the response headers a certifier
checks (X-Request-ID, Location, ASPSP-SCA-Approach) with their faults, through signed HTTP."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from conformance.contract import Contract
from conformance.generate import factories
from reference_server.app import Application
from reference_server.model.bank_style import BankStyle
from reference_server.transport.http import RunningServer, start
from server import payment_support as support
from server.payment_support import World

#: A server playing a bank of consent ``model`` with ``faults``: ``servers(model, faults)``.
Servers = Callable[..., RunningServer]


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    """The module's servers, one per bank (consent model and faults) asked for, started on
    first use and stopped at the module's end."""
    started: dict[tuple[str, tuple[str, ...]], RunningServer] = {}

    def server(model: str = "detailed", faults: tuple[str, ...] = ()) -> RunningServer:
        if (model, faults) not in started:
            bank = BankStyle(consent_model=model)
            started[model, faults] = start(Application(bank=bank, faults=faults))
        return started[model, faults]

    yield server
    for running in started.values():
        running.stop()


def _world_on(running: RunningServer, contract: Contract) -> Iterator[World]:
    running.app.reset()
    made = World(running.app, running.url, contract)
    yield made
    made.close()


def consent(world: World, psu: support.Psu, *, model: str = "detailed") -> httpx.Response:
    body = factories.consent_request(world.seed(), [psu.iban], model=model)
    return world.client.post("/v1/consents", json=body, headers={"PSU-ID": psu.customer_id})


def authorised(world: World, psu: support.Psu, *, model: str = "detailed") -> str:
    """A consent of ``model`` the PSU approved on the SCA page; its id."""
    created = consent(world, psu, model=model)
    assert created.status_code == 201, created.text
    consent_id = str(created.json()["consentId"])
    started = world.client.post(
        f"/v1/consents/{consent_id}/authorisations", headers={"PSU-ID": psu.customer_id}
    )
    assert started.status_code == 201, started.text
    world.approve(started.json()["_links"]["scaRedirect"]["href"], psu)
    return consent_id


def read(world: World, consent_id: str) -> dict[str, Any]:
    answer = world.client.get(f"/v1/consents/{consent_id}")
    assert answer.status_code == 200, answer.text
    document: dict[str, Any] = answer.json()
    return document


# -- CG, CD -------------------------------------------------------------------------------------


def test_an_authorised_consent_reads_back_as_asked(world: World) -> None:
    psu = world.new_psu()
    consent_id = authorised(world, psu)
    document = read(world, consent_id)
    assert document["consentStatus"] == "valid"
    assert document["recurringIndicator"] is True
    assert document["frequencyPerDay"] == 4
    assert [item["iban"] for item in document["access"]["accounts"]] == [psu.iban]
    assert document["_links"]["self"]["verbs"] == ["GET", "DELETE"]


def test_a_deleted_consent_is_terminated_and_gives_access_to_nothing(world: World) -> None:
    psu = world.new_psu()
    consent_id = authorised(world, psu)
    headers = {"PSU-ID": psu.customer_id, "Consent-ID": consent_id}
    assert world.client.get("/v1/accounts", headers=headers).status_code == 200
    deleted = world.client.delete(f"/v1/consents/{consent_id}")
    assert deleted.status_code == 204 and deleted.content == b""
    status = world.client.get(f"/v1/consents/{consent_id}/status").json()
    assert status == {"consentStatus": "terminatedByTpp"}
    assert read(world, consent_id)["consentStatus"] == "terminatedByTpp"
    refused = world.client.get("/v1/accounts", headers=headers)
    assert refused.status_code == 401
    assert refused.json()["code"] == "CONSENT_INVALID"
    assert world.client.delete(f"/v1/consents/{consent_id}").status_code == 204  # again: 204


def test_an_unknown_consent_cannot_be_read_or_deleted(world: World) -> None:
    assert world.client.get("/v1/consents/nope").status_code == 404
    assert world.client.delete("/v1/consents/nope").json()["code"] == "CONSENT_UNKNOWN"


def test_consent_termination_ignored_keeps_the_consent_valid(
    contract: Contract, servers: Servers
) -> None:
    for world in _world_on(servers(faults=("consent-termination-ignored",)), contract):
        psu = world.new_psu()
        consent_id = authorised(world, psu)
        assert world.client.delete(f"/v1/consents/{consent_id}").status_code == 204
        assert read(world, consent_id)["consentStatus"] == "valid"


# -- consent models -------------------------------------------------------------------------------


def test_a_bank_offered_bank_takes_empty_lists_and_lists_the_psus_choice(
    contract: Contract,
    servers: Servers,
) -> None:
    for world in _world_on(servers("bank-offered"), contract):
        psu = world.new_psu()
        refused = consent(world, psu)  # detailed: names the account
        assert refused.status_code == 400 and refused.json()["code"] == "FORMAT_ERROR"
        assert consent(world, psu, model="global").status_code == 400
        consent_id = authorised(world, psu, model="bank-offered")
        access = read(world, consent_id)["access"]
        assert [item["iban"] for item in access["accounts"]] == [psu.iban]
        assert access["transactions"] == access["accounts"]


def test_a_global_bank_takes_all_psd2_only(contract: Contract, servers: Servers) -> None:
    for world in _world_on(servers("global"), contract):
        psu = world.new_psu()
        assert consent(world, psu).status_code == 400
        assert consent(world, psu, model="bank-offered").status_code == 400
        consent_id = authorised(world, psu, model="global")
        assert read(world, consent_id)["access"] == {"allPsd2": "allAccounts"}
        listed = world.client.get(
            "/v1/accounts", headers={"PSU-ID": psu.customer_id, "Consent-ID": consent_id}
        )
        assert [item["iban"] for item in listed.json()["accounts"]] == [psu.iban]


def test_the_bundled_bank_takes_every_model(world: World) -> None:
    psu = world.new_psu()
    for model in ("detailed", "bank-offered", "global"):
        assert consent(world, psu, model=model).status_code == 201, model


# -- response headers ---------------------------------------------------------------------------


def test_a_creation_echoes_x_request_id_and_names_location_and_approach(world: World) -> None:
    psu = world.new_psu()
    created = consent(world, psu)
    assert created.status_code == 201
    assert created.headers["X-Request-ID"] == created.request.headers["X-Request-ID"]
    assert created.headers["Location"] == f"/v1/consents/{created.json()['consentId']}"
    assert created.headers["ASPSP-SCA-Approach"] == "REDIRECT"
    status = world.client.get(f"/v1/consents/{created.json()['consentId']}/status")
    assert "ASPSP-SCA-Approach" not in status.headers  # a read leads to no authorisation


def test_a_decoupled_bank_names_its_approach(contract: Contract) -> None:
    running = start(Application(bank=BankStyle(sca_decoupled=True)))
    try:
        for world in _world_on(running, contract):
            created = consent(world, world.new_psu())
            assert created.headers["ASPSP-SCA-Approach"] == "DECOUPLED"
    finally:
        running.stop()


@pytest.mark.parametrize(
    ("fault", "header", "value"),
    [
        ("request-id-not-echoed", "X-Request-ID", None),
        ("location-missing", "Location", None),
        ("sca-approach-header-wrong", "ASPSP-SCA-Approach", "EMBEDDED"),
    ],
)
def test_each_header_fault_breaks_its_header(
    contract: Contract, servers: Servers, fault: str, header: str, value: str | None
) -> None:
    for world in _world_on(servers(faults=(fault,)), contract):
        created = consent(world, world.new_psu())
        assert created.status_code == 201
        assert created.headers.get(header) == value
