"""The SQLite record store: typed round trips, ordering, lookups, atomic groups, persistence."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from reference_server.model.sandbox_data import ACCOUNTS, CUSTOMERS, Account, Balance, Customer
from reference_server.model.store import Store


def customer(number: int, kind: str = "PRIVATE") -> Customer:
    return Customer(f"c{number}", str(number), kind, f"Customer {number}")


def test_records_round_trip_typed() -> None:
    store = Store()
    account = Account(
        "a1",
        "c1",
        "1",
        "Konto",
        "12345678903",
        "NO9312345678903",
        "NOK",
        "p",
        "CACC",
        0,
        (Balance(10, "NOK", "expected"),),
    )
    store.add(ACCOUNTS, account)
    assert store.get(ACCOUNTS, "a1") == account
    assert store.get(ACCOUNTS, "missing") is None
    assert store.get(CUSTOMERS, "a1") is None  # kinds are separate


def test_lists_keep_insertion_order_and_put_keeps_place() -> None:
    store = Store()
    for number in (3, 1, 2):
        store.add(CUSTOMERS, customer(number))
    store.put(CUSTOMERS, Customer("c3", "3", "CORPORATE", "renamed"))
    assert [c.id for c in store.all(CUSTOMERS)] == ["c3", "c1", "c2"]
    assert store.get(CUSTOMERS, "c3").name == "renamed"  # type: ignore[union-attr]
    assert [c.id for c in store.find(CUSTOMERS, "customerType", "CORPORATE")] == ["c3"]


def test_children_and_delete_and_clear() -> None:
    store = Store()
    store.add(CUSTOMERS, customer(1))
    for index, owner in enumerate(("c1", "c2", "c1")):
        store.add(
            ACCOUNTS,
            Account(f"a{index}", owner, "1", "K", f"b{index}", f"i{index}", "NOK", "p", "CACC", 0),
        )
    assert [a.id for a in store.children(ACCOUNTS, "c1")] == ["a0", "a2"]
    assert store.delete(ACCOUNTS, "a0") and not store.delete(ACCOUNTS, "a0")
    assert store.clear(ACCOUNTS) == 2
    assert store.all(ACCOUNTS) == [] and store.all(CUSTOMERS)


def test_duplicate_id_is_an_integrity_error() -> None:
    store = Store()
    store.add(CUSTOMERS, customer(1))
    with pytest.raises(sqlite3.IntegrityError):
        store.add(CUSTOMERS, customer(1))


def test_find_refuses_non_field_names() -> None:
    with pytest.raises(ValueError):
        Store().find(CUSTOMERS, "x') OR 1=1 --", "a")


def _plan(store: Store, field: str) -> str:
    rows = store._connection.execute(
        "EXPLAIN QUERY PLAN SELECT doc FROM records "
        f"WHERE kind = ? AND json_extract(doc, '$.{field}') = ? ORDER BY seq",
        ("customer", "1"),
    ).fetchall()
    return " ".join(str(row[-1]) for row in rows)


def test_find_is_served_by_an_index_and_follows_changes() -> None:
    store = Store()
    for number in range(1, 4):
        store.add(CUSTOMERS, customer(number, "CORPORATE" if number == 2 else "PRIVATE"))
    assert [c.id for c in store.find(CUSTOMERS, "customerType", "PRIVATE")] == ["c1", "c3"]
    assert "records_by_customerType" in _plan(store, "customerType")
    store.put(CUSTOMERS, customer(1, "CORPORATE"))  # the index follows a replaced document
    assert [c.id for c in store.find(CUSTOMERS, "customerType", "CORPORATE")] == ["c1", "c2"]
    assert store.find(ACCOUNTS, "customerType", "CORPORATE") == []  # kinds stay apart


def test_an_index_made_in_a_rolled_back_transaction_is_made_again() -> None:
    store = Store()
    store.add(CUSTOMERS, customer(1))
    with pytest.raises(RuntimeError), store.atomic():
        assert [c.id for c in store.find(CUSTOMERS, "customerType", "PRIVATE")] == ["c1"]
        raise RuntimeError("abort")
    assert "records_by_customerType" not in _plan(store, "customerType")
    assert [c.id for c in store.find(CUSTOMERS, "customerType", "PRIVATE")] == ["c1"]
    assert "records_by_customerType" in _plan(store, "customerType")


def test_atomic_group_rolls_back_as_one() -> None:
    store = Store()
    with pytest.raises(RuntimeError), store.atomic():
        store.add(CUSTOMERS, customer(1))
        with store.atomic():
            store.add(CUSTOMERS, customer(2))
        raise RuntimeError("abort")
    assert store.all(CUSTOMERS) == []


def test_counters_are_monotonic_and_respect_start() -> None:
    store = Store()
    assert store.next_number("n", start=100) == 100
    assert store.next_number("n", start=100) == 101
    assert store.next_number("n", start=500) == 500
    store.reset()
    assert store.next_number("n") == 1


def test_threads_share_the_store() -> None:
    store = Store()

    def add(offset: int) -> None:
        for number in range(offset, offset + 50):
            store.add(CUSTOMERS, customer(number))

    threads = [threading.Thread(target=add, args=(i * 1000,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.all(CUSTOMERS)) == 200


def test_file_store_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    first = Store(path)
    first.add(CUSTOMERS, customer(1))
    first.close()
    second = Store(path)
    assert second.get(CUSTOMERS, "c1") == customer(1)
    mode = second._connection.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    second.close()
