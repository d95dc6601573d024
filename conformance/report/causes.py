"""Failures that share a cause, as one entry: the reports list "must failures: 2 causes in 63
scenarios", each cause with the exact place and value that broke, the operations and scenarios it
touches, the spec part (and its quote), one example exchange and the command that replays it.

A cause is the id each finding carries (``conformance.problems.cause_id``): the check, the place
normalised and the kind of value, the same in every operation and scenario. Must causes group the
must findings of the failed scenarios; should causes the should findings of every scenario.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.contract import quoted, said
from conformance.problems import normalised_place
from conformance.report.masking import scrub
from conformance.report.verdicts import (
    ERROR,
    FAILED,
    Finding,
    ScenarioFacts,
    ScenarioVerdict,
    example_exchange,
)

__all__ = [
    "LISTED_SCENARIOS",
    "SHOWN_SCENARIOS",
    "Cause",
    "causes_of",
    "causes_summary",
    "scenario_lines",
    "spec_quote",
    "specific_first",
    "terminal_lines",
]

#: How many of a cause's scenarios the terminal names before "and N more".
SHOWN_SCENARIOS = 5
#: How many failed scenarios the terminal lists, one line each, before "and N more": a run
#: with hundreds of failures stays a few hundred lines (compliance.md lists every one).
LISTED_SCENARIOS = 100
#: How many lines of the example exchange the terminal shows.
_EXCHANGE_LINES = 24


_NAMED = re.compile(r"`([^`]+)`")
_INDICES = re.compile(r"\[[^\]]*\]")


#: A quote naming more things than this lists a whole body or table (the periodic body's
#: sentence) rather than stating the rule of one field.
_LISTING = 3


def specific_first(labels: Sequence[str], place: str) -> tuple[str, ...]:
    """The quote labels that state the rule broken at ``place``, the most specific sentence
    first: those that name ``place`` (a field's dotted path, a header: its last name, in
    backticks) before those that do not, and among them the one naming fewest other things
    first (``creditorName``'s own row of its body before the table of every payment name);
    otherwise in their order. ``place`` may be a report's (``body /creditorName``): its last
    name counts.

    Only the rule's own sentences are kept: where a quote names ``place``, one that names other
    things but not it is left out (the operation's sentence about its query, met on the way down
    to a body field), and so is a sentence listing a whole body where a quote of the place's own
    states it. A sentence that names nothing (a rule of spec 7) always stays."""
    words = re.split(r"[\s./]+", _INDICES.sub("", place).strip())
    name = next((word for word in reversed(words) if word), "").lower()
    texts = {quote.label: quote.text for quote in quoted(labels)}
    named = {
        label: [_INDICES.sub("", token).lower() for token in _NAMED.findall(texts.get(label, ""))]
        for label in labels
    }

    def names_place(label: str) -> bool:
        return bool(name) and any(token.endswith(name) for token in named[label])

    unique = list(dict.fromkeys(labels))
    naming = [label for label in unique if names_place(label)]
    if naming:
        own = [label for label in naming if len(named[label]) <= _LISTING] or naming
        unique = [label for label in unique if label in own or not named[label]]

    def key(label: str) -> tuple[bool, int]:
        return (not names_place(label), len(named[label]) if names_place(label) else 0)

    return tuple(sorted(unique, key=key))


def _place_of(title: str) -> str:
    """The place a finding's title starts with (```creditorName` (body) breaks ...``), or ""."""
    found = _NAMED.match(title)
    return found.group(1) if found else ""


def spec_quote(facts: ScenarioFacts, finding: Finding) -> str:
    """What interface.md says that ``finding`` broke in the scenario of ``facts``, for its
    cause's entry: each sentence once, as plain text, naming its spec part
    (``conformance.contract.said``), only the rule's own (:func:`specific_first`); "" where
    none is known.

    The one place the reports get a cause's quote from: the finding's quote labels, else its
    scenario's, resolved to text through ``conformance.contract`` (``quotes.json``). A should
    finding has none: it rests on a reading, which its cause names instead; nor has a must
    finding the bank promised (its cause names the promise).
    """
    if finding.level != "must" or finding.promise:
        return ""
    labels = specific_first(finding.quotes or facts.quotes, _place_of(finding.title))
    return said(quoted(labels))


@dataclass(frozen=True)
class Cause:
    """One cause and what it covers (see the module docstring)."""

    id: str
    level: str
    #: The exact place and value that broke, in the example scenario.
    title: str
    spec: str
    quote: str
    #: The readings its should findings rest on ("our reading: ..."), each once; "" for must.
    reading: str
    rules: tuple[str, ...]
    operations: tuple[str, ...]
    scenarios: tuple[str, ...]
    example: str
    exchange: str
    reproduce: str
    #: A must finding's ground where no sentence of the spec states it: the bank's own promise
    #: (its profile); "" otherwise.
    promise: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "level": self.level,
            "title": self.title,
            "spec": self.spec,
            "quote": self.quote,
            "reading": self.reading,
            "promise": self.promise,
            "rules": list(self.rules),
            "operations": list(self.operations),
            "scenarios": list(self.scenarios),
            "count": len(self.scenarios),
            "example": {
                "scenario": self.example,
                "exchange": self.exchange,
                "reproduce": self.reproduce,
            },
        }


