"""Allure labels (epic = spec part, feature = operation, story = rule, severity from the level) and
attachments (exchanges, reproduction commands) of one scenario.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.checks import quote_lines
from conformance.report.masking import scrub
from conformance.scenario import SECURITY_RULES

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.exchange import Exchange
    from conformance.report.verdicts import Finding
    from conformance.scenario import Scenario

try:
    import allure
except ImportError:  # allure-pytest is a dependency, but a stripped install still runs
    allure = None  # type: ignore[assignment]

__all__ = [
    "SEVERITY",
    "attach_exchanges",
    "attach_findings",
    "attach_reproduction",
    "enabled",
    "exchange_name",
    "label_scenario",
    "reproduce_commands",
    "sortable_spec",
    "spec_label",
    "spec_titles",
]

#: Allure severity of each level: a must requirement's scenario is critical, a should one normal.
SEVERITY = {"must": "critical", "should": "normal"}


def label_scenario(
    scenario: Scenario, operation_name: str = "", contract: Contract | None = None
) -> None:
    """Epic, feature, story, severity, title and description of the running test. With the
    contract, the epic is the spec part's title (:func:`spec_label`), else its sortable number."""
    if allure is None:
        return
    feature = f"{scenario.operation} {operation_name}".strip()
    if contract is not None:
        names = {op_id: op.name for op_id, op in contract.operations.items()}
        epic = spec_label(scenario.spec, spec_titles(contract.root), names)
    else:
        epic = sortable_spec(scenario.spec)
    allure.dynamic.epic(epic)
    allure.dynamic.feature(feature)
    allure.dynamic.story(scenario.rule)
    if scenario.rule in SECURITY_RULES:
        allure.dynamic.tag("security")
    allure.dynamic.severity(SEVERITY.get(scenario.level, "normal"))
    allure.dynamic.title(scenario.title)
    allure.dynamic.description(_description(scenario))
    # The parameter would otherwise be the whole Scenario's repr; its id says it all.
    allure.dynamic.parameter("scenario", scenario.id)


def sortable_spec(spec: str) -> str:
    """A spec part as a label that sorts in spec order by its text: every number two digits wide
    (``spec 4.3 E16`` → ``spec 04.03 E16``, ``spec 7 rule 8`` → ``spec 07 rule 08``), so that
    Allure's tree, which orders its groups by name, lists spec 4 before spec 10 and rule 2 before
    rule 10."""
    return re.sub(r"\d+", lambda number: number.group().zfill(2), spec)


@functools.cache
def spec_titles(root: Path) -> Mapping[str, str]:
    """Spec part number → its heading in interface.md (``spec-parts.json`` ``titles``)."""
    document = json.loads((root / "spec-parts.json").read_text(encoding="utf-8"))
    titles = document.get("titles", {}) if isinstance(document, dict) else {}
    return {number: title for number, title in titles.items() if not number.startswith("$")}


_PART = re.compile(r"spec (\d+(?:\.\d+)?)(?: (.*))?$")
_OPERATION = re.compile(r"[A-Z]+\d*")


def _one_part(part: str, titles: Mapping[str, str], operations: Mapping[str, str]) -> str:
    """``spec 4.3 E16`` → ``4.3 E16 Create NDCT payment``; ``spec 7 rule 2`` → ``7 Errors,
    rule 2``; ``spec 2.4`` → ``2.4 Signing basket``; a part it cannot read, as it is."""
    match = _PART.match(part.strip())
    if match is None:
        return part.strip()
    number, rest = match.group(1), match.group(2) or ""
    if _OPERATION.fullmatch(rest) and rest in operations:
        return f"{number} {sortable_spec(rest)} {operations[rest]}"
    title = titles.get(number) or titles.get(number.split(".")[0], "")
    label = f"{number} {title}".strip()
    if not rest:
        return label
    return f"{label} {rest}" if rest.startswith("(") else f"{label}, {rest}"


def spec_label(spec: str, titles: Mapping[str, str], operations: Mapping[str, str]) -> str:
    """The Allure tree's label of a scenario's spec part: its number and title, the way the
    spec heads it (``4.3 E16 Create NDCT payment``, ``2.7 Payment request bodies``); a scenario
    resting on several parts is grouped under the first, the others named after ``also``.

    Allure sorts the tree by name, as text (``localeCompare``, not numeric): the spec's section,
    rule and item numbers are single digits, and an operation's number is written two digits
    wide (``4.3 E02 Create payment basket``), so that the labels sort in spec order."""
    first, *others = [part for part in spec.split(", spec ") if part]
    label = _one_part(first, titles, operations)
    if not others:
        return label
    also = ", ".join(_PART.sub(r"\1 \2", f"spec {part}").strip() for part in others)
    return f"{label}; also {also}"


