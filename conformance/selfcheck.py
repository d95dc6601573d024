"""The self-check's logic: which scenarios each fault must fail, how a run's verdicts are read back,
how they are compared, and the table that shows it.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from conformance.bankside.trace import PREFLIGHT_TAG, SERVER_TRACE, SETUP_USE_GLOB
from conformance.contract.trace import SETUP_TAG_PREFIX
from conformance.errors import ConformanceError
from conformance.report.compliance import COMPLIANCE_JSON
from conformance.report.junit import SHOULD_SUITE
from conformance.report.verdicts import ERROR, FAILED, FAILED_SHOULD, NOT_APPLICABLE, WAIVED

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.contract.requirements import Requirement
    from conformance.scenario import Scenario

__all__ = [
    "FAILED_VERDICTS",
    "FAITHFUL",
    "JUNIT_XML",
    "NOT_EXERCISED",
    "Outcome",
    "RunVerdict",
    "ScenarioRef",
    "SwitchReach",
    "compare",
    "expected_failures",
    "message_gaps",
    "read_reach",
    "read_run",
    "render_details",
    "render_table",
    "result_word",
    "scenario_refs",
]

#: The name the table gives the run without a fault.
FAITHFUL = "(faithful)"
#: The verdicts that count as "the scenario failed" (must and should alike).
FAILED_VERDICTS = frozenset({FAILED, FAILED_SHOULD})
#: The result of a fault none of whose scenarios a selection (``-k``, ``-m``) ran.
NOT_EXERCISED = "not exercised by this selection"
#: The JUnit file of a run (``conformance run`` writes it next to the matrix).
JUNIT_XML = "junit.xml"

#: What a failure message must show (done-when of the suite): what was sent, what came back,
#: the command that reproduces it. The spec part is checked against the scenario's own.
_SENT = re.compile(r"^\s*>>> [A-Z]+ \S+", re.MULTILINE)
_RECEIVED = re.compile(r"^\s*<<< HTTP \d{3}", re.MULTILINE)
_REPRODUCE = "conformance call "


class BreaksScenarios(Protocol):
    """What the comparison needs of a fault (``reference_server.faults.Fault`` is one)."""

    @property
    def name(self) -> str: ...

    def breaks(
        self,
        scenario_id: str,
        rule: str,
        operation: str,
        field: str | None = None,
        *,
        first_access: bool = False,
        sca_at_creation: bool = False,
    ) -> bool: ...


@dataclass(frozen=True)
class ScenarioRef:
    """What decides whether a fault breaks a scenario: its id, rule, operation and the one field
    it breaks on purpose (a constraint or header mutation), if any."""

    id: str
    rule: str
    operation: str
    field: str | None = None

    @classmethod
    def of(cls, scenario: Scenario) -> ScenarioRef:
        mutation = scenario.mutation
        field = None if mutation is None else "/".join(str(part) for part in mutation.pointer)
        return cls(scenario.id, scenario.rule, scenario.operation, field)


def scenario_refs(scenarios: Iterable[Scenario]) -> dict[str, ScenarioRef]:
    """The scenarios by id, as :class:`ScenarioRef`."""
    return {scenario.id: ScenarioRef.of(scenario) for scenario in scenarios}


@dataclass(frozen=True)
class RunVerdict:
    """One scenario's outcome in a run: from the matrix, with the failure's whole text from the
    JUnit file (empty when it passed or the text was not found)."""

    id: str
    rule: str
    operation: str
    spec: str
    verdict: str
    reason: str = ""
    text: str = ""


def expected_failures(
    fault: BreaksScenarios | None,
    refs: Iterable[ScenarioRef],
    *,
    first_access: bool = False,
    sca_at_creation: bool = False,
) -> frozenset[str]:
    """The ids among ``refs`` that must fail with ``fault`` on (none on the faithful server);
    ``first_access``: the played bank binds the consent to the TPP session (``[consent] model =
    "first-access"``); ``sca_at_creation``: it starts every payment's SCA at its creation."""
    if fault is None:
        return frozenset()
    return frozenset(
        ref.id
        for ref in refs
        if fault.breaks(
            ref.id,
            ref.rule,
            ref.operation,
            ref.field,
            first_access=first_access,
            sca_at_creation=sca_at_creation,
        )
    )


