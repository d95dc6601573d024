"""Records' stored documents (reference_server.model.records): the format the old hand-written
``to_doc`` methods wrote, so that a ``--data`` file written before still loads."""

from __future__ import annotations

import json
from dataclasses import MISSING, Field, dataclass, field, fields, replace
from typing import Any

import pytest

from reference_server.model import payment_data as p
from reference_server.model import sandbox_data as s
from reference_server.model.records import DocRecord, _camel, doc_key
from reference_server.model.store import Record, Store, Table

BALANCES = (s.Balance(100, "NOK", "closingBooked"), s.Balance(-5, "EUR", "expected"))

#: One record of every stored type and the document the hand-written ``to_doc`` produced for it
#: (key order included: the store writes the document's JSON text).
EXAMPLES: list[tuple[Record, dict[str, Any]]] = [
    (
        s.Customer("c1", "1001", "PRIVATE", "Ola", "01017012345"),
        {
            "id": "c1",
            "customerNumber": "1001",
            "customerType": "PRIVATE",
            "name": "Ola",
            "nationalId": "01017012345",
        },
    ),
    (
        s.Agreement("a1", "Agr", "c2", None, "5000001"),
        {"id": "a1", "name": "Agr", "owner": "c2", "holder": None, "ownerNumber": "5000001"},
    ),
    (
        s.Engagement("e1", "a1", "1001", "c1", "acc1", ("VIEW", "REGISTER"), 10, 20, "Eng"),
        {
            "id": "e1",
            "agreementId": "a1",
            "customer": "1001",
            "customerId": "c1",
            "accountId": "acc1",
            "roles": ["VIEW", "REGISTER"],
            "registerLimit": 10,
            "approvalLimit": 20,
            "name": "Eng",
        },
    ),
    (
        s.Account(
            "acc1",
            "c1",
            "1001",
            "Brukskonto",
            "12345678903",
            "NO9312345678903",
            "NOK",
            "prod",
            "CACC",
            500,
            BALANCES,
        ),
        {
            "id": "acc1",
            "customerId": "c1",
            "customerNumber": "1001",
            "accountName": "Brukskonto",
            "bban": "12345678903",
            "iban": "NO9312345678903",
            "currency": "NOK",
            "product": "prod",
            "cashAccountType": "CACC",
            "creditLine": 500,
            "balances": [
                {
                    "balanceAmount": {"currency": "NOK", "amount": 100},
                    "balanceType": "closingBooked",
                },
                {"balanceAmount": {"currency": "EUR", "amount": -5}, "balanceType": "expected"},
            ],
        },
    ),
    (
        s.AccountTransaction(
            "t1", "acc1", "2024-01-02", {"transactionAmount": {"amount": "1", "currency": "NOK"}}
        ),
        {
            "id": "t1",
            "accountId": "acc1",
            "bookingDate": "2024-01-02",
            "data": {"transactionAmount": {"amount": "1", "currency": "NOK"}},
        },
    ),
    (
        s.CardAccount(
            "ca1",
            "c1",
            "1234********5678",
            "NOK",
            1000,
            "NOK",
            "card1",
            "vno1",
            "an1",
            "2030-01",
            "Card",
            "Visa",
            "enabled",
            BALANCES,
        ),
        {
            "id": "ca1",
            "customerId": "c1",
            "maskedPan": "1234********5678",
            "currency": "NOK",
            "creditLimit": 1000,
            "creditLimitCurrency": "NOK",
            "cardId": "card1",
            "cardIdVNo": "vno1",
            "accountNumber": "an1",
            "expiry": "2030-01",
            "name": "Card",
            "product": "Visa",
            "status": "enabled",
            "balances": [
                {
                    "balanceAmount": {"currency": "NOK", "amount": 100},
                    "balanceType": "closingBooked",
                },
                {"balanceAmount": {"currency": "EUR", "amount": -5}, "balanceType": "expected"},
            ],
        },
    ),
    (
        s.CardTransaction("ct1", "ca1", "ctid", "2024-01-01", False),
        {
            "id": "ct1",
            "cardAccountId": "ca1",
            "cardTransactionId": "ctid",
            "bookingDate": "2024-01-01",
            "invoiced": False,
            "data": {},
        },
    ),
    (
        p.Payment(
            "p1",
            p.NDCT,
            "single",
            {"instructedAmount": {"amount": "1.00", "currency": "NOK"}},
            "RCVD",
            "psu",
            None,
            "t0",
            "t1",
            "b1",
        ),
        {
            "id": "p1",
            "product": "norwegian-domestic-credit-transfers",
            "kind": "single",
            "request": {"instructedAmount": {"amount": "1.00", "currency": "NOK"}},
            "status": "RCVD",
            "psuKey": "psu",
            "customerId": None,
            "createdAt": "t0",
            "statusChangedAt": "t1",
            "basketId": "b1",
            "transactionId": None,
            "duplicateKey": None,
            "tppId": None,
            "cancellationRequested": False,
        },
    ),
    (
        p.Basket("b1", ("p1", "p2"), None, "t0"),
        {"id": "b1", "paymentIds": ["p1", "p2"], "psuKey": None, "createdAt": "t0", "tppId": None},
    ),
    (
        p.Authorisation("au1", "payment", "p1", "STARTED", "psu", "c1", None, "t0", "t1"),
        {
            "id": "au1",
            "subjectKind": "payment",
            "subjectId": "p1",
            "status": "STARTED",
            "psuKey": "psu",
            "customerId": "c1",
            "redirectUri": None,
            "createdAt": "t0",
            "updatedAt": "t1",
            "nokRedirectUri": None,
        },
    ),
    (
        p.Consent(
            "co1",
            "psu",
            "c1",
            {"accounts": [{"iban": "NO1"}]},
            "2025-01-01",
            True,
            4,
            "valid",
            "t0",
            "t1",
            ("acc1",),
        ),
        {
            "id": "co1",
            "psuKey": "psu",
            "customerId": "c1",
            "access": {"accounts": [{"iban": "NO1"}]},
            "validUntil": "2025-01-01",
            "recurring": True,
            "frequencyPerDay": 4,
            "status": "valid",
            "createdAt": "t0",
            "authorisedAt": "t1",
            "accountIds": ["acc1"],
            "tppId": None,
            "sessionId": None,
        },
    ),
    (
        p.BatchState("2024-01-01T00:00:00+00:00"),
        {"id": "batch", "lastRun": "2024-01-01T00:00:00+00:00"},
    ),
]
IDS = [type(record).__name__ for record, _ in EXAMPLES]


