"""The fleet report: ``fleet.json`` (the fleet document), ``fleet.md`` and ``fleet.html``, in the
order a platform's release manager reads it: the headline (banks, verdicts, platform and bank
causes), the banks without a verdict named with why, the platform's trend, the matrix of causes
× banks (platform causes first; each cell links to that bank's report), then each bank: what is
new, fixed and persisting since its previous run, and its trend. The HTML page is one file,
its style and pictures inline; every text goes through ``report/masking.scrub``."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conformance.fleet.outcome import JUDGED
from conformance.fleet.trend import bank_trend_svg, platform_trend_svg
from conformance.report.masking import scrub

__all__ = [
    "FLEET_HTML",
    "FLEET_JSON",
    "FLEET_MD",
    "headline",
    "render_fleet_html",
    "render_fleet_markdown",
    "write_fleet",
]

FLEET_JSON = "fleet.json"
FLEET_MD = "fleet.md"
FLEET_HTML = "fleet.html"

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 80em; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { border: 1px solid #ddd; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
td.cell { text-align: center; min-width: 2.5em; }
td.cell a { color: inherit; text-decoration: none; display: block; }
td.has.must { background: #f4a6a0; } td.has.should { background: #ffe0a3; }
td.clear { background: #c8e6c9; } td.unknown { background: #eee; color: #777; }
.platform { color: #b3261e; font-weight: 600; } .bank { color: #8a5a00; }
.noverdict { background: #fff4e5; border-left: 4px solid #f5a623; padding: .5em 1em; }
.banks { display: flex; flex-wrap: wrap; gap: 1.5em; }
.bankcard { border: 1px solid #ddd; border-radius: 4px; padding: .6em 1em; width: 24em; }
.bankcard h3 { margin: .2em 0; font-size: 1.05em; }
small { color: #666; }
"""


def headline(fleet: Mapping[str, Any]) -> str:
    """One sentence: the banks, how many gave a verdict, the platform and bank causes."""
    banks = fleet["banks"]
    causes = fleet["causes"]
    platform = sum(1 for cause in causes if cause["scope"] == "platform")
    failing = sum(1 for bank in banks if bank["verdict"] and bank["causes"])
    missing = len(banks) - fleet["banks_judged"]
    selections = sum(1 for bank in banks if bank["verdict"] and bank["selection"])
    return (
        f"{len(banks)} bank{'s' if len(banks) != 1 else ''}: {fleet['banks_judged']} gave a "
        f"verdict ({failing} with causes), {missing} gave none; {platform} platform "
        f"cause{'s' if platform != 1 else ''}, {len(causes) - platform} bank "
        f"cause{'s' if len(causes) - platform != 1 else ''}"
        + (
            f" ({selections} of the verdicts from smoke runs or selections: no conformance verdict)"
            if selections
            else ""
        )
    )


