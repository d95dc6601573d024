"""One home per operation: what the harness needs of each operation of the contract, one module
per family of operations (``payments``: payments and signing baskets; ``sandbox``; ``accounts``:
account information and consents), registered here in :data:`OPERATIONS`.

An operation's parts (:class:`~conformance.operations.parts.OperationParts`) are its base
request builder (the valid request every scenario of the operation starts from: path values that
name existing resources, set up through :class:`~conformance.bankside.setup_data.DataFactory`, the
headers spec 4.2 requires, and a body valid against its schema and the cross-field rules of
spec 2.7), its example request (``conformance export-examples``) and the id its creation answers
with. A family module also holds the typed requests the runners build of its operations
(``sandbox.account_read(ctx, account_id)`` rather than the operation id and its path values by
hand). ``tests/suite/test_operations.py`` requires every contract operation to have its parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from conformance.operations import accounts, payments, sandbox
from conformance.operations.parts import BuildContext, OperationParts

if TYPE_CHECKING:
    from conformance.bankside.request import OperationRequest

__all__ = ["FAMILY_MODULES", "OPERATIONS", "OperationParts", "base_request", "parts_of"]

#: The family modules, each with its ``FAMILIES`` (contract families) and ``OPERATIONS``.
FAMILY_MODULES = (payments, sandbox, accounts)


def _register() -> Mapping[str, OperationParts]:
    table: dict[str, OperationParts] = {}
    for module in FAMILY_MODULES:
        for op_id, parts in module.OPERATIONS.items():
            if op_id in table:
                raise ValueError(f"operation {op_id} has two homes (one in {module.__name__})")
            table[op_id] = parts
    return MappingProxyType(table)


#: The parts of every operation, by operation id (immutable).
OPERATIONS: Mapping[str, OperationParts] = _register()


def parts_of(op_id: str) -> OperationParts:
    """The parts of ``op_id``; an operation without them is a bug of the suite (KeyError)."""
    try:
        return OPERATIONS[op_id]
    except KeyError:
        raise KeyError(
            f"operation {op_id} has no home in conformance.operations (a suite bug)"
        ) from None


def base_request(ctx: BuildContext, op_id: str, variant: str, seed: int) -> OperationRequest:
    """The valid request of ``op_id`` in ``variant``, its set-up data created or reused."""
    return parts_of(op_id).builder(ctx, variant, seed)
