"""Sandbox agreements and engagements: SAG, E14, E6, E13 — spec 2.9, spec 4.3 E6/E13/E14.

E6 rules (spec 4.3 E6): ``customer`` is the PSU who sees the account during consent; the account
must be owned by the customer the agreement belongs to — the corporation that is the agreement
``owner`` for a corporate agreement (its PSU is then a member of that corporation), the holder for
a private one, the PSU itself for an agreement without either. An engagement is offered for
consent only with both REGISTER and VIEW (``Engagement.offered_for_consent``, read by consents).
"""

from __future__ import annotations

from reference_server.api import ApiError, Call, Response
from reference_server.model import sandbox_data as data
from reference_server.model.store import Store
from reference_server.pipeline.due import due, refuse, unknown_id
from reference_server.resources._common import require, sandbox_id
from reference_server.views import sandbox_views as views

__all__ = ["OPERATIONS", "add_engagement", "create_agreement", "get_agreement", "get_engagement"]

#: Spec 4.3 E6: the engaged account is owned by the agreement's corporation (``rules.json``).
_ACCOUNT_OWNER = "SB-engagement-account-owner"


def _customer(store: Store, reference: str) -> data.Customer | None:
    """A customer named by its customerId (= PSU-ID) or, failing that, its customerNumber."""
    return data.customer_for_psu(store, reference) or data.customer_by_number(store, reference)


def create_agreement(call: Call) -> Response:
    """SAG: POST /v1/sandbox/agreements; ``owner`` names a CORPORATE customer when given."""
    store = call.app.store
    owner_reference = call.body.get("owner")
    owner_id = owner_number = None
    if owner_reference is not None:
        owner = _customer(store, owner_reference)
        if owner is None:
            raise ApiError(
                400, "FORMAT_ERROR", f"owner {owner_reference!r} is no customer", path="owner"
            )
        if not owner.corporate:
            raise ApiError(
                400,
                "FORMAT_ERROR",
                "owner must be a CORPORATE customer (the corporation owning the agreement)",
                path="owner",
            )
        by_number = call.app.bank.owner_by_number or call.app.reads("owner-as-customer-number")
        if by_number and owner_reference != owner.customer_number:
            raise ApiError(
                400,
                "FORMAT_ERROR",
                "owner is the owner's customerNumber (at most 11 digits), not its customerId",
                path="owner",
            )
        owner_id = owner.id
        if call.app.reads("owner-as-customer-number"):
            owner_number = owner.customer_number
    with store.atomic():
        agreement = data.Agreement(
            id=sandbox_id(call.app),
            name=call.body["name"],
            owner=owner_id,
            owner_number=owner_number,
        )
        store.add(data.AGREEMENTS, agreement)
    return Response.json(201, views.agreement(store, agreement))


def get_agreement(call: Call) -> Response:
    """E14: GET /v1/sandbox/agreements/{mockAgreementId} (private and corporate)."""
    store = call.app.store
    agreement = require(call, data.AGREEMENTS, call.path_params["mockAgreementId"], "agreement")
    return Response.json(200, views.agreement(store, agreement))


def add_engagement(call: Call) -> Response:
    """E6: POST /v1/sandbox/agreements/{mockAgreementId}/engagements."""
    store = call.app.store
    body = call.body
    with store.atomic():
        agreement = require(call, data.AGREEMENTS, call.path_params["mockAgreementId"], "agreement")
        psu = _customer(store, body["customer"])
        if psu is None:
            raise ApiError(
                400,
                "FORMAT_ERROR",
                f"customer {body['customer']!r} is no customer",
                path="customer",
            )
        account = data.account_by_iban(store, body["account"]["iban"])
        if account is None:
            raise ApiError(
                400,
                "FORMAT_ERROR",
                f"no sandbox account has the iban {body['account']['iban']!r}",
                path="account/iban",
            )
        if call.app.reads("one-engagement-per-account") and any(
            item.customer_id == psu.id and item.account_id == account.id
            for item in store.children(data.ENGAGEMENTS, agreement.id)
        ):
            raise ApiError(
                409,
                "CONFLICT",
                f"agreement {agreement.id} has an engagement for this customer and account",
                path="account/iban",
            )
        required_owner = agreement.customer_id or psu.id
        if account.customer_id != required_owner:
            raise refuse(
                due(call.app.contract, _ACCOUNT_OWNER, call.operation),
                "the account is not owned by the customer the agreement belongs to "
                "(spec 4.3 E6: the account must be owned by the corporation that owns the "
                "agreement and of which the PSU is a member)",
                code="FORMAT_ERROR",
                status=400,
                path="account/iban",
            )
        engagement = data.Engagement(
            id=sandbox_id(call.app),
            agreement_id=agreement.id,
            customer=body["customer"],
            customer_id=psu.id,
            account_id=account.id,
            roles=tuple(body["roles"]),
            register_limit=body["registerLimit"],
            approval_limit=body["approvalLimit"],
            name=body.get("name"),
        )
        store.add(data.ENGAGEMENTS, engagement)
    # Spec 4.3 E6 shows the body, not the status: 201, or 200 read permissively.
    status = 200 if call.app.reads("unshown-success-statuses") else 201
    return Response.json(status, views.engagement(engagement, account))


def get_engagement(call: Call) -> Response:
    """E13: GET /v1/sandbox/agreements/{mockAgreementId}/engagements/{mockEngagementId}."""
    store = call.app.store
    agreement = require(call, data.AGREEMENTS, call.path_params["mockAgreementId"], "agreement")
    engagement = store.get(data.ENGAGEMENTS, call.path_params["mockEngagementId"])
    if engagement is None or engagement.agreement_id != agreement.id:
        raise unknown_id(
            call.app.contract,
            call.operation,
            f"agreement {agreement.id} has no engagement {call.path_params['mockEngagementId']!r}",
        )
    return Response.json(
        200, views.engagement(engagement, store.get(data.ACCOUNTS, engagement.account_id))
    )


OPERATIONS = {
    "SAG": create_agreement,
    "E14": get_agreement,
    "E6": add_engagement,
    "E13": get_engagement,
}
