"""The traffic judge's verdict on each kept exchange, in the record's order (the scenarios by
id, each one's exchanges as made), so that sealing and verifying judge the same sequence.

This is what ``conformance verify`` can recompute from the exchanges alone: the scenario
verdicts also rest on what each scenario meant to send and expected (its mutation, its flow's
state), which the exchanges do not carry, so those are sealed and compared, not recomputed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.profile import load_profile, profile_from_options
from conformance.traffic.judge import TrafficJudge
from conformance.traffic.options import judge_for

if TYPE_CHECKING:
    from conformance.exchange import Exchange

__all__ = ["ScenarioExchanges", "judge_exchanges", "judge_kept"]

#: A scenario's id, the name of its file in ``exchanges/``, and its exchanges with their moments.
ScenarioExchanges = tuple[str, str, Sequence[tuple["Exchange", datetime]]]


def judge_exchanges(judge: TrafficJudge, scenarios: Sequence[ScenarioExchanges]) -> list[Any]:
    """One entry per exchange: where it is kept (file and position), the operation it was
    routed to, why it was not judged (``skipped``) and each finding as ``side level rule at
    place``; in the order given, which is the order judged."""
    verdicts: list[dict[str, Any]] = []
    for scenario, name, exchanges in scenarios:
        for position, (exchange, at) in enumerate(exchanges):
            judged = judge.judge(exchange, at=at)
            verdicts.append(
                {
                    "scenario": scenario,
                    "file": name,
                    "position": position,
                    "operation": judged.operation,
                    "skipped": judged.skipped,
                    "findings": [finding.line() for finding in judged.findings],
                }
            )
    return verdicts


def judge_kept(scenarios: Sequence[ScenarioExchanges], profile: Path | None) -> list[Any]:
    """:func:`judge_exchanges` by a fresh judge of ``profile`` (its paths, product ids, header
    sets, clock skew; without one, the contract's own choices, as ``conformance judge``)."""
    loaded = (
        load_profile(profile)
        if profile is not None
        else profile_from_options(target="http://recorded.invalid", environ={})
    )
    return judge_exchanges(judge_for(loaded, []), scenarios)
