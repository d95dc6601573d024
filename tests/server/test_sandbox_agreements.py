"""SAG, E14, E6, E13 (spec 2.9, spec 4.3 E6/E13/E14) through signed HTTP."""

from __future__ import annotations

import httpx
import pytest

from reference_server.app import Application
from reference_server.model import sandbox_data
from reference_server.views import sandbox_views as views
from server import bodies


def create(client: httpx.Client, path: str, body: object) -> dict:
    response = client.post(path, json=body)
    assert response.status_code == 201, response.text
    return response.json()


@pytest.fixture
def corporation(client: httpx.Client) -> dict:
    """A corporation with an account and an agreement it owns, and a PSU (private customer)."""
    corp = create(client, "/v1/sandbox/customers", bodies.customer("CORPORATE", "Firma AS"))
    account = create(client, "/v1/sandbox/accounts", bodies.account(corp["customerNumber"]))
    agreement = create(
        client, "/v1/sandbox/agreements", {"name": "Firma avtale", "owner": corp["customerId"]}
    )
    psu = create(client, "/v1/sandbox/customers", bodies.customer(name="Ansatt"))
    return {"customer": corp, "account": account, "agreement": agreement, "psu": psu}


def engagements_path(agreement: dict) -> str:
    return f"/v1/sandbox/agreements/{agreement['id']}/engagements"


def test_agreement_is_created_and_read(client: httpx.Client, corporation: dict) -> None:
    agreement = corporation["agreement"]
    assert agreement["owner"] == corporation["customer"]["customerId"]
    assert agreement["engagements"] == []
    read = client.get(f"/v1/sandbox/agreements/{agreement['id']}")
    assert read.status_code == 200
    assert read.json() == agreement


def test_private_agreement_can_be_read(client: httpx.Client) -> None:
    customer = create(client, "/v1/sandbox/customers", bodies.customer())
    (summary,) = customer["agreements"]
    read = client.get(f"/v1/sandbox/agreements/{summary['id']}")
    assert read.status_code == 200
    assert "owner" not in read.json()


@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "x", "owner": 5}])
def test_agreement_body_is_validated(client: httpx.Client, body: dict) -> None:
    assert client.post("/v1/sandbox/agreements", json=body).status_code == 400


def test_agreement_owner_must_be_a_corporate_customer(client: httpx.Client) -> None:
    person = create(client, "/v1/sandbox/customers", bodies.customer())
    for owner in (person["customerId"], "no-such-customer"):
        response = client.post("/v1/sandbox/agreements", json={"name": "x", "owner": owner})
        assert response.status_code == 400
        assert "owner" in response.json()["message"]


def test_unknown_agreement_is_404(client: httpx.Client) -> None:
    assert client.get("/v1/sandbox/agreements/nope").status_code == 404
    assert client.get("/v1/sandbox/agreements/nope/engagements/x").status_code == 404
    body = bodies.engagement("x", "NO9386011117947")
    assert client.post("/v1/sandbox/agreements/nope/engagements", json=body).status_code == 404


def test_engagement_is_added_and_read(
    client: httpx.Client, corporation: dict, app: Application
) -> None:
    agreement, account, psu = corporation["agreement"], corporation["account"], corporation["psu"]
    body = bodies.engagement(psu["customerId"], account["iban"], ("VIEW", "REGISTER"))
    created = create(client, engagements_path(agreement), body)
    assert {key: created[key] for key in body} == body
    read = client.get(f"{engagements_path(agreement)}/{created['id']}")
    assert read.status_code == 200
    assert read.json() == created
    shown = client.get(f"/v1/sandbox/agreements/{agreement['id']}").json()["engagements"]
    assert shown == [
        {
            "id": created["id"],
            "customer": psu["customerId"],
            "account": {"bban": account["bban"], "iban": account["iban"]},
            "roles": ["VIEW", "REGISTER"],
            "accessRights": True,
            "paymentRights": True,
            "transferRights": False,
            "registerLimit": 10000,
            "approvalLimit": 5000,
        }
    ]
    # Spec 4.3 E6: REGISTER and VIEW together offer the account for consent.
    offered = sandbox_data.consentable_accounts(app.store, psu["customerId"])
    assert [item.id for item in offered] == [account["id"]]


def test_engagement_without_register_and_view_is_not_offered_for_consent(
    client: httpx.Client, corporation: dict, app: Application
) -> None:
    agreement, account, psu = corporation["agreement"], corporation["account"], corporation["psu"]
    create(
        client,
        engagements_path(agreement),
        bodies.engagement(psu["customerId"], account["iban"], ("VIEW",)),
    )
    offered = sandbox_data.consentable_accounts(app.store, psu["customerId"])
    assert account["id"] not in [item.id for item in offered]


def test_engagement_customer_may_be_named_by_customer_number(
    client: httpx.Client, corporation: dict
) -> None:
    agreement, account, psu = corporation["agreement"], corporation["account"], corporation["psu"]
    body = bodies.engagement(psu["customerNumber"], account["iban"])
    assert create(client, engagements_path(agreement), body)["customer"] == psu["customerNumber"]


