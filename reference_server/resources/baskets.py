"""Signing baskets: creation (E1), authorisation start (E2) and the reads BR and BS — spec 2.4,
4.3 E1/E2, 7, 8.

A basket groups up to 10 payments (spec 8; the request schema's ``maxItems``) created earlier
and not yet authorised, and one SCA authorises them all. Periodic payments cannot join (spec 7
rule 1: 400 REFERENCE_MIX_INVALID); neither can a payment that is no longer RCVD or already sits in
another basket (400 RESOURCE_BLOCKED). The basket's ``transactionStatus`` is computed on every
read as the worst case of its payments (spec 2.4, :func:`payment_status.basket_status`).

The spec shows the basket's fields (spec 2.4) but no operation reading it; the contract's BR
(``GET /v1/signing-baskets/{basketId}``, the platform's "Get signing basket details") and BS
(``.../status``) read it, for its own TPP and PSU only, as E2 finds it. ``GET
/_control/signing-baskets/{basketId}`` (a reference-server route) shows more: each payment's
status and the basket's authorisations, for tests and TPP developers.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from conformance.contract.releases import change
from reference_server.api import ApiError, Call, Response, Route
from reference_server.model.payment_data import (
    AUTHORISATIONS,
    BASKETS,
    NCBCT,
    PAYMENTS,
    Basket,
    Payment,
    ScaStatus,
    Status,
    SubjectKind,
    payments_of_basket,
)
from reference_server.model.payment_status import basket_status
from reference_server.model.store import Store
from reference_server.pipeline import ownership
from reference_server.pipeline.due import due, refuse, unknown_id
from reference_server.services import sca_flow

__all__ = [
    "OPERATIONS",
    "ROUTES",
    "authorise_basket",
    "basket_document",
    "create_basket",
    "read_basket",
    "read_basket_status",
    "show_basket",
]


def basket_path(basket_id: str) -> str:
    return f"/v1/signing-baskets/{basket_id}"


def basket_document(call: Call, basket: Basket) -> dict[str, Any]:
    """The signing basket (spec 2.4) with its status computed now."""
    statuses = [payment.status for payment in payments_of_basket(call.app.store, basket)]
    status, best = basket_status(statuses), basket_status(statuses, best_case=True)
    if best != status and call.app.faulty("basket-best-case"):
        status = best
    return {
        "basketId": basket.id,
        "transactionStatus": status,
        "_links": {
            "startAuthorisation": {
                "href": f"{basket_path(basket.id)}/authorisations",
                "verbs": ["POST"],
            },
        },
    }


#: The ``rules.json`` rows this module implements: a periodic payment in a basket (spec 7
#: rule 1), a basket authorised again (spec 7's E2 row).
_REFERENCE_MIX = "ERR-1-reference-mix-invalid"
_AUTHORISED_AGAIN = "E-basket-authorised-again-blocked"


def _distinct(ids: list[str]) -> list[str]:
    """The ids without repeats, first occurrence kept (a repeated id is one payment)."""
    return list(dict.fromkeys(ids))


def _owner(store: Store, basket: Basket) -> str | None:
    """The sandbox customer whose payments the basket holds (its first payment's)."""
    first = store.get(PAYMENTS, basket.payment_ids[0]) if basket.payment_ids else None
    return first.customer_id if first is not None else None


def _payments(call: Call, store: Store, ids: list[str]) -> list[Payment]:
    found: list[Payment] = []
    unknown: list[str] = []
    for payment_id in ids:
        payment = store.get(PAYMENTS, payment_id)
        if payment is None or not ownership.owned(call, payment.tpp_id):
            unknown.append(payment_id)
        else:
            found.append(payment)
    if unknown:
        raise ApiError(
            404,
            "RESOURCE_UNKNOWN",
            f"no payment with id {', '.join(unknown)}",
            path="paymentIds",
        )
    return found


def _check_release(call: Call, payments: list[Payment]) -> None:
    """A bank on a release before NCBCT joined signing baskets (spec 9: "1.21.20 added signing
    basket support for NCBCT") refuses an NCBCT payment in one: 400 PRODUCT_INVALID."""
    release = call.app.bank.release
    if release is None or release >= change(call.app.contract, "ncbct-baskets").release:
        return
    ncbct = [payment.id for payment in payments if payment.product == NCBCT]
    if ncbct:
        raise ApiError(
            400,
            "PRODUCT_INVALID",
            f"release {release} has no signing basket support for NCBCT payments (spec 9: added "
            f"in 1.21.20): {', '.join(ncbct)}",
            path="paymentIds",
        )


def _check_joinable(call: Call, payments: list[Payment]) -> None:
    _check_release(call, payments)
    periodic = [payment.id for payment in payments if payment.periodic]
    if periodic and not call.app.faulty("allow-periodic-in-basket"):
        raise refuse(
            due(call.app.contract, _REFERENCE_MIX, call.operation),
            f"periodic payments cannot be added to a signing basket: {', '.join(periodic)} "
            "(spec 7 rule 1, spec 4.3 E1)",
            code="REFERENCE_MIX_INVALID",
            status=400,
            path="paymentIds",
            tpp_code="BAD_REQUEST",
        )
    for payment in payments:
        if payment.basket_id is not None:
            reason = f"payment {payment.id} is already in signing basket {payment.basket_id}"
        elif payment.status != Status.RCVD:
            reason = f"payment {payment.id} is {payment.status}, not RCVD: it cannot be signed"
        else:
            continue
        raise ApiError(400, "RESOURCE_BLOCKED", reason, path="paymentIds", tpp_code="BAD_REQUEST")


def create_basket(call: Call) -> Response:
    """E1: 201 with the basket (spec 2.4) and ``Location``."""
    store = call.app.store
    ids = _distinct([str(item) for item in call.body["paymentIds"]])
    with store.atomic():
        payments = _payments(call, store, ids)
        _check_joinable(call, payments)
        basket = Basket(
            id=str(uuid.uuid4()),
            payment_ids=tuple(ids),
            psu_key=sca_flow.psu_key(call),
            created_at=call.app.clock.now().isoformat(),
            tpp_id=ownership.tpp_of(call),
        )
        store.add(BASKETS, basket)
        for payment in payments:
            store.put(PAYMENTS, replace(payment, basket_id=basket.id))
    return Response.json(
        201, basket_document(call, basket), headers=(("Location", basket_path(basket.id)),)
    )


def _owned_basket(call: Call) -> Basket:
    """The basket the path names, of the calling TPP and PSU; else 404 RESOURCE_UNKNOWN."""
    store = call.app.store
    basket_id = call.path_params["basketId"]
    basket = store.get(BASKETS, basket_id)
    if (
        basket is None
        or not ownership.owned(call, basket.tpp_id)
        or not ownership.same_psu(call, _owner(store, basket))
    ):
        raise unknown_id(
            call.app.contract, call.operation, f"no signing basket {basket_id!r}", path="basketId"
        )
    return basket


def authorise_basket(call: Call) -> Response:
    """E2: start the basket's SCA (spec 4.3 E2, spec 7 E2 row).

    404 RESOURCE_UNKNOWN for an unknown basket; 400 RESOURCE_BLOCKED when the basket was already
    authorised or none of its payments is RCVD any more; 401 with ``scaRedirect`` when the PSU is
    not a sandbox customer; else 201 with the SCA status record, scaStatus STARTED (spec 3).
    """
    app = call.app
    store = app.store
    with store.atomic():
        basket = _owned_basket(call)
        finalised = any(
            authorisation.status == ScaStatus.FINALISED
            for authorisation in store.children(AUTHORISATIONS, basket.id)
        )
        payments = payments_of_basket(store, basket)
        waiting = [p for p in payments if p.status == Status.RCVD]
        blocked = finalised or not waiting
        if app.reads("basket-authorised-again"):  # another signer may sign (spec 7 E2)
            blocked = all(p.status in (Status.CANC, Status.RJCT) for p in payments)
        if blocked and not app.faulty("basket-reauthorisation-allowed"):
            raise refuse(
                due(app.contract, _AUTHORISED_AGAIN, call.operation),
                f"signing basket {basket.id} has no payment left to authorise",
                code="RESOURCE_BLOCKED",
                status=400,
                path="basketId",
                tpp_code="BAD_REQUEST",
            )
        authorisation = sca_flow.start(app, call, SubjectKind.BASKET, basket.id)
    if authorisation.customer_id is None or app.reads("sca-by-401"):
        # Spec 5 item 6 and spec 7's E2 row: "401 (body has `_links.scaRedirect`)".
        raise sca_flow.sca_required_error(authorisation)
    shown = ScaStatus.RECEIVED if app.faulty("sca-start-not-started") else None
    document = sca_flow.sca_status_document(
        authorisation, shown, decoupled=app.bank.sca_decoupled, oauth=app.bank.sca_oauth
    )
    return Response.json(201, document, headers=(("Location", document["_links"]["self"]["href"]),))


def show_basket(call: Call) -> Response:
    """``GET /_control/signing-baskets/{basketId}``: the basket with its current status and the
    status of each payment (reference-server only; the contract has no basket read)."""
    store = call.app.store
    basket_id = call.path_params["basketId"]
    basket = store.get(BASKETS, basket_id)
    if basket is None:
        raise ApiError(404, "RESOURCE_UNKNOWN", f"no signing basket {basket_id!r}")
    document = basket_document(call, basket)
    document["payments"] = [
        {"paymentId": payment.id, "transactionStatus": payment.status}
        for payment in payments_of_basket(store, basket)
    ]
    document["authorisations"] = [
        sca_flow.sca_status_document(
            authorisation, decoupled=call.app.bank.sca_decoupled, oauth=call.app.bank.sca_oauth
        )
        for authorisation in store.children(AUTHORISATIONS, basket.id)
    ]
    return Response.json(200, document)


def _read_status(call: Call, basket: Basket) -> str:
    """The basket's status as BR and BS read it: the worst case of its payments now (spec 2.4);
    under the fault ``basket-read-status-stale`` the status it had when it was made (every
    payment joins RCVD, so RCVD), as a bank that stored it at creation would answer."""
    if call.app.faulty("basket-read-status-stale"):
        return basket_status(["RCVD"])
    return str(basket_document(call, basket)["transactionStatus"])


def read_basket(call: Call) -> Response:
    """BR: the signing basket (spec 2.4) with its payment ids and its status now (the platform's
    "Get signing basket details"; NextGenPSD2's ``payments``)."""
    basket = _owned_basket(call)
    document = basket_document(call, basket)
    document["transactionStatus"] = _read_status(call, basket)
    document["payments"] = list(basket.payment_ids)
    document["_links"]["self"] = {"href": basket_path(basket.id), "verbs": ["GET"]}
    document["_links"]["status"] = {"href": f"{basket_path(basket.id)}/status", "verbs": ["GET"]}
    return Response.json(200, document)


def read_basket_status(call: Call) -> Response:
    """BS: the basket's ``transactionStatus``, the worst case of its payments now (spec 2.4)."""
    return Response.json(200, {"transactionStatus": _read_status(call, _owned_basket(call))})


OPERATIONS = {
    "E1": create_basket,
    "E2": authorise_basket,
    "BR": read_basket,
    "BS": read_basket_status,
}

ROUTES = (Route("GET", "/_control/signing-baskets/{basketId}", show_basket),)
