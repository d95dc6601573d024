"""``compliance.md`` and ``compliance.html``: the compliance document as a compliance officer reads
it, from ``compliance.json``'s document.

The order is the reader's: the overall verdict (conformant or not at must level, with counts),
and right under it the must rules this target gave no way to judge ("not judged here", with what
the profile could supply); the must failures, one entry per cause (the exact place and value
that broke, the operations, the spec, one example exchange and the command that replays it, the
scenarios it covers); the should findings, grouped the same way; what could not be judged
(blocked, errors), what the bank waived and what does not apply, each with its reason; and only
then the totals, the matrix (operation names beside their codes), every scenario and the
assumptions the verdicts rest on. Both renderings are built from
the same outline (:func:`outline`), so they never disagree: ``compliance_render`` draws it as
Markdown and as one HTML page with its style inline, for people without Allure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.contract import Quote, said
from conformance.report.baseline import baseline_lines
from conformance.report.causes import causes_summary
from conformance.report.eligibility import eligibility_line
from conformance.report.pictures import (
    grid_html,
    grid_rows,
    operation_bars_html,
    operation_rows,
)
from conformance.report.verdicts import (
    BLOCKED,
    ERROR,
    FAILED,
    FAILED_SHOULD,
    NOT_APPLICABLE,
    PASSED,
    WAIVED,
    setup_failure,
)
from conformance.scenario import SECURITY_RULES

__all__ = [
    "INTERRUPTED",
    "SMOKE_SELECTION",
    "Block",
    "Section",
    "blocked_causes_of",
    "coverage_line",
    "interrupted_head",
    "not_judged_lines",
    "not_judged_must",
    "outline",
    "overall_verdict",
    "side_causes",
    "traffic_verdict_lines",
    "verdict_word",
]

#: The column headings of every count table, in ``COUNT_KEYS`` order (compliance.py).
_HEADINGS = ("passed", "failed", "failed (should)", "n/a", "waived", "blocked", "skipped", "error")
_COUNT_KEYS = (
    "passed",
    "failed",
    "failed_should",
    "not_applicable",
    "waived",
    "blocked",
    "skipped",
    "error",
)


@dataclass(frozen=True)
class Block:
    """One entry inside a section (a cause): a heading, lines of facts, an example exchange
    shown as it was, and a table shown folded (the scenarios it covers)."""

    title: str
    text: tuple[str, ...] = ()
    example: str = ""
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    code: frozenset[int] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Section:
    """One part of the page: a heading, lines of text, entries (:class:`Block`), and a table
    (header and rows)."""

    title: str
    text: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    #: Cells of these columns are code (scenario ids, commands).
    code: frozenset[int] = field(default_factory=frozenset)
    #: Cells of these columns are folded in the HTML page (a replay command: shown on request).
    folded: frozenset[int] = field(default_factory=frozenset)
    #: The HTML page shows this instead of the table (a picture: bars, a grid).
    html: str = ""
    #: Cells of this column are assumption ids (``A1, A3``): links to the list in the HTML page.
    assumption_column: int | None = None
    blocks: tuple[Block, ...] = ()


def _quoted(
    document: Mapping[str, Any],
    scenario: Mapping[str, Any],
    finding: Mapping[str, Any] | None = None,
) -> str:
    """The quoted sentences of a must failure: its must finding's quotes, else the scenario's;
    for a finding the bank promised (its profile), that promise, never a quote."""
    if finding is None:
        finding = next((f for f in scenario.get("findings", ()) if f["level"] == "must"), None)
    promise = (finding or {}).get("promise")
    if promise:
        return f"(not the spec) promised by the bank: {promise}"
    labels = (finding or {}).get("quotes") or scenario.get("quotes", ())
    quotes = document.get("quotes", {})
    return said(
        Quote(label, quotes[label]["spec"], quotes[label]["text"])
        for label in labels
        if label in quotes
    )


def _listed(scenarios: Sequence[Mapping[str, Any]], verdict: str) -> list[Mapping[str, Any]]:
    return [scenario for scenario in scenarios if scenario["verdict"] == verdict]


def blocked_causes_of(scenarios: Sequence[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """Each cause of a blocked scenario once, with how many it blocked (most first)."""
    counts: dict[str, int] = {}
    for scenario in _listed(scenarios, BLOCKED):
        counts[scenario["reason"]] = counts.get(scenario["reason"], 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def not_judged_must(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The must scenarios this target gave no way to judge (for lack of a control)."""
    return [entry for entry in document.get("not_judged", ()) if entry["level"] == "must"]


