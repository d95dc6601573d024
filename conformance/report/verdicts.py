"""The verdict words of a report, the scenario facts that travel with pytest's reports, and how a
test's phase reports become one verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.scenario import Scenario

__all__ = [
    "BLOCKED",
    "BLOCKED_PREFIX",
    "ERROR",
    "FAILED",
    "FAILED_SHOULD",
    "NOT_APPLICABLE",
    "NOT_APPLICABLE_PREFIX",
    "PASSED",
    "SKIPPED",
    "VERDICTS",
    "WAIVED",
    "WAIVED_PREFIX",
    "ReportedFailure",
    "ScenarioFacts",
    "ScenarioVerdict",
    "blocked_causes",
    "final_verdict",
    "first_line",
    "read_reproduce",
    "read_retries",
    "read_verdict",
    "reproduce_line",
    "reproduce_properties",
    "retries_properties",
    "verdict_properties",
]

PASSED = "passed"
FAILED = "failed"
FAILED_SHOULD = "failed (should)"
NOT_APPLICABLE = "not applicable"
#: The data the scenario needs could not be created on the target (a refused set-up request).
BLOCKED = "blocked"
#: The profile waives the scenario (its ``[[waivers]]``, with a reason): not run, not passed.
WAIVED = "waived"
SKIPPED = "skipped"
ERROR = "error"
#: Every verdict, in the order a report lists their counts.
VERDICTS: tuple[str, ...] = (
    PASSED,
    FAILED,
    FAILED_SHOULD,
    NOT_APPLICABLE,
    WAIVED,
    BLOCKED,
    SKIPPED,
    ERROR,
)
#: Which verdict wins when the phases of one test disagree (a teardown error after a pass).
_WEIGHT = {
    PASSED: 0,
    SKIPPED: 1,
    NOT_APPLICABLE: 2,
    WAIVED: 3,
    BLOCKED: 4,
    FAILED_SHOULD: 5,
    FAILED: 6,
    ERROR: 7,
}

#: The skip reason of a not-applicable scenario starts with this (``pytest.skip`` text).
NOT_APPLICABLE_PREFIX = "not applicable: "
#: The skip reason of a blocked scenario starts with this.
BLOCKED_PREFIX = "blocked: "
#: The skip reason of a waived scenario starts with this.
WAIVED_PREFIX = "waived: "

#: user_properties names (also the JUnit ``<property>`` names).
_SCENARIO = "scenario"
_ASSUMPTION = "assumption"
_VERDICT = "verdict"
_REASON = "reason"
_FINDINGS = "findings"
_RETRIES = "retries"
_REPRODUCE = "reproduce"
_QUOTE = "quote"
_READING = "reading"
#: The line a failure message puts before its replay command (checks.ConformanceFailure).
_REPRODUCE_HEADING = "Reproduce with:"
_FIELDS = ("operation", "rule", "spec", "level", "kind", "title")


@dataclass(frozen=True)
class Finding:
    """One finding of a scenario, as the reports list it: its tier (``must``: the spec states
    it; ``should``: it rests on our reading of the spec), what is wrong, the spec part, for a
    must finding the labels of the quotes that state it (``quotes.json``), for a should finding
    the reading it rests on ("our reading: ...")."""

    level: str
    title: str
    spec: str
    reading: str = ""
    quotes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "title": self.title,
            "spec": self.spec,
            "reading": self.reading,
            "quotes": list(self.quotes),
        }

    @classmethod
    def from_dict(cls, item: Mapping[str, Any]) -> Finding:
        return cls(
            str(item["level"]),
            str(item["title"]),
            str(item["spec"]),
            str(item.get("reading", "")),
            tuple(item.get("quotes", ())),
        )


#: The reading of a should-level scenario's failure when the scenario names none.
ASSUMED_READING = "the requirement rests on the suite's assumption (listed with the scenario)"


def graded(findings: Iterable[Finding], level: str, *, reading: str = "") -> tuple[Finding, ...]:
    """``findings`` as a scenario of ``level`` reports them: in a should-level scenario (one
    whose requirement rests on a reading of the spec) every finding is a should one, resting on
    the scenario's ``reading``; a 5xx there is not promoted (the spec states no rule against it:
    E2 and E17 list 500)."""
    if level != "should":
        return tuple(findings)
    return tuple(
        Finding("should", f.title, f.spec, f.reading or reading or ASSUMED_READING)
        if f.level == "must"
        else f
        for f in findings
    )


class ReportedFailure(AssertionError):
    """A :class:`~conformance.checks.ConformanceFailure` as the reports show it.

    ``text`` is the failure's whole message (what was sent, what came back, what the spec says,
    how to replay it) with identity numbers already masked, so that every report made from the
    exception (terminal, JUnit, Allure's status message) carries the masked text only.
    ``findings`` lists its must and should findings; ``always_must``: a failure no grading
    softens (a 5xx).
    """

    def __init__(
        self, text: str, findings: Sequence[Finding] = (), *, always_must: bool = False
    ) -> None:
        super().__init__(text)
        self.text = text
        self.findings = tuple(findings)
        self.always_must = always_must

    @property
    def tier(self) -> str:
        """``must`` when any finding is (the scenario fails), else ``should``."""
        return "must" if any(f.level == "must" for f in self.findings) else "should"

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class ScenarioFacts:
    """What a report says about a scenario besides its verdict (no request data, no secrets)."""

    id: str
    operation: str
    rule: str
    spec: str
    level: str
    kind: str
    title: str
    assumptions: tuple[str, ...] = ()
    #: Labels of the quotes that state the requirement (must scenarios).
    quotes: tuple[str, ...] = ()
    #: The reading the requirement rests on (should scenarios).
    reading: str = ""

    @classmethod
    def of(cls, scenario: Scenario) -> ScenarioFacts:
        return cls(
            id=scenario.id,
            operation=scenario.operation,
            rule=scenario.rule,
            spec=scenario.spec,
            level=scenario.level,
            kind=scenario.kind,
            title=scenario.title,
            assumptions=tuple(scenario.assumptions),
            quotes=tuple(scenario.quotes),
            reading=scenario.reading,
        )

    def properties(self) -> list[tuple[str, str]]:
        """The facts as ``user_properties`` pairs (strings only: JUnit and xdist carry them);
        a quote travels as its label and its text (``quote``: ``label: spec: text``)."""
        pairs = [(_SCENARIO, self.id)]
        pairs += [(name, getattr(self, name)) for name in _FIELDS]
        pairs += [(_ASSUMPTION, text) for text in self.assumptions]
        pairs += [(_QUOTE, _quote_property(label)) for label in self.quotes]
        if self.reading:
            pairs.append((_READING, self.reading))
        return pairs

    @classmethod
    def from_properties(cls, properties: Iterable[tuple[str, Any]]) -> ScenarioFacts | None:
        """The facts back from a report's ``user_properties``; None for a test of no scenario."""
        values: dict[str, str] = {}
        assumptions: list[str] = []
        quotes: list[str] = []
        reading = ""
        for name, value in properties:
            if name == _ASSUMPTION:
                assumptions.append(str(value))
            elif name == _QUOTE:
                quotes.append(str(value).partition(":")[0])
            elif name == _READING:
                reading = str(value)
            elif name == _SCENARIO or name in _FIELDS:
                values.setdefault(name, str(value))
        if _SCENARIO not in values:
            return None
        return cls(
            id=values[_SCENARIO],
            assumptions=tuple(assumptions),
            quotes=tuple(quotes),
            reading=reading,
            **{name: values.get(name, "") for name in _FIELDS},
        )


def _quote_property(label: str) -> str:
    """``label: spec part: "text"`` for JUnit's ``<property name="quote">``."""
    from conformance.contract import quoted  # the default contract, loaded once per process

    found = quoted((label,))
    return f'{label}: {found[0].spec}: "{found[0].text}"' if found else label


@dataclass(frozen=True)
class ScenarioVerdict:
    """One scenario's outcome in a run: its facts, the verdict, one line saying why."""

    facts: ScenarioFacts
    verdict: str
    reason: str = ""
    duration: float = 0.0
    findings: tuple[Finding, ...] = ()
    retries: int = 0
    #: The ``conformance call`` command that replays the judged request of a failure.
    reproduce: str = ""


def verdict_properties(
    verdict: str, reason: str, findings: Sequence[Finding] = ()
) -> list[tuple[str, str]]:
    """The pairs the teardown report carries: the final verdict, its one-line reason and the
    findings (JSON)."""
    pairs = [(_VERDICT, verdict)]
    if reason:
        pairs.append((_REASON, reason))
    if findings:
        pairs.append((_FINDINGS, json.dumps([finding.as_dict() for finding in findings])))
    return pairs


def reproduce_line(text: str) -> str:
    """The replay command of a failure message: the line after its last "Reproduce with:"
    (the judged exchange comes last), or "" when it has none."""
    lines = text.splitlines()
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].strip() == _REPRODUCE_HEADING and index + 1 < len(lines):
            return lines[index + 1].strip()
    return ""


