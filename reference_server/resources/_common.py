"""Helpers shared by the sandbox resource modules (not a resource module: no handlers)."""

from __future__ import annotations

from typing import TypeVar

from reference_server.api import ApiError
from reference_server.model import sandbox_data as data
from reference_server.model.store import Record, Store, Table

__all__ = ["owner_by_number", "require"]

R = TypeVar("R", bound=Record)


def require(store: Store, table: Table[R], record_id: str, what: str) -> R:
    """The record, or 404 RESOURCE_UNKNOWN naming what was looked for (spec 7)."""
    record = store.get(table, record_id)
    if record is None:
        raise ApiError(404, "RESOURCE_UNKNOWN", f"no {what} with id {record_id!r}")
    return record


def owner_by_number(store: Store, customer_number: str) -> data.Customer:
    """The sandbox customer a creation request names by ``customerNumber`` (SA, SCA), or 400.

    The creation shapes are assumptions of the contract (spec 2.9 "not shown"); an unknown owner
    is the caller's mistake, so 400 FORMAT_ERROR with the field as ``path`` (spec 7).
    """
    customer = data.customer_by_number(store, customer_number)
    if customer is None:
        raise ApiError(
            400,
            "FORMAT_ERROR",
            f"no sandbox customer has the customerNumber {customer_number!r}",
            path="customerNumber",
        )
    return customer
