"""The SCA redirect end to end (spec 5 items 6 and 7, spec 3): payments, a basket, the authorisation
start, the redirect page, the PSU's customerNumber, the way back to TPP-Redirect-URI, and every
status moved accordingly."""

from __future__ import annotations

import pytest

from conformance.contract import Contract
from server import payment_support as support
from server.payment_support import World


@pytest.fixture
def started(world: World, psu: support.Psu) -> dict:
    """A basket of two payments whose authorisation has started; its ids and redirect."""
    ids = [world.payment(psu), world.payment(psu, "E18")]
    basket_id = world.basket_id(ids, psu)
    record = world.start_basket(basket_id, psu).json()
    return {
        "ids": ids,
        "basket": basket_id,
        "record": record,
        "redirect": record["_links"]["scaRedirect"]["href"],
    }


def test_full_basket_flow_lands_on_the_tpp_with_finalised_and_moves_every_status(
    world: World, psu: support.Psu, started: dict
) -> None:
    page = world.browser.get(started["redirect"])
    assert page.status_code == 200
    assert page.headers["Content-Type"].startswith("text/html")
    assert started["basket"] in page.text
    assert f'action="{started["redirect"]}"' in page.text
    final = world.browser.post(
        started["redirect"], data={"customerNumber": psu.customer_number, "action": "approve"}
    )
    assert final.status_code == 303
    assert support.landing(final) == {
        "state": "s1",  # the TPP's own query is kept
        "authorisationId": started["record"]["authorisationId"],
        "scaStatus": "FINALISED",
    }
    first, second = started["ids"]
    assert world.status(first) == "ACTC"
    assert world.status(second, support.NCBCT) == "ACTC"
    assert world.basket_status(started["basket"]) == "ACTC"
    status = world.browser.get(started["record"]["_links"]["self"]["href"])
    assert status.json()["scaStatus"] == "FINALISED"
    schema = {
        "$ref": "https://psd2-conformance.invalid/schemas/types/payments.json#/$defs/"
        "ScaStatusResponse"
    }
    assert not list(world.contract.validator(schema).iter_errors(status.json()))


def test_wrong_customer_number_shows_the_page_again_and_finalises_nothing(
    world: World, started: dict
) -> None:
    other = world.new_psu("Ola Nordmann")
    answer = world.sca(started["redirect"], other.customer_number)
    assert answer.status_code == 200
    assert "PSU_CREDENTIALS_INVALID" in answer.text
    assert 'name="customerNumber"' in answer.text
    unknown = world.sca(started["redirect"], "99999999")
    assert "PSU_CREDENTIALS_INVALID" in unknown.text
    assert world.status(started["ids"][0]) == "RCVD"
    assert world.basket_status(started["basket"]) == "RCVD"
    status = world.browser.get(started["record"]["_links"]["self"]["href"]).json()
    assert status["scaStatus"] == "STARTED"


def test_cancel_on_the_page_fails_the_authorisation_and_rejects_the_payments(
    world: World, started: dict
) -> None:
    final = world.sca(started["redirect"], None, action="cancel")
    assert final.status_code == 303
    assert support.landing(final)["scaStatus"] == "FAILED"
    assert world.status(started["ids"][0]) == "RJCT"
    assert world.basket_status(started["basket"]) == "RJCT"


def test_payment_cancelled_meanwhile_stays_cancelled(
    world: World, psu: support.Psu, started: dict
) -> None:
    world.cancel(started["ids"][0])
    world.approve(started["redirect"], psu)
    assert world.status(started["ids"][0]) == "CANC"
    assert world.status(started["ids"][1], support.NCBCT) == "ACTC"
    assert world.basket_status(started["basket"]) == "RJCT"  # worst case: the cancelled one


def test_an_ended_authorisation_cannot_be_used_again(
    world: World, psu: support.Psu, started: dict
) -> None:
    world.approve(started["redirect"], psu)
    page = world.browser.get(started["redirect"])
    assert page.status_code == 200
    assert 'id="scaStatus">FINALISED' in page.text
    assert 'name="customerNumber"' not in page.text
    again = world.browser.post(
        started["redirect"], data={"customerNumber": psu.customer_number, "action": "cancel"}
    )
    assert again.status_code == 409
    assert world.status(started["ids"][0]) == "ACTC"


def test_missing_action_is_refused_on_the_page(
    world: World, psu: support.Psu, started: dict
) -> None:
    answer = world.browser.post(started["redirect"], data={"customerNumber": psu.customer_number})
    assert answer.status_code == 400
    assert "FORMAT_ERROR" in answer.text


def test_unknown_authorisation_is_404(world: World) -> None:
    assert world.browser.get("/sca/no-such-authorisation").status_code == 404
    refused = world.browser.post("/sca/no-such-authorisation", data={"action": "approve"})
    assert refused.status_code == 404
    assert world.browser.get("/sca/no-such-authorisation/status").status_code == 404


