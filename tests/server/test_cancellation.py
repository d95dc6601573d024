"""Cancelling a payment that was already authorised, through signed HTTP: where the bank asks for
it (the default, as the platform's banks do), DELETE answers 202 with a link, PCA starts the
cancellation's SCA, an approved SCA cancels the payment and a cancelled one leaves it as it was;
a bank playing ``[cancellation] sca = "never"`` cancels at once (issue 23 item 2)."""

from __future__ import annotations

import httpx

from conformance.contract import Contract
from reference_server.app import Application
from reference_server.model.bank_style import BankStyle
from reference_server.transport.http import start
from server import payment_support as support
from server.conftest import ErrorCapture
from server.payment_support import NDCT, World


def authorised(world: World, psu: support.Psu, operation: str = "E16") -> str:
    """A payment of ``psu`` whose SCA was approved (ACTC)."""
    payment_id = world.payment(psu, operation)
    started = world.authorise_payment(payment_id, psu)
    assert started.status_code == 201, started.text
    world.approve(started.json()["_links"]["scaRedirect"]["href"], psu)
    assert world.status(payment_id) == "ACTC"
    return payment_id


def start_cancellation(world: World, payment_id: str, psu: support.Psu) -> httpx.Response:
    return world.client.post(
        f"/v1/payments/{NDCT}/{payment_id}/cancellation-authorisations", headers=psu.headers()
    )


def test_a_received_payment_is_cancelled_at_once(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu)
    assert world.cancel(payment_id).status_code == 204
    assert world.status(payment_id) == "CANC"


def test_an_authorised_payment_waits_for_its_cancellations_sca(
    world: World, psu: support.Psu
) -> None:
    payment_id = authorised(world, psu)
    answer = world.cancel(payment_id)
    assert answer.status_code == 202, answer.text
    document = answer.json()
    assert document["transactionStatus"] == "ACTC"
    link = document["_links"]["startAuthorisation"]
    assert link["href"].endswith(f"/{payment_id}/cancellation-authorisations")
    assert world.status(payment_id) == "ACTC"
    world.run_batch()  # the batch holds it back while its cancellation waits
    assert world.status(payment_id) == "ACTC"
    started = start_cancellation(world, payment_id, psu)
    assert started.status_code == 201, started.text
    assert started.json()["scaStatus"] == "STARTED"
    back = world.approve(started.json()["_links"]["scaRedirect"]["href"], psu)
    assert back["scaStatus"] == "FINALISED"
    assert world.status(payment_id) == "CANC"


def test_a_cancelled_sca_leaves_the_payment_as_it_was(world: World, psu: support.Psu) -> None:
    payment_id = authorised(world, psu, "E17")
    assert world.cancel(payment_id).status_code == 202
    started = start_cancellation(world, payment_id, psu)
    final = world.sca(started.json()["_links"]["scaRedirect"]["href"], None, action="cancel")
    assert support.landing(final)["scaStatus"] == "FAILED"
    assert world.status(payment_id) == "ACTC"
    again = start_cancellation(world, payment_id, psu)  # it may be authorised once more
    assert again.status_code == 201, again.text


def test_no_cancellation_to_authorise_is_blocked(world: World, psu: support.Psu) -> None:
    payment_id = authorised(world, psu)
    answer = start_cancellation(world, payment_id, psu)
    assert answer.status_code == 400 and answer.json()["code"] == "RESOURCE_BLOCKED"
    received = world.payment(psu)
    assert start_cancellation(world, received, psu).status_code == 400


def test_a_bank_that_never_asks_cancels_an_authorised_payment_at_once(
    server_errors: ErrorCapture, contract: Contract
) -> None:
    running = start(Application(bank=BankStyle(cancellation_sca=False)))
    try:
        world = World(running.app, running.url, contract)
        psu = world.new_psu()
        payment_id = authorised(world, psu)
        assert world.cancel(payment_id).status_code == 204
        assert world.status(payment_id) == "CANC"
        world.close()
    finally:
        running.stop()
