"""``compliance.md`` and ``compliance.html``: the compliance document as a compliance officer reads
it, from ``compliance.json``'s document.

The order is the reader's: the overall verdict (conformant or not at must level, with counts);
the must failures, each with its one-line cause and the command that replays it; the should
findings; what could not be judged (blocked, errors), what the bank waived and what does not
apply, each with its reason; and only then the totals, the matrix (operation names beside their
codes), every scenario and the assumptions the verdicts rest on. Both renderings are built from
the same outline (:func:`outline`), so they never disagree; the HTML page is one file with its
style inline, for people without Allure.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.report.verdicts import (
    BLOCKED,
    ERROR,
    FAILED,
    FAILED_SHOULD,
    NOT_APPLICABLE,
    PASSED,
    WAIVED,
)
from conformance.scenario import SECURITY_RULES

__all__ = [
    "SMOKE_SELECTION",
    "Section",
    "blocked_causes_of",
    "outline",
    "overall_verdict",
    "render_html",
    "render_markdown",
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
class Section:
    """One part of the page: a heading, lines of text, and a table (header and rows)."""

    title: str
    text: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    #: Cells of these columns are code (scenario ids, commands).
    code: frozenset[int] = field(default_factory=frozenset)


def _listed(scenarios: Sequence[Mapping[str, Any]], verdict: str) -> list[Mapping[str, Any]]:
    return [scenario for scenario in scenarios if scenario["verdict"] == verdict]


def blocked_causes_of(scenarios: Sequence[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """Each cause of a blocked scenario once, with how many it blocked (most first)."""
    counts: dict[str, int] = {}
    for scenario in _listed(scenarios, BLOCKED):
        counts[scenario["reason"]] = counts.get(scenario["reason"], 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


#: The selection a smoke run names (``conformance run --smoke``), in compliance.json's
#: ``run.selection["smoke"]``; its verdict says it is one.
SMOKE_SELECTION = "one positive and one negative scenario per operation"


def overall_verdict(document: Mapping[str, Any]) -> str:
    """One sentence: conformant or not at must level, with the counts behind it."""
    totals = document["totals"]
    failed, errors, blocked = totals["failed"], totals["error"], totals["blocked"]
    judged = totals["passed"] + failed + totals["failed_should"]
    complete = document["run"].get("complete", True)
    if failed:
        head = f"NOT CONFORMANT at must level: {failed} must failure(s)"
    elif errors or blocked:
        head = (
            f"NOT SHOWN CONFORMANT: no must failure, but {blocked} scenario(s) blocked and "
            f"{errors} error(s) could not be judged"
        )
    else:
        head = "CONFORMANT at must level: no must failure"
    scope = "" if complete else " (a partial run: a selection of the scenarios)"
    if "smoke" in document["run"].get("selection", {}):  # never a conformance verdict
        if failed:
            head = f"SMOKE RUN FAILED: {failed} must failure(s)"
        elif errors or blocked:
            head = f"SMOKE RUN INCOMPLETE: {blocked} scenario(s) blocked, {errors} error(s)"
        else:
            head = "SMOKE RUN PASSED: no must failure"
        scope = f" ({SMOKE_SELECTION}: not a conformance verdict; run without --smoke for one)"
    return (
        f"{head}{scope}. {judged} scenarios judged: {totals['passed']} passed, {failed} failed, "
        f"{totals['failed_should']} with should findings; {totals['not_applicable']} not "
        f"applicable, {totals['waived']} waived, {blocked} blocked, {errors} errors."
    )


def _name(document: Mapping[str, Any], operation: str) -> str:
    name = (document.get("operation_names") or {}).get(operation)
    return f"{operation} {name}" if name else operation


def _run_facts(document: Mapping[str, Any]) -> tuple[str, ...]:
    run = document["run"]
    profile = document.get("profile") or {}
    selection = run.get("selection", {})
    facts = [
        f"Target: {document['target']}",
        f"Profile: {profile.get('name', '(none)')}"
        + (f" ({profile['source']})" if profile.get("source") else ""),
        f"Spec release: {document['spec_version']}",
        f"Suite version: {document['suite_version']}",
        f"Seed: {run['seed']} (reproduce with --seed {run['seed']})",
        "Scenarios: "
        + (
            "all (a complete run)"
            if run.get("complete", True)
            else "a selection (a partial run): "
            + ", ".join(f"{k} {v}" for k, v in selection.items())
        ),
        f"Suite commit: {run.get('suite_commit') or 'unknown (not run from a checkout)'}",
        "Throttled answers waited out (429/503 with Retry-After): "
        f"{run.get('throttled_answers', 0)}",
        f"Started: {run['started']}; finished: {run['finished']} ({run['duration_seconds']} s)",
        "Should-level failures "
        + ("count as failures (--strict)" if run["strict"] else "are reported, not counted"),
    ]
    certificate = profile.get("certificate")
    if certificate:
        facts.append(
            f"Signing certificate: {certificate['subject'] or certificate['path']}"
            f" (serial {certificate['serial'] or '?'}, SHA-256 {certificate['sha256'] or '?'})"
        )
    return tuple(facts)


def _counts(counts: Mapping[str, int]) -> tuple[str, ...]:
    return tuple(str(counts.get(key, 0)) for key in _COUNT_KEYS)


def outline(document: Mapping[str, Any]) -> list[Section]:
    """The page, part by part, in the order a compliance officer reads it."""
    scenarios: list[Mapping[str, Any]] = document["scenarios"]
    sections = [
        Section("Verdict", (overall_verdict(document),)),
        Section("Run", _run_facts(document)),
    ]
    failures = _listed(scenarios, FAILED)
    sections.append(
        Section(
            "Must failures (the spec states it, the target broke it)",
            () if failures else ("None.",),
            ("scenario", "operation", "spec", "cause", "reproduce"),
            tuple(
                (s["id"], _name(document, s["operation"]), s["spec"], s["reason"], s["reproduce"])
                for s in failures
            ),
            frozenset({0, 4}),
        )
    )
    should = [(s, f) for s in scenarios for f in s.get("findings", ()) if f["level"] == "should"]
    should_only = [s for s in _listed(scenarios, FAILED_SHOULD) if not s.get("findings")]
    sections.append(
        Section(
            "Should findings (what the suite chose, or what rests on an assumption)",
            () if should or should_only else ("None.",),
            ("scenario", "operation", "finding", "spec", "should, because"),
            tuple(
                (s["id"], _name(document, s["operation"]), f["title"], f["spec"], f["basis"])
                for s, f in should
            )
            + tuple(
                (s["id"], _name(document, s["operation"]), s["reason"], s["spec"], "")
                for s in should_only
            ),
            frozenset({0}),
        )
    )
    security = [s for s in scenarios if s["rule"] in SECURITY_RULES]
    if security:
        judged = [s for s in security if s["verdict"] in (PASSED, FAILED, FAILED_SHOULD)]
        broken = [s for s in judged if s["verdict"] != PASSED]
        sections.append(
            Section(
                "Security (should: what a security review asks and the spec does not state)",
                (
                    f"{len(judged) - len(broken)} of {len(judged)} judged security scenarios "
                    f"held; {len(security) - len(judged)} not judged here.",
                ),
                ("scenario", "operation", "verdict", "why"),
                tuple(
                    (s["id"], _name(document, s["operation"]), s["verdict"], s["reason"])
                    for s in broken
                ),
                frozenset({0}),
            )
        )
    causes = blocked_causes_of(scenarios)
    if causes:
        sections.append(
            Section(
                "Blocked (set-up refused: not judged)",
                header=("scenarios", "cause"),
                rows=tuple((str(count), cause) for cause, count in causes),
            )
        )
    for title, verdict in (
        ("Errors (not judged)", ERROR),
        ("Waived by the profile (not run, not passed)", WAIVED),
        ("Not applicable", NOT_APPLICABLE),
    ):
        listed = _listed(scenarios, verdict)
        if listed:
            sections.append(
                Section(
                    title,
                    header=("scenario", "operation", "why"),
                    rows=tuple(
                        (s["id"], _name(document, s["operation"]), s["reason"]) for s in listed
                    ),
                    code=frozenset({0}),
                )
            )
    sections.append(Section("Totals", header=_HEADINGS, rows=(_counts(document["totals"]),)))
    sections.append(
        Section(
            "By operation",
            header=("operation", *_HEADINGS),
            rows=tuple(
                (_name(document, entry["operation"]), *_counts(entry["counts"]))
                for entry in document["operations"]
            ),
        )
    )
    sections.append(
        Section(
            "Matrix (operation × rule)",
            header=("operation", "rule", "spec", "level", *_HEADINGS, "assumptions"),
            rows=tuple(
                (
                    _name(document, cell["operation"]),
                    cell["rule"],
                    cell["spec"],
                    ", ".join(cell["levels"]),
                    *_counts(cell["counts"]),
                    ", ".join(cell["assumptions"]),
                )
                for cell in document["matrix"]
            ),
        )
    )
    found = [(s, finding) for s in scenarios for finding in s.get("findings", ())]
    if found:
        sections.append(
            Section(
                "Findings (must: the spec states it; should: the suite chose it, or it rests on "
                "an assumption)",
                header=("scenario", "tier", "finding", "spec", "should, because"),
                rows=tuple(
                    (s["id"], f["level"], f["title"], f["spec"], f["basis"]) for s, f in found
                ),
                code=frozenset({0}),
            )
        )
    sections.append(
        Section(
            "Scenarios",
            header=(
                "scenario",
                "operation",
                "rule",
                "spec",
                "level",
                "kind",
                "verdict",
                "assumptions",
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
        )
    )
    assumptions = document["assumptions"]
    if assumptions:
        sections.append(
            Section(
                "Assumptions the verdicts rest on",
                tuple(
                    f"{a['id']} ({', '.join(a['operations'])}"
                    + (f"; {a['topic']}" if a["topic"] else "")
                    + f"; {a['scenarios']} scenarios): {a['text']}"
                    for a in assumptions
                ),
            )
        )
    return sections


# --- Markdown ------------------------------------------------------------------------------------


def _md_cell(text: Any, code: bool = False) -> str:
    """A Markdown table cell: pipes escaped, newlines flattened; code in backticks."""
    flat = str(text).replace("|", "\\|").replace("\n", " ")
    return f"`{flat}`" if code and flat else flat


def render_markdown(document: Mapping[str, Any]) -> str:
    """``compliance.md``."""
    lines = ["# Compliance report", ""]
    for section in outline(document):
        lines += [f"## {section.title}", ""]
        if section.title == "Verdict":
            lines += [f"**{section.text[0]}**", ""]
        else:
            lines += [f"- {_md_cell(line)}" for line in section.text if line != "None."]
            if "None." in section.text:
                lines.append("None.")
            if section.text:
                lines.append("")
        if section.rows:
            lines.append("| " + " | ".join(section.header) + " |")
            lines.append("|" + "---|" * len(section.header))
            lines += [
                "| "
                + " | ".join(
                    _md_cell(cell, index in section.code) for index, cell in enumerate(row)
                )
                + " |"
                for row in section.rows
            ]
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


# --- HTML ----------------------------------------------------------------------------------------

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 75em; color: #1d1d1f;
       padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
.verdict { font-size: 1.15em; font-weight: 600; padding: .8em 1em; border-radius: 6px; }
.ok { background: #e6f4ea; color: #1e4620; } .bad { background: #fce8e6; color: #7a1c13; }
.open { background: #fff4e5; color: #6b3d00; }
table { border-collapse: collapse; margin: .5em 0; font-size: .92em; }
th, td { border: 1px solid #ddd; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #f5f5f7; } code { font-size: .9em; word-break: break-all; }
details > summary { cursor: pointer; color: #0645ad; margin: .5em 0; }
"""
#: Sections shown folded (long reference tables).
_FOLDED = ("Matrix", "Scenarios", "Not applicable", "Findings", "Assumptions", "By operation")


