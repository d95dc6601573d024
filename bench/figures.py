"""The Figures table of ``bench/RESULTS.md``, written from data so that it cannot drift.

Two kinds of row: the **counts** (scenarios, the bundled run's verdicts, faults, example
profiles) are counted from the code each time the table is written (:func:`counted`); the
**measurements** (times, ratios) are the last line of each figure in ``bench/figures.jsonl``,
which the benchmarks append to (:func:`record`: ``python -m bench bundled`` with a baseline,
``python -m bench maketest``) and a person appends to by hand for what no benchmark measures (CI's
steps: ``python -m bench.figures add KEY LABEL VALUE --how TEXT``). ``python -m bench.figures``
writes the table between the two markers of ``bench/RESULTS.md``; ``tests/repo/test_figures.py``
checks that the table there is the one this module writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

__all__ = [
    "DATA",
    "RESULTS",
    "Figure",
    "counted",
    "latest",
    "record",
    "render",
    "section",
    "table",
    "write",
]

_HERE = Path(__file__).resolve().parent
#: The measurements, one JSON object a line; the last line of a key is its figure.
DATA = _HERE / "figures.jsonl"
RESULTS = _HERE / "RESULTS.md"
BEGIN = "<!-- figures: written by `python -m bench.figures` from bench/figures.jsonl; edit that -->"
END = "<!-- figures: end -->"


@dataclass(frozen=True)
class Figure:
    """One row: ``key`` names the figure (a later line of the same key replaces it), ``value``
    is shown as written, ``date`` is when it was measured or counted, ``how`` how (the machine,
    the command, the baseline)."""

    key: str
    label: str
    value: str
    date: str
    how: str


def record(
    key: str, label: str, value: str, *, how: str, date: str | None = None, data: Path = DATA
) -> Figure:
    """Append a measurement to ``data`` (the table shows it once ``python -m bench.figures``
    has written it)."""
    figure = Figure(key, label, value, date or datetime.now(UTC).date().isoformat(), how)
    with data.open("a", encoding="utf-8") as file:
        file.write(json.dumps(asdict(figure), ensure_ascii=False) + "\n")
    return figure


def latest(data: Path = DATA) -> list[Figure]:
    """The last line of each key, in the order the keys first appear."""
    figures: dict[str, Figure] = {}
    for number, line in enumerate(data.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            figure = Figure(**json.loads(line))
        except (ValueError, TypeError) as error:
            raise SystemExit(f"{data} line {number}: not a figure ({error})") from None
        figures[figure.key] = figure
    return list(figures.values())


def _thousands(number: int) -> str:
    return f"{number:,}"


#: The "when" of a count: whenever the table is written (a test checks it against the code).
COUNTED = "the code, as it is"


def counted() -> list[Figure]:
    """The counts, from the code: the scenarios the contract generates, the bundled run's
    judged and not applicable ones, the reference server's faults, the example profiles."""
    from conformance.contract import load_contract
    from conformance.generate import generate_scenarios
    from reference_server.faults import FAULTS

    date = COUNTED
    scenarios = generate_scenarios(load_contract())
    must = sum(1 for scenario in scenarios if scenario.level == "must")
    # not applicable to the bundled server without mutual TLS: the checks of the TLS client
    # certificate, a bulk payment in a basket (no bulk product), the bounds of psuMessage (the
    # server sends none, and a bound no answer showed a value for is not judged)
    qwac = sum(1 for scenario in scenarios if scenario.rule.startswith("AUTH-qwac-"))
    psu_message = sum(1 for scenario in scenarios if scenario.rule == "LIM-psu-message-max-512")
    not_applicable = 1 + qwac + psu_message
    faults_must = sum(1 for fault in FAULTS.values() if fault.level == "must")
    examples = sorted((_HERE.parent / "profiles" / "examples").glob("*.toml"))
    return [
        Figure(
            "scenarios",
            "scenarios the contract generates",
            f"{_thousands(len(scenarios))} ({_thousands(must)} must, "
            f"{_thousands(len(scenarios) - must)} should)",
            date,
            "counted: `generate_scenarios(load_contract())`",
        ),
        Figure(
            "bundled-verdicts",
            "the bundled run's verdicts (`make run`)",
            f"{_thousands(len(scenarios) - not_applicable)} judged, all passed; "
            f"{_thousands(not_applicable)} not applicable",
            date,
            f"counted; not applicable: the {qwac} checks of the TLS client certificate "
            "(`conformance run --tls` judges them), a bulk payment in a basket (this interface "
            f"cannot make one), the {psu_message} bounds of `psuMessage` (never sent)",
        ),
        Figure(
            "faults",
            "deliberate faults of the reference server (the self-check)",
            f"{len(FAULTS)} ({faults_must} graded must, {len(FAULTS) - faults_must} should)",
            date,
            "counted: `reference_server.faults.FAULTS`",
        ),
        Figure(
            "example-profiles",
            "example profiles",
            str(len(examples)),
            date,
            "counted: `profiles/examples/*.toml`",
        ),
    ]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(figures: Iterable[Figure]) -> str:
    """The Markdown table of ``figures``."""
    lines = ["| figure | value | when | how |", "|---|---|---|---|"]
    lines += [
        f"| {_cell(f.label)} | **{_cell(f.value)}** | {f.date} | {_cell(f.how)} |" for f in figures
    ]
    return "\n".join(lines)


def table(data: Path = DATA) -> str:
    """The table the Figures section holds: the counts, then the measurements."""
    return render([*counted(), *latest(data)])


def section(text: str) -> str:
    """The generated part of ``text`` (``RESULTS.md``), markers excluded."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{RESULTS} has no figures markers ({BEGIN!r} ... {END!r})")
    return text[start + len(BEGIN) : end].strip("\n")


def write(results: Path = RESULTS, data: Path = DATA) -> bool:
    """Write the table into ``results`` between the markers; True when it changed."""
    text = results.read_text(encoding="utf-8")
    section(text)  # the markers are there
    start, end = text.find(BEGIN) + len(BEGIN), text.find(END)
    updated = f"{text[:start]}\n{table(data)}\n{text[end:]}"
    if updated == text:
        return False
    results.write_text(updated, encoding="utf-8")
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.figures", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    add = commands.add_parser("add", help="append a measurement to bench/figures.jsonl")
    add.add_argument("key")
    add.add_argument("label")
    add.add_argument("value")
    add.add_argument("--how", required=True)
    add.add_argument("--date")
    args = parser.parse_args(argv)
    if args.command == "add":
        record(args.key, args.label, args.value, how=args.how, date=args.date)
    changed = write()
    print(f"{RESULTS}: {'Figures table written' if changed else 'Figures table unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