def _no_verdict(fleet: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [bank for bank in fleet["banks"] if not bank["verdict"] or bank["status"] != JUDGED]


def _bank_word(bank: Mapping[str, Any]) -> str:
    if not bank["verdict"]:
        return str(bank["status"])
    if bank["why"]:
        return "partial"
    count = len(bank["causes"])
    kind = (
        ", smoke run" if "smoke" in bank["selection"] else ", a selection" * bool(bank["selection"])
    )
    return f"{count} cause{'s' if count != 1 else ''}{kind}"


# --- Markdown -----------------------------------------------------------------------------------


def _cell_text(cause: Mapping[str, Any], bank: Mapping[str, Any]) -> str:
    if not bank["verdict"]:
        return "?"
    count = bank["causes"].get(cause["id"])
    return "–" if count is None else f"✗ {count}"


def _md(text: Any) -> str:
    return scrub(str(text)).replace("|", "\\|").replace("\n", " ")


def _markdown_matrix(fleet: Mapping[str, Any]) -> list[str]:
    banks = fleet["banks"]
    if not fleet["causes"]:
        return ["No bank's latest run has a must failure or a should finding.", ""]
    lines = [
        "| cause | scope | level | " + " | ".join(_md(bank["label"]) for bank in banks) + " |",
        "|---|---|---|" + "---|" * len(banks),
    ]
    for cause in fleet["causes"]:
        cells = " | ".join(_cell_text(cause, bank) for bank in banks)
        lines.append(
            f"| `{cause['id']}` {_md(cause['title'])} ({_md(cause['spec'])}) | "
            f"**{cause['scope']}** | {cause['level']} | {cells} |"
        )
    lines += ["", "✗ N: the cause fails N scenarios there; –: not there; ?: no verdict.", ""]
    return lines


def _named(cause: str, titles: Mapping[str, str]) -> str:
    """A cause of the history: its id and title."""
    return f"`{cause}` {_md(titles.get(cause, ''))}".rstrip()


def _markdown_bank(bank: Mapping[str, Any], titles: Mapping[str, str]) -> list[str]:
    changes = bank["changes"]
    lines = [f"### {_md(bank['label'])}: {_md(bank['bank'])}", ""]
    lines.append(f"- last run: {bank['started']} ({_bank_word(bank)})")
    if bank["why"]:
        lines.append(f"- why: {_md(bank['why'])}")
    if bank["report"]:
        lines.append(f"- report: [{bank['report']}]({bank['report']})")
    if changes["since"] is not None:
        lines.append(f"- since {changes['since']}:")
        for key in ("new", "fixed", "persisting"):
            shown = "; ".join(_named(cause, titles) for cause in changes[key]) or "none"
            lines.append(f"  - {key}: {shown}")
    if changes["note"]:
        lines.append(f"- note: {_md(changes['note'])}")
    return [*lines, ""]


def render_fleet_markdown(fleet: Mapping[str, Any]) -> str:
    """``fleet.md``: the same facts as the HTML page, as tables."""
    lines = ["# Fleet conformance report", "", f"**{headline(fleet)}**", ""]
    lines += [f"Platform or bank: {fleet['threshold']['words']}.", ""]
    missing = _no_verdict(fleet)
    if missing:
        lines += ["## Banks without a (complete) verdict", ""]
        lines += [f"- **{_md(b['label'])}** ({b['status']}): {_md(b['why'])}" for b in missing]
        lines.append("")
    lines += ["## The platform over time", "", "| round | banks | no verdict | platform | bank |"]
    lines.append("|---|---|---|---|---|")
    lines += [
        f"| {_md(p['round'])} | {p['banks']} | {p['no_verdict']} | {p['platform']} | {p['bank']} |"
        for p in fleet["platform_trend"]
    ]
    lines += ["", "## Causes × banks (latest run of each bank)", ""]
    lines += _markdown_matrix(fleet)
    lines += ["## Banks", ""]
    for bank in fleet["banks"]:
        lines += _markdown_bank(bank, fleet["cause_titles"])
    return "\n".join(lines).rstrip() + "\n"


# --- HTML ---------------------------------------------------------------------------------------


def _e(text: Any) -> str:
    return html.escape(scrub(str(text)))


def _html_cell(cause: Mapping[str, Any], bank: Mapping[str, Any]) -> str:
    if not bank["verdict"]:
        css, text, title = "unknown", "?", f"no verdict: {bank['status']}"
    elif cause["id"] in bank["causes"]:
        count = bank["causes"][cause["id"]]
        level = bank["levels"][cause["id"]]
        css, text = f"has {level}", f"✗ {count}"
        title = f"{count} scenario{'s' if count != 1 else ''} at {bank['label']} ({level})"
    else:
        css, text, title = "clear", "–", f"not at {bank['label']}"
    inner = _e(text)
    if bank["report"]:
        inner = f'<a href="{html.escape(bank["report"])}">{inner}</a>'
    return f'<td class="cell {css}" title="{_e(title)}">{inner}</td>'


def _html_matrix(fleet: Mapping[str, Any]) -> str:
    banks = fleet["banks"]
    if not fleet["causes"]:
        return "<p>No bank's latest run has a must failure or a should finding.</p>"
    head = "".join(
        f'<th title="{_e(bank["bank"])}">'
        + (
            f'<a href="{html.escape(bank["report"])}">{_e(bank["label"])}</a>'
            if bank["report"]
            else _e(bank["label"])
        )
        + "</th>"
        for bank in banks
    )
    rows = []
    for cause in fleet["causes"]:
        cells = "".join(_html_cell(cause, bank) for bank in banks)
        rows.append(
            f"<tr><td><code>{_e(cause['id'])}</code> {_e(cause['title'])} "
            f"<small>{_e(cause['spec'])}</small></td>"
            f'<td class="{cause["scope"]}">{cause["scope"]}</td><td>{cause["level"]}</td>'
            f"{cells}</tr>"
        )
    return (
        "<table><thead><tr><th>cause</th><th>scope</th><th>level</th>"
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "<p><small>A cell: ✗ N the cause fails N scenarios at that bank (red must, amber "
        "should), – not there, ? no verdict; it links to the bank's report.</small></p>"
    )


def _html_changes(changes: Mapping[str, Any], titles: Mapping[str, str]) -> str:
    if changes["since"] is None:
        return f"<p><small>{_e(changes['note'])}</small></p>"
    items = "".join(
        f"<li>{key}: "
        + (
            "; ".join(
                f"<code>{_e(cause)}</code> {_e(titles.get(cause, ''))}" for cause in changes[key]
            )
            or "none"
        )
        + "</li>"
        for key in ("new", "fixed", "persisting")
    )
    note = f"<p><small>{_e(changes['note'])}</small></p>" if changes["note"] else ""
    return f"<p>since {_e(changes['since'])}:</p><ul>{items}</ul>{note}"


def _html_bank(bank: Mapping[str, Any], titles: Mapping[str, str]) -> str:
    link = f' · <a href="{html.escape(bank["report"])}">report</a>' if bank["report"] else ""
    why = f"<p>{_e(bank['why'])}</p>" if bank["why"] else ""
    return (
        f'<div class="bankcard"><h3>{_e(bank["label"])}</h3><small>{_e(bank["bank"])}</small>'
        f"<p>last run {_e(bank['started'])}: <b>{_e(_bank_word(bank))}</b>{link}</p>{why}"
        f"{_html_changes(bank['changes'], titles)}{bank_trend_svg(bank)}</div>"
    )


def render_fleet_html(fleet: Mapping[str, Any]) -> str:
    """``fleet.html``: one file, style and pictures inline, no JavaScript."""
    missing = _no_verdict(fleet)
    missing_html = (
        '<div class="noverdict"><h2>Banks without a (complete) verdict</h2><ul>'
        + "".join(
            f"<li><b>{_e(bank['label'])}</b> ({_e(bank['status'])}): {_e(bank['why'])}</li>"
            for bank in missing
        )
        + "</ul></div>"
        if missing
        else ""
    )
    body = [
        "<h1>Fleet conformance report</h1>",
        f"<p><b>{_e(headline(fleet))}</b></p>",
        f"<p><small>Platform or bank: {_e(fleet['threshold']['words'])}.</small></p>",
        missing_html,
        "<h2>The platform over time</h2>",
        platform_trend_svg(fleet["platform_trend"]),
        "<h2>Causes × banks <small>(latest run of each bank)</small></h2>",
        _html_matrix(fleet),
        "<h2>Banks</h2>",
        '<div class="banks">'
        + "".join(_html_bank(bank, fleet["cause_titles"]) for bank in fleet["banks"])
        + "</div>",
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Fleet conformance report</title><style>{_STYLE}</style></head><body>"
        + "".join(body)
        + "</body></html>\n"
    )


def write_fleet(out: Path, fleet: Mapping[str, Any]) -> Sequence[Path]:
    """Write ``fleet.json``, ``fleet.md`` and ``fleet.html`` into ``out`` (created if need be)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = (out / FLEET_JSON, out / FLEET_MD, out / FLEET_HTML)
    paths[0].write_text(json.dumps(fleet, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths[1].write_text(render_fleet_markdown(fleet), encoding="utf-8")
    paths[2].write_text(render_fleet_html(fleet), encoding="utf-8")
    return paths
