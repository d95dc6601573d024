"""A baseline of known failures that expires (``conformance run --baseline FILE``).

The file is TOML, one ``[[known]]`` table per known cause::

    [[known]]
    cause = "cause-1a2b3c4d"        # the cause id the reports name (stable across runs)
    owner = "Kari Nordmann"         # who answers for it
    ticket = "BANK-1234"            # where its fix is tracked
    expires = 2026-03-31            # a TOML date: the entry holds through that day
    scenarios = ["E16-..."]         # optional: the scenarios it was seen in
    note = "..."                    # optional

With a baseline a run fails only on what it does not know: a must failure (a should finding
too under ``--strict``) whose cause is not in it, a scenario that erred or was blocked, or an
entry past its expiry date, which fails the run whether its cause showed or not. Each entry is
reported as ``observed`` (its cause showed), ``fixed`` (it did not, and every scenario the entry
names was judged in this run), ``not observed`` (it did not, and the run did not reach all of
its scenarios, or the entry names none: the run cannot tell it is fixed) or ``expired``. The
verdict line stays what the run found: a known failure is still a failure.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from conformance.errors import ConformanceError
from conformance.report.verdicts import FAILED, FAILED_SHOULD, PASSED

__all__ = ["Baseline", "Known", "baseline_lines", "judge_baseline", "load_baseline"]

OBSERVED: Final = "observed"
FIXED: Final = "fixed"
NOT_OBSERVED: Final = "not observed"
EXPIRED: Final = "expired"

_CAUSE: Final = re.compile(r"^cause-[0-9a-f]{8}$")
_KEYS: Final = frozenset({"cause", "owner", "ticket", "expires", "scenarios", "note"})
#: The furthest ahead an entry may expire: a baseline accepts a known failure for a while, and an
#: entry that never expires (``9999-12-31``) defeats it (security-5.md L7). Renew it when it
#: lapses, if the fix is still due.
MOST_DAYS_AHEAD: Final = 366
#: The verdicts of a scenario the run reached and judged.
_JUDGED: Final = frozenset({PASSED, FAILED, FAILED_SHOULD})


@dataclass(frozen=True)
class Known:
    """One known cause: who owns it, where it is tracked, until when it is accepted."""

    cause: str
    owner: str
    ticket: str
    expires: dt.date
    scenarios: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Baseline:
    """The entries of a baseline file."""

    source: str
    known: tuple[Known, ...]


def _entry(number: int, table: Any, path: Path, today: dt.date) -> Known:
    where = f"{path}: [[known]] number {number}"
    if not isinstance(table, dict):
        raise ConformanceError(f"{where} is not a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConformanceError(f"{where}: unknown key {unknown[0]!r} (known: {sorted(_KEYS)})")
    for key in ("cause", "owner", "ticket", "expires"):
        if key not in table or table[key] in ("", None):
            raise ConformanceError(f"{where} needs {key}")
    for key in ("owner", "ticket"):
        if not isinstance(table[key], str) or not table[key].strip():
            raise ConformanceError(f"{where}: {key} is text that names someone or something")
    cause = table["cause"]
    if not isinstance(cause, str) or not _CAUSE.match(cause):
        raise ConformanceError(f"{where}: cause {cause!r} is not a cause id (cause-1a2b3c4d)")
    expires = _expiry(table["expires"], where, today)
    scenarios = table.get("scenarios", [])
    if not isinstance(scenarios, list) or not all(isinstance(s, str) for s in scenarios):
        raise ConformanceError(f"{where}: scenarios is a list of scenario ids")
    return Known(
        cause=cause,
        owner=str(table["owner"]),
        ticket=str(table["ticket"]),
        expires=expires,
        scenarios=tuple(scenarios),
        note=str(table.get("note", "")),
    )


def _expiry(expires: Any, where: str, today: dt.date) -> dt.date:
    """An entry's ``expires``: a TOML date at most :data:`MOST_DAYS_AHEAD` days after ``today``."""
    if isinstance(expires, dt.datetime) or not isinstance(expires, dt.date):
        raise ConformanceError(f"{where}: expires is a TOML date (2026-03-31), not {expires!r}")
    if (expires - today).days > MOST_DAYS_AHEAD:
        raise ConformanceError(
            f"{where}: expires {expires.isoformat()} is more than {MOST_DAYS_AHEAD} days ahead: "
            "a known failure is accepted for a year at most (renew the entry when it lapses)"
        )
    return expires


