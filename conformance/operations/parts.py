"""The parts the harness keeps of one operation (:class:`OperationParts`): its base request
builder, its example request and the id its creation answers with.

Each family module of this package (``payments``, ``sandbox``, ``accounts``) holds the parts of
its operations in one ``OPERATIONS`` table; the package registers the three, and a test requires
every operation of the contract to have its parts, so an operation without a builder fails
``make test`` instead of making its scenarios "not applicable".
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, Protocol

from conformance.bankside.request import NO_BODY, OperationRequest, Target
from conformance.contract.identifiers import bban_to_iban, generate_bban

if TYPE_CHECKING:
    from conformance.bankside.setup_data import DataFactory

__all__ = [
    "EXAMPLE_PSU_ID",
    "EXAMPLE_SEED",
    "NO_BODY",
    "BuildContext",
    "Builder",
    "Example",
    "ExampleInputs",
    "OperationParts",
]


class BuildContext(Target, Protocol):
    """What a builder reads of a run: what building and sending a request needs (the contract,
    the target's profile, the client) and the factory of its set-up data. The runners'
    :class:`~conformance.runners.context.RunContext` is one; the catalogue names only what it
    reads, so it sits below the runners."""

    @property
    def data(self) -> DataFactory: ...


#: One signature for every builder: the context, the variant name, the scenario's seed.
Builder = Callable[[BuildContext, str, int], OperationRequest]

#: The seed every example is drawn with (the files do not change between exports on one day).
EXAMPLE_SEED = 20261125
#: The PSU-ID of every example (a fixed UUID: the examples are files, not runs).
EXAMPLE_PSU_ID = "6f2c0a4e-0b8e-4b36-9d7a-1c0f6ad1f001"


@dataclass(frozen=True)
class ExampleInputs:
    """What an example body is drawn from (``conformance export-examples``): the day it is
    written on, the seed, the PSU, and one made-up NOK account the bodies name."""

    today: date
    seed: int = EXAMPLE_SEED
    psu_id: str = EXAMPLE_PSU_ID

    def rng(self) -> random.Random:
        """A fresh ``Random`` of the seed, past the draw of :attr:`account` (each call the same
        state, so one example never depends on which others were drawn before it)."""
        rng = random.Random(self.seed)
        generate_bban(rng)
        return rng

    @property
    def account(self) -> dict[str, str]:
        """The account the examples name: a valid BBAN drawn from the seed and its IBAN."""
        bban = generate_bban(random.Random(self.seed))
        return {"iban": bban_to_iban(bban), "bban": bban, "currency": "NOK"}


#: An example body from its inputs; :data:`NO_BODY` for an operation without a body (its example
#: is the headers and the path alone).
Example = Callable[[ExampleInputs], Any]


@dataclass(frozen=True)
class OperationParts:
    """What the harness needs of one operation.

    ``builder`` makes the valid base request of every variant (``conformance.generate.variants``)
    with the set-up data it needs; ``example`` the body of its example request, or
    :data:`NO_BODY`, said explicitly, for an operation that takes none; ``created_id`` the member
    of a creation's answer that names what it created (the replay scenario compares it), None
    where no scenario reads it.

    Not a part here: the set-up templates a profile may give (``[setup] templates``) are for the
    contract's sandbox operations that write (``conformance.profile.templates``): the profile
    checks them when it is read, below this layer, from the contract itself.
    """

    builder: Builder
    example: Example
    created_id: str | None = None

    @property
    def takes_body(self) -> bool:
        """Whether the example has a body (the operation takes one)."""
        return self.example is not NO_BODY