def _text(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def test_every_record_type_has_an_example() -> None:
    stored = {*s.__all__, *p.__all__}
    types = {getattr(s, n, None) or getattr(p, n) for n in stored}
    records = {t for t in types if isinstance(t, type) and hasattr(t, "from_doc")}
    assert records - {s.Balance} == {type(record) for record, _ in EXAMPLES}


@pytest.mark.parametrize(("record", "document"), EXAMPLES, ids=IDS)
def test_document_is_unchanged(record: Record, document: dict[str, Any]) -> None:
    assert _text(record.to_doc()) == _text(document)


@pytest.mark.parametrize(("record", "document"), EXAMPLES, ids=IDS)
def test_round_trip_through_the_store(record: Record, document: dict[str, Any]) -> None:
    table: Table[Any] = Table("test.kind", type(record))
    store = Store()
    store.add(table, record)
    assert store.get(table, record.id) == record
    assert type(record).from_doc(json.loads(_text(document))) == record


@pytest.mark.parametrize(("record", "document"), EXAMPLES, ids=IDS)
def test_unknown_keys_are_ignored(record: Record, document: dict[str, Any]) -> None:
    assert type(record).from_doc({**document, "somethingNew": [1]}) == record


def _factory(item: Field[Any]) -> Any:
    """What the field's ``default_factory`` makes (a field without a default has none)."""
    make = item.default_factory
    assert callable(make), item.name
    return make()


def _defaults(record_type: type) -> dict[str, Any]:
    """Document key -> default value, for the fields that have a default."""
    return {
        key: item.default if item.default is not MISSING else _factory(item)
        for item in fields(record_type)
        for key in [item.metadata.get("doc", _camel(item.name))]
        if item.default is not MISSING or item.default_factory is not MISSING
    }


@pytest.mark.parametrize(("record", "document"), EXAMPLES, ids=IDS)
def test_a_missing_key_is_refused_unless_its_field_has_a_default(
    record: Record, document: dict[str, Any]
) -> None:
    defaults = _defaults(type(record))
    for key in document:
        lacking = {k: v for k, v in document.items() if k != key}
        if key in defaults:  # a field added later: records stored before it still load
            loaded = type(record).from_doc(lacking).to_doc()
            assert loaded == {**document, key: _plain(defaults[key])}
        else:
            with pytest.raises(TypeError):
                type(record).from_doc(lacking)


def _plain(value: Any) -> Any:
    """A default as the document holds it (tuples of records are written as lists)."""
    return list(value) if isinstance(value, tuple) else value


def test_tuples_load_as_tuples_and_null_balances_as_empty() -> None:
    account, document = EXAMPLES[3]
    assert isinstance(account, s.Account)
    loaded = s.Account.from_doc(json.loads(_text(document)))
    assert loaded.balances == BALANCES
    assert s.Account.from_doc({**document, "balances": None}) == replace(account, balances=())
    engagement = s.Engagement.from_doc(EXAMPLES[2][1])
    assert engagement.roles == ("VIEW", "REGISTER")


@dataclass(frozen=True)
class _Sample(DocRecord):
    id: str
    two_words: int
    renamed: str = field(metadata=doc_key("otherKey"))
    tags: tuple[str, ...] = ()
    balances: tuple[s.Balance, ...] = ()


def test_generic_document_camel_cases_renames_and_nests() -> None:
    sample = _Sample("x", 2, "r", ("a",), BALANCES[:1])
    assert sample.to_doc() == {
        "id": "x",
        "twoWords": 2,
        "otherKey": "r",
        "tags": ["a"],
        "balances": [BALANCES[0].to_json()],
    }
    assert _Sample.from_doc(sample.to_doc()) == sample
