"""Object-level authorisation (issue 14): a payment, basket or consent belongs to the TPP whose
certificate made it; another TPP, with a valid certificate of its own, is answered as if it did
not exist. ``--shared-sandbox`` (``Application(shared_sandbox=True)``) turns that off, and so
does the fault ``tpp-ownership-unchecked``."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from conformance.contract import Contract
from conformance.signing import default_ca, generate_tpp_identity
from server.conftest import make_client
from server.payment_support import BASE_HEADERS, NDCT, World


@pytest.fixture
def other_tpp(world: World, contract: Contract) -> Iterator[httpx.Client]:
    """A second TPP: the same trusted CA, another PSD2 authorisation number."""
    identity = generate_tpp_identity(default_ca(), organisation_id="PSDNO-FSA-987654321")
    url = str(world.client.base_url)
    client = make_client(url, contract, identity=identity, headers=dict(BASE_HEADERS))
    yield client
    client.close()


def test_another_tpp_does_not_reach_a_payment_its_basket_or_a_consent(
    world: World, other_tpp: httpx.Client
) -> None:
    psu = world.new_psu()
    payment_id = world.payment(psu)
    status = f"/v1/payments/{NDCT}/{payment_id}/status"
    assert world.client.get(status).status_code == 200
    assert other_tpp.get(status).status_code == 404
    assert other_tpp.delete(f"/v1/payments/{NDCT}/{payment_id}").status_code == 404
    assert world.status(payment_id) == "RCVD"  # nothing was cancelled
    basket = other_tpp.post(
        "/v1/signing-baskets", json={"paymentIds": [payment_id]}, headers=psu.headers()
    )
    assert basket.status_code == 404  # the payment is unknown to the other TPP
    basket_id = world.basket_id([payment_id], psu)
    started = other_tpp.post(
        f"/v1/signing-baskets/{basket_id}/authorisations", headers=psu.headers()
    )
    assert started.status_code == 404


def test_a_shared_sandbox_lets_every_tpp_reach_everything(
    world: World, other_tpp: httpx.Client
) -> None:
    payment_id = world.payment(world.new_psu())
    world.app.ownership_checks = False
    try:
        assert other_tpp.get(f"/v1/payments/{NDCT}/{payment_id}/status").status_code == 200
    finally:
        world.app.ownership_checks = True


def test_the_fault_lets_another_tpp_reach_a_payment(world: World, other_tpp: httpx.Client) -> None:
    payment_id = world.payment(world.new_psu())
    kept = world.app.faults
    world.app.faults = frozenset({*kept, "tpp-ownership-unchecked"})
    try:
        assert other_tpp.get(f"/v1/payments/{NDCT}/{payment_id}/status").status_code == 200
    finally:
        world.app.faults = kept


def test_another_psu_of_the_same_tpp_does_not_reach_a_payment(world: World) -> None:
    owner, other = world.new_psu(), world.new_psu()
    payment_id = world.payment(owner)
    status = f"/v1/payments/{NDCT}/{payment_id}/status"
    assert world.client.get(status).status_code == 200  # PSU-ID is optional there
    assert world.client.get(status, headers={"PSU-ID": owner.customer_id}).status_code == 200
    refused = world.client.get(status, headers={"PSU-ID": other.customer_id})
    assert refused.status_code == 404
    kept = world.app.faults
    world.app.faults = frozenset({*kept, "psu-ownership-unchecked"})
    try:
        assert world.client.get(status, headers={"PSU-ID": other.customer_id}).status_code == 200
    finally:
        world.app.faults = kept
