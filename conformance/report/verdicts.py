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
    "NOT_JUDGED_EXIT",
    "PASSED",
    "SKIPPED",
    "VERDICTS",
    "WAIVED",
    "WAIVED_PREFIX",
    "NotJudged",
    "ReportedFailure",
    "ScenarioFacts",
    "ScenarioVerdict",
    "blocked_causes",
    "cause_lines",
    "cause_properties",
    "example_exchange",
    "final_verdict",
    "first_line",
    "not_judged_properties",
    "read_not_judged",
    "read_reproduce",
    "read_retries",
    "read_verdict",
    "reproduce_line",
    "reproduce_properties",
    "retries_properties",
    "setup_failure",
    "verdict_properties",
    "with_reproduce",
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
_CAUSE = "cause"
_CAUSE_SUMMARY = "cause_summary"
_NOT_JUDGED = "not_judged"
_QUOTE = "quote"
_READING = "reading"
_REQUIREMENT = "requirement"
#: The line a failure message puts before its replay command (checks.ConformanceFailure).
_REPRODUCE_HEADING = "Reproduce with:"
_FIELDS = ("operation", "rule", "spec", "level", "kind", "title")


@dataclass(frozen=True)
class Finding:
    """One finding of a scenario, as the reports list it: its tier (``must``: the spec states
    it; ``should``: it rests on our reading of the spec), what is wrong (the exact place and
    value), the spec part, for a must finding the labels of the quotes that state it
    (``quotes.json``), for a should finding the reading it rests on ("our reading: ..."), and the
    id of its cause (``conformance.problems.cause_id``: the findings of one cause are one entry in
    every report). ``promise``: a must finding that no sentence of the spec states but the bank
    promised in its profile (``[response_headers] promised``, ``[operations] promised``): what
    it promised; such a finding counts as a must one for that bank, and names the promise
    instead of a quote.

    A finding of judged traffic (``conformance.traffic``) also names the ``side`` that broke the
    rule (``TPP``: its request; ``bank``: its answer), the ``rule`` (a stable
    requirement id: ``TPP-signature-digest``, ``ERR-2-kid-invalid``, ``BANK-status``) and the
    ``place`` (a header name, a JSON pointer into the body, ``status``). A scenario's findings
    leave the three empty: a scenario judges the bank, and its facts name the rule."""

    level: str
    title: str
    spec: str
    reading: str = ""
    quotes: tuple[str, ...] = ()
    cause: str = ""
    promise: str = ""
    side: str = ""
    rule: str = ""
    place: str = ""

    @property
    def quote(self) -> str:
        """The quoted sentences, each naming its spec part ("" for none)."""
        from conformance.contract.requirements import quote_text  # the contract, on use only

        return quote_text(self.quotes)

    def line(self) -> str:
        """``TPP must TPP-signature-digest at Digest: ...``: the finding in one line."""
        named = " ".join(part for part in (self.side, self.level, self.rule) if part)
        where = f" at {self.place}" if self.place else ""
        return f"{named}{where}: {self.title}"

    def as_dict(self) -> dict[str, Any]:
        """The finding as the reports write it; one of judged traffic also with its side, rule,
        place and the text of its quotes."""
        found: dict[str, Any] = {
            "level": self.level,
            "title": self.title,
            "spec": self.spec,
            "reading": self.reading,
            "quotes": list(self.quotes),
            "cause": self.cause,
            "promise": self.promise,
        }
        if self.side:
            found |= {"side": self.side, "rule": self.rule, "place": self.place}
            found["quote"] = self.quote
        return found

    @classmethod
    def from_dict(cls, item: Mapping[str, Any]) -> Finding:
        return cls(
            str(item["level"]),
            str(item["title"]),
            str(item["spec"]),
            str(item.get("reading", "")),
            tuple(item.get("quotes", ())),
            str(item.get("cause", "")),
            str(item.get("promise", "")),
            str(item.get("side", "")),
            str(item.get("rule", "")),
            str(item.get("place", "")),
        )


