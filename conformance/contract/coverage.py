"""The ledger of the spec's statements (``schemas/coverage.json``): every statement of
interface.md, and what judges it or why nothing can.

A statement is a quote of ``quotes.json`` (by its label), a "not shown" of ``silences.json`` (by
the silence's id) or, where neither holds it, a sentence or table row given as ``text`` with its
``spec`` part: its words have one home. What judges it:

- ``quoted_by``: rule ids whose scenarios name the statement's quote (only those scenarios);
- ``rules`` and ``scenarios``: ``fnmatch`` patterns of rule and scenario ids;
- ``release``: a row of ``releases.json``, whose selectors it borrows.

A statement no scenario can judge says why in ``not_judged`` (:data:`REASONS`).

:func:`load_statements` reads and checks the ledger; :func:`judged_statements` tells, for the
scenarios of one run (``compliance.json``'s), which statements the run judged, which its scope left
unjudged and which no run can judge. That the patterns select generated scenarios, that each
``text`` is in interface.md and that every numbered rule has an entry is checked by
``tests/unit/test_coverage_ledger.py`` (this module may not import the generators).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from conformance._data import data_directory
from conformance.contract.loader import fail, load_quotes, read_json
from conformance.contract.silences import load_silences
from conformance.errors import ContractError

__all__ = [
    "JUDGED_VERDICTS",
    "LEDGER_FILE",
    "REASONS",
    "Coverage",
    "Statement",
    "judged_statements",
    "load_statements",
]

#: The ledger's file name inside a contract directory.
LEDGER_FILE = "coverage.json"
#: Why no scenario judges a statement.
REASONS: Mapping[str, str] = {
    "not-shown": "the spec shows nothing to judge",
    "outside": "not testable from outside the bank (by a TPP's requests and the bank's answers)",
    "no-constraint": "states nothing a bank's answer can break",
    "no-scenario": "testable, but no scenario judges it yet",
}
#: The verdicts that judged a scenario (a pass or a failure, at either level).
JUDGED_VERDICTS = frozenset({"passed", "failed", "failed (should)"})
_FIELDS = frozenset(
    {"id", "spec", "quote", "silence", "text", "quoted_by", "rules", "scenarios", "release"}
    | {"not_judged"}
)


@dataclass(frozen=True)
class Statement:
    """One statement of interface.md and what judges it."""

    id: str
    spec: str
    text: str
    quote: str | None = None
    silence: str | None = None
    quoted_by: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    release: str | None = None
    reason: str | None = None
    why: str = ""

    @property
    def judgeable(self) -> bool:
        """Whether some scenario can judge it (else :attr:`reason` says why none can)."""
        return self.reason is None

    def judged_by(self, scenario: Mapping[str, Any]) -> bool:
        """Whether ``scenario`` (a ``compliance.json`` entry: id, rule, operation, quotes) is
        one that judges this statement."""
        rule = str(scenario.get("rule", ""))
        if self.quote and rule in self.quoted_by and self.quote in scenario.get("quotes", ()):
            return True
        return (
            any(fnmatchcase(rule, pattern) for pattern in self.rules)
            or any(fnmatchcase(str(scenario.get("id", "")), p) for p in self.scenarios)
            or scenario.get("operation") in self.operations
        )


@dataclass(frozen=True)
class Coverage:
    """What one run judged of the spec's statements."""

    judged: tuple[Statement, ...]
    unjudged: tuple[Statement, ...]  # judgeable, but the run's scope judged none of their scenarios
    not_judgeable: tuple[Statement, ...]

    @property
    def total(self) -> int:
        return len(self.judged) + len(self.unjudged) + len(self.not_judgeable)

    def as_dict(self) -> dict[str, Any]:
        """The ``coverage`` block of ``compliance.json``."""
        return {
            "judged": len(self.judged),
            "statements": self.total,
            "not_judgeable": len(self.not_judgeable),
            "unjudged": [
                {"statement": s.id, "spec": s.spec, "text": s.text} for s in self.unjudged
            ],
        }


def judged_statements(
    statements: Iterable[Statement], scenarios: Iterable[Mapping[str, Any]]
) -> Coverage:
    """Which statements the scenarios (with their verdicts) judged: a statement counts as judged
    when at least one scenario that judges it passed or failed."""
    judged_scenarios = [s for s in scenarios if s.get("verdict") in JUDGED_VERDICTS]
    judged: list[Statement] = []
    unjudged: list[Statement] = []
    not_judgeable: list[Statement] = []
    for statement in statements:
        if not statement.judgeable:
            not_judgeable.append(statement)
        elif any(statement.judged_by(scenario) for scenario in judged_scenarios):
            judged.append(statement)
        else:
            unjudged.append(statement)
    return Coverage(tuple(judged), tuple(unjudged), tuple(not_judgeable))


def load_statements(root: Path | None = None) -> tuple[Statement, ...]:
    """The ledger of ``root`` (``schemas/`` of this installation by default), checked: unique
    ids, each statement's words found in one home, each one judged by something or saying why
    not, each quote, silence and release row it names known."""
    return _load(root if root is not None else data_directory("schemas"))


