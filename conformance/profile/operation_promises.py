"""``[operations] promised``: the operations interface.md neither shows nor names that a bank
promises to offer (the contract's ``"unnamed": true`` files: BR, BS, PCA, SI), which the suite
then holds it to.

The spec states no such operation, so whatever a scenario on one finds rests on the contract's
assumption that the bank offers it: judged at should (``conformance.generate``). A bank that
promises one lists it here: a failure of a scenario whose sentence of the spec holds for every
operation (its signature, its headers), or of a step on it within a flow, then counts as a must
failure for that bank, and every report names it as the bank's own promise, not a sentence of
interface.md (as ``[response_headers] promised`` does for response headers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.contract import Operation

__all__ = ["OperationPromises"]


@dataclass(frozen=True)
class OperationPromises:
    """``[operations] promised``: the ids of the unnamed operations the bank promises."""

    promised: frozenset[str] = frozenset()

    def promises(self, operation: Operation) -> bool:
        """Whether the bank promises ``operation`` (only an unnamed one can be promised)."""
        return operation.unnamed and operation.id in self.promised

    def promise(self, operation: Operation) -> str:
        """What a report says of a broken promise of ``operation`` ("" when not promised)."""
        if not self.promises(operation):
            return ""
        return (
            f"the bank promises {operation.id} ({operation.name}, {operation.method} "
            f"{operation.path} or its [paths] route) in its profile ([operations] promised); "
            "interface.md neither shows nor names it: a failure on it counts as a must failure "
            "for this bank, not as a breach of the spec"
        )