#: The selection a smoke run names (``conformance run --smoke``), in compliance.json's
#: ``run.selection["smoke"]``; its verdict says it is one.
SMOKE_SELECTION = "one positive and one negative scenario per operation"


#: The verdict of a run stopped before every scenario had one (Ctrl-C, SIGTERM, the bundled
#: server stopped): no conformance verdict at all, whatever the scenarios that ran gave.
INTERRUPTED = "INTERRUPTED"


def interrupted_head(judged: int, to_run: int, reason: str) -> str:
    """The head of an interrupted run's verdict line (``to_run`` 0: stopped before the
    scenarios were collected)."""
    done = f"{judged} of {to_run} scenarios judged" if to_run else "no scenario judged"
    return f"{INTERRUPTED}: {done}; no verdict ({reason})"


def _interrupted(document: Mapping[str, Any]) -> str:
    """An interrupted run's verdict line: what stopped it and what it had judged so far."""
    run, totals = document["run"], document["totals"]
    judged = len(document.get("scenarios", ()))
    to_run = max(int(run.get("scenarios_to_run") or 0), judged)
    return (
        f"{interrupted_head(judged, to_run, run['interrupted'])}. So far {totals['passed']} "
        f"passed, {totals['failed']} failed, {totals['failed_should']} with should findings; "
        f"{totals['not_applicable']} not applicable, {totals['waived']} waived, "
        f"{totals['blocked']} blocked, {totals['error']} errors."
    )


def overall_verdict(document: Mapping[str, Any]) -> str:
    """One sentence: conformant or not at must level, with the counts behind it, and how many
    must rules could not be judged at this target; INTERRUPTED, with none of that, for a run
    stopped before every scenario had a verdict."""
    if document["run"].get("interrupted"):
        return _interrupted(document)
    totals = document["totals"]
    failed, errors, blocked = totals["failed"], totals["error"], totals["blocked"]
    judged = totals["passed"] + failed + totals["failed_should"]
    complete = document["run"].get("complete", True)
    not_judged = setup_failure(totals, blocked_causes_of(document["scenarios"]))
    if not_judged is not None:
        head = not_judged.verdict()
    elif failed:
        head = f"NOT CONFORMANT at must level: {failed} must failure(s)"
        promised = len(promised_only(document))
        if promised:
            head += (
                f", {promised} of them only the bank's own promises (its profile's "
                "[response_headers] or [operations] promised), not sentences of the spec"
            )
    elif errors or blocked:
        head = (
            f"NOT SHOWN CONFORMANT: no must failure, but {blocked} scenario(s) blocked and "
            f"{errors} error(s) could not be judged"
        )
    else:
        head = "CONFORMANT at must level: no must failure"
    scope = "" if complete else " (a partial run: a selection of the scenarios)"
    if "smoke" in document["run"].get("selection", {}):  # never a conformance verdict
        # the set-up failed: no smoke verdict either
        head = not_judged.verdict() if not_judged is not None else _smoke_head(totals)
        scope = f" ({SMOKE_SELECTION}: not a conformance verdict; run without --smoke for one)"
    unjudged = len(not_judged_must(document))
    if unjudged:
        scope += f"; {unjudged} must rule{'s' if unjudged != 1 else ''} not judged at this target"
    return (
        f"{head}{scope}. {judged} scenarios judged: {totals['passed']} passed, {failed} failed, "
        f"{totals['failed_should']} with should findings; {totals['not_applicable']} not "
        f"applicable, {totals['waived']} waived, {blocked} blocked, {errors} errors."
    )


def _smoke_head(totals: Mapping[str, int]) -> str:
    """The head of a smoke run's verdict (never a conformance verdict)."""
    failed, errors, blocked = totals["failed"], totals["error"], totals["blocked"]
    if failed:
        return f"SMOKE RUN FAILED: {failed} must failure(s)"
    if errors or blocked:
        return f"SMOKE RUN INCOMPLETE: {blocked} scenario(s) blocked, {errors} error(s)"
    return "SMOKE RUN PASSED: no must failure"


