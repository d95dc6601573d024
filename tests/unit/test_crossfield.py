"""Cross-field checks of spec 2.7 and the sandbox date rule: a passing and a failing body each."""

from __future__ import annotations

import copy
from datetime import date, datetime
from typing import Any

import pytest

from conformance.contract import crossfield as xf
from conformance.contract.crossfield import CheckContext, Violation

# ISO 4217 minor units of the currencies used below; the module itself reads them from the
# contract (schemas/types/common.json x-minorUnits), this small table keeps these tests standalone.
MINOR_UNITS = {"NOK": 2, "EUR": 2, "JPY": 0, "KWD": 3}
TODAY = date(2026, 1, 29)
CONTEXT = CheckContext.at(datetime(2026, 1, 29, 12, 0), MINOR_UNITS)

NDCT: dict[str, Any] = {
    "instructedAmount": {"amount": "150.00", "currency": "NOK"},
    "creditorName": "Kari Nordmann",
    "creditorAccount": {"bban": "86011117947", "currency": "NOK"},
    "creditorAddress": {"street": "Storgata", "buildingNumber": "1", "country": "NO"},
    "debtorAccount": {"bban": "12345678903", "currency": "NOK"},
    "remittanceInformationStructuredArray": [{"reference": "12344", "referenceType": "KID"}],
}

NCBCT: dict[str, Any] = {
    "instructedAmount": {"amount": "250000.00", "currency": "NOK"},
    "creditorName": "Ola Nordmann",
    "creditorAgent": "DEUTDEFF",
    "creditorAccount": {"bban": "0532013000", "currency": "NOK"},
    "debtorAccount": {"bban": "12345678903", "currency": "NOK"},
    "regulatoryReportingCode": "14",
    "regulatoryReportingInformation": "Import of goods",
}