def test_engagement_account_must_belong_to_the_agreement_owner(
    client: httpx.Client, corporation: dict
) -> None:
    """Spec 4.3 E6 (rule SB-engagement-account-owner)."""
    other = create(client, "/v1/sandbox/customers", bodies.customer("CORPORATE", "Annen AS"))
    foreign = create(client, "/v1/sandbox/accounts", bodies.account(other["customerNumber"]))
    body = bodies.engagement(corporation["psu"]["customerId"], foreign["iban"])
    response = client.post(engagements_path(corporation["agreement"]), json=body)
    assert response.status_code == 400
    assert "owned" in response.json()["message"]


@pytest.mark.parametrize(
    ("change", "field"),
    [({"customer": "nobody"}, "customer"), ({"account": {"iban": "NO9386011117947"}}, "iban")],
)
def test_engagement_names_existing_customer_and_account(
    client: httpx.Client, corporation: dict, change: dict, field: str
) -> None:
    body = {
        **bodies.engagement(corporation["psu"]["customerId"], corporation["account"]["iban"]),
        **change,
    }
    response = client.post(engagements_path(corporation["agreement"]), json=body)
    assert response.status_code == 400
    assert field in response.json()["message"]


@pytest.mark.parametrize(
    "change",
    [{"roles": ["VIEW", "READ"]}, {"registerLimit": "10"}, {"account": {}}, {"roles": "VIEW"}],
)
def test_engagement_body_is_validated(
    client: httpx.Client, corporation: dict, change: dict
) -> None:
    body = {
        **bodies.engagement(corporation["psu"]["customerId"], corporation["account"]["iban"]),
        **change,
    }
    assert client.post(engagements_path(corporation["agreement"]), json=body).status_code == 400


def test_engagement_of_another_agreement_is_404(client: httpx.Client, corporation: dict) -> None:
    agreement, account, psu = corporation["agreement"], corporation["account"], corporation["psu"]
    created = create(
        client, engagements_path(agreement), bodies.engagement(psu["customerId"], account["iban"])
    )
    (private,) = psu["agreements"]
    response = client.get(f"/v1/sandbox/agreements/{private['id']}/engagements/{created['id']}")
    assert response.status_code == 404


def test_member_psu_lists_the_corporate_agreement(client: httpx.Client, corporation: dict) -> None:
    agreement, account, psu = corporation["agreement"], corporation["account"], corporation["psu"]
    create(
        client, engagements_path(agreement), bodies.engagement(psu["customerId"], account["iban"])
    )
    customers = client.get("/v1/sandbox/customers").json()
    (member,) = [c for c in customers if c["customerId"] == psu["customerId"]]
    assert agreement["id"] in [item["id"] for item in member["agreements"]]


def test_private_account_cannot_be_engaged_in_a_foreign_private_agreement(
    client: httpx.Client,
) -> None:
    kari = create(client, "/v1/sandbox/customers", bodies.customer(name="Kari"))
    ola = create(client, "/v1/sandbox/customers", bodies.customer(name="Ola"))
    ola_account = create(client, "/v1/sandbox/accounts", bodies.account(ola["customerNumber"]))
    (kari_agreement,) = kari["agreements"]
    body = bodies.engagement(ola["customerId"], ola_account["iban"])
    response = client.post(engagements_path(kari_agreement), json=body)
    assert response.status_code == 400


def test_the_customer_list_shows_each_customer_as_it_is_shown_alone(
    client: httpx.Client, corporation: dict, app: Application
) -> None:
    """E9 reads each kind once for every customer (views.customers); what it shows is what
    views.customer shows of each, one by one: owned, held and engaged-in agreements with their
    engagements in order, accounts and card accounts, whichever lists are asked."""
    agreement, account, psu = corporation["agreement"], corporation["account"], corporation["psu"]
    second = create(
        client,
        "/v1/sandbox/agreements",
        {"name": "Andre", "owner": corporation["customer"]["customerId"]},
    )
    for target in (agreement, second, agreement):
        create(
            client,
            engagements_path(target),
            bodies.engagement(psu["customerId"], account["iban"], ("VIEW", "REGISTER")),
        )
    create(client, "/v1/sandbox/accounts", bodies.account(psu["customerNumber"]))
    client.post("/v1/sandbox/card-accounts", json=bodies.card_account(psu["customerNumber"]))
    store = app.store
    for with_accounts in (True, False):
        for with_agreements in (True, False):
            one_by_one = [
                views.customer(
                    store, item, with_accounts=with_accounts, with_agreements=with_agreements
                )
                for item in store.all(sandbox_data.CUSTOMERS)
            ]
            listed = views.customers(
                store, with_accounts=with_accounts, with_agreements=with_agreements
            )
            assert listed == one_by_one
    everything = views.customers(store)
    shown_psu = next(item for item in everything if item["customerId"] == psu["customerId"])
    assert [item["id"] for item in shown_psu["agreements"]][-2:] == [agreement["id"], second["id"]]
    assert shown_psu["accounts"] and shown_psu["cardAccounts"]
    query = "?withAccounts=false&withAgreements=true"
    assert client.get("/v1/sandbox/customers" + query).json() == views.customers(
        store, with_accounts=False
    )