@functools.cache
def _load(root: Path) -> tuple[Statement, ...]:
    file = root / LEDGER_FILE
    if not file.is_file():
        raise ContractError(f"{file}: the ledger of the spec's statements is missing")
    doc = read_json(root, file)
    if not isinstance(doc, dict) or not isinstance(doc.get("statements"), list):
        raise fail(root, file, "/statements", 'expected {"statements": [...]}')
    quotes = load_quotes(root)
    silences = {entry.id: entry for entry in load_silences(root)}
    releases = _release_rows(root)
    seen: set[str] = set()
    statements = []
    for index, raw in enumerate(doc["statements"]):
        statement = _statement(raw, quotes, silences, releases)
        if isinstance(statement, str):
            raise fail(root, file, ("statements", index), statement)
        if statement.id in seen:
            raise fail(root, file, ("statements", index, "id"), f"{statement.id!r} repeats an id")
        seen.add(statement.id)
        statements.append(statement)
    return tuple(statements)


def _release_rows(root: Path) -> dict[str, Mapping[str, Any]]:
    file = root / "releases.json"
    rows = read_json(root, file).get("releases", []) if file.is_file() else []
    return {row["id"]: row for row in rows if isinstance(row, dict) and "id" in row}


def _strings(raw: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        return None
    return tuple(value)


def _words(
    raw: Mapping[str, Any], quotes: Mapping[str, Any], silences: Mapping[str, Any]
) -> tuple[str, str] | str:
    """The statement's spec part and words, from their one home, or what is wrong."""
    quote, silence = raw.get("quote"), raw.get("silence")
    if quote is not None and quote not in quotes:
        return f"quote {quote!r} is not in quotes.json"
    if silence is not None and silence not in silences:
        return f"silence {silence!r} is not in silences.json"
    if "text" in raw and (quote is not None or silence is not None):
        return "text given beside a quote or silence (one home for its words)"
    if quote is not None:
        return quotes[quote].spec, quotes[quote].text
    if silence is not None:
        return silences[silence].spec, silences[silence].quote
    if isinstance(raw.get("text"), str) and isinstance(raw.get("spec"), str):
        return raw["spec"], raw["text"]
    return "its words need one home: quote, silence, or text with spec"


def _selectors(
    raw: Mapping[str, Any], releases: Mapping[str, Mapping[str, Any]]
) -> dict[str, tuple[str, ...]] | str:
    """quoted_by, rules, scenarios and operations (a release row's added), or what is wrong."""
    selectors = {key: _strings(raw, key) for key in ("quoted_by", "rules", "scenarios")}
    bad = [key for key, value in selectors.items() if value is None]
    if bad:
        return f"{', '.join(bad)} must be lists of non-empty strings"
    found = {key: value or () for key, value in selectors.items()}
    if found["quoted_by"] and raw.get("quote") is None:
        return "quoted_by needs a quote"
    found["operations"] = ()
    release = raw.get("release")
    if release is not None:
        if release not in releases:
            return f"release {release!r} is not a row of releases.json"
        row = releases[release]
        found["rules"] += tuple(row.get("rules", ()))
        found["scenarios"] += tuple(row.get("scenarios", ()))
        found["operations"] = tuple(row.get("operations", ()))
    return found


def _reason(raw: Mapping[str, Any], judgeable: bool) -> tuple[str | None, str] | str:
    """``not_judged``'s reason and why (None for a judged statement), or what is wrong."""
    not_judged = raw.get("not_judged")
    if judgeable == (not_judged is not None):
        return "give what judges it, or (only) not_judged with the reason"
    if not_judged is None:
        return None, ""
    if not isinstance(not_judged, dict) or not_judged.get("reason") not in REASONS:
        return f"not_judged.reason is one of {', '.join(REASONS)}"
    if not not_judged.get("why"):
        return "not_judged needs its why"
    return not_judged["reason"], str(not_judged["why"])


def _statement(
    raw: Any,
    quotes: Mapping[str, Any],
    silences: Mapping[str, Any],
    releases: Mapping[str, Mapping[str, Any]],
) -> Statement | str:
    """The entry as a :class:`Statement`, or what is wrong with it."""
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
        return "a statement is an object with an id"
    unknown = set(raw) - _FIELDS
    if unknown:
        return f"{raw['id']}: unknown field(s) {sorted(unknown)}"
    words = _words(raw, quotes, silences)
    found = _selectors(raw, releases)
    if isinstance(words, str) or isinstance(found, str):
        return f"{raw['id']}: {words if isinstance(words, str) else found}"
    reason = _reason(raw, any(found.values()))
    if isinstance(reason, str):
        return f"{raw['id']}: {reason}"
    return Statement(
        id=raw["id"],
        spec=words[0],
        text=words[1],
        quote=raw.get("quote"),
        silence=raw.get("silence"),
        quoted_by=found["quoted_by"],
        rules=found["rules"],
        scenarios=found["scenarios"],
        operations=found["operations"],
        release=raw.get("release"),
        reason=reason[0],
        why=reason[1],
    )
