"""The ledger of the spec's silences (``schemas/silences.json``, checked by
``silences.schema.json``): every "not shown" of interface.md and every silence found elsewhere,
each with the choices a conformant bank may make there, how the suite copes with them and which
reading of the reference server plays each choice.

:func:`load_silences` reads and checks the ledger (a problem is a
:class:`~conformance.errors.ContractError` naming the file and the JSON pointer) and returns
typed entries. What this module cannot see from ``conformance/`` (that a named reading, demand
or profile exists, that a quote is in interface.md) is checked by
``tests/unit/test_silences.py``: the suite may not import the reference server.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from conformance._data import data_directory
from conformance.contract.loader import fail, read_json
from conformance.errors import ContractError

__all__ = [
    "LEDGER_FILE",
    "PLAYER_KINDS",
    "Coping",
    "Player",
    "Silence",
    "load_silences",
]

#: The ledger's file name inside a contract directory.
LEDGER_FILE = "silences.json"
#: Its schema, beside it (else the suite's own).
LEDGER_SCHEMA_FILE = "silences.schema.json"
#: What a ``played_by`` row may name: the faithful server, a permissive reading, a demand, a
#: profile the server plays, or nobody (with the reason).
PLAYER_KINDS = ("bundled", "permissive", "demanding", "profile", "not-played")

Kind = Literal["not-shown", "implicit"]


@dataclass(frozen=True)
class Coping:
    """How the suite copes with a silence's choices: the ways (``copes``), in words (``text``),
    the profile keys and the ``conformance discover`` probes it rests on."""

    copes: tuple[str, ...]
    text: str
    keys: tuple[str, ...] = ()
    probes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Player:
    """One choice and who plays it (``player`` as written: ``bundled``, ``permissive:<name>``,
    ``demanding:<name>``, ``profile:<path>``, ``not-played``), the reason where one is given,
    and what a player being added elsewhere waits for (``pending``)."""

    choice: str
    player: str
    reason: str = ""
    pending: str = ""

    @property
    def kind(self) -> str:
        """One of :data:`PLAYER_KINDS`."""
        return self.player.split(":", 1)[0]

    @property
    def name(self) -> str:
        """The reading, demand or profile path named after the colon ("" for the others)."""
        return self.player.split(":", 1)[1] if ":" in self.player else ""


@dataclass(frozen=True)
class Silence:
    """One silence of the spec: where (``spec``, the verbatim ``quote``), what kind, what it
    leaves open, the choices, the suite's way with them and who plays each."""

    id: str
    spec: str
    quote: str
    kind: Kind
    silent: str
    choices: tuple[str, ...]
    suite: Coping
    played_by: tuple[Player, ...]

    def players_of(self, choice: str) -> tuple[Player, ...]:
        """The rows that play ``choice`` (or say why none does)."""
        return tuple(row for row in self.played_by if row.choice == choice)


def _silence(raw: Mapping[str, Any]) -> Silence:
    suite = raw["suite"]
    return Silence(
        id=raw["id"],
        spec=raw["spec"],
        quote=raw["quote"],
        kind=raw["kind"],
        silent=raw["silent"],
        choices=tuple(raw["choices"]),
        suite=Coping(
            copes=tuple(suite["copes"]),
            text=suite["text"],
            keys=tuple(suite.get("keys", ())),
            probes=tuple(suite.get("probes", ())),
        ),
        played_by=tuple(
            Player(
                choice=row["choice"],
                player=row["player"],
                reason=row.get("reason", ""),
                pending=row.get("pending", ""),
            )
            for row in raw["played_by"]
        ),
    )


def _check_entries(root: Path, file: Path, entries: Sequence[Silence]) -> None:
    """What the schema cannot say: ids unique, every row names one of its entry's choices and
    every choice has a row."""
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        at = ("silences", index)
        if entry.id in seen:
            raise fail(root, file, (*at, "id"), f"silence {entry.id!r} repeats an id")
        seen.add(entry.id)
        for row_index, row in enumerate(entry.played_by):
            if row.choice not in entry.choices:
                raise fail(
                    root,
                    file,
                    (*at, "played_by", row_index, "choice"),
                    f"{row.choice!r} is none of {entry.id!r}'s choices",
                )
        unplayed = [choice for choice in entry.choices if not entry.players_of(choice)]
        if unplayed:
            raise fail(
                root,
                file,
                (*at, "played_by"),
                f"choices of {entry.id!r} with no row (played, or not-played with the reason): "
                + "; ".join(unplayed),
            )


def load_silences(root: Path | None = None) -> tuple[Silence, ...]:
    """The ledger of ``root`` (``schemas/`` of this installation by default), checked against
    its schema and for unique ids and complete ``played_by`` rows."""
    return _load(root if root is not None else data_directory("schemas"))


@functools.cache
def _load(root: Path) -> tuple[Silence, ...]:
    file = root / LEDGER_FILE
    if not file.is_file():
        raise ContractError(f"{file}: the ledger of the spec's silences is missing")
    doc = read_json(root, file)
    schema_file = root / LEDGER_SCHEMA_FILE
    if not schema_file.is_file():
        schema_file = data_directory("schemas") / LEDGER_SCHEMA_FILE
    schema = read_json(root, schema_file)
    error = best_match(Draft202012Validator(schema).iter_errors(doc))
    if error is not None:
        raise fail(root, file, tuple(error.absolute_path), error.message)
    entries = tuple(_silence(raw) for raw in doc["silences"])
    _check_entries(root, file, entries)
    return entries
