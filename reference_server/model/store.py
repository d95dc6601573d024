"""Server state in SQLite: one table of typed records.

In memory by default; with ``--data PATH`` a file in WAL mode with ``synchronous=FULL``, so that a
write the server answered 201 for has reached the disk before the answer leaves (every write
commits before the handler returns). One connection guarded by one re-entrant lock: the server's
threads take turns, which is plenty for a sandbox and keeps every read consistent.

Records are frozen dataclasses that know how to turn themselves into a JSON document and back
(:class:`Record`; most derive both from their fields with ``records.DocRecord``); a
:class:`Table` names the kind (unique across the server) and the record type. Nothing outside this
module sees a row or a cursor.

``store.add(TABLE, record)`` inserts (a duplicate id raises), ``put`` replaces or inserts keeping
the insertion order, ``get``, ``all`` and ``children(TABLE, parent_id)`` read (insertion order),
``find(TABLE, field, value)`` matches a top-level field of the document (indexed), ``delete``
removes; ``next_number(name, start)`` is a persistent counter and ``with store.atomic():`` makes
several writes one commit (re-entrant).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

__all__ = ["Record", "Store", "Table"]


class Record(Protocol):
    """A stored resource: an id, an optional parent id, and a JSON round trip."""

    @property
    def id(self) -> str: ...

    @property
    def parent_id(self) -> str | None: ...

    def to_doc(self) -> dict[str, Any]: ...

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Self: ...


R = TypeVar("R", bound=Record)


@dataclass(frozen=True)
class Table(Generic[R]):
    """A kind of record: ``Table("customer", Customer)``. Kinds must be unique per server."""

    kind: str
    record_type: type[R]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    kind   TEXT NOT NULL,
    id     TEXT NOT NULL,
    parent TEXT,
    doc    TEXT NOT NULL,
    UNIQUE (kind, id)
);
CREATE INDEX IF NOT EXISTS records_parent ON records (kind, parent);
CREATE TABLE IF NOT EXISTS counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
"""


