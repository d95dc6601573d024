"""Signing baskets: E1 and E2 through signed HTTP (spec 2.4, 4.3 E1/E2, 7 rule 1, 8) and the
worst-case basket status (spec 2.4)."""

from __future__ import annotations

import pytest

from conformance.contract import Contract
from conformance.contract.releases import Release
from reference_server.app import Application
from reference_server.model.bank_style import BankStyle
from reference_server.model.payment_status import basket_status
from reference_server.transport.http import start
from server import payment_support as support
from server.payment_support import World

# -- the status rule (spec 2.4) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statuses", "worst", "best"),
    [
        (["RCVD", "RCVD"], "RCVD", "RCVD"),
        (["ACTC", "ACSC", "PDNG", "ACSP"], "ACTC", "ACTC"),
        (["ACTC", "RCVD"], "PATC", "ACTC"),
        (["ACTC", "RJCT"], "RJCT", "ACTC"),
        (["RCVD", "CANC"], "RJCT", "RCVD"),
        (["RJCT"], "RJCT", "RJCT"),
        ([], "RCVD", "RCVD"),
    ],
)
def test_basket_status_is_the_worst_case(statuses: list[str], worst: str, best: str) -> None:
    assert basket_status(statuses) == worst
    assert basket_status(statuses, best_case=True) == best


# -- E1 ------------------------------------------------------------------------------------------


def test_basket_of_received_payments_is_rcvd(world: World, psu: support.Psu) -> None:
    ids = [world.payment(psu), world.payment(psu, "E18")]
    answer = world.basket(ids, psu)
    assert answer.status_code == 201, answer.text
    basket = answer.json()
    assert basket["transactionStatus"] == "RCVD"
    assert answer.headers["Location"] == f"/v1/signing-baskets/{basket['basketId']}"
    assert basket["_links"]["startAuthorisation"] == {
        "href": f"/v1/signing-baskets/{basket['basketId']}/authorisations",
        "verbs": ["POST"],
    }


def test_ten_payments_are_accepted_eleven_refused(world: World, psu: support.Psu) -> None:
    ids = [world.payment(psu) for _ in range(11)]
    refused = world.basket(ids, psu)
    assert refused.status_code == 400
    assert refused.json()["tppMessages"][0]["path"] == "paymentIds"
    assert world.basket(ids[:10], psu).status_code == 201


def test_unknown_payment_id_is_404(world: World, psu: support.Psu) -> None:
    refused = world.basket([world.payment(psu), "no-such-payment"], psu)
    assert refused.status_code == 404
    assert refused.json()["code"] == "RESOURCE_UNKNOWN"
    assert "no-such-payment" in refused.json()["message"]


def test_periodic_payment_is_a_reference_mix(world: World, psu: support.Psu) -> None:
    ids = [world.payment(psu), world.payment(psu, "E17")]
    refused = world.basket(ids, psu)
    assert refused.status_code == 400  # spec 7 rule 1
    assert refused.json()["code"] == "REFERENCE_MIX_INVALID"
    # the tppMessages code is one of spec 7's list (REFERENCE_MIX_INVALID is not)
    assert refused.json()["tppMessages"][0]["code"] == "BAD_REQUEST"


def test_payment_already_in_a_basket_is_blocked(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu)
    world.basket_id([payment_id], psu)
    refused = world.basket([payment_id], psu)
    assert refused.status_code == 400
    assert refused.json()["code"] == "RESOURCE_BLOCKED"


def test_cancelled_payment_is_blocked(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu)
    world.cancel(payment_id)
    refused = world.basket([payment_id], psu)
    assert refused.status_code == 400
    assert refused.json()["code"] == "RESOURCE_BLOCKED"


def test_refused_basket_leaves_its_payments_free(world: World, psu: support.Psu) -> None:
    free = world.payment(psu)
    assert world.basket([free, world.payment(psu, "E17")], psu).status_code == 400
    assert world.basket([free], psu).status_code == 201


def test_repeated_id_counts_once(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu)
    basket_id = world.basket_id([payment_id, payment_id], psu)
    shown = world.browser.get(f"/_control/signing-baskets/{basket_id}").json()
    assert [item["paymentId"] for item in shown["payments"]] == [payment_id]
    schema = {
        "$ref": "https://psd2-conformance.invalid/schemas/types/payments.json#/$defs/SigningBasket"
    }
    assert not list(world.contract.validator(schema).iter_errors(shown))


def test_basket_status_follows_its_payments_on_every_read(world: World, psu: support.Psu) -> None:
    first, second = world.payment(psu), world.payment(psu)
    basket_id = world.basket_id([first, second], psu)
    assert world.basket_status(basket_id) == "RCVD"
    world.cancel(second)
    assert world.basket_status(basket_id) == "RJCT"