#: How a failure message shows its ground: the quoted sentence (must), our reading (should), or
#: the bank's own promise (a must failure the spec does not state: checks.PROMISE_GROUND).
_GROUNDS = ("Quoted: ", "Our reading (should): ", "our reading: ", "Promised by the bank")


def message_gaps(text: str, spec: str) -> tuple[str, ...]:
    """What a failure message lacks of: the spec part, the quoted sentence or our reading, what
    was sent, what came back, the reproduction command (empty when it has them all)."""
    gaps: list[str] = []
    if not spec or spec not in text:
        gaps.append(f"the spec part ({spec or '?'})")
    if not any(ground in text for ground in _GROUNDS):
        gaps.append("the quoted sentence or our reading")
    if not _SENT.search(text):
        gaps.append("what was sent")
    if not _RECEIVED.search(text):
        gaps.append("what came back")
    if _REPRODUCE not in text:
        gaps.append("the reproduction command")
    return tuple(gaps)


# --- reading a run --------------------------------------------------------------------------------


def _failure_texts(junit: Path) -> dict[str, str]:
    """Scenario id → the text of its ``<failure>`` (or ``<error>``) in the JUnit file."""
    if not junit.is_file():
        return {}
    try:
        tree = ElementTree.parse(junit)
    except ElementTree.ParseError as error:
        raise ConformanceError(f"{junit} is not readable JUnit XML: {error}") from None
    texts: dict[str, str] = {}
    for case in tree.iter("testcase"):
        scenario = next(
            (
                prop.get("value", "")
                for prop in case.iter("property")
                if prop.get("name") == "scenario"
            ),
            None,
        )
        if not scenario and case.get("classname") == SHOULD_SUITE:
            # the "should" suite's cases (report.junit) are named by node id: the scenario id
            # is the test's parameter
            name = case.get("name", "")
            scenario = name[name.find("[") + 1 : -1] if name.endswith("]") else name
        if not scenario or scenario in texts:
            continue
        for tag in ("failure", "error"):
            element = case.find(tag)
            if element is not None:
                parts = [element.get("message") or "", element.text or ""]
                texts[scenario] = max(parts, key=len)
                break
    return texts


