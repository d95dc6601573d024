"""What spec 9 dates to a release, and the scenarios that judge it (``schemas/releases.json``):
release gating. A bank still on an older release (the profile's ``release = "1.21.18"``) has
none of what came later (spec 9: "1.21.20 added signing basket support for NCBCT"); the
scenarios of those changes are then not applicable, naming the release, instead of failing.

A row selects scenarios three ways: by ``operations`` (the operation's own scenarios and every
flow that calls it), by ``rules`` and by ``scenarios`` (``fnmatch`` patterns of rule and scenario
ids). The table is read once per contract and checked: each release within spec 9's line (1.6.3
to 1.22.0), each quote in ``quotes.json``, each row selecting something.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.contract.loader import fail, read_json

if TYPE_CHECKING:
    from conformance.contract import Contract

__all__ = [
    "LATEST_RELEASE",
    "OLDEST_RELEASE",
    "Release",
    "ReleaseChange",
    "change",
    "changes_after",
    "release_changes",
]

_FILE = "releases.json"
_RELEASE = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")


@dataclass(frozen=True, order=True)
class Release:
    """A release of the interface, ``1.21.18``, compared part by part."""

    parts: tuple[int, int, int]

    @classmethod
    def parse(cls, text: str) -> Release | None:
        """The release ``text`` names, or None when it is not three dotted numbers."""
        found = _RELEASE.match(text.strip())
        if found is None:
            return None
        major, minor, patch = (int(part) for part in found.groups())
        return cls((major, minor, patch))

    def __str__(self) -> str:
        return ".".join(str(part) for part in self.parts)


#: Spec 9: "The release line shown is 1.22.0 dated 2026-01-29; earlier releases run down to
#: 1.6.3."
LATEST_RELEASE = Release((1, 22, 0))
OLDEST_RELEASE = Release((1, 6, 3))


@dataclass(frozen=True)
class ReleaseChange:
    """One change spec 9 dates: the release that brought it and what it selects."""

    id: str
    release: Release
    change: str
    quotes: tuple[str, ...]
    operations: frozenset[str] = frozenset()
    rules: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()

    def covers(self, scenario_id: str, rule: str, operations: Iterable[str]) -> bool:
        """Whether the scenario (its id, rule and the operations it calls) judges this change."""
        return (
            any(fnmatchcase(scenario_id, pattern) for pattern in self.scenarios)
            or any(fnmatchcase(rule, pattern) for pattern in self.rules)
            or not self.operations.isdisjoint(operations)
        )


_CACHE: weakref.WeakKeyDictionary[Contract, tuple[ReleaseChange, ...]] = weakref.WeakKeyDictionary()


def release_changes(contract: Contract) -> tuple[ReleaseChange, ...]:
    """The contract's dated changes (none when it has no ``releases.json``), checked; read
    once per contract object."""
    cached = _CACHE.get(contract)
    if cached is None:
        cached = _CACHE[contract] = _load(contract.root, contract.quotes)
    return cached


def change(contract: Contract, change_id: str) -> ReleaseChange:
    """The change ``change_id`` (``ncbct-baskets``); a ``KeyError`` names an unknown one."""
    for row in release_changes(contract):
        if row.id == change_id:
            return row
    raise KeyError(f"{_FILE} has no change {change_id!r}")


def changes_after(
    contract: Contract,
    release: Release | None,
    scenario_id: str,
    rule: str,
    operations: Iterable[str],
) -> tuple[ReleaseChange, ...]:
    """The changes the scenario judges that came after ``release`` (None: the latest release,
    nothing gated), oldest first."""
    if release is None:
        return ()
    called = tuple(operations)
    found = [
        row
        for row in release_changes(contract)
        if row.release > release and row.covers(scenario_id, rule, called)
    ]
    return tuple(sorted(found, key=lambda row: row.release))


def _load(root: Path, quotes: Mapping[str, Any]) -> tuple[ReleaseChange, ...]:
    file = root / _FILE
    if not file.exists():
        return ()
    doc = read_json(root, file)
    rows = doc.get("releases") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        raise fail(root, file, "/releases", 'expected {"releases": [...]}')
    changes: list[ReleaseChange] = []
    for index, row in enumerate(rows):
        changes.append(_row(root, file, ("releases", index), row, quotes))
    ids = [row.id for row in changes]
    if len(set(ids)) != len(ids):
        raise fail(root, file, "/releases", "two rows share an id")
    return tuple(changes)


def _row(
    root: Path, file: Path, at: tuple[str | int, ...], row: Any, quotes: Mapping[str, Any]
) -> ReleaseChange:
    known = {"id", "release", "change", "quotes", "operations", "rules", "scenarios"}
    if not isinstance(row, dict) or not {"id", "release", "change", "quotes"} <= set(row):
        raise fail(root, file, at, "a row has id, release, change and quotes")
    unknown = sorted(set(row) - known)
    if unknown:
        raise fail(root, file, at, f"unknown member(s) {', '.join(unknown)}")
    release = Release.parse(str(row["release"]))
    if release is None or not OLDEST_RELEASE < release <= LATEST_RELEASE:
        raise fail(
            root,
            file,
            (*at, "release"),
            f"a release after {OLDEST_RELEASE}, up to {LATEST_RELEASE}",
        )
    for label in row["quotes"]:
        if label not in quotes:
            raise fail(root, file, (*at, "quotes"), f"quote {label!r} is not in quotes.json")
    selectors = [row.get(name, []) for name in ("operations", "rules", "scenarios")]
    if not any(selectors):
        raise fail(root, file, at, "a row selects scenarios (operations, rules or scenarios)")
    return ReleaseChange(
        id=str(row["id"]),
        release=release,
        change=str(row["change"]),
        quotes=tuple(row["quotes"]),
        operations=frozenset(selectors[0]),
        rules=tuple(selectors[1]),
        scenarios=tuple(selectors[2]),
    )
