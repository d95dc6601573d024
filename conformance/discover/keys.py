"""What a profile says for each key discovery decides (:func:`matches`): the one comparison the
draft (a base profile's value against the bank's answers), ``--check`` and the round-trip tests
share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from conformance.discover.products import NCBCT

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.discover.evidence import Decision, Key
    from conformance.profile import TargetProfile

__all__ = ["matches", "profile_value"]


def profile_value(profile: TargetProfile, key: Key, contract: Contract) -> Any:
    """The value ``profile`` gives ``key`` (the suite's default where it names none)."""
    ops = contract.operations
    head = key[0]
    if key == ("base_url",):
        return profile.base_url.rstrip("/")
    if key == ("sandbox",):
        return profile.sandbox
    if key == ("operations", "unsupported"):
        if profile.supported_operations is not None:
            return sorted(set(ops) - set(profile.supported_operations))
        return sorted(profile.unsupported_operations)
    if key == ("product_ids", "ncbct"):
        return profile.product_ids.get(NCBCT, NCBCT)
    if head == "paths" and key[-1] == "periodic":
        return profile.periodic_paths.get(key[1], ops[key[1]].path)
    if head == "paths":
        return profile.paths.get(key[1], ops[key[1]].path)
    if key == ("sca", "start"):
        return profile.sca.start
    if key == ("sca", "approach"):
        return profile.sca.approach
    if key == ("consent", "model"):
        return profile.consent.model
    if head == "headers":
        return next((v for n, v in profile.headers.items() if n.lower() == key[1].lower()), None)
    if head == "required_headers":
        return tuple(profile.required_for(ops[key[1]]))
    if key == ("setup", "templates"):
        return {op: dict(fields) for op, fields in profile.setup_templates.items()}
    raise KeyError(key)


def matches(decision: Decision, profile: TargetProfile, contract: Contract) -> bool:
    """Whether ``profile`` says what ``decision`` decided: a header demanded is named (its value
    is the TPP's); a header set is the same set; every template field the bank demands is in
    the profile's template (a template may give more than the bank demands); anything else
    equal."""
    said = profile_value(profile, decision.key, contract)
    value = decision.value
    if decision.key[0] == "headers":
        return said is not None
    if decision.key[0] == "required_headers":
        return {h.lower() for h in said} == {h.lower() for h in value}
    if decision.key == ("setup", "templates"):
        return all(
            name in said.get(op_id, {}) for op_id, fields in value.items() for name in fields
        )
    if decision.key == ("base_url",):
        return bool(said == str(value).rstrip("/"))
    return bool(said == value)