def _covered(verdict: ScenarioVerdict, level: str) -> list[Finding]:
    """The findings of ``verdict`` that count under ``level``: the must findings of a failed
    scenario, or the should findings of any."""
    if level == "must" and verdict.verdict != FAILED:
        return []
    return [finding for finding in verdict.findings if finding.level == level and finding.cause]


def causes_of(
    verdicts: Iterable[ScenarioVerdict],
    level: str,
    order: Any = None,
) -> list[Cause]:
    """The causes of ``level`` among ``verdicts``, most scenarios first; ``order`` sorts the
    operations (``contract.operation_order``), by name when None."""
    found: dict[str, list[tuple[ScenarioVerdict, Finding]]] = {}
    for verdict in sorted(verdicts, key=lambda item: item.facts.id):
        for finding in _covered(verdict, level):
            found.setdefault(finding.cause, []).append((verdict, finding))
    causes = [_cause(cause, level, pairs, order) for cause, pairs in found.items()]
    return sorted(causes, key=lambda cause: (-len(cause.scenarios), cause.id))


def _cause(
    cause: str, level: str, pairs: Sequence[tuple[ScenarioVerdict, Finding]], order: Any
) -> Cause:
    example, finding = next(
        ((verdict, found) for verdict, found in pairs if verdict.text), pairs[0]
    )
    scenarios = tuple(dict.fromkeys(verdict.facts.id for verdict, _ in pairs))
    operations = sorted({verdict.facts.operation for verdict, _ in pairs}, key=order)
    return Cause(
        id=cause,
        level=level,
        title=_naming_every_place(finding.title, [found.title for _, found in pairs]),
        spec=finding.spec,
        quote=spec_quote(example.facts, finding),
        # one cause can rest on several readings (a basket's code list, an error body the spec
        # does not show): each is named once
        reading="; ".join(dict.fromkeys(found.reading for _, found in pairs if found.reading)),
        rules=tuple(sorted({verdict.facts.rule for verdict, _ in pairs})),
        operations=tuple(operations),
        scenarios=scenarios,
        example=example.facts.id,
        exchange=scrub(example_exchange(example.text)),
        reproduce=scrub(example.reproduce),
        promise=finding.promise,
    )


def _naming_every_place(title: str, titles: Sequence[str]) -> str:
    """The example's title naming every place its cause's findings broke: one rule broken on
    an IBAN in two fields of a family is one cause (``conformance.problems.Breach.key``), titled
    ```creditorAccount.iban`, `debtorAccount.iban` (body) breaks maxLength ...``."""
    place = _place_of(title)
    places = list(dict.fromkeys(normalised_place(_place_of(other)) for other in titles))
    if not place or len(places) < 2 or "" in places:
        return title
    return ", ".join(f"`{each}`" for each in places) + title.removeprefix(f"`{place}`")


