"""What every scenario family shares: the generation context, ids, expectations, assumptions."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from conformance.contract import Contract, Operation, operation_order
from conformance.contract.catalogue import refusal
from conformance.contract.requirements import (
    AnswerDue,
)
from conformance.generate.breaking_values import id_safe
from conformance.generate.mutations import SchemaResolver
from conformance.scenario import Scenario

#: Headers that the signing layer owns: their absence is an authentication case (spec 5), not a
#: header-set case, so the header family leaves them to the auth family.
SIGNATURE_HEADERS = frozenset({"signature", "tpp-signature-certificate", "digest"})

_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Context:
    """What the families read: the contract and one schema resolver shared by all of them."""

    contract: Contract
    resolver: SchemaResolver = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resolver", SchemaResolver(self.contract.resolve))

    def operations(self) -> tuple[Operation, ...]:
        """The contract's operations in a stable order (E1 … E18 numerically, then the others)."""
        return tuple(
            sorted(self.contract.operations.values(), key=lambda op: operation_order(op.id))
        )


def scenario_id(*parts: str) -> str:
    """Join id parts with ``-``; every id is ASCII, without spaces, usable as a pytest id."""
    text = "-".join(part for part in parts if part)
    if not _SAFE_ID.match(text):
        raise ValueError(f"unsafe scenario id {text!r}")
    return text


def pointer_label(target: str, pointer: tuple[str | int, ...]) -> str:
    """The field path of an id: dotted body pointer (``creditorAddress.country``, ``0.amount``),
    ``body`` for the whole body, ``query.<name>`` / ``path.<name>`` for parameters."""
    if target == "body":
        return ".".join(id_safe(part, None) for part in pointer) if pointer else "body"
    return f"{target}.{id_safe(pointer[0], None)}" if pointer else target


def kebab(name: str) -> str:
    """``EveryTwoWeeks`` → ``every-two-weeks`` (enum values as variant names)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name)
    return id_safe(spaced, None).replace("_", "-").lower()


def has_body(op: Operation) -> bool:
    return op.request_schema is not None


def takes_header(op: Operation, name: str) -> bool:
    folded = name.lower()
    return any(h.lower() == folded for h in (*op.required_headers, *op.optional_headers))


def requires_header(op: Operation, name: str) -> bool:
    folded = name.lower()
    return any(h.lower() == folded for h in op.required_headers)


def on_unnamed_operation(scenario: Scenario, contract: Contract) -> Scenario:
    """``scenario`` graded for its operation: on one interface.md neither shows nor names
    (``Operation.unnamed``: BR, BS, PCA, SI) a must scenario is should, resting on the reading
    that the bank offers the operation. It keeps its quotes: the sentences state the rule for
    every operation, and bind this one where the bank promises it (``[operations] promised``:
    a failure is then a must one for that bank, ``conformance.runners.promises``)."""
    operation = contract.operations.get(scenario.operation)
    if operation is None or not operation.unnamed or scenario.level != "must":
        return scenario
    return dataclasses.replace(scenario, level="should", reading=operation.unnamed_reading)


def rejection(
    op: Operation, statuses: Iterable[int], code: str | None = None, *, chosen: str = ""
) -> AnswerDue:
    """An error answer: the operation's documented error schema when every status has one,
    otherwise the spec 7 error body; ``chosen`` as
    :func:`~conformance.contract.requirements.answer_due` says."""
    return refusal(op, tuple(statuses), code, chosen=chosen)


def op_assumptions(op: Operation, *topics: str) -> tuple[str, ...]:
    """The operation's assumption texts on the given topics (all topics when none is given)."""
    return tuple(a.text for a in op.assumptions if not topics or a.topic in topics)


def merge_texts(*groups: Iterable[str]) -> tuple[str, ...]:
    """Assumption texts without repeats, in first-seen order."""
    return tuple(dict.fromkeys(text for group in groups for text in group))


def params(**values: Any) -> tuple[tuple[str, Any], ...]:
    """Runner parameters as the immutable, name-sorted pairs a :class:`Scenario` holds."""
    return tuple(sorted(values.items()))