def promised_only(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The failed scenarios whose must findings all rest on the bank's own promise (its
    profile), none on a sentence of the spec."""
    found = []
    for scenario in document.get("scenarios", ()):
        if scenario.get("verdict") != FAILED:
            continue
        musts = [f for f in scenario.get("findings", ()) if f.get("level") == "must"]
        if musts and all(f.get("promise") for f in musts):
            found.append(scenario)
    return found


def verdict_word(document: Mapping[str, Any]) -> str:
    """The verdict in a few words, for a field too narrow for the sentence (Allure's front page
    cuts long values): CONFORMANT, NOT CONFORMANT, NOT SHOWN CONFORMANT, NOT JUDGED or
    INTERRUPTED."""
    totals = document["totals"]
    if document.get("run", {}).get("interrupted"):
        return INTERRUPTED
    sides = (document.get("traffic") or {}).get("sides")
    if sides:  # judged traffic: each side's own verdict, never one for both
        return "; ".join(f"{_SIDES[side][0]} {sides[side]['verdict']}" for side in _SIDES)
    if setup_failure(totals, blocked_causes_of(document.get("scenarios", ()))) is not None:
        return "NOT JUDGED (set-up failed)"
    if "smoke" in document.get("run", {}).get("selection", {}):  # never a conformance verdict
        return "SMOKE RUN FAILED" if totals["failed"] else "SMOKE RUN (not a verdict)"
    if totals["failed"]:
        return "NOT CONFORMANT"
    if totals["error"] or totals["blocked"]:
        return "NOT SHOWN CONFORMANT"
    return "CONFORMANT"


#: The sides of judged traffic (``compliance.json``'s ``traffic.sides``): key → name, what of
#: it was judged.
_SIDES = {"TPP": ("TPP", "its requests"), "bank": ("Bank", "its answers")}


def traffic_verdict_lines(document: Mapping[str, Any]) -> list[str]:
    """Judged traffic's verdict: one line per side (the TPP's requests, the bank's answers), each
    true of that side alone, then what the exchanges were."""
    traffic = document["traffic"]
    sides = traffic.get("sides") or {}
    lines = [sides[side]["line"] for side in _SIDES if side in sides]
    totals = document["totals"]
    lines.append(
        f"{traffic['exchanges']} exchanges: {traffic['judged']} judged ({totals['passed']} "
        f"without a finding, {totals['failed']} with a must finding of either side, "
        f"{totals['failed_should']} with should findings only), {traffic['not_judged']} not "
        "judged."
    )
    return lines


def not_judged_lines(document: Mapping[str, Any]) -> list[str]:
    """The "not judged here" block as the terminal prints it right under the verdict: each
    rule this target gave no way to judge, why, and what the profile could supply."""
    entries = document.get("not_judged") or ()
    if not entries:
        return []
    must = len(not_judged_must(document))
    lines = [
        f"NOT JUDGED HERE: {must} must and {len(entries) - must} should rule(s) "
        "(the verdict does not cover them)"
    ]
    for entry in entries:
        lines.append(
            f"  {entry['scenario']} ({entry['rule']}, {entry['spec']}, {entry['level']}): "
            f"{entry['why']}"
        )
        lines.append(f"      the profile could supply: {entry['supply']}")
    return lines


def coverage_line(document: Mapping[str, Any]) -> str:
    """How much of interface.md the run judged, in one line ("" for judged traffic and a
    contract without the ledger of its statements)."""
    coverage = document.get("coverage")
    if not coverage or document.get("traffic"):
        return ""
    return (
        f"Spec coverage: this run judged {coverage['judged']} of {coverage['statements']} "
        f"statements of interface.md ({coverage['not_judgeable']} no run can judge, "
        f"{len(coverage['unjudged'])} left unjudged by this run's scope; the ledger: "
        "docs/reference/coverage.md)"
    )


def _coverage_section(document: Mapping[str, Any]) -> Section | None:
    """The coverage line, and the statements the run's scope left unjudged."""
    line = coverage_line(document)
    if not line:
        return None
    unjudged = document["coverage"]["unjudged"]
    return Section(
        "Spec coverage",
        (line,),
        ("statement", "spec", "what it states (left unjudged by this run's scope)"),
        tuple((entry["statement"], entry["spec"], entry["text"]) for entry in unjudged),
        frozenset({0}),
    )


