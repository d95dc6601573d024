"""``[consent] model``: which consent model the bank runs (spec 8 presupposes the PSU's consent
but shows no consent operation, so the model is the bank's choice; Berlin Group NextGenPSD2 names
three, and banks of the platform run a fourth):

- ``detailed``: the TPP names the accounts in ``access`` (the default);
- ``bank-offered``: ``access`` with empty lists, the PSU chooses the accounts at SCA ("Consent
  Request without Indication of Accounts"; the platform's banks take it at their own path,
  ``POST /v1/bank-offered-consents``, which ``[paths] CC`` names);
- ``global``: ``access.allPsd2 = "allAccounts"``, every account offered to the PSU;
- ``first-access``: no consent endpoint at all. The first account access of a TPP session
  (TPP-Session-ID) is answered 401 with ``_links.scaRedirect`` (spec 5 item 6's form); after
  that SCA the consent covers the PSU's accounts for that TPP session, and the same request sent
  again in the session is served. The consent operations (the contract's family ``consents``:
  CC, CS, CA, CG, CD) are then not applicable, with that reason.

The suite sends the model's body wherever it asks for a consent (under ``first-access`` it makes
the first access instead), and the consent read (CG) judges the access the model gives; the
reference server playing the profile takes only that model's body (or, ``first-access``, none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from conformance.profile.toml_table import Table

__all__ = ["CONSENT_MODELS", "FIRST_ACCESS", "ConsentModel", "ConsentSettings", "read"]

ConsentModel = Literal["detailed", "bank-offered", "global", "first-access"]
CONSENT_MODELS: tuple[ConsentModel, ...] = get_args(ConsentModel)
#: The model without a consent endpoint: the consent is given at the first account access.
FIRST_ACCESS: ConsentModel = "first-access"


@dataclass(frozen=True)
class ConsentSettings:
    """``[consent]``: the bank's consent model (see the module docstring)."""

    model: ConsentModel = "detailed"

    @property
    def at_first_access(self) -> bool:
        """Whether the consent is given at the first account access of a TPP session (no
        consent endpoint; ``first-access``)."""
        return self.model == FIRST_ACCESS

    def unsupported_reason(self, op_id: str, family: str) -> str | None:
        """Why the bank offers no consent operation ``op_id`` (family ``consents``) under its
        model, or None."""
        if family != "consents" or not self.at_first_access:
            return None
        return (
            f"{op_id} is a consent endpoint, and the profile's [consent] model is first-access: "
            "the bank has none; the first account access of a TPP session answers 401 with "
            "_links.scaRedirect and the consent is bound to that session"
        )


def read(table: Table) -> ConsentSettings:
    """``[consent]`` (every key checked; an unknown one is an error)."""
    text = table.get("model", str, ConsentSettings.model)
    model = next((choice for choice in CONSENT_MODELS if choice == text), None)
    if model is None:
        raise table.error("model", f"must be one of {', '.join(CONSENT_MODELS)}, not {text!r}")
    table.finish()
    return ConsentSettings(model)
