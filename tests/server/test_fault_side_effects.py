"""A fault breaks its one rule and leaves nothing behind that breaks another: the self-check
(``conformance selfcheck``) requires that exactly the scenarios of the fault's rule fail, whatever
the order the scenarios run in."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from conformance.contract import Contract
from reference_server.transport.http import RunningServer
from server import bodies
from server.conftest import check_against_contract

Start = Callable[..., tuple[RunningServer, httpx.Client]]


def test_a_customer_of_an_invalid_type_is_accepted_but_not_listed(
    faulty_server: Start, contract: Contract
) -> None:
    """``accept-invalid-customer-type`` answers 201 (spec 7 rule 7 broken) without keeping the
    customer: E9 still answers what its schema says, for every scenario that lists afterwards."""
    _, faulty = faulty_server("accept-invalid-customer-type")
    accepted = faulty.post("/v1/sandbox/customers", json=bodies.customer("BUSINESS"))
    assert accepted.status_code == 201, accepted.text
    assert accepted.json()["customerType"] == "BUSINESS"
    kept = faulty.post("/v1/sandbox/customers", json=bodies.customer("PRIVATE"))
    assert kept.status_code == 201, kept.text
    listed = faulty.get("/v1/sandbox/customers")
    check_against_contract(contract, listed)
    ids = [item["customerId"] for item in listed.json()]
    assert kept.json()["customerId"] in ids
    assert accepted.json()["customerId"] not in ids
