"""What a profile says for each key discovery decides (:func:`matches`): the one comparison the
draft (a base profile's value against the bank's answers), ``--check`` and the round-trip tests
share."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from conformance.discover.products import NCBCT

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.discover.evidence import Decision
    from conformance.profile import TargetProfile

from conformance.discover.evidence import Key

__all__ = ["matches", "profile_value"]


#: The keys of one value each: what the profile says for them.
_SINGLE: dict[Key, Callable[[TargetProfile, Contract], Any]] = {
    ("base_url",): lambda profile, _: profile.base_url.rstrip("/"),
    ("sandbox",): lambda profile, _: profile.sandbox,
    ("operations", "unsupported"): lambda profile, contract: _unsupported(profile, contract),
    ("product_ids", "ncbct"): lambda profile, _: profile.product_ids.get(NCBCT, NCBCT),
    ("sca", "start"): lambda profile, _: profile.sca.start,
    ("sca", "approach"): lambda profile, _: profile.sca.approach,
    ("consent", "model"): lambda profile, _: profile.consent.model,
    ("setup", "templates"): lambda profile, _: {
        op: dict(fields) for op, fields in profile.setup_templates.items()
    },
}


def _unsupported(profile: TargetProfile, contract: Contract) -> list[str]:
    if profile.supported_operations is not None:
        return sorted(set(contract.operations) - set(profile.supported_operations))
    return sorted(profile.unsupported_operations)


def profile_value(profile: TargetProfile, key: Key, contract: Contract) -> Any:
    """The value ``profile`` gives ``key`` (the suite's default where it names none)."""
    if key in _SINGLE:
        return _SINGLE[key](profile, contract)
    ops = contract.operations
    if key[0] == "paths" and key[-1] == "periodic":
        return profile.periodic_paths.get(key[1], ops[key[1]].path)
    if key[0] == "paths":
        return profile.paths.get(key[1], ops[key[1]].path)
    if key[0] == "headers":
        return next((v for n, v in profile.headers.items() if n.lower() == key[1].lower()), None)
    if key[0] == "required_headers":
        return tuple(profile.required_for(ops[key[1]]))
    if key[0] == "query":
        return profile.query_name(key[1], key[2])
    raise KeyError(key)


def matches(decision: Decision, profile: TargetProfile, contract: Contract) -> bool:
    """Whether ``profile`` says what ``decision`` decided: a header demanded is named (its value
    is the TPP's); a header set is the same set; every template field the bank demands is in
    the profile's template (a template may give more than the bank demands); anything else
    equal. Header sets are compared without the headers the suite sends beyond the contract's
    set anyway (``Operation.also_sent``)."""
    said = profile_value(profile, decision.key, contract)
    value = decision.value
    if decision.key[0] == "headers":
        return said is not None
    if decision.key[0] == "required_headers":  # also_sent: sent by the suite either way
        also = {h.lower() for h in contract.operations[decision.key[1]].also_sent}
        return {h.lower() for h in said} - also == {h.lower() for h in value} - also
    if decision.key == ("setup", "templates"):
        return all(
            name in said.get(op_id, {}) for op_id, fields in value.items() for name in fields
        )
    if decision.key == ("base_url",):
        return bool(said == str(value).rstrip("/"))
    return bool(said == value)
