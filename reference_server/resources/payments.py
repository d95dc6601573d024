"""Payments: creation (E16 NDCT, E17 periodic NDCT, E18 NCBCT), status (PS), cancellation (PC),
authorisation start (PA) and cancellation authorisation start (PCA) — spec 2.6, 2.7, 3, 4.3
E16–E18, 7.

The pipeline has already checked headers, signature, the body schema and the cross-field rules of
spec 2.7 (KID check digits, minor units, regulatory reporting, …) when a handler runs; what is left
here is what needs the server's state or clock: execution dates against today
(EXECUTION_DATE_INVALID), logical duplicates (``allowLogicalDuplicate``), the status model of
spec 3 and the cancellation rule of spec 7 rule 6.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from reference_server.api import ApiError, Call, Response, TppMessage
from reference_server.model import sandbox_data
from reference_server.model.payment_data import (
    AUTHORISATIONS,
    NCBCT,
    NDCT,
    PAYMENTS,
    Payment,
    PaymentKind,
    Status,
    SubjectKind,
)
from reference_server.model.payment_status import move
from reference_server.pipeline import ownership
from reference_server.pipeline.due import due, refuse, unknown_id
from reference_server.pipeline.validation import BANK_ZONE
from reference_server.services import sca_flow
from reference_server.views.versioning import amount_string

__all__ = [
    "EXECUTION_HORIZON",
    "NCBCT_FEE",
    "OPERATIONS",
    "authorise_cancellation",
    "authorise_payment",
    "cancel_payment",
    "create_payment",
    "payment_links",
    "payment_status",
    "require_payment",
]

#: A requested execution date (or periodic start date) at most this far ahead (a choice; the spec
#: gives no bound).
EXECUTION_HORIZON = timedelta(days=365)

#: Fee of an NCBCT payment in NOK (a sandbox value; NDCT is free): spec 2.6 transactionFees.
NCBCT_FEE = Decimal("50")

#: Fields that make two payments "logically" the same (spec 4.3 E16 ``allowLogicalDuplicate``).
_DUPLICATE_FIELDS = (
    "debtorAccount",
    "creditorAccount",
    "creditorName",
    "instructedAmount",
    "remittanceInformationUnstructured",
    "remittanceInformationStructured",
    "remittanceInformationStructuredArray",
    "requestedExecutionDate",
)

_PRODUCT_PARAM = "payment-product"
_ID_PARAM = "payment-id"


def _link(href: str, *verbs: str) -> dict[str, Any]:
    return {"href": href, "verbs": list(verbs)}


def payment_path(payment: Payment) -> str:
    """The payment's resource path (PC answers there; periodic payments live under NDCT)."""
    return f"/v1/payments/{payment.product}/{payment.id}"


def payment_links(payment: Payment) -> dict[str, Any]:
    """The next steps for the TPP (spec 2.6 ``_links``): ``self`` (cancel, PC), ``status`` (PS),
    ``startAuthorisation`` (PA)."""
    path = payment_path(payment)
    return {
        "self": _link(path, "DELETE"),
        "status": _link(f"{path}/status", "GET"),
        "startAuthorisation": _link(f"{path}/authorisations", "POST"),
    }


def _bank_today(call: Call) -> date:
    return call.app.clock.now().astimezone(BANK_ZONE).date()


#: The ``rules.json`` rows the creation's own checks implement.
_DATE_NOT_PAST = "E-execution-date-not-past"
_END_NOT_BEFORE_START = "E-periodic-end-not-before-start"
_DAY_IN_MONTH = "E-day-of-execution-in-month"
_DUPLICATE = "E-logical-duplicate-refused"
_DUPLICATE_WHEN_FALSE = "E-logical-duplicate-refused-when-false"
_PENDING_NOT_DELETABLE = "ERR-6-pending-payment-not-deletable"