#: The reading of a should-level scenario's failure when the scenario names none.
ASSUMED_READING = "the requirement rests on the suite's assumption (listed with the scenario)"


def graded(findings: Iterable[Finding], level: str, *, reading: str = "") -> tuple[Finding, ...]:
    """``findings`` as a scenario of ``level`` reports them: in a should-level scenario (one
    whose requirement rests on a reading of the spec) every finding is a should one, resting on
    the scenario's ``reading``; a 5xx there is not promoted (the spec states no rule against it:
    E2 and E17 list 500). A finding the bank promised stays must: its ground is the promise."""
    if level != "should":
        return tuple(findings)
    return tuple(
        Finding(
            "should", f.title, f.spec, f.reading or reading or ASSUMED_READING, f.quotes, f.cause
        )
        if f.level == "must" and not f.promise
        else f
        for f in findings
    )


class ReportedFailure(AssertionError):
    """A :class:`~conformance.checks.ConformanceFailure` as the reports show it.

    ``text`` is the failure's whole message (what was sent, what came back, what the spec says,
    how to replay it) with identity numbers already masked, so that every report made from the
    exception (terminal, JUnit, Allure's status message) carries the masked text only.
    ``findings`` lists its must and should findings; ``always_must``: a failure no grading
    softens (a 5xx). ``replay`` is the replay line of ``text`` unmasked, for the values file of
    the run (``conformance.report.replays``), never for a report.
    """

    def __init__(
        self,
        text: str,
        findings: Sequence[Finding] = (),
        *,
        always_must: bool = False,
        replay: str = "",
    ) -> None:
        super().__init__(text)
        self.text = text
        self.findings = tuple(findings)
        self.always_must = always_must
        self.replay = replay

    @property
    def tier(self) -> str:
        """``must`` when any finding is (the scenario fails), else ``should``."""
        return "must" if any(f.level == "must" for f in self.findings) else "should"

    @property
    def promised(self) -> bool:
        """Whether a must finding rests on the bank's own promise: it fails the scenario even
        where the scenario's requirement is our reading (level should)."""
        return any(f.level == "must" and f.promise for f in self.findings)

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
    #: The id of the contract's requirement the scenario is graded by ("" where none).
    requirement: str = ""

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
            requirement=scenario.requirement,
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
        if self.requirement:
            pairs.append((_REQUIREMENT, self.requirement))
        return pairs

    @classmethod
    def from_properties(cls, properties: Iterable[tuple[str, Any]]) -> ScenarioFacts | None:
        """The facts back from a report's ``user_properties``; None for a test of no scenario."""
        values: dict[str, str] = {}
        assumptions: list[str] = []
        quotes: list[str] = []
        reading = requirement = ""
        for name, value in properties:
            if name == _ASSUMPTION:
                assumptions.append(str(value))
            elif name == _QUOTE:
                quotes.append(str(value).partition(":")[0])
            elif name == _READING:
                reading = str(value)
            elif name == _REQUIREMENT:
                requirement = str(value)
            elif name == _SCENARIO or name in _FIELDS:
                values.setdefault(name, str(value))
        if _SCENARIO not in values:
            return None
        return cls(
            id=values[_SCENARIO],
            assumptions=tuple(assumptions),
            quotes=tuple(quotes),
            reading=reading,
            requirement=requirement,
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
    #: ``(operation id, milliseconds)`` of each exchange the scenario made (answer times).
    timings: tuple[tuple[str, float], ...] = ()
    #: A failure's whole message (masked): the example exchange of its causes comes from it.
    text: str = ""
    #: Not applicable for lack of a control: what the profile could supply to judge it here.
    not_judged: str = ""


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


def _distinct_causes(findings: Iterable[Finding]) -> list[Finding]:
    """The first finding of each cause, in order."""
    seen: dict[str, Finding] = {}
    for finding in findings:
        if finding.cause and finding.cause not in seen:
            seen[finding.cause] = finding
    return list(seen.values())


def cause_lines(findings: Iterable[Finding]) -> str:
    """The causes of a failure's findings, for the end of its message, one line each
    (``Cause cause-1a2b3c4d (must): `tppMessages[0].code` is ...``): Allure's per-cause
    categories match them in the message; "" when there is none."""
    causes = _distinct_causes(findings)
    if not causes:
        return ""
    return "\n\n" + "\n".join(f"Cause {f.cause} ({f.level}): {f.title}" for f in causes)


def cause_properties(findings: Iterable[Finding]) -> list[tuple[str, str]]:
    """The pairs that name a failure's causes in JUnit (``cause``: the id; ``cause_summary``:
    its tier and exact place and value), one pair each per cause."""
    pairs: list[tuple[str, str]] = []
    for finding in _distinct_causes(findings):
        pairs += [(_CAUSE, finding.cause), (_CAUSE_SUMMARY, f"{finding.level}: {finding.title}")]
    return pairs


def not_judged_properties(supply: str) -> list[tuple[str, str]]:
    """The pair that says a not-applicable scenario lacked a control the profile could supply
    (``supply``: which keys), so that the reports list it as not judged here."""
    return [(_NOT_JUDGED, supply)] if supply else []


def read_not_judged(properties: Iterable[tuple[str, Any]]) -> str:
    """What the profile could supply to judge a scenario not judged for lack of it, or ""."""
    return next((str(value) for name, value in properties if name == _NOT_JUDGED), "")


def example_exchange(text: str) -> str:
    """The judged exchange of a failure message: the block after its last "Exchange:" heading
    (unindented), up to its "Reproduce with:"; "" when it names none."""
    lines = text.splitlines()
    starts = [index for index, line in enumerate(lines) if line.strip() == "Exchange:"]
    if not starts:
        return ""
    block: list[str] = []
    for line in lines[starts[-1] + 1 :]:
        if line.strip() == _REPRODUCE_HEADING:
            break
        block.append(line.removeprefix("    "))
    return "\n".join(block).strip("\n")


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


def with_reproduce(properties: Iterable[tuple[str, Any]], command: str) -> list[tuple[str, Any]]:
    """``properties`` with their replay command replaced by ``command``."""
    return [pair for pair in properties if pair[0] != _REPRODUCE] + reproduce_properties(command)


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


#: The exit code of a run that one set-up cause kept from being judged: the target's, as when
#: the preflight stops a run (``TargetError``), not the findings' 1.
NOT_JUDGED_EXIT = 3


@dataclass(frozen=True)
class NotJudged:
    """A run that one set-up cause kept from being judged: the cause, how many scenarios it
    blocked, and how many the run was to judge."""

    cause: str
    blocked: int
    to_judge: int

    def verdict(self) -> str:
        """The head of the overall verdict: not a conformance verdict at all."""
        cause = self.cause.removeprefix("Set-up failed: ")
        return (
            f"NOT JUDGED: set-up failed: {cause} ({self.blocked} of the {self.to_judge} "
            "scenarios to judge blocked by it; the few that ran make no verdict)"
        )


def setup_failure(counts: Mapping[str, int], causes: Sequence[tuple[str, int]]) -> NotJudged | None:
    """The set-up failure that decides a run, or None.

    "Most" is more than half: a run whose single largest blocked cause covers more than half of
    the scenarios it was to judge (every scenario but the not-applicable and waived ones) has no
    verdict, whatever the rest did: the few scenarios that ran are not the interface's behaviour
    but what is left when its set-up fails (a wrong base path, an expired certificate, a sandbox
    that refuses the run's customers). ``counts`` are the run's totals by the keys of
    ``compliance.json`` (``blocked``, ``not_applicable``, ...); ``causes`` the blocked causes,
    most first (:func:`blocked_causes`).
    """
    if not causes:
        return None
    cause, blocked = causes[0]
    to_judge = sum(counts.values()) - counts.get("not_applicable", 0) - counts.get("waived", 0)
    if to_judge <= 0 or 2 * blocked <= to_judge:
        return None
    return NotJudged(cause, blocked, to_judge)
