"""Scenario generation: the contract in, every scenario out, sorted by id; pure and deterministic
(one module per scenario kind), plus the pytest markers of a scenario.

The kinds (:data:`FAMILIES`): ``positive``, ``constraint``, ``header``, ``auth``, ``rule``,
``flow``, ``version``, ``robustness``; ``smoke`` picks a smoke run's scenarios. Beside them
``mutations`` walks a schema for the one change a scenario makes, ``breaking_values`` computes the
value that breaks one constraint, ``variants`` names the base requests, and ``factories`` makes
valid bodies (set-up data uses them too). No network, no clock, no global randomness: what keeps
scenario ids stable across runs and workers.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterable, Iterator

from conformance.contract import Contract
from conformance.errors import ContractError
from conformance.generate import (
    auth,
    constraint,
    flow,
    header,
    positive,
    robustness,
    rule,
    version,
)
from conformance.generate._common import Context, on_unnamed_operation
from conformance.scenario import Scenario

__all__ = [
    "FAMILIES",
    "all_marker_names",
    "build_scenarios",
    "generate_scenarios",
    "marker_name",
    "scenario_markers",
]

#: The family generators, by kind.
FAMILIES: tuple[tuple[str, Callable[[Context], Iterator[Scenario]]], ...] = (
    ("positive", positive.generate),
    ("constraint", constraint.generate),
    ("header", header.generate),
    ("auth", auth.generate),
    ("rule", rule.generate),
    ("flow", flow.generate),
    ("version", version.generate),
    ("robustness", robustness.generate),
)

_CACHE: weakref.WeakKeyDictionary[Contract, tuple[Scenario, ...]] = weakref.WeakKeyDictionary()
_NOT_NAME = re.compile(r"[^A-Za-z0-9]+")
_PARENTHESES = re.compile(r"\([^)]*\)")


def generate_scenarios(contract: Contract) -> tuple[Scenario, ...]:
    """Every scenario of ``contract``, sorted by id; built once per contract object and cached
    (:func:`build_scenarios` does the work)."""
    cached = _CACHE.get(contract)
    if cached is None:
        cached = _CACHE[contract] = build_scenarios(contract)
    return cached


def build_scenarios(contract: Contract) -> tuple[Scenario, ...]:
    """Every scenario of ``contract``, sorted by id, built afresh (no cache).

    Raises :class:`~conformance.errors.ContractError` when two scenarios would share an id (also
    when they differ only in letter case, which would collide in report file names): that is a
    contract that generation cannot express, and the message names the id.
    """
    context = Context(contract)
    scenarios = sorted(
        (
            on_unnamed_operation(scenario, contract)
            for _kind, family in FAMILIES
            for scenario in family(context)
        ),
        key=lambda scenario: scenario.id,
    )
    seen: dict[str, str] = {}
    for scenario in scenarios:
        folded = scenario.id.lower()
        if folded in seen:
            raise ContractError(
                f"scenario id {scenario.id!r} is generated twice (also as {seen[folded]!r})"
            )
        seen[folded] = scenario.id
    return tuple(scenarios)


def marker_name(text: str) -> str:
    """``text`` as a marker name: other characters become ``_`` (``ERR-7-x`` → ``ERR_7_x``)."""
    name = _NOT_NAME.sub("_", text).strip("_")
    if not name:
        raise ValueError(f"{text!r} gives no marker name")
    return name if name[0].isalpha() else f"m_{name}"


def _spec_markers(spec: str) -> tuple[str, ...]:
    """``spec 7 rule 6, spec 3`` → ``spec_7_rule_6``, ``spec_3``; release notes in parentheses
    (``spec 9 (1.17.4)``) and ``/``-joined parts (``spec 2.9/4.3``) are split or dropped."""
    names = []
    for part in spec.split(","):
        part = _PARENTHESES.sub("", part).strip()
        if not part:
            continue
        head, _, tail = part.partition("/")
        names.append(marker_name(head))
        if tail:
            names.append(marker_name(f"spec {tail}" if head.startswith("spec") else tail))
    return tuple(names)


def scenario_markers(scenario: Scenario) -> tuple[str, ...]:
    """The markers of a scenario: operation id, level, kind, rule id and spec part(s), in that
    order and without repeats (``E16``, ``must``, ``constraint``, ``SCH_maxLength``, ``spec_8``)."""
    names = (
        marker_name(scenario.operation),
        scenario.level,
        scenario.kind,
        marker_name(scenario.rule),
        *_spec_markers(scenario.spec),
    )
    return tuple(dict.fromkeys(names))


def all_marker_names(scenarios: Iterable[Scenario]) -> tuple[str, ...]:
    """Every marker the scenarios use, sorted, for ``config.addinivalue_line("markers", ...)``."""
    return tuple(sorted({name for scenario in scenarios for name in scenario_markers(scenario)}))