def _date_error(call: Call, requirement: str, field: str, text: str) -> ApiError:
    """400 EXECUTION_DATE_INVALID where the date rule ``requirement`` makes it due."""
    return refuse(
        due(call.app.contract, requirement, call.operation),
        text,
        code="EXECUTION_DATE_INVALID",
        status=400,
        path=field,
    )


def check_execution_dates(
    call: Call,
    body: Mapping[str, Any],
    periodic: bool,
    today: date,
    *,
    past_allowed: Callable[[], bool] = lambda: False,
    end_before_start_allowed: Callable[[], bool] = lambda: False,
) -> None:
    """Dates against the bank's today (Europe/Oslo): not in the past, not beyond one year; a
    periodic payment's endDate not before its startDate (spec 2.7; code EXECUTION_DATE_INVALID
    from spec 7's list). The two ``*_allowed`` switches (the faults that break those rules, or
    a permissive reading) are asked only where a date breaks its rule."""
    horizon = today + EXECUTION_HORIZON
    first = "startDate" if periodic else "requestedExecutionDate"
    raw = body.get(first)
    if isinstance(raw, str):
        day = date.fromisoformat(raw)
        if day < today and not past_allowed():
            raise _date_error(
                call, _DATE_NOT_PAST, first, f"{first} {raw} lies in the past (today is {today})"
            )
        if day > horizon:  # the bank's own limit: no requirement states it
            raise ApiError(
                400,
                "EXECUTION_DATE_INVALID",
                f"{first} {raw} lies more than {EXECUTION_HORIZON.days} days ahead",
                path=first,
            )
    if periodic and isinstance(raw, str) and isinstance(body.get("endDate"), str):
        end = date.fromisoformat(body["endDate"])
        if end < date.fromisoformat(raw) and not end_before_start_allowed():
            raise _date_error(
                call, _END_NOT_BEFORE_START, "endDate", f"endDate {end} lies before startDate {raw}"
            )


def check_day_of_execution(call: Call, body: Mapping[str, Any]) -> None:
    """A periodic payment's ``dayOfExecution`` is a day of a month, 1 to 31 (spec 2.7: "day of
    month"; the pattern alone lets 00 and 32 to 99 through)."""
    raw = body.get("dayOfExecution")
    if isinstance(raw, str) and raw.isdigit() and not 1 <= int(raw) <= 31:
        raise refuse(
            due(call.app.contract, _DAY_IN_MONTH, call.operation),
            f"dayOfExecution {raw} is not a day of a month (1 to 31)",
            code="FORMAT_ERROR",
            status=400,
            path="dayOfExecution",
        )


