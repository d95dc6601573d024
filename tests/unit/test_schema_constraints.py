"""Each kind of constraint of the real contract, shown with one valid and one invalid instance.

These prove that the shared types and operation bodies in ``schemas/`` encode what spec 2 and
spec 8 state (and that the loader's validators enforce it: format checker on, refs resolved).
An invalid instance must fail *for the stated keyword*, not by accident of another field.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema.exceptions import ValidationError

from conformance.contract import TYPES_BASE, Contract, Schema, load_contract

NDCT_BODY: dict[str, Any] = {
    "instructedAmount": {"amount": "1500.00", "currency": "NOK"},
    "creditorName": "Kari Nordmann",
    "creditorAccount": {"bban": "12345678903", "currency": "NOK"},
    "creditorAddress": {
        "street": "Storgata",
        "buildingNumber": "1",
        "postalCode": "0155",
        "city": "Oslo",
        "country": "NO",
    },
    "debtorAccount": {"bban": "98765432106", "currency": "NOK"},
}
PERIODIC_BODY: dict[str, Any] = {
    "instructedAmount": {"amount": "250.00", "currency": "NOK"},
    "creditorName": "Ola Nordmann",
    "creditorAccount": {"bban": "12345678903", "currency": "NOK"},
    "debtorAccount": {"bban": "98765432106", "currency": "NOK"},
    "startDate": "2026-03-01",
    "frequency": "MonthlyVariable",
    "dayOfExecution": "15",
}
MONTHS_RULE = "XF-months-unique"


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def shared(name: str) -> Schema:
    """A reference to a shared type, ``common.CurrencyCode`` → its ``$ref``."""
    file, definition = name.split(".")
    return {"$ref": f"{TYPES_BASE}{file}.json#/$defs/{definition}"}


def months_field(contract: Contract) -> str:
    """The months list's name is an assumption (spec 4.3 E17); find it by its cross-field rule."""
    body = contract.resolve(shared("payments.PeriodicNdctPaymentRequest"))
    names: list[str] = [
        n for n, s in body["properties"].items() if MONTHS_RULE in s.get("x-crossFieldRules", ())
    ]
    assert len(names) == 1, names
    return names[0]


