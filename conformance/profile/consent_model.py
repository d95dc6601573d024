"""``[consent] model``: which consent model the bank runs (spec 8 presupposes the PSU's consent
but shows no consent operation, so the model is the bank's choice; Berlin Group NextGenPSD2 names
three):

- ``detailed``: the TPP names the accounts in ``access`` (the default);
- ``bank-offered``: ``access`` with empty lists, the PSU chooses the accounts at SCA ("Consent
  Request without Indication of Accounts"; the platform's banks take it at their own path,
  ``POST /v1/bank-offered-consents``, which ``[paths] CC`` names);
- ``global``: ``access.allPsd2 = "allAccounts"``, every account offered to the PSU.

The suite sends the model's body wherever it asks for a consent, and the consent read (CG)
judges the access the model gives; the reference server playing the profile takes only that
model's body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from conformance.profile.toml_table import Table

__all__ = ["CONSENT_MODELS", "ConsentModel", "ConsentSettings", "read"]

ConsentModel = Literal["detailed", "bank-offered", "global"]
CONSENT_MODELS: tuple[ConsentModel, ...] = get_args(ConsentModel)


@dataclass(frozen=True)
class ConsentSettings:
    """``[consent]``: the bank's consent model (see the module docstring)."""

    model: ConsentModel = "detailed"


def read(table: Table) -> ConsentSettings:
    """``[consent]`` (every key checked; an unknown one is an error)."""
    text = table.get("model", str, "detailed")
    model = next((choice for choice in CONSENT_MODELS if choice == text), None)
    if model is None:
        raise table.error("model", f"must be one of {', '.join(CONSENT_MODELS)}, not {text!r}")
    table.finish()
    return ConsentSettings(model)
