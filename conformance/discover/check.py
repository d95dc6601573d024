"""``conformance discover --check``: where the bank now answers otherwise than its profile says
(:func:`differences`), a TPP's early warning that its bank changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.discover.evidence import Decision
from conformance.discover.keys import matches, profile_value

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.discover.session import Discovery
    from conformance.profile import TargetProfile

__all__ = ["differences"]


def _said(decision: Decision, profile: TargetProfile, contract: Contract) -> str:
    value = profile_value(profile, decision.key, contract)
    if decision.key[0] == "headers":
        return "not named" if value is None else "named"
    return repr(value)


def differences(found: Discovery, profile: TargetProfile, contract: Contract) -> list[str]:
    """One line per decided key the profile says otherwise: the key, what the profile says,
    what the bank answered and the first exchange that shows it."""
    lines = []
    for decision in found.decisions:
        if not decision.is_decided or decision.key == ("base_url",):
            continue
        if matches(decision, profile, contract):
            continue
        shown = "named" if decision.key[0] == "headers" else repr(decision.value)
        first = decision.evidence[0] if decision.evidence else ""
        lines.append(
            f"{decision.name}: the profile says {_said(decision, profile, contract)}, the bank "
            f"answered {shown} ({first})"
        )
    return lines
