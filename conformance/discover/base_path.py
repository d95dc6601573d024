"""Where the interface answers: the preflight's probes (a signed GET of the account list and of
the sandbox customer list, whose paths name no resource) at the URL given, then at the shorter
base URLs the preflight proposes (:func:`conformance.bankside.preflight.base_url_candidates`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.bankside.preflight import base_url_candidates
from conformance.discover.evidence import Decision, decided, describe, undecided
from conformance.discover.probe import interface_answer

if TYPE_CHECKING:
    from conformance.discover.probe import Prober
    from conformance.exchange import Exchange

__all__ = ["PROBES", "decide_base_url"]

#: The operations whose GET has no path parameter (the preflight's probes).
PROBES = ("AL", "E9")


def _answering(prober: Prober) -> tuple[Exchange | None, list[Exchange]]:
    """The first probe the interface answered (not 404), and every answer seen."""
    seen: list[Exchange] = []
    for op_id in PROBES:
        exchange = prober.request(op_id, repeat=True)
        if exchange is None:
            continue
        seen.append(exchange)
        if exchange.status != 404 and interface_answer(exchange):
            return exchange, seen
    return None, seen


def decide_base_url(prober: Prober) -> Decision:
    """``base_url``: the URL given when the interface answers there, else the first shorter one
    where it does (the prober then probes there); undecided when it answers nowhere, which ends
    the discovery (every other key needs the interface)."""
    given = prober.profile.base_url
    answer, seen = _answering(prober)
    if answer is not None:
        return decided(("base_url",), given, answer)
    if seen and all(exchange.status == 404 for exchange in seen):
        for candidate in base_url_candidates(given):
            prober.adopt(base_url=candidate)
            moved, _ = _answering(prober)
            if moved is not None:
                return decided(
                    ("base_url",), candidate, *seen, f"then {describe(moved)} at {candidate}"
                )
        prober.adopt(base_url=given)
    why = "the interface answered none of the probes"
    if seen:
        statuses = sorted({exchange.status for exchange in seen})
        why += f" (HTTP {', '.join(map(str, statuses))}"
        why += ", not JSON)" if not any(interface_answer(e) for e in seen) else ")"
    elif prober.silent:
        why += f" ({prober.silent[-1]})"
    return undecided(("base_url",), given, why, *seen)