def load_baseline(path: Path, today: dt.date | None = None) -> Baseline:
    """The baseline in ``path``; a file that is not one is a :class:`ConformanceError` naming
    the entry and the key (an entry expiring more than :data:`MOST_DAYS_AHEAD` days after
    ``today`` too)."""
    today = today or dt.date.today()
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # a BOM is no mistake
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConformanceError(f"the baseline {path} cannot be read: {error}") from None
    unknown = sorted(set(document) - {"known"})
    if unknown:
        raise ConformanceError(f"{path}: unknown table {unknown[0]!r} (a baseline has [[known]])")
    entries = document.get("known", [])
    if not isinstance(entries, list):
        raise ConformanceError(f"{path}: known is an array of tables ([[known]])")
    known = tuple(
        _entry(number, table, path, today) for number, table in enumerate(entries, start=1)
    )
    causes = [entry.cause for entry in known]
    repeated = sorted({cause for cause in causes if causes.count(cause) > 1})
    if repeated:
        raise ConformanceError(f"{path}: {repeated[0]} is listed twice")
    return Baseline(str(path), known)


def judge_baseline(
    baseline: Baseline,
    causes: Sequence[Mapping[str, Any]],
    scenarios: Sequence[Mapping[str, Any]],
    *,
    strict: bool,
    today: dt.date,
) -> dict[str, Any]:
    """The baseline against a run's causes and scenario verdicts (compliance.json's):
    ``entries`` with their status, the ``new`` causes (not in the baseline at all), the
    ``expired`` entries (a cause that showed under one is expired, not new), and ``holds``:
    whether the run's failures are all known and no entry expired (the run then passes on
    them)."""
    counted = [c for c in causes if c["level"] == "must" or strict]
    shown = {cause["id"] for cause in counted}
    verdicts = {str(item["id"]): str(item["verdict"]) for item in scenarios}
    entries: list[dict[str, Any]] = []
    for known in baseline.known:
        if known.expires < today:
            status = EXPIRED
        elif known.cause in shown:
            status = OBSERVED
        elif known.scenarios and all(verdicts.get(s) in _JUDGED for s in known.scenarios):
            status = FIXED
        else:
            status = NOT_OBSERVED
        entries.append(
            {
                "cause": known.cause,
                "owner": known.owner,
                "ticket": known.ticket,
                "expires": known.expires.isoformat(),
                "status": status,
                "seen": known.cause in shown,
                "note": known.note,
            }
        )
    # an expired entry's cause is not new: it is in the baseline, past its date (it breaks the
    # baseline as "expired", whether it showed or not)
    new = sorted(shown - {known.cause for known in baseline.known})
    expired = [entry["cause"] for entry in entries if entry["status"] == EXPIRED]
    uncovered = _failed_without_cause(counted, scenarios, strict)
    return {
        "file": baseline.source,
        "entries": entries,
        "new": new,
        "expired": expired,
        "uncovered": uncovered,
        "holds": not new and not expired and not uncovered,
    }


def _failed_without_cause(
    causes: Sequence[Mapping[str, Any]], scenarios: Sequence[Mapping[str, Any]], strict: bool
) -> list[str]:
    """The failed scenarios no cause covers (a failure the baseline cannot name)."""
    covered = {scenario for cause in causes for scenario in cause["scenarios"]}
    failing = {FAILED, FAILED_SHOULD} if strict else {FAILED}
    return sorted(
        str(item["id"])
        for item in scenarios
        if item["verdict"] in failing and item["id"] not in covered
    )


def baseline_lines(document: Mapping[str, Any]) -> list[str]:
    """The baseline's result as the reports say it ([] for a run without one)."""
    said = document.get("baseline")
    if not said:
        return []
    counts: dict[str, int] = {}
    for entry in said["entries"]:
        counts[entry["status"]] = counts.get(entry["status"], 0) + 1
    known = ", ".join(
        f"{counts[status]} {status}"
        for status in (OBSERVED, FIXED, NOT_OBSERVED, EXPIRED)
        if counts.get(status)
    )
    head = "BASELINE HOLDS" if said["holds"] else "BASELINE BROKEN"
    expired = len(said["expired"])
    past = (
        f"{expired} entr{'y' if expired == 1 else 'ies'} past its expiry date; " if expired else ""
    )
    lines = [
        f"{head} ({said['file']}): {len(said['new'])} new cause(s) not in it; {past}"
        f"its {len(said['entries'])} entries: {known or 'none'}"
    ]
    lines += [f"  NEW {cause}" for cause in said["new"]]
    lines += [f"  FAILED WITHOUT A CAUSE {scenario}" for scenario in said["uncovered"]]
    lines += [_entry_line(entry) for entry in said["entries"] if entry["status"] != OBSERVED]
    return lines


def _entry_line(entry: Mapping[str, Any]) -> str:
    """``  EXPIRED cause-... (owner Kari, ticket BANK-1, expired 2026-03-31; its cause showed in
    this run)``, or the entry's other status with its expiry date."""
    who = f"owner {entry['owner']}, ticket {entry['ticket']}"
    if entry["status"] != EXPIRED:
        return f"  {entry['status'].upper()} {entry['cause']} ({who}, expires {entry['expires']})"
    showed = "; its cause showed in this run" if entry["seen"] else ""
    return f"  EXPIRED {entry['cause']} ({who}, expired {entry['expires']}{showed})"