def _description(scenario: Scenario) -> str:
    expect = scenario.expect
    # Allure renders the description as Markdown: paragraphs keep their breaks, items a list.
    lines = [
        scenario.title,
        "",
        f"**Requirement**: {scenario.rule} ({scenario.spec}, {scenario.level}); "
        f"kind: {scenario.kind}",
        "",
        "**Expected**: HTTP "
        + " or ".join(str(status) for status in expect.statuses)
        + (f" with code {expect.code}" if expect.code else ""),
    ]
    if scenario.quotes:
        lines += ["", "**The spec says**:", ""]
        lines += [f"- {line.removeprefix('Quoted: ')}" for line in quote_lines(scenario.quotes)]
    if scenario.reading:
        lines += ["", f"**Our reading** (should): {scenario.reading}"]
    if scenario.assumptions:
        lines += ["", "**Rests on these assumptions**:", ""]
        lines += [f"- {text}" for text in scenario.assumptions]
    return "\n".join(lines)


def attach_findings(findings: Sequence[Finding]) -> None:
    """The scenario's findings by tier, as one attachment, and a ``should-findings`` tag when
    only should findings were made (the test then passes: its must tier held)."""
    if allure is None or not findings:
        return
    lines = [
        f"[{finding.level}] {finding.title} ({finding.spec})"
        + (f"\n        our reading: {finding.reading}" if finding.reading else "")
        + (f"\n        the bank's promise: {finding.promise}" if finding.promise else "")
        + "".join(f"\n        {line}" for line in quote_lines(finding.quotes))
        for finding in findings
    ]
    allure.attach(
        scrub("\n".join(lines)),
        name="findings (must / should)",
        attachment_type=allure.attachment_type.TEXT,
    )
    if all(finding.level == "should" for finding in findings):
        allure.dynamic.tag("should-findings")


def exchange_name(index: int, exchange: Exchange) -> str:
    """``03 POST /v1/payments/... → 201``: the attachment's name, in the order they happened."""
    return f"{index:02d} {exchange.method} {exchange.path} → {exchange.status}"


def enabled() -> bool:
    """Whether anything records attachments (allure-pytest with ``--alluredir`` registers its
    listener with allure-commons; without it ``allure.attach`` goes nowhere)."""
    if allure is None:
        return False
    import allure_commons

    return bool(allure_commons.plugin_manager.hook.attach_data.get_hookimpls())


def attach_exchanges(exchanges: Iterable[Exchange]) -> None:
    """Every exchange of the scenario as text, in one attachment (secrets masked by
    ``Exchange.render`` and the scrub).

    One exchange is attached under its own name (``01 GET /v1/... → 200``); several go into one
    attachment named after the first and the last, each under a ``=== 02 POST ... → 201 ===``
    heading, in the order they happened. One file per scenario rather than per exchange:
    allure-pytest writes every attachment as its own file (a temporary file and a rename), and
    file creation is a large part of what the reports cost a run.
    """
    if not enabled():
        return
    shown = list(exchanges)
    if not shown:
        return
    names = [exchange_name(index, exchange) for index, exchange in enumerate(shown, start=1)]
    if len(shown) == 1:
        name, text = names[0], shown[0].render()
    else:
        name = f"{names[0]} … {names[-1]}"
        text = "\n\n".join(
            f"=== {title} ===\n{exchange.render()}"
            for title, exchange in zip(names, shown, strict=True)
        )
    allure.attach(scrub(text), name=scrub(name), attachment_type=allure.attachment_type.TEXT)


def reproduce_commands(exchanges: Sequence[Exchange]) -> list[str]:
    """The ``conformance call`` line of each exchange (a body that is not UTF-8 goes by file)."""
    commands: list[str] = []
    for exchange in exchanges:
        try:
            commands.append(exchange.reproduce_command())
        except ValueError:
            commands.append(
                exchange.reproduce_command(data_file="body.bin")
                + "   # body.bin: the request body of this exchange, byte for byte"
            )
    return commands


def attach_reproduction(commands: Sequence[str]) -> None:
    """The commands that replay a failure, as a shell snippet."""
    if allure is None or not commands:
        return
    allure.attach(
        scrub("\n".join(commands) + "\n"),
        name="reproduce",
        attachment_type=allure.attachment_type.TEXT,
        extension="sh",
    )