def _name(document: Mapping[str, Any], operation: str) -> str:
    name = (document.get("operation_names") or {}).get(operation)
    return f"{operation} {name}" if name else operation


def _release_fact(document: Mapping[str, Any]) -> str:
    """What the run says of the suite's release: its manifest, or why it states no eligibility."""
    release = document.get("release")
    if release and release.get("manifest_sha256"):
        return f" (release manifest sha256:{release['manifest_sha256']})"
    if not document["run"].get("certifies", True) and not document.get("traffic"):
        return (
            " (eligibility for certification not stated: the bundled reference server or a "
            "played profile certifies no bank)"
        )
    return ""


def _run_facts(document: Mapping[str, Any]) -> tuple[str, ...]:
    run = document["run"]
    profile = document.get("profile") or {}
    facts = [
        f"Target: {document['target']}",
        f"Profile: {profile.get('name', '(none)')}"
        + (f" ({profile['source']})" if profile.get("source") else ""),
        f"Spec release: {document['spec_version']}",
        f"Suite version: {document['suite_version']}" + _release_fact(document),
        f"Seed: {run['seed']} (reproduce with --seed {run['seed']})",
        "Scenarios: " + _scope(document),
        f"Suite commit: {run.get('suite_commit') or 'unknown (not run from a checkout)'}",
        "Throttled answers waited out (429/503 with Retry-After): "
        f"{run.get('throttled_answers', 0)}",
        f"Started: {run['started']}; finished: {run['finished']} ({run['duration_seconds']} s)",
        "Should-level failures "
        + ("count as failures (--strict)" if run["strict"] else "are reported, not counted"),
    ]
    traffic = document.get("traffic")
    if traffic:  # judged traffic (``conformance proxy``/``judge``): no seed, no scenario choice
        sides = traffic["findings_by_side"]
        facts[4:6] = [
            f"Traffic: {traffic['source']}; {traffic['exchanges']} exchanges, each one entry "
            f"below ({traffic['not_judged']} not judged)",
            f"Findings: TPP (its requests) {sides['TPP']['must']} must, "
            f"{sides['TPP']['should']} should; bank (its answers) {sides['bank']['must']} must, "
            f"{sides['bank']['should']} should",
        ]
    if run.get("replay_server"):
        facts.append(
            "Replays: the commands below name this run's server, stopped with the run; start one "
            f"like it first (same port, trust and faults; empty): {run['replay_server']}"
        )
    certificate = profile.get("certificate")
    if certificate:
        facts.append(
            f"Signing certificate: {certificate['subject'] or certificate['path']}"
            f" (serial {certificate['serial'] or '?'}, SHA-256 {certificate['sha256'] or '?'})"
        )
    return tuple(facts)


def _scope(document: Mapping[str, Any]) -> str:
    """Which scenarios the run judged: all, a selection, or those it had reached when it was
    interrupted."""
    run = document["run"]
    selection = run.get("selection", {})
    if run.get("complete", True):
        return "all (a complete run)"
    chosen = ", ".join(f"{k} {v}" for k, v in selection.items())
    if not run.get("interrupted"):
        return f"a selection (a partial run): {chosen}"
    judged = len(document.get("scenarios", ()))
    return (
        f"{INTERRUPTED} after {judged} of {run.get('scenarios_to_run') or judged} "
        f"({run['interrupted']})" + (f"; a selection: {chosen}" if chosen else "")
    )


def _counts(counts: Mapping[str, int]) -> tuple[str, ...]:
    return tuple(str(counts.get(key, 0)) for key in _COUNT_KEYS)