def duplicate_key(product: str, psu_key: str | None, body: Mapping[str, Any]) -> str:
    """What two logical duplicates share: product, PSU and the fields of
    :data:`_DUPLICATE_FIELDS`, as a SHA-256 digest of their canonical JSON. Stored with each
    single payment, so that the check is one indexed lookup (``Store.find``) rather than a
    re-reading of every earlier payment of the PSU, which grows with each payment created."""
    fields = {name: body.get(name) for name in _DUPLICATE_FIELDS}
    text = json.dumps([product, psu_key, fields], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def find_logical_duplicate(call: Call, key: str) -> Payment | None:
    """An earlier single payment with the same :func:`duplicate_key` (same PSU and product, same
    debtor, creditor, amount, remittance and execution date), not rejected or cancelled."""
    for payment in call.app.store.find(PAYMENTS, "duplicateKey", key):
        if payment.status not in ("RJCT", "CANC"):
            return payment
    return None


def _fees(
    product: str, minor_units: Mapping[str, int], *, indicator: bool = True
) -> dict[str, Any]:
    """The fee fields; ``indicator`` False is the fault ``fee-indicator-false``."""
    if product == NCBCT:
        return {
            "transactionFeeIndicator": indicator,
            "transactionFees": {
                "amount": amount_string(NCBCT_FEE, "NOK", minor_units),
                "currency": "NOK",
            },
        }
    return {"transactionFeeIndicator": False}


def _warnings(body: Mapping[str, Any]) -> list[dict[str, str]]:
    if "remittanceInformationStructured" in body:
        return [
            TppMessage(
                "FORMAT_ERROR",
                "remittanceInformationStructured is deprecated (spec 9, 1.16.2): send "
                "remittanceInformationStructuredArray instead",
                "remittanceInformationStructured",
                category="WARNING",
            ).to_json()
        ]
    return []


def create_payment(call: Call) -> Response:
    """E16, E17, E18: a payment in status RCVD (spec 2.6), 201 with ``Location``.

    With PSU-Context (spec 4.2: "required for single-SCA initiation"), or always for a bank that
    starts SCA at creation (``--profile`` ``[sca] start``), the authorisation of this one payment
    starts at once and ``_links`` carries its ``scaRedirect``; without it the payment waits for PA
    or for a signing basket (E1, E2).
    """
    assert call.operation is not None
    app = call.app
    body: Mapping[str, Any] = call.body
    periodic = call.operation.id == "E17"
    product = NCBCT if call.path_params[_PRODUCT_PARAM] == NCBCT else NDCT
    check_execution_dates(
        call,
        body,
        periodic,
        _bank_today(call),
        past_allowed=lambda: (
            app.faulty("past-execution-date-accepted") or app.reads("past-execution-dates")
        ),
        end_before_start_allowed=lambda: (
            app.faulty("periodic-end-before-start-accepted") or app.reads("end-before-start")
        ),
    )
    if periodic and not app.reads("day-of-execution-by-pattern"):
        try:
            check_day_of_execution(call, body)
        except ApiError:
            if not app.faulty("day-of-execution-unchecked"):  # asked where it changes the answer
                raise
    psu_key = sca_flow.psu_key(call)
    now = app.clock.now().isoformat()
    with app.store.atomic():
        # Absent, the parameter means "not allowed"; read permissively, "allowed" (spec 4.3
        # E16 says what it switches, not its default).
        absent = app.reads("duplicates-allowed-by-default")
        allow_duplicate = call.query.get("allowLogicalDuplicate", absent)
        # Duplicates are "of the same PSU": a single payment without one (a fault that drops a
        # required header lets that through) has no key and matches nothing, as before keys.
        key = None if periodic or not psu_key else duplicate_key(product, psu_key, body)
        if key is not None and not allow_duplicate:
            earlier = find_logical_duplicate(call, key)
            if earlier is not None and not app.faulty("logical-duplicate-allowed"):
                said_false = "allowLogicalDuplicate" in call.query
                raise refuse(
                    due(
                        app.contract,
                        _DUPLICATE_WHEN_FALSE if said_false else _DUPLICATE,
                        call.operation,
                    ),
                    f"payment {earlier.id} of this PSU has the same debtor, creditor, amount, "
                    "remittance and execution date; send allowLogicalDuplicate=true to create "
                    "it anyway (spec 4.3 E16)",
                    code="CONFLICT",
                    status=400,
                )
        payment = Payment(
            id=str(uuid.uuid4()),
            product=product,
            kind=PaymentKind.PERIODIC if periodic else PaymentKind.SINGLE,
            request=dict(body),
            status=Status.RCVD,
            psu_key=psu_key,
            customer_id=call.auth.customer_id,
            created_at=now,
            status_changed_at=now,
            duplicate_key=key,
            tpp_id=ownership.tpp_of(call),
        )
        app.store.add(PAYMENTS, payment)
        links = payment_links(payment)
        by_401 = app.reads("sca-by-401")
        if call.auth.psu_context is not None or app.bank.sca_at_creation or by_401:
            authorisation = sca_flow.start(app, call, SubjectKind.PAYMENT, payment.id)
            links.update(
                sca_flow.redirect_links(
                    authorisation, decoupled=app.bank.sca_decoupled, oauth=app.bank.sca_oauth
                )
            )
    document: dict[str, Any] = {
        "paymentId": payment.id,
        "transactionStatus": payment.status,
        **_fees(product, app.contract.minor_units, indicator=not app.faulty("fee-indicator-false")),
        "_links": links,
    }
    warnings = _warnings(body)
    if warnings:
        document["tppMessages"] = warnings
    if by_401:
        # Spec 5 item 6: "Payment creation ... require strong customer authentication by
        # redirect: the 401 answer carries `_links.scaRedirect`" (the payment is made, RCVD).
        return Response.json(401, document)
    return Response.json(201, document, headers=(("Location", payment_path(payment)),))


def require_payment(call: Call) -> Payment:
    """The payment named by the path, under the product it was created with; else 404."""
    payment_id = call.path_params[_ID_PARAM]
    payment = call.app.store.get(PAYMENTS, payment_id)
    if (
        payment is None
        or payment.product != call.path_params[_PRODUCT_PARAM]
        or not ownership.owned(call, payment.tpp_id)
        or not ownership.same_psu(call, payment.customer_id)
    ):
        raise unknown_id(
            call.app.contract,
            call.operation,
            f"no payment {payment_id!r} under product {call.path_params[_PRODUCT_PARAM]}",
            path=_ID_PARAM,
        )
    return payment


def _funds_available(call: Call, payment: Payment) -> bool | None:
    """Whether the sandbox debtor account covers the amount (closingBooked or expected balance
    plus credit line, in the payment's currency); None when it cannot be told."""
    store = call.app.store
    debtor = payment.debtor_account
    account = None
    if isinstance(debtor.get("bban"), str):
        account = sandbox_data.account_by_bban(store, debtor["bban"])
    if account is None and isinstance(debtor.get("iban"), str):
        account = sandbox_data.account_by_iban(store, debtor["iban"])
    if account is None or account.currency != payment.currency or not account.balances:
        return None
    balance = max(item.amount for item in account.balances)
    return Decimal(balance + account.credit_line) >= payment.amount


def payment_status(call: Call) -> Response:
    """PS: ``transactionStatus`` and, when the debtor is a sandbox account, ``fundsAvailable``."""
    payment = require_payment(call)
    document: dict[str, Any] = {"transactionStatus": payment.status}
    funds = _funds_available(call, payment)
    if funds is not None:
        document["fundsAvailable"] = funds
    return Response.json(200, document)


def cancel_payment(call: Call) -> Response:
    """PC: RCVD and ACTC payments become CANC (204); PDNG refuses (spec 7 rule 6, spec 3), as
    does every status past it (400 CANCELLATION_INVALID).

    An authorised payment (ACTC), at a bank that asks its cancellation to be authorised
    (``[cancellation] sca``, the default, as the platform's banks do), is not cancelled yet:
    202 with its status and ``_links.startAuthorisation`` (PCA); the payment stays as it is
    until that SCA is approved (``sca_flow.complete``)."""
    app = call.app
    with app.store.atomic():
        payment = require_payment(call)
        cancellable = payment.status in Status.CANCELLABLE or (
            payment.status == Status.PDNG and app.faulty("delete-pdng-allowed")
        )
        if not cancellable and payment.status == Status.PDNG:
            raise refuse(
                due(app.contract, _PENDING_NOT_DELETABLE, call.operation),
                "a pending payment (PDNG) cannot be deleted (spec 7 rule 6)",
                code="CANCELLATION_INVALID",
                status=400,
                tpp_code="BAD_REQUEST",
            )
        if not cancellable:  # past cancelling: no requirement states the answer
            reason = f"a payment in status {payment.status} can no longer be cancelled"
            raise ApiError(400, "CANCELLATION_INVALID", reason, tpp_code="BAD_REQUEST")
        if payment.basket_id is not None and app.reads("basket-payment-not-cancellable"):
            raise ApiError(
                400,
                "RESOURCE_BLOCKED",
                f"payment {payment.id} belongs to signing basket {payment.basket_id}: delete "
                "the basket first",
                tpp_code="BAD_REQUEST",
            )
        needs_sca = app.bank.cancellation_sca and not app.faulty("cancellation-without-sca")
        if needs_sca and payment.status in Status.AUTHORISED:
            app.store.put(PAYMENTS, replace(payment, cancellation_requested=True))
            path = payment_path(payment)
            return Response.json(
                202,
                {
                    "transactionStatus": payment.status,
                    "_links": {
                        "self": _link(path, "GET"),
                        "status": _link(f"{path}/status", "GET"),
                        "startAuthorisation": _link(f"{path}/cancellation-authorisations", "POST"),
                    },
                },
            )
        move(app.store, payment, Status.CANC, app.clock.now())
    if app.reads("unshown-success-statuses"):  # spec 4.1 names PC only
        return Response.json(200, {"transactionStatus": Status.CANC})
    return Response.empty(204)


def authorise_cancellation(call: Call) -> Response:
    """PCA: start the SCA of a cancellation PC asked for (the platform's cancellation
    authorisation; NextGenPSD2). 400 RESOURCE_BLOCKED when no cancellation waits for its
    authorisation (the payment was not cancelled with PC while authorised, or has moved past
    cancelling); 401 with ``scaRedirect`` when the PSU is not a sandbox customer; else 201 with
    the SCA status record (STARTED). Approved, the payment becomes CANC; cancelled, it stays."""
    app = call.app
    with app.store.atomic():
        payment = require_payment(call)
        if not payment.cancellation_requested or payment.status not in Status.AUTHORISED:
            raise ApiError(
                400,
                "RESOURCE_BLOCKED",
                f"payment {payment.id} ({payment.status}) has no cancellation waiting for its "
                "authorisation: cancel it with DELETE first",
                tpp_code="BAD_REQUEST",
            )
        authorisation = sca_flow.start(app, call, SubjectKind.CANCELLATION, payment.id)
    return sca_flow.started(app, authorisation)


def authorise_payment(call: Call) -> Response:
    """PA: start the SCA of one payment, like E2 for a basket (spec 4.3 E2).

    400 RESOURCE_BLOCKED when the payment is no longer RCVD or belongs to a signing basket (the
    basket is authorised instead); 401 with ``scaRedirect`` when the PSU is not a sandbox
    customer; else 201 with the SCA status record (STARTED).
    """
    app = call.app
    with app.store.atomic():
        payment = require_payment(call)
        if payment.basket_id is not None:
            raise ApiError(
                400,
                "RESOURCE_BLOCKED",
                f"payment {payment.id} belongs to signing basket {payment.basket_id}: "
                "authorise the basket (E2)",
                tpp_code="BAD_REQUEST",
            )
        if payment.status != Status.RCVD:
            raise ApiError(
                400,
                "RESOURCE_BLOCKED",
                f"payment {payment.id} is {payment.status}: only a received payment (RCVD) "
                "can be authorised",
                tpp_code="BAD_REQUEST",
            )
        if app.reads("sca-started-at-creation") and app.store.children(AUTHORISATIONS, payment.id):
            raise ApiError(
                409,
                "RESOURCE_BLOCKED",
                f"payment {payment.id}'s authorisation was started at its creation: follow its "
                "_links.scaRedirect",
                tpp_code="CONFLICT",
            )
        authorisation = sca_flow.start(app, call, SubjectKind.PAYMENT, payment.id)
    return sca_flow.started(app, authorisation)


OPERATIONS = {
    "E16": create_payment,
    "E17": create_payment,
    "E18": create_payment,
    "PS": payment_status,
    "PC": cancel_payment,
    "PA": authorise_payment,
    "PCA": authorise_cancellation,
}
