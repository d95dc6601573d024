"""Consents (CC, CS, CA; spec 8) and the production account operations AL, AT, E8 (spec 2.8,
spec 7 rule 8, spec 8) through signed HTTP."""

from __future__ import annotations

from datetime import date, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx

from conformance.generate import factories
from server import bodies
from server import payment_support as support
from server.payment_support import World

#: A consent valid far beyond the days these tests move the clock (the SCA ages, not
#: validUntil).
FAR = date(9999, 12, 31)


def create_consent(world: World, psu: support.Psu, *ibans: str, **extra: object) -> httpx.Response:
    body = factories.consent_request(world.seed(), list(ibans or (psu.iban,)), valid_until=FAR)
    body.update(extra)
    return world.client.post("/v1/consents", json=body, headers={"PSU-ID": psu.customer_id})


def valid_consent(world: World, psu: support.Psu, *ibans: str) -> str:
    """A consent approved by ``psu`` on the SCA page; its id."""
    created = create_consent(world, psu, *ibans)
    assert created.status_code == 201, created.text
    consent_id = created.json()["consentId"]
    started = world.client.post(
        f"/v1/consents/{consent_id}/authorisations", headers={"PSU-ID": psu.customer_id}
    )
    assert started.status_code == 201, started.text
    assert world.approve(started.json()["_links"]["scaRedirect"]["href"], psu)["scaStatus"] == (
        "FINALISED"
    )
    return str(consent_id)