def _html_cell(text: Any, code: bool) -> str:
    escaped = html.escape(str(text))
    return f"<code>{escaped}</code>" if code and escaped else escaped


def render_html(document: Mapping[str, Any]) -> str:
    """``compliance.html``: the same outline as one self-contained page."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Compliance report: {html.escape(str(document['target']))}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Compliance report: {html.escape(str(document['target']))}</h1>",
    ]
    totals = document["totals"]
    mood = "bad" if totals["failed"] else "open" if totals["error"] or totals["blocked"] else "ok"
    for section in outline(document):
        folded = section.title.startswith(_FOLDED)
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        if folded:
            shown = len(section.rows) or len(section.text)
            parts.append(f"<details><summary>show {shown} rows</summary>")
        if section.title == "Verdict":
            parts.append(f'<p class="verdict {mood}">{html.escape(section.text[0])}</p>')
        elif section.text:
            parts.append(
                "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in section.text) + "</ul>"
            )
        if section.rows:
            head = "".join(f"<th>{html.escape(name)}</th>" for name in section.header)
            body = "".join(
                "<tr>"
                + "".join(
                    f"<td>{_html_cell(cell, index in section.code)}</td>"
                    for index, cell in enumerate(row)
                )
                + "</tr>"
                for row in section.rows
            )
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        if folded:
            parts.append("</details>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
