"""``compliance.md`` and ``compliance.html`` drawn from the outline of ``compliance_page`` (its
sections and cause blocks): the Markdown document, and the HTML page as one file with its style
inline, for people without Allure. Both draw the same outline, so they never disagree.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.report.compliance_page import (
    Block,
    blocked_causes_of,
    not_judged_must,
    outline,
)
from conformance.report.eligibility import ELIGIBLE_WORDS, NOT_ELIGIBLE_WORDS
from conformance.report.pictures import PICTURE_STYLE
from conformance.report.verdicts import setup_failure

__all__ = ["render_html", "render_markdown"]


# --- Markdown ------------------------------------------------------------------------------------


def _md_cell(text: Any, code: bool = False) -> str:
    """A Markdown table cell: pipes escaped, newlines flattened; code in backticks."""
    flat = str(text).replace("|", "\\|").replace("\n", " ")
    return f"`{flat}`" if code and flat else flat


def _md_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], code: frozenset[int]
) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [
        "| " + " | ".join(_md_cell(cell, index in code) for index, cell in enumerate(row)) + " |"
        for row in rows
    ]
    return [*lines, ""]


def _md_block(block: Block) -> list[str]:
    """A cause: its heading, facts, the example exchange as it was, the scenarios folded."""
    lines = [f"### {_md_cell(block.title)}", ""]
    lines += [f"- {_md_cell(line)}" for line in block.text]
    lines.append("")
    if block.example:
        fence = "````" if "```" in block.example else "```"
        lines += [fence + "text", block.example, fence, ""]
    if block.rows:
        lines += [f"<details><summary>{len(block.rows)} scenario(s)</summary>", ""]
        lines += _md_table(block.header, block.rows, block.code)
        lines += ["</details>", ""]
    return lines


def render_markdown(document: Mapping[str, Any]) -> str:
    """``compliance.md``."""
    lines = [f"# {_heading(document)}", ""]
    for section in outline(document):
        lines += [f"## {section.title}", ""]
        if section.title == "Verdict":
            for line in section.text:
                lines += [f"**{line}**", ""]
        else:
            lines += [f"- {_md_cell(line)}" for line in section.text if line != "None."]
            if "None." in section.text:
                lines.append("None.")
            if section.text:
                lines.append("")
        for block in section.blocks:
            lines += _md_block(block)
        if section.rows:
            lines += _md_table(section.header, section.rows, section.code)
    return "\n".join(lines).rstrip("\n") + "\n"


# --- HTML ----------------------------------------------------------------------------------------

#: A long unbroken value (a 71-character name in a replay line, a URL) wraps wherever it must,
#: in a cell, a paragraph or an example, instead of pushing the page sideways.
_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 75em; color: #1d1d1f;
       padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
.verdict { font-size: 1.15em; font-weight: 600; padding: .8em 1em; border-radius: 6px; }
.ok { background: #e6f4ea; color: #1e4620; } .bad { background: #fce8e6; color: #7a1c13; }
.open { background: #fff4e5; color: #6b3d00; }
table { border-collapse: collapse; margin: .5em 0; font-size: .92em; }
th, td { border: 1px solid #ddd; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #f5f5f7; } code { font-size: .9em; overflow-wrap: anywhere; }
details > summary { cursor: pointer; color: #0645ad; margin: .5em 0; }
h3 { font-size: 1.05em; margin-top: 1.5em; }
pre { background: #f5f5f7; padding: .6em .8em; overflow-x: auto; font-size: .85em; }
td, th, p, li, summary, pre { overflow-wrap: anywhere; } pre { white-space: pre-wrap; }
"""
#: Sections shown folded (long reference tables).
_FOLDED = ("Scenarios", "Not applicable", "Findings", "Assumptions")


def _mood(document: Mapping[str, Any]) -> str:
    """The verdict box's colour: red for a must failure, amber for a run not (fully) judged."""
    totals = document["totals"]
    if document["run"].get("interrupted"):
        return "open"
    if setup_failure(totals, blocked_causes_of(document["scenarios"])) is not None:
        return "open"
    unsettled = totals["error"] or totals["blocked"] or not_judged_must(document)
    return "bad" if totals["failed"] else "open" if unsettled else "ok"