def outline(document: Mapping[str, Any]) -> list[Section]:
    """The page, part by part, in the order a compliance officer reads it."""
    scenarios: list[Mapping[str, Any]] = document["scenarios"]
    not_judged = document.get("not_judged") or ()
    traffic = document.get("traffic")
    verdict = traffic_verdict_lines(document) if traffic else [overall_verdict(document)]
    verdict += [line for line in (eligibility_line(document),) if line]
    verdict += baseline_lines(document)
    findings = (
        _side_sections(document)
        if traffic
        else [_must_section(document), _should_section(document)]
    )
    parts: list[Section | None] = [
        Section("Verdict", tuple(verdict)),
        _not_judged_section(document, not_judged) if not_judged else None,
        Section("Run", _run_facts(document)),
        _coverage_section(document),
        *findings,
        _security_section(document),
        _blocked_section(scenarios),
        *(_listed_section(document, title, verdict) for title, verdict in _LISTED_VERDICTS),
        Section("Totals", header=_HEADINGS, rows=(_counts(document["totals"]),)),
        _by_operation(document),
        _grid(document),
        _findings_section(document),
        _scenarios_section(scenarios),
        _assumptions_section(document["assumptions"]),
    ]
    return [section for section in parts if section is not None]


def _must_section(document: Mapping[str, Any]) -> Section:
    """The must failures: one entry per cause, then a row for each failure without one."""
    causes = [c for c in document.get("causes", ()) if c["level"] == "must"]
    failures = _listed(document["scenarios"], FAILED)
    uncaused = [s for s in failures if not any(f.get("cause") for f in s.get("findings", ()))]
    return Section(
        "Must failures (the spec states it, the target broke it)",
        (causes_summary(causes, "must"),) if failures else ("None.",),
        _FAILURE_HEADER if uncaused else (),
        tuple(_failure_row(document, s) for s in uncaused),
        frozenset({0, 6}),
        folded=frozenset({6}),
        blocks=_cause_blocks(document, causes),
    )


def _should_section(document: Mapping[str, Any]) -> Section:
    """The should findings: one entry per cause, then a row for each scenario without one."""
    should_causes = [c for c in document.get("causes", ()) if c["level"] == "should"]
    should_only = [
        s
        for s in _listed(document["scenarios"], FAILED_SHOULD)
        if not any(f.get("cause") and f["level"] == "should" for f in s.get("findings", ()))
    ]
    return Section(
        "Should findings (what rests on our reading of the spec, named)",
        (causes_summary(should_causes, "should"),) if should_causes or should_only else ("None.",),
        ("scenario", "operation", "finding", "spec", "our reading") if should_only else (),
        tuple(
            (s["id"], _name(document, s["operation"]), s["reason"], s["spec"], s["reading"])
            for s in should_only
        ),
        frozenset({0}),
        blocks=_cause_blocks(document, should_causes),
    )


def side_causes(
    document: Mapping[str, Any], side: str, level: str
) -> tuple[str, list[Mapping[str, Any]]]:
    """One side's causes of ``level`` in judged traffic, and the line that counts them as they
    are listed: ``TPP's must findings: 5 findings, 4 causes, in 5 exchanges`` ("" when none)."""
    traffic = document["traffic"]
    side_of = {f["cause"]: f["side"] for f in traffic["findings"] if f.get("cause")}
    causes = [
        c
        for c in document.get("causes", ())
        if c["level"] == level and side_of.get(c["id"]) == side
    ]
    found = sum(1 for f in traffic["findings"] if f["side"] == side and f["level"] == level)
    if not found:
        return "", causes
    exchanges = {scenario for cause in causes for scenario in cause["scenarios"]}
    return (
        f"{_SIDES[side][0]}'s {level} findings: {found} finding{'s' if found != 1 else ''}, "
        f"{len(causes)} cause{'s' if len(causes) != 1 else ''}, in {len(exchanges)} "
        f"exchange{'s' if len(exchanges) != 1 else ''}",
        causes,
    )


def _side_sections(document: Mapping[str, Any]) -> list[Section]:
    """Judged traffic's findings, each side apart (the TPP's, then the bank's), must then
    should: one entry per cause, counted as the list below the count shows them."""
    sections = []
    for side, (name, what) in _SIDES.items():
        for level, ground in (
            ("must", "the spec states it"),
            ("should", "what rests on our reading of the spec, named"),
        ):
            count, causes = side_causes(document, side, level)
            sections.append(
                Section(
                    f"{name}: {level} findings ({what}; {ground})",
                    (count,) if count else ("None.",),
                    blocks=_cause_blocks(document, causes),
                )
            )
    return sections


