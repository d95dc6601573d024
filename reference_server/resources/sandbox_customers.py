"""Sandbox customers: SCU (create) and E9 (list) — spec 2.9, spec 4.3 E9, spec 7 rule 7.

A customer is PRIVATE or CORPORATE (anything else is a validation error, spec 7 rule 7, enforced
by the schema). A PRIVATE customer gets its private agreement at creation, so that the accounts
created for it later are engaged there (spec 2.9 agreements; assumption). The customerNumber,
used for SCA in the sandbox (spec 5 item 7), is the one sent or else assigned.
"""

from __future__ import annotations

from conformance.contract.identifiers import is_valid_national_id
from reference_server.api import ApiError, Call, Response
from reference_server.model import sandbox_data as data
from reference_server.model.store import Store
from reference_server.resources.sandbox_fill import FILL_CUSTOMER_NUMBERS
from reference_server.views import sandbox_views as views

__all__ = ["OPERATIONS", "assign_customer_number", "create_customer", "list_customers"]

#: Assigned customer numbers start here (the data fill uses lower fixed numbers).
FIRST_ASSIGNED_NUMBER = 50000001


def assign_customer_number(store: Store) -> str:
    """The next free customer number (8 digits)."""
    while True:
        number = str(store.next_number("customerNumber", start=FIRST_ASSIGNED_NUMBER))
        if data.customer_by_number(store, number) is None:
            return number


def create_customer(call: Call) -> Response:
    """SCU: POST /v1/sandbox/customers."""
    store = call.app.store
    body = call.body
    national_id = body.get("nationalIdentityNumber")
    if national_id is not None and not is_valid_national_id(national_id):
        raise ApiError(
            400,
            "FORMAT_ERROR",
            "nationalIdentityNumber is not a valid national identity or D-number",
            path="nationalIdentityNumber",
        )
    with store.atomic():
        number = body.get("customerNumber")
        if number in FILL_CUSTOMER_NUMBERS:
            raise ApiError(
                400,
                "FORMAT_ERROR",
                f"customerNumber {number} is reserved for the sandbox data fill",
                path="customerNumber",
            )
        if number is not None and data.customer_by_number(store, number) is not None:
            raise ApiError(
                400,
                "FORMAT_ERROR",
                f"customerNumber {number} is already in use",
                path="customerNumber",
            )
        if national_id is not None and data.customer_by_national_id(store, national_id):
            raise ApiError(
                400,
                "FORMAT_ERROR",
                "a customer with this nationalIdentityNumber exists already",
                path="nationalIdentityNumber",
            )
        customer = data.Customer(
            id=data.new_id(),
            customer_number=number or assign_customer_number(store),
            customer_type=str(body["customerType"]),
            name=body["customerName"],
            national_id=national_id,
        )
        if customer.customer_type not in (data.PRIVATE, data.CORPORATE):
            # Only the ``accept-invalid-customer-type`` fault lets such a type through (spec 7
            # rule 7): the customer is accepted but not kept. Kept, it would break E9's answer
            # for whichever scenario lists the customers next, so that what fails would depend
            # on the order the scenarios run in, and the fault would break a second rule.
            return Response.json(201, views.customer(store, customer))
        store.add(data.CUSTOMERS, customer)
        if customer.customer_type == data.PRIVATE:
            store.add(
                data.AGREEMENTS,
                data.Agreement(
                    id=data.new_id(), name=f"{customer.name} (private)", holder=customer.id
                ),
            )
    return Response.json(201, views.customer(store, customer))


def list_customers(call: Call) -> Response:
    """E9: GET /v1/sandbox/customers?withAccounts&withAgreements (both default true)."""
    store = call.app.store
    with_accounts = call.query.get("withAccounts", True) and not call.app.faulty(
        "with-accounts-ignored"
    )
    with_agreements = call.query.get("withAgreements", True) and not call.app.faulty(
        "with-agreements-ignored"
    )
    return Response.json(
        200, views.customers(store, with_accounts=with_accounts, with_agreements=with_agreements)
    )


OPERATIONS = {"SCU": create_customer, "E9": list_customers}