def causes_summary(causes: Sequence[Mapping[str, Any]], level: str) -> str:
    """``must failures: 2 causes in 63 scenarios`` (the scenarios counted once each)."""
    scenarios = {scenario for cause in causes for scenario in cause["scenarios"]}
    what = "must failures" if level == "must" else "should findings"
    count = len(causes)
    return (
        f"{what}: {count} cause{'s' if count != 1 else ''} in {len(scenarios)} "
        f"scenario{'s' if len(scenarios) != 1 else ''}"
    )


def terminal_lines(cause: Mapping[str, Any], number: int) -> list[str]:
    """One cause as the terminal shows it: what broke, where, the spec, one example exchange
    and its replay command, and the scenarios it covers (the first few)."""
    scenarios = list(cause["scenarios"])
    lines = [
        f"CAUSE {number} ({cause['id']}, {cause['level']}): {cause['title']}",
        f"  operations: {', '.join(cause['operations'])}; rules: {', '.join(cause['rules'])}",
        f"  spec: {cause['spec']}",
    ]
    if cause["quote"]:  # each quote names its own spec part (:func:`spec_quote`)
        lines.append(f"  the spec says: {cause['quote']}")
    if cause["reading"]:
        lines.append(f"  our reading: {cause['reading']}")
    if cause.get("promise"):
        lines.append(f"  promised by the bank (not the spec): {cause['promise']}")
    example = cause["example"]
    lines.append(f"  example: {example['scenario']}")
    exchange = _request_and_answer(example["exchange"].splitlines())
    lines += [f"    {line}" for line in exchange[:_EXCHANGE_LINES]]
    if len(exchange) > _EXCHANGE_LINES:
        lines.append(f"    … ({len(exchange) - _EXCHANGE_LINES} more lines in compliance.md)")
    if example["reproduce"]:
        lines.append(f"  reproduce: {example['reproduce']}")
    shown = ", ".join(scenarios[:SHOWN_SCENARIOS])
    more = len(scenarios) - SHOWN_SCENARIOS
    lines.append(
        f"  {len(scenarios)} scenario{'s' if len(scenarios) != 1 else ''}: {shown}"
        + (f" and {more} more (compliance.md lists them all)" if more > 0 else "")
    )
    return lines


def _request_and_answer(lines: Sequence[str]) -> list[str]:
    """The request line of an exchange and its whole answer (the request's headers, signing
    string and body are in compliance.md)."""
    answer = next((index for index, line in enumerate(lines) if line.startswith("<<< ")), None)
    if answer is None or answer == 0:
        return list(lines)
    return [lines[0], "(request headers, signing string and body: compliance.md)", *lines[answer:]]


def scenario_lines(verdicts: Iterable[ScenarioVerdict], most: int = LISTED_SCENARIOS) -> list[str]:
    """The failed and erred scenarios, one line each (``FAILED E16-... (cause-1a2b3c4d): why``),
    at most ``most`` of them and then one line saying how many more there are and where they
    are all listed; printed after the causes, which say what broke."""
    listed = sorted(
        (verdict for verdict in verdicts if verdict.verdict in (FAILED, ERROR)),
        key=lambda verdict: (verdict.verdict != FAILED, verdict.facts.id),
    )
    lines = []
    for verdict in listed[:most]:
        causes = dict.fromkeys(
            found.cause for found in verdict.findings if found.cause and found.level == "must"
        )
        named = f" ({', '.join(causes)})" if causes else ""
        lines.append(f"{verdict.verdict.upper()} {verdict.facts.id}{named}: {verdict.reason}")
    if len(listed) > most:
        lines.append(
            f"... and {len(listed) - most} more (compliance.md lists every one; "
            "conformance run --last-failed runs them again)"
        )
    return lines