def test_partially_accepted_basket_is_patc(world: World, psu: support.Psu) -> None:
    single = world.create("E16", world.ndct_body(psu), psu, PSU_Context="PRIVATE").json()
    other = world.payment(psu)
    basket_id = world.basket_id([single["paymentId"], other], psu)
    # the first payment's own single-SCA (started at creation) finishes first
    world.approve(single["_links"]["scaRedirect"]["href"], psu)
    assert world.basket_status(basket_id) == "PATC"
    started = world.start_basket(basket_id, psu).json()
    world.approve(started["_links"]["scaRedirect"]["href"], psu)
    assert world.basket_status(basket_id) == "ACTC"


def test_ncbct_payments_can_be_signed_in_a_basket(world: World, psu: support.Psu) -> None:
    ids = [world.payment(psu, "E18"), world.payment(psu)]
    basket_id = world.authorised(psu, *ids)
    assert world.basket_status(basket_id) == "ACTC"
    assert world.status(ids[0], support.NCBCT) == "ACTC"


# -- E2 ------------------------------------------------------------------------------------------


def test_start_answers_201_started_with_links(world: World, psu: support.Psu) -> None:
    basket_id = world.basket_id([world.payment(psu)], psu)
    answer = world.start_basket(basket_id, psu)
    assert answer.status_code == 201, answer.text
    record = answer.json()
    assert record["scaStatus"] == "STARTED"  # spec 3
    links = record["_links"]
    assert links["self"]["verbs"] == ["GET"]
    assert links["scaRedirect"] == {"href": f"/sca/{record['authorisationId']}", "verbs": ["GET"]}
    assert world.browser.get(links["self"]["href"]).json()["scaStatus"] == "STARTED"


def test_start_for_an_unknown_basket_is_404(world: World, psu: support.Psu) -> None:
    answer = world.start_basket("no-such-basket", psu)
    assert answer.status_code == 404
    assert answer.json()["code"] == "RESOURCE_UNKNOWN"


def test_start_for_an_unknown_psu_is_401_with_sca_redirect(world: World, psu: support.Psu) -> None:
    basket_id = world.basket_id([world.payment(psu)], psu)
    stranger = support.Psu("3fa85f64-5717-4562-b3fc-2c963f66afa6", "0", "Nobody", psu.account)
    answer = world.start_basket(basket_id, stranger)
    assert answer.status_code == 401
    body = answer.json()
    assert body["status"] == 401
    assert body["_links"]["scaRedirect"]["verbs"] == ["GET"]
    assert body["tppMessages"][0]["code"] == "PSU_CREDENTIALS_INVALID"


def test_start_when_every_payment_was_cancelled_is_blocked(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu)
    basket_id = world.basket_id([payment_id], psu)
    world.cancel(payment_id)
    answer = world.start_basket(basket_id, psu)
    assert answer.status_code == 400
    assert answer.json()["code"] == "RESOURCE_BLOCKED"


def test_start_after_the_basket_was_authorised_is_blocked(world: World, psu: support.Psu) -> None:
    basket_id = world.authorised(psu, world.payment(psu))
    answer = world.start_basket(basket_id, psu)
    assert answer.status_code == 400
    assert answer.json()["code"] == "RESOURCE_BLOCKED"


def test_control_read_of_an_unknown_basket_is_404(world: World) -> None:
    assert world.browser.get("/_control/signing-baskets/nope").status_code == 404


def test_basket_reads_follow_the_worst_case(world: World, psu: support.Psu) -> None:
    first, second = world.payment(psu), world.payment(psu)
    basket_id = world.basket_id([first, second], psu)
    read = world.read_basket(basket_id, psu)
    assert read.status_code == 200, read.text
    document = read.json()
    assert document["basketId"] == basket_id and document["payments"] == [first, second]
    assert document["transactionStatus"] == "RCVD"
    assert document["_links"]["status"]["href"] == f"/v1/signing-baskets/{basket_id}/status"
    world.cancel(first)
    status = world.read_basket(basket_id, psu, "status")
    assert status.status_code == 200 and status.json() == {"transactionStatus": "RJCT"}


def test_basket_reads_refuse_another_psu_and_unknown_ones(world: World, psu: support.Psu) -> None:
    basket_id = world.basket_id([world.payment(psu)], psu)
    other = world.new_psu("Ola Nordmann")
    for what in ("", "status"):
        assert world.read_basket(basket_id, other, what).status_code == 404
        answer = world.read_basket("nope", psu, what)
        assert answer.status_code == 404 and answer.json()["code"] == "RESOURCE_UNKNOWN"


def test_a_bank_on_an_older_release_refuses_ncbct_in_a_basket(contract: Contract) -> None:
    bank = BankStyle(release=Release.parse("1.21.18"))
    running = start(Application(bank=bank))
    try:
        world = World(running.app, running.url, contract)
        psu = world.new_psu()
        refused = world.basket([world.payment(psu), world.payment(psu, "E18")], psu)
        assert refused.status_code == 400 and refused.json()["code"] == "PRODUCT_INVALID"
        assert world.basket([world.payment(psu), world.payment(psu)], psu).status_code == 201
        world.close()
    finally:
        running.stop()
