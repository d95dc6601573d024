"""The consent model (``[consent] model``, and ``[paths] CC`` where the bank takes consents at a
path of its own), among those the suite knows: spec 8 presupposes the PSU's consent and shows no
consent operation, so the model is the bank's choice.

In order: a consent naming an account at the contract's ``/v1/consents`` (made: ``detailed``);
when refused, a bank-offered consent at the platform's ``/v1/bank-offered-consents``, then a
bank-offered and a global one at ``/v1/consents``; when no consent endpoint exists at all (404
everywhere), the first account access of a fresh TPP session: answered 401 with an SCA link, it
is ``first-access``. Every consent made is deleted again as the clean-up does."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from conformance.discover.evidence import Decision, decided, undecided
from conformance.discover.sca import approach_of
from conformance.generate import factories
from conformance.profile.consent_model import ConsentSettings

if TYPE_CHECKING:
    from conformance.discover.probe import Prober
    from conformance.exchange import Exchange

__all__ = ["BANK_OFFERED_PATH", "decide_consent"]

#: Where the platform's banks take bank-offered consents (profiles/README.md, ``[consent]``).
BANK_OFFERED_PATH = "/v1/bank-offered-consents"
_MODEL = ("consent", "model")
_PATH = ("paths", "CC")
#: An account the consent names (a valid Norwegian IBAN; no bank need hold it to take a
#: consent request).
_IBAN = "NO9386011117947"
_SEED = 31


def _ask(prober: Prober, model: str, path: str | None = None) -> Exchange | None:
    body = factories.consent_request(_SEED, [_IBAN], model=model)
    return prober.request("CC", body=body, path=path)


def decide_consent(prober: Prober) -> list[Decision]:
    """``[consent] model`` and ``[paths] CC`` (module docstring)."""
    contract_path = prober.contract.operations["CC"].path
    seen: list[Exchange] = []
    detailed = _ask(prober, "detailed")
    if detailed is not None:
        seen.append(detailed)
        if detailed.status == 201:
            return [decided(_MODEL, "detailed", detailed), decided(_PATH, contract_path, detailed)]
    for model, path in (
        ("bank-offered", BANK_OFFERED_PATH),
        ("bank-offered", None),
        ("global", None),
    ):
        answer = _ask(prober, model, path)
        if answer is None:
            continue
        seen.append(answer)
        if answer.status == 201:
            where = path or contract_path
            return [decided(_MODEL, model, *seen), decided(_PATH, where, answer)]
    if seen and all(exchange.status == 404 for exchange in seen):
        session = {"TPP-Session-ID": str(uuid.UUID(int=3100, version=4))}
        first = prober.request("AL", headers=session)
        if first is not None and first.status == 401 and approach_of(first) is not None:
            return [
                decided(_MODEL, "first-access", *seen, first),
                undecided(_PATH, contract_path, "first-access: the bank has no consent endpoint"),
            ]
        seen.extend(() if first is None else (first,))
    why = "no consent body was taken and the first account access asked for no SCA"
    return [
        undecided(_MODEL, ConsentSettings.model, why, *seen),
        undecided(_PATH, contract_path, why),
    ]
