"""Helpers shared by the sandbox resource modules (not a resource module: no handlers)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from reference_server.api import ApiError, Call, ServerState
from reference_server.model import sandbox_data as data
from reference_server.model.store import Record, Store, Table
from reference_server.pipeline.due import unknown_id

__all__ = ["one_balance_per_type", "owner_by_number", "require", "sandbox_id"]

R = TypeVar("R", bound=Record)


def require(call: Call, table: Table[R], record_id: str, what: str) -> R:
    """The record, or 404 RESOURCE_UNKNOWN naming what was looked for (spec 7,
    ``ROB-unknown-id``)."""
    record = call.app.store.get(table, record_id)
    if record is None:
        raise unknown_id(call.app.contract, call.operation, f"no {what} with id {record_id!r}")
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


def sandbox_id(app: ServerState) -> str:
    """A new id of a sandbox account, card account, agreement or engagement: a UUID, or under
    the demanding reading ``numeric-sandbox-ids`` twelve digits (spec 2.9 shows no form)."""
    if app.reads("numeric-sandbox-ids"):
        return f"{app.store.next_number('sandbox-id', start=100_000_000_001):012d}"
    return data.new_id()


def one_balance_per_type(app: ServerState, items: Iterable[Mapping[str, Any]], prefix: str) -> None:
    """400 for a second balance of one ``balanceType`` in a body (SA's ``balances``, E15's
    array), under the demanding reading ``one-balance-per-type``; else nothing."""
    if not app.reads("one-balance-per-type"):
        return
    seen: set[str] = set()
    for index, item in enumerate(items):
        kind = str(item.get("balanceType"))
        if kind in seen:
            raise ApiError(
                400,
                "FORMAT_ERROR",
                f"a second balance of type {kind}: one balance per balanceType",
                path=f"{prefix}{index}/balanceType",
            )
        seen.add(kind)
