"""``Store.version``: what an in-memory shortcut (the batch hook's) checks before trusting itself.

Every write to a kind changes that kind's version, a reset changes every version, and reads or
writes of another kind leave it alone, so a cache keyed by the version can never serve a record
that has since changed.
"""

from __future__ import annotations

from reference_server.model.sandbox_data import ACCOUNTS, CUSTOMERS, Customer
from reference_server.model.store import Store


def _customer(number: int, name: str = "Kari") -> Customer:
    return Customer(f"c{number}", str(number), "PRIVATE", name)


def test_every_write_of_the_kind_changes_its_version() -> None:
    store = Store()
    seen = {store.version(CUSTOMERS)}
    steps = (
        lambda: store.add(CUSTOMERS, _customer(1)),
        lambda: store.put(CUSTOMERS, _customer(1, "renamed")),
        lambda: store.put(CUSTOMERS, _customer(2)),
        lambda: store.delete(CUSTOMERS, "c2"),
        lambda: store.clear(CUSTOMERS),
        store.reset,
    )
    for step in steps:
        step()
        version = store.version(CUSTOMERS)
        assert version not in seen
        seen.add(version)


def test_reads_and_other_kinds_leave_the_version_alone() -> None:
    store = Store()
    store.add(CUSTOMERS, _customer(1))
    before = store.version(CUSTOMERS)
    store.get(CUSTOMERS, "c1")
    store.all(CUSTOMERS)
    store.find(CUSTOMERS, "customerNumber", "1")
    store.clear(ACCOUNTS)
    store.next_number("customerNumber")
    assert store.version(CUSTOMERS) == before


def test_a_rolled_back_write_still_changes_the_version() -> None:
    store = Store()
    before = store.version(CUSTOMERS)
    try:
        with store.atomic():
            store.add(CUSTOMERS, _customer(1))
            raise RuntimeError("abandon")
    except RuntimeError:
        pass
    assert store.get(CUSTOMERS, "c1") is None
    assert store.version(CUSTOMERS) != before  # a needless refresh, never a stale answer