class Store:
    """The record store. Thread-safe; every public method is atomic on its own.

    Group several writes into one commit with ``with store.atomic(): ...`` (re-entrant: an inner
    ``atomic`` joins the outer one). A failure inside rolls the whole group back.
    """

    MEMORY: ClassVar[str] = ":memory:"

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = str(path) if path is not None else self.MEMORY
        self._lock = threading.RLock()
        self._depth = 0
        self._resets = 0
        self._writes: dict[str, int] = {}
        #: The document fields ``find`` has an index for (see there).
        self._indexed: set[str] = set()
        self._connection = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=10.0
        )
        try:
            if self.path != self.MEMORY:
                self._connection.execute("PRAGMA journal_mode=WAL")
                self._connection.execute("PRAGMA synchronous=FULL")
            self._connection.executescript(_SCHEMA)
        except sqlite3.Error:
            self._connection.close()  # a file that is not a database, say
            raise

    # -- transactions ---------------------------------------------------------------------------

    @contextmanager
    def atomic(self) -> Iterator[None]:
        with self._lock:
            outermost = self._depth == 0
            if outermost:
                self._connection.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if outermost:
                    self._connection.execute("ROLLBACK")
                raise
            self._depth -= 1
            if outermost:
                self._connection.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def reset(self) -> None:
        """Forget every record and counter (``/_control/reset``, the tests' per-test reset)."""
        with self.atomic():
            self._resets += 1
            self._connection.execute("DELETE FROM records")
            self._connection.execute("DELETE FROM counters")

    def version(self, table: Table[Any]) -> tuple[int, int]:
        """A value that changes whenever a record of ``table``'s kind may have changed (added,
        replaced, deleted, cleared, or the store reset), for a caller that keeps something
        derived from those records in memory: equal versions mean the records are unchanged.

        This process's writes are the only ones counted: the store is one connection of one
        server. A write that is rolled back still changes the version (a needless refresh,
        never a stale answer).
        """
        return self._resets, self._writes.get(table.kind, 0)

    def _written(self, table: Table[Any]) -> None:
        self._writes[table.kind] = self._writes.get(table.kind, 0) + 1

    # -- records --------------------------------------------------------------------------------

    def add(self, table: Table[R], record: R) -> R:
        """Insert a new record; a duplicate id raises ``sqlite3.IntegrityError``."""
        with self.atomic():
            self._written(table)
            self._connection.execute(
                "INSERT INTO records (kind, id, parent, doc) VALUES (?, ?, ?, ?)",
                (table.kind, record.id, record.parent_id, _dump(record)),
            )
        return record

    def put(self, table: Table[R], record: R) -> R:
        """Replace a record (keeping its insertion order), or insert it when new."""
        with self.atomic():
            self._written(table)
            updated = self._connection.execute(
                "UPDATE records SET parent = ?, doc = ? WHERE kind = ? AND id = ?",
                (record.parent_id, _dump(record), table.kind, record.id),
            ).rowcount
            if not updated:
                self.add(table, record)
        return record

    def get(self, table: Table[R], record_id: str) -> R | None:
        with self._lock:
            row = self._connection.execute(
                "SELECT doc FROM records WHERE kind = ? AND id = ?", (table.kind, record_id)
            ).fetchone()
        return None if row is None else table.record_type.from_doc(json.loads(row[0]))

    def all(self, table: Table[R]) -> list[R]:
        """Every record of the kind, in insertion order."""
        return self._select(table, "kind = ?", (table.kind,))

    def children(self, table: Table[R], parent_id: str) -> list[R]:
        """The records whose parent is ``parent_id``, in insertion order."""
        return self._select(table, "kind = ? AND parent = ?", (table.kind, parent_id))

    def find(self, table: Table[R], field: str, value: str | int | bool) -> list[R]:
        """The records whose document has ``value`` at top-level key ``field``.

        Served by an index on ``(kind, field)``, made on the first search of the field: without
        it every search reads and parses every document of the kind (about 1 µs each in SQLite),
        and a sandbox that keeps growing (the suite adds thousands of customers, accounts and
        payments to one server) would slow down request by request.
        """
        if not field.replace("_", "").isalnum():
            raise ValueError(f"not a plain field name: {field!r}")
        expression = f"json_extract(doc, '$.{field}')"
        with self._lock:
            if field not in self._indexed:
                self._connection.execute(
                    f'CREATE INDEX IF NOT EXISTS "records_by_{field}" '
                    f"ON records (kind, {expression})"
                )
                # Made inside a transaction, the index goes if that is rolled back: remember it
                # only once it is committed (``IF NOT EXISTS`` makes the retry harmless).
                if self._depth == 0:
                    self._indexed.add(field)
            return self._select(table, f"kind = ? AND {expression} = ?", (table.kind, value))

    def delete(self, table: Table[R], record_id: str) -> bool:
        with self.atomic():
            self._written(table)
            deleted = self._connection.execute(
                "DELETE FROM records WHERE kind = ? AND id = ?", (table.kind, record_id)
            ).rowcount
        return bool(deleted)

    def clear(self, table: Table[R]) -> int:
        """Delete every record of the kind; returns how many there were."""
        with self.atomic():
            self._written(table)
            return int(
                self._connection.execute(
                    "DELETE FROM records WHERE kind = ?", (table.kind,)
                ).rowcount
            )

    def next_number(self, name: str, start: int = 1) -> int:
        """A persistent counter (customer numbers and the like): returns the next value."""
        with self.atomic():
            row = self._connection.execute(
                "SELECT value FROM counters WHERE name = ?", (name,)
            ).fetchone()
            value = start if row is None else max(int(row[0]) + 1, start)
            self._connection.execute(
                "INSERT INTO counters (name, value) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (name, value),
            )
        return value

    def _select(self, table: Table[R], where: str, args: tuple[Any, ...]) -> list[R]:
        with self._lock:
            rows = self._connection.execute(
                f"SELECT doc FROM records WHERE {where} ORDER BY seq", args
            ).fetchall()
        return [table.record_type.from_doc(json.loads(row[0])) for row in rows]


#: Compact JSON, one shared encoder (``json.dumps`` with options builds one per call; an encoder
#: keeps no state between calls).
_COMPACT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _dump(record: Record) -> str:
    return _COMPACT_JSON.encode(record.to_doc())