def with_field(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with the dotted ``path`` set (``...`` deletes it)."""
    result = copy.deepcopy(base)
    *parents, last = path.split(".")
    target = result
    for key in parents:
        target = target[key]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return result


def _keywords(errors: Iterator[ValidationError]) -> set[str]:
    found: set[str] = set()
    for error in errors:
        found.add(str(error.validator))
        found |= _keywords(iter(error.context or ()))
    return found


def _schema(contract: Contract, target: str) -> Schema:
    """``body:E16`` (request body), ``param:E3:limit`` (parameter), ``common.Date`` (shared)."""
    kind, _, rest = target.partition(":")
    if kind == "body":
        schema = contract.operations[rest].request_schema
        assert schema is not None
        return schema
    if kind == "param":
        operation_id, name = rest.split(":")
        return next(
            p.schema for p in contract.operations[operation_id].parameters if p.name == name
        )
    return shared(target)


def _case(target: str, instance: Any, keyword: str | None, case_id: str) -> Any:
    """keyword None: the instance is valid; otherwise it must fail on that keyword."""
    outcome = "is-accepted" if keyword is None else "is-rejected"
    return pytest.param(target, instance, keyword, id=f"{case_id}-{outcome}")


CASES = [
    # maxLength (spec 2.7, spec 8: creditorName at most 70)
    _case(
        "body:E16",
        with_field(NDCT_BODY, "creditorName", "K" * 70),
        None,
        "E16-creditorName-maxLength-70",
    ),
    _case(
        "body:E16",
        with_field(NDCT_BODY, "creditorName", "K" * 71),
        "maxLength",
        "E16-creditorName-maxLength-71",
    ),
    _case("body:E18", {"creditorName": "K" * 71}, "maxLength", "E18-creditorName-maxLength-71"),
    _case(
        "body:E16",
        with_field(NDCT_BODY, "creditorAccount.bban", "1" * 31),
        "maxLength",
        "E16-bban-maxLength-31",
    ),
    _case("common.Iban", "N" * 34, None, "Iban-maxLength-34"),
    _case("common.Iban", "N" * 35, "maxLength", "Iban-maxLength-35"),
    # minLength and maxLength (spec 2.7, spec 8: non-empty, at most 140)
    _case(
        "body:E16",
        with_field(NDCT_BODY, "remittanceInformationUnstructured", "x"),
        None,
        "E16-remittanceInformationUnstructured-minLength-1",
    ),
    _case(
        "body:E16",
        with_field(NDCT_BODY, "remittanceInformationUnstructured", ""),
        "minLength",
        "E16-remittanceInformationUnstructured-empty",
    ),
    _case(
        "body:E16",
        with_field(NDCT_BODY, "remittanceInformationUnstructured", "x" * 140),
        None,
        "E16-remittanceInformationUnstructured-maxLength-140",
    ),
    _case(
        "body:E16",
        with_field(NDCT_BODY, "remittanceInformationUnstructured", "x" * 141),
        "maxLength",
        "E16-remittanceInformationUnstructured-maxLength-141",
    ),
    # enum (spec 2.2, 2.3, 2.7)
    _case("common.CurrencyCode", "NOK", None, "CurrencyCode-NOK"),
    _case("common.CurrencyCode", "XXX", "enum", "CurrencyCode-XXX"),
    _case(
        "body:E16",
        with_field(NDCT_BODY, "instructedAmount.currency", "XXX"),
        "enum",
        "E16-currency-XXX",
    ),
    _case("common.CountryCode", "NO", None, "CountryCode-NO"),
    _case("common.CountryCode", "XX", "enum", "CountryCode-XX"),
    _case("common.CountryCode", "NOR", "maxLength", "CountryCode-NOR"),
    _case("common.PurposeCode", "SALA", None, "PurposeCode-SALA"),
    _case("common.PurposeCode", "GDDS", "enum", "PurposeCode-GDDS-outside-subset"),
    _case("common.Frequency", "MonthlyVariable", None, "Frequency-MonthlyVariable"),
    _case("common.Frequency", "Fortnightly", "enum", "Frequency-Fortnightly"),
    _case("common.ExecutionRule", "preceeding", None, "ExecutionRule-preceeding-as-spelled"),
    _case("common.ExecutionRule", "preceding", "enum", "ExecutionRule-preceding"),
    # pattern (spec 2.1 BicFiIdentifier; spec 2.7 dayOfExecution)
    _case("common.BicFi", "DNBANOKK", None, "BicFi-8-characters"),
    _case("common.BicFi", "DNBANOKKXXX", None, "BicFi-11-characters"),
    _case("common.BicFi", "DNBANOK", "pattern", "BicFi-7-characters"),
    _case("common.BicFi", "dnbanokk", "pattern", "BicFi-lowercase"),
    _case("common.BicFi", "DNBANOKKXXXXXXX", "pattern", "BicFi-trailing-characters"),
    _case("common.BicFi", "DNBAN1KK", "pattern", "BicFi-digit-in-country"),
    _case(
        "body:E17", with_field(PERIODIC_BODY, "dayOfExecution", "31"), None, "E17-dayOfExecution-31"
    ),
    _case(
        "body:E17",
        with_field(PERIODIC_BODY, "dayOfExecution", "123"),
        "pattern",
        "E17-dayOfExecution-123",
    ),
    _case(
        "body:E17",
        with_field(PERIODIC_BODY, "dayOfExecution", "1st"),
        "pattern",
        "E17-dayOfExecution-1st",
    ),
    # required (spec 2.7)
    _case("body:E16", NDCT_BODY, None, "E16-minimal-body"),
    _case(
        "body:E16",
        with_field(NDCT_BODY, "creditorName", ...),
        "required",
        "E16-creditorName-missing",
    ),
    _case(
        "body:E16",
        with_field(NDCT_BODY, "instructedAmount.currency", ...),
        "required",
        "E16-instructedAmount-currency-missing",
    ),
    _case("body:E17", PERIODIC_BODY, None, "E17-minimal-body"),
    # format date (spec 2.7: ISO 8601 date)
    _case("common.Date", "2026-02-28", None, "Date-2026-02-28"),
    _case("common.Date", "2026-02-30", "format", "Date-2026-02-30"),
    _case("common.Date", "2026-2-3", "format", "Date-without-zero-padding"),
    _case(
        "body:E16",
        with_field(NDCT_BODY, "requestedExecutionDate", "2026-02-30"),
        "format",
        "E16-requestedExecutionDate-2026-02-30",
    ),
    # int32 bounds (spec 2.1: amounts in sandbox data)
    _case("common.Int32", 2147483647, None, "Int32-max"),
    _case("common.Int32", 2147483648, "maximum", "Int32-max-plus-1"),
    _case("common.Int32", -2147483648, None, "Int32-min"),
    _case("common.Int32", -2147483649, "minimum", "Int32-min-minus-1"),
    _case(
        "common.SandboxAmount",
        {"currency": "NOK", "amount": 2147483648},
        "maximum",
        "SandboxAmount-amount-beyond-int32",
    ),
    # minimum (spec 8: limit at least 1 on E3 and E4)
    _case("param:E3:limit", 1, None, "E3-limit-1"),
    _case("param:E3:limit", 0, "minimum", "E3-limit-0"),
    _case("param:E4:limit", 0, "minimum", "E4-limit-0"),
    # array bounds (spec 4.3 E1, spec 8: at most 10 payments per basket)
    _case("body:E1", {"paymentIds": [f"p{i}" for i in range(10)]}, None, "E1-paymentIds-10"),
    _case("body:E1", {"paymentIds": [f"p{i}" for i in range(11)]}, "maxItems", "E1-paymentIds-11"),
    # type (spec 2.1: amounts in payments are strings)
    _case(
        "body:E16",
        with_field(NDCT_BODY, "instructedAmount.amount", 1500.0),
        "type",
        "E16-amount-as-number",
    ),
    _case("common.PaymentAmountValue", "1500.00", None, "PaymentAmountValue-string"),
    # length bounds (spec 2.8, spec 8: bankTransactionCode 4 to 14 characters)
    _case("common.BankTransactionCode", "PMN", "minLength", "BankTransactionCode-3"),
    _case("common.BankTransactionCode", "PMNT", None, "BankTransactionCode-4"),
    _case("common.BankTransactionCode", "PMNT-RCDT-ESCT", None, "BankTransactionCode-14"),
    _case("common.BankTransactionCode", "PMNT-RCDT-ESCTX", "maxLength", "BankTransactionCode-15"),
]


@pytest.mark.parametrize(("target", "instance", "keyword"), CASES)
def test_constraint(contract: Contract, target: str, instance: Any, keyword: str | None) -> None:
    validator = contract.validator(_schema(contract, target))
    errors = list(validator.iter_errors(instance))
    if keyword is None:
        assert errors == [], [e.message for e in errors]
    else:
        assert keyword in _keywords(iter(errors)), [(e.validator, e.message) for e in errors]


MONTHS = [
    pytest.param([1, 12], None, id="months-1-and-12-is-accepted"),
    pytest.param([3, 6, 9], None, id="months-3-6-9-is-accepted"),
    pytest.param([13], "maximum", id="month-13-is-rejected"),
    pytest.param([0], "minimum", id="month-0-is-rejected"),
    pytest.param([3, 3], "uniqueItems", id="months-duplicate-is-rejected"),  # spec 7 rule 4
    pytest.param(["3"], "type", id="month-as-string-is-rejected"),
]


@pytest.mark.parametrize(("months", "keyword"), MONTHS)
def test_months_list(contract: Contract, months: list[Any], keyword: str | None) -> None:
    body = with_field(PERIODIC_BODY, months_field(contract), months)
    errors = list(contract.validator(_schema(contract, "body:E17")).iter_errors(body))
    if keyword is None:
        assert errors == [], [e.message for e in errors]
    else:
        assert keyword in _keywords(iter(errors)), [(e.validator, e.message) for e in errors]