def _line_mood(line: str, mood: str) -> str:
    """The colour of a line of the verdict box: the eligibility line its own (green when
    eligible, amber when not, whatever the verdict), every other line the verdict's."""
    if line.startswith(ELIGIBLE_WORDS):
        return "ok"
    return "open" if line.startswith(NOT_ELIGIBLE_WORDS) else mood


def _side_mood(line: str) -> str:
    """The colour of a line of judged traffic's verdict: each side's by its own verdict; the
    line of counts neutral."""
    if ": NOT CONFORMANT" in line:
        return "bad"
    return "ok" if ": CONFORMANT" in line else "open"


def _html_cell(text: Any, code: bool, folded: bool = False, assumptions: bool = False) -> str:
    escaped = html.escape(str(text))
    if assumptions and escaped:
        return ", ".join(
            f'<a href="#{html.escape(ident)}">{html.escape(ident)}</a>'
            for ident in str(text).split(", ")
        )
    if code and escaped:
        escaped = f"<code>{escaped}</code>"
    if folded and escaped:
        return f"<details><summary>command</summary>{escaped}</details>"
    return escaped


def _heading(document: Mapping[str, Any]) -> str:
    """The report's kind: a run's compliance report, or judged traffic, which names both sides
    (each has its own verdict)."""
    if document.get("traffic"):
        return "Traffic report: the TPP's requests and the bank's answers, judged apart"
    return "Compliance report"


def _page_title(document: Mapping[str, Any]) -> str:
    """What the page is about: the profile's name (the bank and its environment), not a URL."""
    profile = document.get("profile") or {}
    return f"{_heading(document)}: {profile.get('name') or document['target']}"


def _assumption_item(line: str) -> str:
    """A line of a list; one of the assumptions list gets its id as its anchor."""
    ident = line.split(" ", 1)[0]
    anchor = f' id="{html.escape(ident)}"' if ident[:1] == "A" and ident[1:].isdigit() else ""
    return f"<li{anchor}>{html.escape(line)}</li>"


def _shown(count: int) -> str:
    return f"show {count} row" + ("" if count == 1 else "s")


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]], code: frozenset[int]) -> str:
    head = "".join(f"<th>{html.escape(name)}</th>" for name in header)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{_html_cell(cell, index in code)}</td>" for index, cell in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html_block(block: Block) -> list[str]:
    parts = [f"<h3>{html.escape(block.title)}</h3>"]
    if block.text:
        parts.append(
            "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in block.text) + "</ul>"
        )
    if block.example:
        parts.append(
            "<details><summary>the example exchange</summary>"
            f"<pre>{html.escape(block.example)}</pre></details>"
        )
    if block.rows:
        parts.append(f"<details><summary>{len(block.rows)} scenario(s)</summary>")
        parts.append(_html_table(block.header, block.rows, block.code))
        parts.append("</details>")
    return parts


def render_html(document: Mapping[str, Any]) -> str:
    """``compliance.html``: the same outline as one self-contained page."""
    title = html.escape(_page_title(document))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{title}</title>",
        f"<style>{_STYLE}{PICTURE_STYLE}</style></head><body>",
        f"<h1>{title}</h1>",
    ]
    mood = _mood(document)
    for section in outline(document):
        folded = section.title.startswith(_FOLDED)
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        if folded:
            shown = _shown(len(section.rows) or len(section.text))
            parts.append(f"<details><summary>{shown}</summary>")
        if section.title == "Verdict":
            traffic = bool(document.get("traffic"))
            parts += [
                f'<p class="verdict {_side_mood(line) if traffic else _line_mood(line, mood)}">'
                f"{html.escape(line)}</p>"
                for line in section.text
            ]
        elif section.text and section.html:
            pass  # a picture carries its own legend
        elif section.text:
            items = "".join(_assumption_item(line) for line in section.text)
            parts.append(f"<ul>{items}</ul>")
        for block in section.blocks:
            parts += _html_block(block)
        if section.html:
            parts.append(section.html)
        elif section.rows:
            head = "".join(f"<th>{html.escape(name)}</th>" for name in section.header)
            body = "".join(
                "<tr>"
                + "".join(
                    "<td>"
                    + _html_cell(
                        cell,
                        index in section.code,
                        index in section.folded,
                        index == section.assumption_column,
                    )
                    + "</td>"
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