def add_transactions(world: World, psu: support.Psu, *items: dict) -> list[dict]:
    answer = world.client.post(
        f"/v1/sandbox/accounts/{psu.account['id']}/transactions", json=list(items)
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def details(world: World, psu: support.Psu, transaction_id: str, **headers: str) -> httpx.Response:
    return world.client.get(
        f"/v1/accounts/{psu.account['id']}/transactions/{transaction_id}", headers=headers
    )


# -- CC, CS, CA ----------------------------------------------------------------------------------


def test_consent_is_received_then_valid_after_sca(world: World, psu: support.Psu) -> None:
    created = create_consent(world, psu)
    assert created.status_code == 201, created.text
    consent = created.json()
    assert consent["consentStatus"] == "received"
    links = consent["_links"]
    assert links["status"]["href"] == f"/v1/consents/{consent['consentId']}/status"
    assert links["startAuthorisation"]["verbs"] == ["POST"]
    status = world.client.get(links["status"]["href"])
    assert status.json() == {"consentStatus": "received"}
    started = world.client.post(
        links["startAuthorisation"]["href"], headers={"PSU-ID": psu.customer_id}
    )
    assert started.status_code == 201
    assert started.json()["scaStatus"] == "STARTED"
    world.approve(started.json()["_links"]["scaRedirect"]["href"], psu)
    assert world.client.get(links["status"]["href"]).json() == {"consentStatus": "valid"}


def test_consent_cancelled_on_the_page_is_rejected(world: World, psu: support.Psu) -> None:
    consent_id = create_consent(world, psu).json()["consentId"]
    started = world.client.post(
        f"/v1/consents/{consent_id}/authorisations", headers={"PSU-ID": psu.customer_id}
    ).json()
    world.sca(started["_links"]["scaRedirect"]["href"], None, action="cancel")
    status = world.client.get(f"/v1/consents/{consent_id}/status").json()
    assert status == {"consentStatus": "rejected"}


def test_consent_for_an_account_not_offered_is_refused(world: World, psu: support.Psu) -> None:
    other = world.new_psu("Ola Nordmann")
    refused = create_consent(world, psu, other.iban)
    assert refused.status_code == 400
    assert refused.json()["code"] == "CONSENT_INVALID"


def test_consent_valid_until_in_the_past_is_refused(world: World, psu: support.Psu) -> None:
    yesterday = (world.today() - timedelta(days=1)).isoformat()
    refused = create_consent(world, psu, validUntil=yesterday)
    assert refused.status_code == 400
    assert refused.json()["code"] == "FORMAT_ERROR"


def test_unknown_consent_status_is_404(world: World) -> None:
    answer = world.client.get("/v1/consents/nope/status")
    assert answer.status_code == 404
    assert answer.json()["code"] == "CONSENT_UNKNOWN"


def test_valid_consent_cannot_be_authorised_again(world: World, psu: support.Psu) -> None:
    consent_id = valid_consent(world, psu)
    again = world.client.post(
        f"/v1/consents/{consent_id}/authorisations", headers={"PSU-ID": psu.customer_id}
    )
    assert again.status_code == 400
    assert again.json()["code"] == "RESOURCE_BLOCKED"


def test_consent_of_an_unknown_psu_is_confirmed_by_identifying_on_the_page(
    world: World, psu: support.Psu
) -> None:
    stranger = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
    body = factories.consent_request(world.seed(), [psu.iban], valid_until=FAR)
    created = world.client.post("/v1/consents", json=body, headers={"PSU-ID": stranger})
    assert created.status_code == 201
    consent_id = created.json()["consentId"]
    refused = world.client.post(
        f"/v1/consents/{consent_id}/authorisations", headers={"PSU-ID": stranger}
    )
    assert refused.status_code == 401
    world.approve(refused.json()["_links"]["scaRedirect"]["href"], psu)
    listed = world.client.get("/v1/accounts", headers={"Consent-ID": consent_id}).json()
    assert [item["resourceId"] for item in listed["accounts"]] == [psu.account["id"]]


def test_consent_ages_to_expired_after_180_days(world: World, psu: support.Psu) -> None:
    consent_id = valid_consent(world, psu)
    world.advance("P179D")
    status = world.client.get(f"/v1/consents/{consent_id}/status")
    assert status.json()["consentStatus"] == "valid"
    world.advance("P2D")
    assert world.client.get(f"/v1/consents/{consent_id}/status").json() == {
        "consentStatus": "expired"
    }
    refused = world.client.get("/v1/accounts", headers={"Consent-ID": consent_id})
    assert refused.status_code == 401
    assert refused.json()["code"] == "CONSENT_EXPIRED"


# -- AL ------------------------------------------------------------------------------------------


def test_account_list_shows_the_consented_accounts(world: World, psu: support.Psu) -> None:
    consent_id = valid_consent(world, psu)
    listed = world.client.get("/v1/accounts", headers={"Consent-ID": consent_id})
    assert listed.status_code == 200
    (account,) = listed.json()["accounts"]
    assert account["resourceId"] == psu.account["id"]
    assert account["iban"] == psu.iban and account["bban"] == psu.bban
    assert account["currency"] == "NOK"
    assert account["_links"]["transactions"]["verbs"] == ["GET"]


def test_account_list_finds_the_consent_through_the_psu(world: World, psu: support.Psu) -> None:
    valid_consent(world, psu)
    listed = world.client.get("/v1/accounts", headers={"PSU-ID": psu.customer_id})
    assert listed.status_code == 200
    assert len(listed.json()["accounts"]) == 1


def test_account_list_without_consent_is_401(world: World, psu: support.Psu) -> None:
    assert world.client.get("/v1/accounts").json()["code"] == "CONSENT_UNKNOWN"
    answer = world.client.get("/v1/accounts", headers={"PSU-ID": psu.customer_id})
    assert answer.status_code == 401
    unknown = world.client.get("/v1/accounts", headers={"Consent-ID": "nope"})
    assert unknown.status_code == 401
    assert unknown.json()["code"] == "CONSENT_UNKNOWN"


def test_account_list_with_a_received_consent_is_401(world: World, psu: support.Psu) -> None:
    consent_id = create_consent(world, psu).json()["consentId"]
    answer = world.client.get("/v1/accounts", headers={"Consent-ID": consent_id})
    assert answer.status_code == 401
    assert answer.json()["code"] == "CONSENT_INVALID"


def test_account_gone_from_the_backend_leaves_an_empty_list(world: World, psu: support.Psu) -> None:
    consent_id = valid_consent(world, psu)
    removed = world.browser.delete(f"/_control/accounts/{psu.account['id']}")
    assert removed.status_code == 204
    listed = world.client.get("/v1/accounts", headers={"Consent-ID": consent_id})
    assert listed.status_code == 200  # spec 7 rule 8: not 404
    assert listed.json() == {"accounts": []}
    assert world.browser.delete(f"/_control/accounts/{psu.account['id']}").status_code == 404


# -- AT ------------------------------------------------------------------------------------------


def test_transactions_list_shows_sandbox_transactions_as_debits(
    world: World, psu: support.Psu
) -> None:
    (created,) = add_transactions(world, psu, bodies.account_transaction(psu.account, amount=250))
    consent_id = valid_consent(world, psu)
    listed = world.client.get(
        f"/v1/accounts/{psu.account['id']}/transactions",
        params={"bookingStatus": "booked"},
        headers={"Consent-ID": consent_id},
    )
    assert listed.status_code == 200, listed.text
    document = listed.json()
    assert document["account"]["iban"] == psu.iban
    (item,) = document["transactions"]["booked"]
    assert item["transactionId"] == created["id"]
    assert item["transactionAmount"] == {"amount": "-250.00", "currency": "NOK"}
    assert "pending" not in document["transactions"]


def test_transactions_list_pages_by_200_and_its_links_say_so(
    world: World, psu: support.Psu
) -> None:
    items = [bodies.account_transaction(psu.account, amount=index + 1) for index in range(205)]
    add_transactions(world, psu, *items)
    consent_id = valid_consent(world, psu)
    path = f"/v1/accounts/{psu.account['id']}/transactions"
    first = world.client.get(
        path, params={"bookingStatus": "booked"}, headers={"Consent-ID": consent_id}
    ).json()["transactions"]
    assert len(first["booked"]) == 200  # spec 8
    links = first["_links"]
    assert "previous" not in links
    for name in ("self", "first", "next", "last"):
        assert parse_qs(urlsplit(links[name]["href"]).query)["limit"] == ["200"]
    following = world.client.get(links["next"]["href"], headers={"Consent-ID": consent_id})
    page = following.json()["transactions"]
    assert len(page["booked"]) == 5
    assert "next" not in page["_links"]
    assert parse_qs(urlsplit(page["_links"]["previous"]["href"]).query)["offset"] == ["0"]
    seen = {item["transactionId"] for item in first["booked"] + page["booked"]}
    assert len(seen) == 205


def test_transactions_list_honours_explicit_limit_and_offset(
    world: World, psu: support.Psu
) -> None:
    add_transactions(world, psu, *(bodies.account_transaction(psu.account) for _ in range(3)))
    consent_id = valid_consent(world, psu)
    answer = world.client.get(
        f"/v1/accounts/{psu.account['id']}/transactions",
        params={"bookingStatus": "both", "limit": "2", "offset": "2"},
        headers={"Consent-ID": consent_id},
    ).json()["transactions"]
    assert len(answer["booked"]) == 1
    assert answer["pending"] == []


def test_transactions_list_reaches_back_90_days_only(world: World, psu: support.Psu) -> None:
    today = world.today()
    old = bodies.account_transaction(
        psu.account,
        bookingDate=(today - timedelta(days=100)).isoformat(),
        valueDate=(today - timedelta(days=100)).isoformat(),
    )
    recent = bodies.account_transaction(psu.account)
    add_transactions(world, psu, old, recent)
    consent_id = valid_consent(world, psu)
    listed = world.client.get(
        f"/v1/accounts/{psu.account['id']}/transactions",
        params={"bookingStatus": "booked", "fromDate": (today - timedelta(days=200)).isoformat()},
        headers={"Consent-ID": consent_id},
    ).json()["transactions"]["booked"]
    assert [item["bookingDate"] for item in listed] == [recent["bookingDate"]]


def test_accepted_payments_show_as_pending(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu, instructedAmount={"amount": "75.00", "currency": "NOK"})
    world.authorised(psu, payment_id)
    consent_id = valid_consent(world, psu)
    path = f"/v1/accounts/{psu.account['id']}/transactions"
    pending = world.client.get(
        path, params={"bookingStatus": "pending"}, headers={"Consent-ID": consent_id}
    ).json()["transactions"]
    assert [item["transactionAmount"]["amount"] for item in pending["pending"]] == ["-75.00"]
    assert "booked" not in pending
    world.run_batch()
    world.run_batch()
    booked = world.client.get(
        path, params={"bookingStatus": "both"}, headers={"Consent-ID": consent_id}
    ).json()["transactions"]
    assert booked["pending"] == []
    assert [item["transactionAmount"]["amount"] for item in booked["booked"]] == ["-75.00"]


def test_transactions_of_an_account_the_consent_does_not_cover_are_403(
    world: World, psu: support.Psu
) -> None:
    other = world.new_psu("Ola Nordmann")
    consent_id = valid_consent(world, psu)
    answer = world.client.get(
        f"/v1/accounts/{other.account['id']}/transactions",
        params={"bookingStatus": "booked"},
        headers={"Consent-ID": consent_id},
    )
    assert answer.status_code == 403
    assert answer.json()["code"] == "CONSENT_INVALID"


def test_transactions_of_an_unknown_account_are_404(world: World, psu: support.Psu) -> None:
    consent_id = valid_consent(world, psu)
    answer = world.client.get(
        "/v1/accounts/nope/transactions",
        params={"bookingStatus": "booked"},
        headers={"Consent-ID": consent_id},
    )
    assert answer.status_code == 404


# -- E8 ------------------------------------------------------------------------------------------


def test_transaction_details_map_the_sandbox_fields(world: World, psu: support.Psu) -> None:
    item = bodies.account_transaction(psu.account, amount=1200)
    (created,) = add_transactions(world, psu, item)
    valid_consent(world, psu)
    answer = details(world, psu, created["id"], **{"PSU-IP-Address": "192.0.2.1"})
    assert answer.status_code == 200, answer.text
    shown = answer.json()["transactionsDetails"]
    assert shown["transactionId"] == created["id"]
    assert shown["transactionAmount"] == {"amount": "-1200.00", "currency": "NOK"}
    assert shown["bookingDate"] == item["bookingDate"]
    assert shown["valueDate"] == item["valueDate"]
    assert shown["creditorName"] == item["creditorName"]
    assert shown["creditorAccount"] == item["creditorAccount"]
    assert shown["debtorAccount"] == {"iban": psu.iban, "bban": psu.bban}
    assert shown["remittanceInformationUnstructured"] == item["remittanceInformationUnstructured"]
    assert shown["bankTransactionCode"] == item["bankTransactionCode"]
    assert "ultimateCreditor" not in shown  # spec 2.8: not offered
    assert "_links" not in shown


def test_transaction_details_of_a_booked_payment(world: World, psu: support.Psu) -> None:
    payment_id = world.payment(psu, instructedAmount={"amount": "10.00", "currency": "NOK"})
    world.authorised(psu, payment_id)
    world.run_batch()
    world.run_batch()
    consent_id = valid_consent(world, psu)
    (booked,) = world.client.get(
        f"/v1/accounts/{psu.account['id']}/transactions",
        params={"bookingStatus": "booked"},
        headers={"Consent-ID": consent_id},
    ).json()["transactions"]["booked"]
    shown = details(world, psu, booked["transactionId"]).json()["transactionsDetails"]
    assert shown["endToEndId"] == payment_id.replace("-", "")
    assert len(shown["endToEndId"]) <= 35


def test_transaction_details_in_a_corporate_context_carry_a_link(
    world: World, psu: support.Psu
) -> None:
    (created,) = add_transactions(world, psu, bodies.account_transaction(psu.account))
    valid_consent(world, psu)
    headers = {"PSU-Context": "CORPORATE", "PSU-Corporate-ID": "987654321"}
    shown = details(world, psu, created["id"], **headers).json()["transactionsDetails"]
    path = f"/v1/accounts/{psu.account['id']}/transactions/{created['id']}"
    assert shown["_links"]["transactionDetails"] == {"href": path, "verbs": ["GET"]}


def test_fifth_call_of_the_day_without_psu_ip_address_is_429(
    world: World, psu: support.Psu
) -> None:
    (created,) = add_transactions(world, psu, bodies.account_transaction(psu.account))
    valid_consent(world, psu)
    for _ in range(4):
        assert details(world, psu, created["id"]).status_code == 200
    refused = details(world, psu, created["id"])
    assert refused.status_code == 429
    assert refused.json()["code"] == "ACCESS_EXCEEDED"
    # with the PSU present the limit does not apply
    assert details(world, psu, created["id"], **{"PSU-IP-Address": "192.0.2.1"}).status_code == 200
    world.advance("P1D")  # a new day
    assert details(world, psu, created["id"]).status_code == 200


def test_consent_older_than_90_days_without_psu_is_expired(world: World, psu: support.Psu) -> None:
    (created,) = add_transactions(world, psu, bodies.account_transaction(psu.account))
    valid_consent(world, psu)
    world.advance("P89D")
    assert details(world, psu, created["id"]).status_code == 200
    world.advance("P2D")
    refused = details(world, psu, created["id"])
    assert refused.status_code == 401
    assert refused.json()["code"] == "CONSENT_EXPIRED"
    present = details(world, psu, created["id"], **{"PSU-IP-Address": "192.0.2.1"})
    assert present.status_code == 200


def test_transaction_details_of_an_unknown_transaction_are_404(
    world: World, psu: support.Psu
) -> None:
    valid_consent(world, psu)
    answer = details(world, psu, "nope")
    assert answer.status_code == 404
    assert answer.json()["code"] == "RESOURCE_UNKNOWN"


def test_transaction_details_without_any_consent_are_401(world: World, psu: support.Psu) -> None:
    (created,) = add_transactions(world, psu, bodies.account_transaction(psu.account))
    answer = details(world, psu, created["id"])
    assert answer.status_code == 401
    assert answer.json()["code"] == "CONSENT_UNKNOWN"