def read_run(directory: Path) -> dict[str, RunVerdict]:
    """The verdicts of the run whose reports are in ``directory`` (``compliance.json`` and, for
    the failures' whole text, ``junit.xml``), by scenario id."""
    matrix = directory / COMPLIANCE_JSON
    try:
        document = json.loads(matrix.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConformanceError(f"the run wrote no compliance matrix ({matrix})") from None
    except (OSError, ValueError) as error:
        raise ConformanceError(f"{matrix} is not readable: {error}") from None
    texts = _failure_texts(directory / JUNIT_XML)
    return {
        entry["id"]: RunVerdict(
            id=entry["id"],
            rule=entry.get("rule", ""),
            operation=entry.get("operation", ""),
            spec=entry.get("spec", ""),
            verdict=entry.get("verdict", ERROR),
            reason=entry.get("reason", ""),
            text=texts.get(entry["id"], ""),
        )
        for entry in document.get("scenarios", [])
    }


# --- which scenarios can see a fault --------------------------------------------------------------


@dataclass(frozen=True)
class SwitchReach:
    """What the faithful recording run saw of the fault switches (``bankside/trace.py``).

    A fault changes the server only where its switch is asked (``faulty(name)``), so a scenario
    none of whose requests asked it, and none of whose shared set-up data was made by requests
    that asked it, is answered the same with the fault on: it passes as it did on the faithful
    server. ``reached``: fault → the scenarios that asked its switch (their own requests, or the
    requests that made the shared set-up data they used, however deep); ``everywhere``: the
    faults whose switch was asked outside a scenario and outside the preflight (at start-up, or
    by an untagged request), which the self-check runs on every scenario; ``preflight``: those
    the preflight's probes asked, which every run makes before any scenario, a narrowed run
    too: they run on their scenarios like any other fault.
    """

    reached: Mapping[str, frozenset[str]]
    everywhere: frozenset[str]
    preflight: frozenset[str] = frozenset()

    def selection(
        self, fault: BreaksScenarios, refs: Iterable[ScenarioRef]
    ) -> frozenset[str] | None:
        """The scenarios to run ``fault`` on: those it must fail and those that reached its
        switch; None (every scenario) when its switch was asked outside a scenario."""
        if fault.name in self.everywhere:
            return None
        return expected_failures(fault, refs) | self.reached.get(fault.name, frozenset())

    def unreached(self, fault: BreaksScenarios, refs: Iterable[ScenarioRef]) -> frozenset[str]:
        """The scenarios ``fault`` names whose requests never asked its switch (none when its
        switch was asked outside a scenario): the fault cannot change their answers."""
        if fault.name in self.everywhere:
            return frozenset()
        return expected_failures(fault, refs) - self.reached.get(fault.name, frozenset())


def _json_lines(path: Path) -> Iterable[dict[str, object]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConformanceError(f"the switch trace {path} is not readable: {error}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise ConformanceError(f"{path} line {number} is not JSON") from None
        if isinstance(record, dict):
            yield record


def _asked_by_tag(folder: Path) -> dict[str | None, set[str]]:
    """Tag (None: outside a scenario) → the fault switches its requests asked."""
    asked: dict[str | None, set[str]] = {}
    for record in _json_lines(folder / SERVER_TRACE):
        tag, faults = record.get("tag"), record.get("faults")
        if isinstance(faults, list):
            key = tag if isinstance(tag, str) else None
            asked.setdefault(key, set()).update(str(name) for name in faults)
    return asked


def _setup_uses(folder: Path) -> dict[str, set[str]]:
    """Tag → the tags of the shared set-up data it used."""
    uses: dict[str, set[str]] = {}
    for path in sorted(folder.glob(SETUP_USE_GLOB)):
        for record in _json_lines(path):
            by, key = record.get("by"), record.get("key")
            if isinstance(by, str) and isinstance(key, str):
                uses.setdefault(by, set()).add(SETUP_TAG_PREFIX + key)
    return uses


def read_reach(folder: Path) -> SwitchReach:
    """The switch reach the recording run wrote to ``folder`` (the server's switches per tag,
    each process's use of shared set-up data)."""
    asked = _asked_by_tag(folder)
    uses = _setup_uses(folder)

    def seen_by(tag: str) -> set[str]:
        faults: set[str] = set()
        stack, visited = [tag], {tag}
        while stack:
            current = stack.pop()
            faults |= asked.get(current, set())
            for used in uses.get(current, ()):
                if used not in visited:
                    visited.add(used)
                    stack.append(used)
        return faults

    reached: dict[str, set[str]] = {}
    scenarios = {
        tag
        for tag in (*asked, *uses)
        if tag and tag != PREFLIGHT_TAG and not tag.startswith(SETUP_TAG_PREFIX)
    }
    for scenario in sorted(scenarios):
        for fault in seen_by(scenario):
            reached.setdefault(fault, set()).add(scenario)
    return SwitchReach(
        reached={fault: frozenset(ids) for fault, ids in reached.items()},
        everywhere=frozenset(asked.get(None, set())),
        preflight=frozenset(asked.get(PREFLIGHT_TAG, set())),
    )


# --- comparing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """The self-check of one server (faithful or with one fault).

    ``missing``: scenarios the fault names that did not fail (passed, not applicable, or could
    not be judged); ``unexpected``: scenarios that failed although the fault does not name them;
    ``unclear``: failures whose message lacks one of the parts it must show; ``errors``:
    scenarios the suite could not judge (a crash of the suite, whichever server). ``problem`` is
    set when the run itself went wrong (no matrix); ``only_should``: the fault's scenarios
    failed at should only, so the run passed at default strictness (the fault would be certified).
    """

    name: str
    expected: frozenset[str]
    failed: frozenset[str]
    missing: tuple[str, ...] = ()
    unexpected: tuple[str, ...] = ()
    unclear: tuple[tuple[str, tuple[str, ...]], ...] = ()
    errors: tuple[str, ...] = ()
    judged: int = 0
    problem: str = ""
    seconds: float = 0.0
    reasons: Mapping[str, str] | None = None
    only_should: bool = False
    #: Scenarios of the fault the profile left unjudged (``--play``: not applicable, waived).
    excused: int = 0
    #: A fault none of whose scenarios the run had (a ``-k``/``-m`` selection): not checked.
    unexercised: bool = False
    #: Whether the run was made with ``--strict`` (the faithful server and should faults).
    strict: bool = False

    @property
    def ok(self) -> bool:
        return not (
            self.problem
            or self.missing
            or self.unexpected
            or self.unclear
            or self.errors
            or self.only_should
        )

    @classmethod
    def broken(cls, name: str, problem: str, seconds: float = 0.0) -> Outcome:
        return cls(name, frozenset(), frozenset(), problem=problem, seconds=seconds)


def compare(
    name: str,
    fault: BreaksScenarios | None,
    refs: Mapping[str, ScenarioRef],
    run: Mapping[str, RunVerdict],
    *,
    seconds: float = 0.0,
    exit_code: int | None = None,
    excuse_not_judged: bool = False,
    strict: bool = False,
    first_access: bool = False,
    sca_at_creation: bool = False,
    unreached: frozenset[str] = frozenset(),
) -> Outcome:
    """Compare a run with what ``fault`` (None: the faithful server) says must fail.

    Only the scenarios of the run count (a ``-k`` selection narrows both sides). A scenario the
    run has but ``refs`` lacks (a conftest's own) is taken at its reported rule and operation.
    A fault must also fail the run itself: a must fault at default strictness (at least one of
    its scenarios fails at must, ``exit_code`` 1 when given), not only with should findings; a
    should fault (``strict``: its run was ``--strict``) with its should findings. With
    ``excuse_not_judged`` (a run under a bank's profile, ``--play``) an expected scenario the
    profile leaves unjudged (not applicable, waived) is excused, not missing; ``first_access``:
    that profile's consent is given at the first account access, ``sca_at_creation``: it starts
    every payment's SCA at its creation (:func:`expected_failures`);
    ``unreached``: the scenarios whose requests never asked the fault's switch in the faithful
    run under that profile (:meth:`SwitchReach.unreached`), which the fault cannot change there
    (a flow that takes the creation's SCA link never starts PA): excused with it.
    """
    ran = [
        refs.get(scenario_id) or ScenarioRef(scenario_id, verdict.rule, verdict.operation)
        for scenario_id, verdict in run.items()
    ]
    named = expected_failures(
        fault, ran, first_access=first_access, sca_at_creation=sca_at_creation
    )
    expected = named
    if excuse_not_judged:
        expected = frozenset(
            i
            for i in named
            if run[i].verdict not in (NOT_APPLICABLE, WAIVED) and i not in unreached
        )
    failed = frozenset(i for i, verdict in run.items() if verdict.verdict in FAILED_VERDICTS)
    errors = tuple(sorted(i for i, verdict in run.items() if verdict.verdict == ERROR))
    unclear = tuple(
        (scenario_id, gaps)
        for scenario_id in sorted(failed & expected)
        if (gaps := message_gaps(run[scenario_id].text, run[scenario_id].spec))
    )
    reasons = {
        scenario_id: (f"{verdict.verdict}: {verdict.reason}" if verdict.reason else verdict.verdict)
        for scenario_id, verdict in run.items()
        if verdict.verdict != "passed"
    }
    judged = sum(1 for verdict in run.values() if verdict.verdict != NOT_APPLICABLE)
    only_should = False
    if fault is not None and expected:
        must_failed = any(run[i].verdict == FAILED for i in failed & expected)
        only_should = not must_failed or exit_code == 0
    return Outcome(
        name=name,
        expected=expected,
        failed=failed,
        missing=tuple(sorted(expected - failed)),
        unexpected=tuple(sorted(failed - expected)),
        unclear=unclear,
        errors=errors,
        judged=judged,
        only_should=only_should,
        seconds=seconds,
        reasons=reasons,
        excused=len(named - expected),
        unexercised=fault is not None and not named,
        strict=strict,
    )


class GradedFault(BreaksScenarios, Protocol):
    """A fault with the rules it names (``rules``: ids or patterns, the first naming the
    requirement it breaks) and its level."""

    @property
    def rules(self) -> tuple[str, ...]: ...

    @property
    def level(self) -> str: ...


def fault_requirements(
    fault: GradedFault, contract: Contract, operations: Iterable[str]
) -> tuple[Requirement, ...]:
    """The contract's requirements the first of ``fault``'s rules names (the requirement it
    breaks; a flow as its scenarios' ``STATE-<name>``) on ``operations``, where its scenarios
    run, or on every operation. Its other rules name scenarios that also see the break, graded
    by this requirement (a response header every creation's answer carries)."""
    if not fault.rules:
        return ()
    flows = {row.name for row in contract.flows}
    ops = set(operations)
    found = []
    for (rule, operation, _place), requirement in contract.requirements.items():
        if operation and operation not in ops:
            continue
        names = (rule, f"STATE-{rule}") if rule in flows else (rule,)
        if any(fnmatchcase(name, fault.rules[0]) for name in names):
            found.append(requirement)
    return tuple(found)


def graded_level(
    fault: GradedFault, contract: Contract, scenarios: Iterable[Scenario]
) -> str | None:
    """The level the grade of what ``fault`` breaks gives it (None: it breaks no scenario):
    must when the requirement it breaks (:func:`fault_requirements`) is a must on an operation
    whose scenarios it fails, should when it is a should there; where that is none of the
    contract's requirements, the level of the scenarios it fails (their own grade), must when
    one is."""
    broken = [
        scenario
        for scenario in scenarios
        if fault.breaks(
            scenario.id, scenario.rule, scenario.operation, ScenarioRef.of(scenario).field
        )
    ]
    if not broken:
        return None
    named = fault_requirements(fault, contract, {scenario.operation for scenario in broken})
    levels = {requirement.level for requirement in named} or {s.level for s in broken}
    return "must" if "must" in levels else "should"


# --- the table ------------------------------------------------------------------------------------

_COLUMNS = (
    "server",
    "run",
    "expected",
    "failed",
    "missing",
    "unexpected",
    "unclear",
    "time",
    "result",
)


def _result(outcome: Outcome) -> str:
    if outcome.problem:
        return "RUN FAILED"
    if outcome.errors:
        return f"MISMATCH ({len(outcome.errors)} not judged)"
    if outcome.only_should:
        return "RUN PASSES"
    if outcome.ok and outcome.unexercised:
        return NOT_EXERCISED  # the selection has none of the fault's scenarios: nothing checked
    if outcome.ok and outcome.excused and not outcome.expected:
        return "not judged here"  # the profile leaves every scenario of the fault unjudged
    return "ok" if outcome.ok else "MISMATCH"


def result_word(outcome: Outcome) -> str:
    """The table's last column for one server: ok, MISMATCH, RUN PASSES, not judged here, not
    exercised by this selection, RUN FAILED (the progress line says the same)."""
    return _result(outcome)


def render_table(outcomes: Sequence[Outcome]) -> str:
    """One line per server: expected / failed counts, what is missing or unexpected, the time."""
    rows = [
        (
            outcome.name,
            "--strict" if outcome.strict else "default",
            str(len(outcome.expected)),
            str(len(outcome.failed)),
            str(len(outcome.missing)),
            str(len(outcome.unexpected)),
            str(len(outcome.unclear)),
            f"{outcome.seconds:.0f} s",
            _result(outcome),
        )
        for outcome in outcomes
    ]
    widths = [max(len(row[i]) for row in [_COLUMNS, *rows]) for i in range(len(_COLUMNS))]

    def line(row: Sequence[str]) -> str:
        cells = [
            cell.ljust(width) if i in (0, len(row) - 1) else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        return "  ".join(cells).rstrip()

    return "\n".join(
        [line(_COLUMNS), line(["-" * width for width in widths])] + [line(row) for row in rows]
    )


def render_details(outcome: Outcome, *, limit: int = 20) -> str:
    """What went wrong for one server, scenario by scenario (empty when it is ok)."""
    if outcome.ok:
        return ""
    reasons = outcome.reasons or {}
    lines = [f"{outcome.name}:"]
    if outcome.problem:
        lines.append(f"  the run failed: {outcome.problem}")
    if outcome.only_should:
        lines.append(
            "  the run passes at default strictness: the fault's scenarios fail at should only, "
            "so a target with this fault would be certified"
        )

    def listed(title: str, ids: Sequence[str], why: Mapping[str, str]) -> None:
        if not ids:
            return
        lines.append(f"  {title} ({len(ids)}):")
        lines.extend(
            f"    {scenario_id}" + (f" - {why[scenario_id]}" if why.get(scenario_id) else "")
            for scenario_id in ids[:limit]
        )
        if len(ids) > limit:
            lines.append(f"    ... and {len(ids) - limit} more")

    listed("missing: named by the fault, did not fail", outcome.missing, reasons)
    listed("unexpected: failed, not named by the fault", outcome.unexpected, reasons)
    listed(
        "unclear: the failure message lacks",
        [scenario_id for scenario_id, _ in outcome.unclear],
        {scenario_id: ", ".join(gaps) for scenario_id, gaps in outcome.unclear},
    )
    listed("not judged (error)", outcome.errors, reasons)
    return "\n".join(lines)