def _security_section(document: Mapping[str, Any]) -> Section | None:
    """How many judged security scenarios held, and each that did not (None: no such
    scenario)."""
    security = [s for s in document["scenarios"] if s["rule"] in SECURITY_RULES]
    if not security:
        return None
    judged = [s for s in security if s["verdict"] in (PASSED, FAILED, FAILED_SHOULD)]
    broken = [s for s in judged if s["verdict"] != PASSED]
    return Section(
        "Security (should: what a security review asks and the spec does not state)",
        (
            f"{len(judged) - len(broken)} of {len(judged)} judged security scenarios "
            f"held; {len(security) - len(judged)} not judged here.",
        ),
        ("scenario", "operation", "verdict", "why"),
        tuple(
            (s["id"], _name(document, s["operation"]), s["verdict"], s["reason"]) for s in broken
        ),
        frozenset({0}),
    )


def _blocked_section(scenarios: Sequence[Mapping[str, Any]]) -> Section | None:
    """The set-up causes that blocked scenarios, with how many each (None: nothing blocked)."""
    causes = blocked_causes_of(scenarios)
    if not causes:
        return None
    return Section(
        "Blocked (set-up refused: not judged)",
        header=("scenarios", "cause"),
        rows=tuple((str(count), cause) for cause, count in causes),
    )


#: The verdicts listed with their reasons after the findings: title, verdict.
_LISTED_VERDICTS = (
    ("Errors (not judged)", ERROR),
    ("Waived by the profile (not run, not passed)", WAIVED),
    ("Not applicable", NOT_APPLICABLE),
)


def _listed_section(document: Mapping[str, Any], title: str, verdict: str) -> Section | None:
    """Each scenario of ``verdict`` with its reason (None: there is none)."""
    listed = _listed(document["scenarios"], verdict)
    if not listed:
        return None
    return Section(
        title,
        header=("scenario", "operation", "why"),
        rows=tuple((s["id"], _name(document, s["operation"]), s["reason"]) for s in listed),
        code=frozenset({0}),
    )


def _findings_section(document: Mapping[str, Any]) -> Section | None:
    """Every finding with its tier, and its quote (must) or reading (should)."""
    found = [(s, finding) for s in document["scenarios"] for finding in s.get("findings", ())]
    if not found:
        return None
    return Section(
        "Findings (must: the spec states it, quoted; should: it rests on our reading, named)",
        header=("scenario", "tier", "finding", "spec", "quoted, or our reading", "cause"),
        rows=tuple(
            (
                s["id"],
                f["level"],
                f["title"],
                f["spec"],
                f["reading"] or _quoted(document, s, f),
                f.get("cause", ""),
            )
            for s, f in found
        ),
        code=frozenset({0}),
    )


def _scenarios_section(scenarios: Sequence[Mapping[str, Any]]) -> Section:
    """Every scenario with its verdict and the assumptions it rests on."""
    return Section(
        "Scenarios",
        header=(
            "scenario",
            "operation",
            "rule",
            "spec",
            "level",
            "kind",
            "verdict",
            _ASSUMPTION_HEADING,
        ),
        rows=tuple(
            (
                s["id"],
                s["operation"],
                s["rule"],
                s["spec"],
                s["level"],
                s["kind"],
                s["verdict"],
                ", ".join(s["assumptions"]),
            )
            for s in scenarios
        ),
        code=frozenset({0}),
        assumption_column=7,
    )


def _assumptions_section(assumptions: Sequence[Mapping[str, Any]]) -> Section | None:
    """The assumptions the verdicts rest on, each with its operations and scenario count."""
    if not assumptions:
        return None
    return Section(
        "Assumptions the verdicts rest on",
        tuple(
            f"{a['id']} ({', '.join(a['operations'])}"
            + (f"; {a['topic']}" if a["topic"] else "")
            + f"; {a['scenarios']} scenarios): {a['text']}"
            for a in assumptions
        ),
    )