def reproduce_properties(command: str) -> list[tuple[str, str]]:
    """The pair that carries a failure's replay command (none: no pair)."""
    return [(_REPRODUCE, command)] if command else []


def read_reproduce(properties: Iterable[tuple[str, Any]]) -> str:
    """The replay command a teardown report carries, or ""."""
    return next((str(value) for name, value in properties if name == _REPRODUCE), "")


def retries_properties(retries: int) -> list[tuple[str, str]]:
    """The pair that says how many throttled answers the scenario waited out (none: no pair)."""
    return [(_RETRIES, str(retries))] if retries else []


def read_retries(properties: Iterable[tuple[str, Any]]) -> int:
    """The throttled answers a teardown report says its scenario waited out."""
    return next((int(value) for name, value in properties if name == _RETRIES), 0)


def read_findings(properties: Iterable[tuple[str, Any]]) -> tuple[Finding, ...]:
    """The findings a teardown report carries (none when it carries none)."""
    for name, value in properties:
        if name == _FINDINGS:
            return tuple(Finding.from_dict(item) for item in json.loads(str(value)))
    return ()


def read_verdict(properties: Iterable[tuple[str, Any]]) -> tuple[str, str] | None:
    """The ``(verdict, reason)`` a teardown report carries, or None."""
    verdict: str | None = None
    reason = ""
    for name, value in properties:
        if name == _VERDICT:
            verdict = str(value)
        elif name == _REASON:
            reason = str(value)
    return None if verdict is None else (verdict, reason)


def final_verdict(phases: Sequence[tuple[str, str]]) -> tuple[str, str]:
    """The verdict of a test from its phases' ``(verdict, reason)``: the heaviest wins."""
    if not phases:
        return ERROR, "no outcome was reported"
    return max(phases, key=lambda pair: _WEIGHT.get(pair[0], _WEIGHT[ERROR]))


def first_line(text: str, limit: int = 300) -> str:
    """The first non-empty line of ``text``, cut to ``limit`` characters."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped if len(stripped) <= limit else stripped[: limit - 1] + "…"
    return ""


def blocked_causes(
    verdicts: Iterable[ScenarioVerdict], verdict_word: str = BLOCKED
) -> list[tuple[str, int]]:
    """The causes of the blocked scenarios (or of those with another ``verdict_word``: the
    reasons of the waived), each once with how many it covered (most first): a shared set-up
    that fails blocks hundreds of scenarios for one reason."""
    counts: dict[str, int] = {}
    for verdict in verdicts:
        if verdict.verdict == verdict_word:
            counts[verdict.reason] = counts.get(verdict.reason, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))