def body(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with top-level fields replaced; the value ``...`` deletes one."""
    result = copy.deepcopy(base)
    for name, value in changes.items():
        if value is ...:
            result.pop(name, None)
        else:
            result[name] = value
    return result


def one(violations: list[Violation]) -> Violation:
    assert len(violations) == 1, violations
    return violations[0]


def test_context_derives_today_and_freezes_minor_units() -> None:
    assert CONTEXT.today == TODAY
    with pytest.raises(TypeError):
        CONTEXT.minor_units["NOK"] = 3  # type: ignore[index]


# --- XF-remittance-exclusive -------------------------------------------------------------------


def test_remittance_exclusive_passes_with_the_array_alone() -> None:
    assert xf.check_remittance_forms_exclusive(NDCT, CONTEXT) == []
    assert (
        xf.check_remittance_forms_exclusive(
            body(
                NDCT,
                remittanceInformationStructuredArray=...,
                remittanceInformationUnstructured="Rent",
            ),
            CONTEXT,
        )
        == []
    )


def test_remittance_exclusive_fails_with_both_forms() -> None:
    violation = one(
        xf.check_remittance_forms_exclusive(
            body(NDCT, remittanceInformationUnstructured="Rent"), CONTEXT
        )
    )
    assert violation.path == "remittanceInformationUnstructured"
    assert violation.code == "FORMAT_ERROR"


# --- XF-debtor-account-one-of ------------------------------------------------------------------


def test_debtor_account_one_of_passes_with_bban_or_other() -> None:
    assert xf.check_debtor_account_exactly_one(NDCT, CONTEXT) == []
    card = {
        "other": {"identification": "1234", "schemeNameProprietary": "creditCardAccount"},
        "currency": "NOK",
    }
    assert xf.check_debtor_account_exactly_one(body(NDCT, debtorAccount=card), CONTEXT) == []


@pytest.mark.parametrize(
    "account",
    [
        {"currency": "NOK"},
        {"bban": "12345678903", "other": {"identification": "1"}, "currency": "NOK"},
    ],
    ids=["neither", "both"],
)
def test_debtor_account_one_of_fails_with_neither_or_both(account: dict[str, Any]) -> None:
    violation = one(xf.check_debtor_account_exactly_one(body(NDCT, debtorAccount=account), CONTEXT))
    assert violation.path == "debtorAccount"
    assert violation.code == "FORMAT_ERROR"


# --- XF-ncbct-creditor-agent -------------------------------------------------------------------


def test_ncbct_creditor_agent_passes_with_agent_or_with_iban() -> None:
    assert xf.check_creditor_agent_required_for_bban(NCBCT, CONTEXT) == []
    iban_account = {"iban": "DE89370400440532013000", "currency": "NOK"}
    no_agent = body(NCBCT, creditorAgent=..., creditorAccount=iban_account)
    assert xf.check_creditor_agent_required_for_bban(no_agent, CONTEXT) == []


@pytest.mark.parametrize("agent", [..., "", None])
def test_ncbct_creditor_agent_fails_for_bban_without_agent(agent: Any) -> None:
    violation = one(
        xf.check_creditor_agent_required_for_bban(body(NCBCT, creditorAgent=agent), CONTEXT)
    )
    assert violation.path == "creditorAgent"
    assert violation.code == "FORMAT_ERROR"


# --- XF-ncbct-regulatory-reporting -------------------------------------------------------------


@pytest.mark.parametrize(
    "amount",
    [
        {"amount": "99999.99", "currency": "NOK"},  # below the threshold
        {"amount": "250000.00", "currency": "EUR"},  # the spec speaks of NOK only: no conversion
    ],
)
def test_regulatory_reporting_not_required_below_nok_100000(amount: dict[str, str]) -> None:
    bare = body(
        NCBCT,
        instructedAmount=amount,
        regulatoryReportingCode=...,
        regulatoryReportingInformation=...,
    )
    assert xf.check_regulatory_reporting_threshold(bare, CONTEXT) == []


def test_regulatory_reporting_passes_when_given_at_the_threshold() -> None:
    at_threshold = body(NCBCT, instructedAmount={"amount": "100000.00", "currency": "NOK"})
    assert xf.check_regulatory_reporting_threshold(at_threshold, CONTEXT) == []


def test_regulatory_reporting_fails_at_exactly_nok_100000_without_both_fields() -> None:
    bare = body(
        NCBCT,
        instructedAmount={"amount": "100000.00", "currency": "NOK"},
        regulatoryReportingCode=...,
        regulatoryReportingInformation=...,
    )
    violations = xf.check_regulatory_reporting_threshold(bare, CONTEXT)
    assert [v.path for v in violations] == [
        "regulatoryReportingCode",
        "regulatoryReportingInformation",
    ]
    assert {v.code for v in violations} == {"FORMAT_ERROR"}


def test_regulatory_reporting_names_only_the_missing_field() -> None:
    violation = one(
        xf.check_regulatory_reporting_threshold(
            body(NCBCT, regulatoryReportingInformation=""), CONTEXT
        )
    )
    assert violation.path == "regulatoryReportingInformation"


# --- XF-amount-minor-units ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "currency"),
    [("100.00", "NOK"), ("100", "JPY"), ("1.234", "KWD"), ("0.50", "EUR")],
)
def test_amount_minor_units_passes_with_exact_fraction_digits(amount: str, currency: str) -> None:
    payment = body(NDCT, instructedAmount={"amount": amount, "currency": currency})
    assert xf.check_amount_fraction_digits(payment, CONTEXT) == []


@pytest.mark.parametrize(
    ("amount", "currency"),
    [("100", "NOK"), ("100.0", "NOK"), ("100.000", "NOK"), ("100.5", "JPY"), ("1.23", "KWD")],
)
def test_amount_minor_units_fails_with_other_fraction_digits(amount: str, currency: str) -> None:
    payment = body(NDCT, instructedAmount={"amount": amount, "currency": currency})
    violation = one(xf.check_amount_fraction_digits(payment, CONTEXT))
    assert violation.path == "instructedAmount/amount"
    assert violation.code == "FORMAT_ERROR"


def test_amount_minor_units_checks_every_amount_object_in_the_body() -> None:
    response = {
        "paymentId": "p1",
        "transactionFees": {"amount": "5", "currency": "NOK"},
        "items": [{"price": {"amount": "1.5", "currency": "JPY"}}],
    }
    violations = xf.check_amount_fraction_digits(response, CONTEXT)
    assert [v.path for v in violations] == ["transactionFees/amount", "items/0/price/amount"]


def test_amount_minor_units_skips_sandbox_integers_and_unknown_currencies() -> None:
    sandbox = [{"transactionAmount": {"currency": "NOK", "amount": 100}}]
    assert xf.check_amount_fraction_digits(sandbox, CONTEXT) == []
    unknown = body(NDCT, instructedAmount={"amount": "1", "currency": "XXX"})
    assert xf.check_amount_fraction_digits(unknown, CONTEXT) == []


# --- XF-kid-check-digit ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "items",
    [
        # MOD10: 1234 -> 4*2=8, 3, 2*2=4, 1 = 16 -> check 4.
        [{"reference": "12344", "referenceType": "KID"}],
        # MOD11: 1234 -> 4*2 + 3*3 + 2*4 + 1*5 = 30; 30 mod 11 = 8; 11 - 8 = 3.
        [{"reference": "12343", "referenceType": "ocr"}],
        # Not a KID item: no referenceType, so a numeric invoice number is not checked.
        [{"reference": "12345"}],
        [{"reference": "INV-2026-1", "referenceType": "INVOICE"}],
    ],
)
def test_kid_check_digit_passes(items: list[dict[str, str]]) -> None:
    assert (
        xf.check_kid_check_digit(body(NDCT, remittanceInformationStructuredArray=items), CONTEXT)
        == []
    )


def test_kid_check_digit_fails_for_a_wrong_check_digit() -> None:
    items = [
        {"reference": "12344", "referenceType": "KID"},
        {"reference": "12345", "referenceType": "Kid"},  # needs 4 (MOD10) or 3 (MOD11)
    ]
    violation = one(
        xf.check_kid_check_digit(body(NDCT, remittanceInformationStructuredArray=items), CONTEXT)
    )
    assert violation.path == "remittanceInformationStructuredArray/1/reference"
    assert violation.code == "KID_INVALID"


@pytest.mark.parametrize("reference", [..., "", "   ", None])
def test_kid_check_digit_reports_a_missing_kid(reference: Any) -> None:
    item: dict[str, Any] = {"referenceType": "KID"}
    if reference is not ...:
        item["reference"] = reference
    violation = one(
        xf.check_kid_check_digit(body(NDCT, remittanceInformationStructuredArray=[item]), CONTEXT)
    )
    assert violation.path == "remittanceInformationStructuredArray/0/reference"
    assert violation.code == "KID_MISSING"


def test_kid_check_digit_reads_the_deprecated_single_object() -> None:
    single = body(
        NDCT,
        remittanceInformationStructuredArray=...,
        remittanceInformationStructured={"reference": "1234567898", "referenceType": "KID"},
    )
    violation = one(xf.check_kid_check_digit(single, CONTEXT))
    assert violation.path == "remittanceInformationStructured/reference"
    assert violation.code == "KID_INVALID"


# --- XF-months-unique --------------------------------------------------------------------------

PERIODIC: dict[str, Any] = {
    "instructedAmount": {"amount": "500.00", "currency": "NOK"},
    "frequency": "MonthlyVariable",
    "monthsOfExecution": [1, 4, 7, 10],
}


def test_months_unique_passes_without_duplicates() -> None:
    assert xf.check_duplicate_months_rejected(PERIODIC, CONTEXT) == []
    assert xf.check_duplicate_months_rejected(body(PERIODIC, monthsOfExecution=...), CONTEXT) == []


def test_months_unique_fails_at_the_second_occurrence() -> None:
    repeated = body(PERIODIC, monthsOfExecution=[1, 4, 1, 7, 1, 4])
    violations = xf.check_duplicate_months_rejected(repeated, CONTEXT)
    assert [v.path for v in violations] == ["monthsOfExecution/2", "monthsOfExecution/5"]
    assert {v.code for v in violations} == {"FORMAT_ERROR"}


# --- SB-dates-in-past --------------------------------------------------------------------------

E7_ITEM = {"bookingDate": "2026-01-20", "valueDate": "2026-01-21", "amount": 100}
E5_ITEM = {"bookingDate": "2026-01-20", "transactionDate": "2026-01-20", "maskedPan": "1234"}


def test_sandbox_dates_pass_for_past_dates_in_order() -> None:
    assert xf.check_sandbox_dates_rejected([E7_ITEM, E5_ITEM], CONTEXT) == []
    same_day = {"bookingDate": "2026-01-29", "valueDate": "2026-01-29"}  # today has begun
    assert xf.check_sandbox_dates_rejected([same_day], CONTEXT) == []


def test_sandbox_dates_fail_for_a_future_value_date() -> None:
    future = dict(E7_ITEM, valueDate="2026-02-05")
    violation = one(xf.check_sandbox_dates_rejected([E7_ITEM, future], CONTEXT))
    assert violation.path == "1/valueDate"
    assert violation.code == "FORMAT_ERROR"


def test_sandbox_dates_fail_for_booking_after_value() -> None:
    reversed_dates = dict(E7_ITEM, bookingDate="2026-01-22")
    violation = one(xf.check_sandbox_dates_rejected([reversed_dates], CONTEXT))
    assert violation.path == "0/bookingDate"


def test_sandbox_dates_check_a_future_booking_date_even_without_a_value_date() -> None:
    violation = one(xf.check_sandbox_dates_rejected({"bookingDate": "2026-03-01"}, CONTEXT))
    assert violation.path == "bookingDate"  # a single item object: no index in the path


def test_sandbox_dates_treat_the_card_transaction_date_as_the_value_date() -> None:
    booked_later = dict(E5_ITEM, bookingDate="2026-01-21")
    violation = one(xf.check_sandbox_dates_rejected([booked_later], CONTEXT))
    assert violation.path == "0/bookingDate"
    future = dict(E5_ITEM, transactionDate="2026-01-30", bookingDate="2026-01-30")
    paths = [v.path for v in xf.check_sandbox_dates_rejected([future], CONTEXT)]
    assert paths == ["0/bookingDate", "0/transactionDate"]


# --- robustness and registry -------------------------------------------------------------------


@pytest.mark.parametrize("malformed", [None, "text", 42, [], {}, [None, 1], {"debtorAccount": 1}])
def test_checks_never_raise_on_malformed_bodies(malformed: Any) -> None:
    for check in xf.CHECKS.values():
        assert check(malformed, CONTEXT) == []


def test_registry_names_are_the_function_names_and_immutable() -> None:
    assert set(xf.CHECKS) == {
        "check_remittance_forms_exclusive",
        "check_debtor_account_exactly_one",
        "check_creditor_agent_required_for_bban",
        "check_regulatory_reporting_threshold",
        "check_amount_fraction_digits",
        "check_kid_check_digit",
        "check_duplicate_months_rejected",
        "check_sandbox_dates_rejected",
    }
    for name, check in xf.CHECKS.items():
        assert check.__name__ == name
    with pytest.raises(TypeError):
        xf.CHECKS["check_other"] = xf.check_duplicate_months_rejected  # type: ignore[index]


# --- agreement with the rule table (schemas/rules.json) ----------------------------------------


@pytest.fixture(scope="module")
def contract() -> Any:
    from conformance.contract import load_contract
    from conformance.errors import ContractError

    try:
        return load_contract()
    except ContractError as error:  # pragma: no cover - only while schemas/ is incomplete
        pytest.skip(f"contract not loadable yet: {error}")


def test_every_cross_field_and_sandbox_date_rule_names_a_registered_check(contract: Any) -> None:
    rows = [rule for rule in contract.rules if rule.id.startswith(("XF-", "SB-dates-in-past"))]
    assert {rule.check for rule in rows} == set(xf.CHECKS)


@pytest.mark.parametrize(
    ("operation_id", "names"),
    [
        (
            "E16",
            {
                "check_remittance_forms_exclusive",
                "check_debtor_account_exactly_one",
                "check_amount_fraction_digits",
                "check_kid_check_digit",
            },
        ),
        ("E17", {"check_amount_fraction_digits", "check_duplicate_months_rejected"}),
        (
            "E18",
            {
                "check_creditor_agent_required_for_bban",
                "check_regulatory_reporting_threshold",
                "check_amount_fraction_digits",
            },
        ),
        ("E5", {"check_sandbox_dates_rejected"}),
        ("E7", {"check_sandbox_dates_rejected"}),
        ("E1", set()),
    ],
)
def test_checks_for_follows_the_rule_table(
    contract: Any, operation_id: str, names: set[str]
) -> None:
    checks = xf.checks_for(operation_id)
    assert len(checks) == len(names)
    assert {check.__name__ for check in checks} == names


def test_the_minor_units_used_here_are_the_contract_s(contract: Any) -> None:
    assert {code: contract.minor_units[code] for code in MINOR_UNITS} == MINOR_UNITS