def _not_judged_section(
    document: Mapping[str, Any], entries: Sequence[Mapping[str, Any]]
) -> Section:
    """The rules this target gave no way to judge, right under the verdict: what each needs
    and what the profile could supply so that they are judged here too."""
    must = len(not_judged_must(document))
    return Section(
        "Not judged here (a control this target lacks; the profile can supply it)",
        (
            f"{must} must rule{'s' if must != 1 else ''} and {len(entries) - must} should "
            "rule(s) could not be judged at this target: the verdict above does not cover them.",
        ),
        ("scenario", "rule", "spec", "level", "why", "the profile could supply"),
        tuple(
            (e["scenario"], e["rule"], e["spec"], e["level"], e["why"], e["supply"])
            for e in entries
        ),
        frozenset({0}),
    )


def _cause_blocks(
    document: Mapping[str, Any], causes: Sequence[Mapping[str, Any]]
) -> tuple[Block, ...]:
    """One entry per cause: what broke, where, the spec, an example exchange and its replay
    command, and the scenarios it covers (folded)."""
    by_id = {s["id"]: s for s in document["scenarios"]}
    blocks: list[Block] = []
    for number, cause in enumerate(causes, start=1):
        example = cause["example"]
        text = [
            f"Cause {cause['id']} ({cause['level']}), {cause['count']} scenario(s)",
            "Operations: " + ", ".join(_name(document, op) for op in cause["operations"]),
            "Requirements: " + ", ".join(cause["rules"]),
            f"Spec: {cause['spec']}",
        ]
        if cause["quote"]:  # each quote names its own spec part (``causes.spec_quote``)
            text.append(f"The spec says: {cause['quote']}")
        if cause["reading"]:
            text.append(f"Our reading: {cause['reading']}")
        if cause.get("promise"):
            text.append(f"Promised by the bank (not the spec): {cause['promise']}")
        text.append(f"Example: {example['scenario']}")
        if example["reproduce"]:
            text.append(f"Replay it: {example['reproduce']}")
        rows = tuple(
            (
                scenario_id,
                _name(document, by_id[scenario_id]["operation"]) if scenario_id in by_id else "",
                by_id[scenario_id]["reason"] if scenario_id in by_id else "",
                by_id[scenario_id]["reproduce"] if scenario_id in by_id else "",
            )
            for scenario_id in cause["scenarios"]
        )
        blocks.append(
            Block(
                f"Cause {number}: {cause['title']}",
                tuple(text),
                example["exchange"],
                ("scenario", "operation", "reason", "reproduce"),
                rows,
                frozenset({0, 3}),
            )
        )
    return tuple(blocks)


# --- the sections built of the document's tables ------------------------------------------


#: The must-failure table's columns: the requirement in words (what a compliance officer needs),
#: what the target did, and the replay command last (folded in the HTML page).
_FAILURE_HEADER = (
    "scenario",
    "operation",
    "requirement",
    "spec",
    "the target",
    "the spec says (quoted)",
    "replay",
)

#: The heading of the column of assumption ids, saying what the ids are.
_ASSUMPTION_HEADING = "rests on assumptions (listed at the end)"


def _failure_row(document: Mapping[str, Any], scenario: Mapping[str, Any]) -> tuple[str, ...]:
    """One must failure: its id, operation, the requirement in words (the scenario's title),
    the spec part, what the target did (the one-line cause) and the replay command."""
    return (
        scenario["id"],
        _name(document, scenario["operation"]),
        scenario.get("title", ""),
        scenario["spec"],
        scenario["reason"],
        _quoted(document, scenario),
        scenario["reproduce"],
    )


def _by_operation(document: Mapping[str, Any]) -> Section:
    """Per operation: the counts and the answer times; a pass/fail bar each in the HTML page."""
    return Section(
        "By operation (scenarios and answer times)",
        header=("operation", "scenarios", "answer times"),
        rows=operation_rows(document),
        html=operation_bars_html(document),
    )


def _grid(document: Mapping[str, Any]) -> Section:
    """Operations × scenario kinds (the kinds of "What the scenarios cover"): in the HTML page a
    grid of coloured cells; the matrix of every operation × rule stays in compliance.json."""
    header, rows = grid_rows(document)
    return Section(
        "Operations × scenario kinds",
        (
            "✓ all passed, ✗ a must failure, ! should findings, ? not judged, – not applicable; "
            "the number: how many of the cell's scenarios passed (7/8: 7 of 8). The matrix of "
            "every operation × rule is in compliance.json.",
        ),
        header=header,
        rows=rows,
        html=grid_html(document),
    )