def test_fields_sent_as_json_work_like_the_form(
    world: World, psu: support.Psu, started: dict
) -> None:
    """A script (the suite's reference SCA step) may send the same fields as a JSON object."""
    final = world.browser.post(
        started["redirect"], json={"customerNumber": psu.customer_number, "action": "approve"}
    )
    assert final.status_code == 303
    assert support.landing(final)["scaStatus"] == "FINALISED"


def test_unknown_psu_identifies_on_the_page(world: World, psu: support.Psu) -> None:
    basket_id = world.basket_id([world.payment(psu)], psu)
    stranger = support.Psu("3fa85f64-5717-4562-b3fc-2c963f66afa6", "0", "Nobody", psu.account)
    refused = world.start_basket(basket_id, stranger)
    assert refused.status_code == 401
    redirect = refused.json()["_links"]["scaRedirect"]["href"]
    status = world.browser.get(f"{redirect}/status").json()
    assert status["scaStatus"] == "RECEIVED"
    assert "PSU_CREDENTIALS_INVALID" in world.sca(redirect, "99999999").text
    assert world.approve(redirect, psu)["scaStatus"] == "FINALISED"
    assert world.basket_status(basket_id) == "ACTC"


def test_redirect_uri_without_query_gets_one(world: World, psu: support.Psu) -> None:
    basket_id = world.basket_id([world.payment(psu)], psu)
    record = world.start_basket(
        basket_id, psu, **{"TPP-Redirect-URI": "https://tpp.example/done"}
    ).json()
    final = world.sca(record["_links"]["scaRedirect"]["href"], psu.customer_number)
    assert final.headers["Location"] == (
        f"https://tpp.example/done?authorisationId={record['authorisationId']}&scaStatus=FINALISED"
    )


def test_sca_pages_escape_what_they_show(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu, creditorName="<script>alert(1)</script>")
    record = world.authorise_payment(payment_id, psu).json()
    page = world.browser.get(record["_links"]["scaRedirect"]["href"])
    assert "<script>" not in page.text
    assert "&lt;script&gt;" in page.text


def test_the_page_says_in_words_what_is_authorised_by_whom_and_what_each_button_does(
    world: World, psu: support.Psu, started: dict
) -> None:
    page = world.browser.get(started["redirect"]).text
    # the payments in words: creditor, amount with its currency, status name beside the code
    assert "Received (<code>RCVD</code>)" in page
    assert '<td class="amount">' in page and " NOK</td>" in page
    # the PSU whose customer number the sandbox expects
    assert f"sandbox customer number <code>{psu.customer_number}</code>" in page
    assert "Expected PSU: <strong>" in page
    # what Approve and Cancel do
    assert "<strong>Approve</strong>: the payments still Received (RCVD) become Accepted" in page
    assert "<strong>Cancel</strong>: the payments still Received (RCVD) are Rejected" in page
    world.sca(started["redirect"], psu.customer_number)
    ended = world.browser.get(started["redirect"]).text
    assert '<strong id="scaStatus">FINALISED</strong> (finalised (approved))' in ended
    assert "Accepted, technical validation (<code>ACTC</code>)" in ended


NOK = "https://tpp.example/failed"


def _cancelled_landing(world: World, psu: support.Psu, **headers: str) -> str:
    """Start a payment's SCA with ``headers``, cancel it on the page: where the PSU is sent."""
    payment_id = world.payment(psu)
    started = world.client.post(
        f"/v1/payments/{support.NDCT}/{payment_id}/authorisations",
        headers=psu.headers(**headers),
    )
    assert started.status_code == 201, started.text
    final = world.sca(started.json()["_links"]["scaRedirect"]["href"], None, action="cancel")
    assert final.status_code == 303, final.text
    return str(final.headers["Location"])


def test_a_failed_sca_returns_to_the_nok_redirect_uri_with_an_error(
    world: World, psu: support.Psu
) -> None:
    location = _cancelled_landing(world, psu, **{"TPP-Nok-Redirect-URI": NOK})
    assert location.startswith(f"{NOK}?") and "error=access_denied" in location
    assert "scaStatus=FAILED" in location
    without = _cancelled_landing(world, psu)  # no NOK address: the TPP-Redirect-URI, marked
    assert without.startswith(support.REDIRECT_URI) and "error=access_denied" in without


def test_the_nok_redirect_ignored_fault_returns_to_the_redirect_uri(contract: Contract) -> None:
    running = support.start_faulty("nok-redirect-ignored")
    try:
        faulty = World(running.app, running.url, contract)
        location = _cancelled_landing(faulty, faulty.new_psu(), **{"TPP-Nok-Redirect-URI": NOK})
        assert location.startswith(support.REDIRECT_URI)
        faulty.close()
    finally:
        running.stop()
