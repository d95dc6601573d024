"""The faults of the payment side, and the fault decisions the validation step consults.

Most payment faults are checked where their rule is enforced (``state.faulty("name")``). Four
rules are enforced by the pipeline before a handler runs (the body schema and the cross-field
checks of ``reference_server.pipeline.validation``); for them this module offers the decisions:
:func:`skipped_check` (a cross-field check switched off), :func:`tolerated_schema_error` (a schema
error let through) and :func:`violation_status` (the status of a cross-field violation).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from reference_server.faults.model import Fault

if TYPE_CHECKING:
    from reference_server.api import ServerState

__all__ = [
    "PAYMENT_FAULTS",
    "SKIPPED_CHECKS",
    "TOLERATED_SCHEMA_ERRORS",
    "skipped_check",
    "tolerated_amount_precision",
    "tolerated_schema_error",
    "violation_status",
]


#: The operations whose error bodies carry ``tppMessages`` (spec 2.6; the payment and basket
#: families).
PAYMENT_OPERATIONS = ("E1", "E2", "E16", "E17", "E18", "PS", "PC", "PA", "BR", "BS", "PCA")

#: The faults of the payment side (payments, baskets, transaction details).
PAYMENT_FAULTS: tuple[Fault, ...] = (
    Fault(
        "basket-best-case",
        "spec 2.4, spec 3 basket status",
        "reports a basket's status as the best case of its payments instead of the worst",
        # Only a basket whose payments differ in status tells the best case from the worst: the
        # new basket (all RCVD) and the one whose SCA was cancelled (all RJCT) cannot.
        scenarios=("E1-basket-with-cancelled-payment-is-worst-case",),
        level="must",
    ),
    Fault(
        "basket-read-status-stale",
        "spec 2.4 basket status (read with BS after a payment changed)",
        "reads a basket's status (BR, BS) as it was when the basket was made (RCVD), not as the "
        "worst case of its payments now",
        # Only a basket whose payment changed after it was made tells the two apart.
        scenarios=(
            "E1-basket-with-cancelled-payment-is-worst-case",
            "E1-basket-with-rejected-payment-is-worst-case",
        ),
        level="must",
    ),
    Fault(
        "cancellation-without-sca",
        "spec 7 rule 6, read with the platform's cancellation of an authorised payment (PC, PCA)",
        "cancels an authorised payment at once (204) although the bank asks such a cancellation "
        'to be authorised ([cancellation] sca = "authorised"): no 202, nothing for PCA to start',
        scenarios=(
            *(
                f"{product}-{slug}"
                for product in ("E16", "E17", "E18")
                for slug in (
                    "authorised-payment-cancellation-needs-sca",
                    "cancellation-sca-cancelled-payment-unchanged",
                )
            ),
            # every PCA scenario that expects the start accepted
            "PCA-norwegian-cross-border-credit-transfers-accepted",
            "PCA-norwegian-domestic-credit-transfers-accepted",
            "PCA-accept-fix-unknown-value-ignored",
            "PCA-auth-rfc2047-signature-accepted",
            "PCA-auth-rfc2047-signed-header-accepted",
            # and the response-header rows' own PCA scenarios (a started cancellation's answer)
            "PCA-RH-location-on-creation-holds",
            "PCA-RH-request-id-echoed-holds",
            "PCA-RH-sca-approach-named-holds",
        ),
        level="should",
    ),
    Fault(
        "no-basket-limit",
        "spec 8 / spec 4.3 E1 (LIM-basket-max-10-payments)",
        "accepts a signing basket with more than 10 payments",
        rules=("LIM-basket-max-10-payments", "SCH-maxItems"),
        operations=("E1",),
        fields=("paymentIds",),
        level="must",
    ),
    Fault(
        "allow-periodic-in-basket",
        "spec 7 rule 1 (ERR-1-reference-mix-invalid)",
        "accepts a periodic payment in a signing basket",
        rules=("ERR-1-reference-mix-invalid",),
        level="must",
    ),
    Fault(
        "batch-advances-periodic",
        'spec 3 (the sandbox advances payments "except periodic ones")',
        "moves periodic payments on in its simulated batch runs like the single ones",
        scenarios=("E17-batch-run-leaves-periodic-unchanged",),
        level="must",
    ),
    Fault(
        "kid-error-401",
        "spec 7 rule 2 (ERR-2-kid-*)",
        "answers a missing or invalid KID with 401 instead of 400",
        rules=("ERR-2-kid-*", "XF-kid-check-digit"),
        level="must",
    ),
    Fault(
        "duplicate-months-accepted",
        "spec 7 rule 4, spec 2.7 (ERR-4, XF-months-unique)",
        "accepts a MonthlyVariable months list that names a month twice",
        rules=("ERR-4-monthly-variable-duplicate-month", "XF-months-unique", "SCH-uniqueItems"),
        operations=("E17",),
        fields=("monthsOfExecution",),
        level="must",
    ),
    Fault(
        "delete-pdng-allowed",
        "spec 7 rule 6, spec 3 (ERR-6-pending-payment-not-deletable)",
        "cancels a payment in status PDNG",
        rules=("ERR-6-pending-payment-not-deletable",),
        level="must",
    ),
    Fault(
        "account-gone-404",
        "spec 7 rule 8 (ERR-8-consent-account-gone-empty-list)",
        "answers the account list with 404 when an account of the consent no longer exists",
        rules=("ERR-8-consent-account-gone-empty-list",),
        level="must",
    ),
    Fault(
        "no-daily-limit",
        "spec 8 (LIM-transaction-details-daily-calls-without-ip)",
        "does not limit transaction details calls without PSU-IP-Address to 4 a day",
        rules=("LIM-transaction-details-daily-calls-without-ip",),
        level="must",
    ),
    Fault(
        "no-consent-age-check",
        "spec 8 (LIM-transaction-details-consent-max-90-days)",
        "serves transaction details without PSU-IP-Address on a consent older than 90 days",
        rules=("LIM-transaction-details-consent-max-90-days",),
        level="must",
    ),
    Fault(
        "page-size-100",
        "spec 8 (LIM-default-page-size-200, LIM-pagination-links-*)",
        "pages account transactions by 100 instead of 200 by default and in its links",
        rules=("LIM-default-page-size-200", "LIM-pagination-links-page-size-200"),
        level="must",
    ),
    Fault(
        "paging-next-overlaps",
        "spec 8 (links in pagination answers), read with NextGenPSD2's next link",
        "starts the page _links.next leads to on the last transaction of the page before, so "
        "a walk along next meets one transaction twice",
        rules=("LIM-pagination-links-page-size-200", "STATE-paging-links-to-the-end"),
        level="must",
    ),
    Fault(
        "no-regulatory-check",
        "spec 2.7, spec 8 (XF-ncbct-regulatory-reporting)",
        "accepts an NCBCT payment of NOK 100 000 or more without regulatory reporting",
        rules=("XF-ncbct-regulatory-reporting", "LIM-regulatory-reporting-nok-100000"),
        level="must",
    ),
    Fault(
        "ignore-minor-units",
        "spec 2.1 (XF-amount-minor-units)",
        "accepts payment amounts whose fraction digits differ from the currency's minor units",
        rules=("XF-amount-minor-units",),
        level="must",
    ),
    Fault(
        "logical-duplicate-allowed",
        "spec 4.3 E16, E18 allowLogicalDuplicate",
        "accepts a logical duplicate payment without allowLogicalDuplicate=true",
        # the first rule, stated (spec 4.3 E16: allowLogicalDuplicate=false), makes it must; the
        # default refusal without the parameter is our reading
        rules=("E-logical-duplicate-refused-when-false", "E-logical-duplicate-refused"),
        level="must",
    ),
    Fault(
        "sca-start-not-started",
        "spec 3, spec 4.3 E2",
        "answers the start of a basket authorisation with scaStatus RECEIVED, not STARTED",
        rules=("STATE-basket-authorisation-started",),
        level="must",
    ),
    Fault(
        "long-creditor-name-accepted",
        "spec 8, spec 2.7 (LIM-creditor-name-max-70)",
        "accepts a creditorName longer than 70 characters",
        rules=("LIM-creditor-name-max-70", "SCH-maxLength"),
        fields=("creditorName",),
        level="must",
    ),
    Fault(
        "long-remittance-accepted",
        "spec 8, spec 2.7 (LIM-remittance-unstructured-max-140)",
        "accepts an unstructured remittance longer than 140 characters",
        rules=("LIM-remittance-unstructured-max-140", "SCH-maxLength"),
        fields=("remittanceInformationUnstructured",),
        level="must",
    ),
    Fault(
        "empty-remittance-accepted",
        "spec 8, spec 2.7 (LIM-remittance-unstructured-non-empty)",
        "accepts an empty unstructured remittance",
        rules=("LIM-remittance-unstructured-non-empty", "SCH-minLength"),
        fields=("remittanceInformationUnstructured",),
        level="must",
    ),
    Fault(
        "long-ultimate-debtor-accepted",
        "spec 8, spec 2.7 (LIM-ultimate-debtor-max-70)",
        "accepts an ultimateDebtor longer than 70 characters",
        rules=("LIM-ultimate-debtor-max-70", "SCH-maxLength"),
        fields=("ultimateDebtor",),
        level="must",
    ),
    Fault(
        "remittance-forms-mixed-accepted",
        "spec 2.7 (XF-remittance-exclusive)",
        "accepts a payment with both unstructured and structured remittance",
        rules=("XF-remittance-exclusive",),
        level="must",
    ),
    Fault(
        "two-debtor-references-accepted",
        "spec 2.7 (XF-debtor-account-one-of)",
        "accepts a debtorAccount with both bban and other",
        rules=("XF-debtor-account-one-of",),
        level="must",
    ),
    Fault(
        "ncbct-without-creditor-agent-accepted",
        "spec 2.7 (XF-ncbct-creditor-agent)",
        "accepts an NCBCT payment to a BBAN without creditorAgent",
        rules=("XF-ncbct-creditor-agent",),
        level="must",
    ),
    Fault(
        "basket-reauthorisation-allowed",
        "spec 7 (E2 row: 400 RESOURCE_BLOCKED)",
        "starts another authorisation of a signing basket whose SCA is already finalised",
        rules=("E-basket-authorised-again-blocked",),
        level="should",
    ),
    Fault(
        "past-execution-date-accepted",
        "spec 7 code list, spec 2.7 (EXECUTION_DATE_INVALID)",
        "accepts a payment whose execution date (or periodic startDate) lies in the past",
        rules=("E-execution-date-not-past",),
        level="should",
    ),
    Fault(
        "periodic-end-before-start-accepted",
        "spec 2.7 (endDate is the last execution)",
        "accepts a periodic payment whose endDate lies before its startDate",
        rules=("E-periodic-end-not-before-start",),
        level="should",
    ),
    Fault(
        "long-iban-accepted",
        "spec 8 (LIM-iban-max-34)",
        "accepts an IBAN longer than 34 characters",
        rules=("LIM-iban-max-34", "SCH-maxLength"),
        # where a long IBAN is refused for another reason too (it names no account of the PSU:
        # E6, E7's debtor, a consent's accounts), the fault cannot show
        fields=("iban", "creditorAccount/iban", "debtorAccount/iban", "0/creditorAccount/iban"),
        level="must",
    ),
    Fault(
        "amount-precision-unchecked",
        "spec 2.1 (precision 18, scale 5)",
        "accepts payment amounts with more than 13 integer digits",
        rules=("LIM-amount-precision-18-scale-5",),
        level="should",
    ),
    Fault(
        "fee-indicator-false",
        "spec 2.6 (transactionFeeIndicator true when the payment incurs a fee)",
        "shows the fee of an NCBCT payment with transactionFeeIndicator false",
        rules=("POS-E18",),
        level="must",
    ),
    Fault(
        "tpp-message-code-outside-list",
        "spec 7 (codes allowed in tppMessages[].code of payment responses)",
        "puts the error's own code into tppMessages of refused payment and basket requests, also "
        "where spec 7's list for tppMessages lacks it (SIGNATURE_INVALID, CERTIFICATE_INVALID, "
        "RESOURCE_BLOCKED, ...), as an independent implementation did",
        # The refusals whose own code spec 7's tppMessages list lacks: the signature and
        # certificate checks (SIGNATURE_INVALID, CERTIFICATE_INVALID; the QWAC's checks are not
        # named: they need mutual TLS, which the fault's run does not use), a refused cancellation
        # (CANCELLATION_INVALID), a refused media type (UNSUPPORTED_MEDIA_TYPE) and a basket's
        # refusals (REFERENCE_MIX_INVALID, RESOURCE_BLOCKED). The list is stated where spec 7
        # shows the error body of a payment operation (E16, E17, E18: must); on a basket's
        # answers and the other payment operations it is our reading (should findings).
        rules=(
            "AUTH-body-changed-after-signing",
            "AUTH-certificate-other-ca",
            "AUTH-date-far-*",
            "AUTH-expired-certificate",
            "AUTH-headers-list-incomplete",
            "AUTH-keyid-*",
            "AUTH-replay",
            "AUTH-revoked-certificate",
            "AUTH-seal-is-qwac",
            "AUTH-stale-digest",
            "AUTH-wrong-*",
            "E-basket-authorised-again-blocked",
            "ERR-1-reference-mix-invalid",
            "ERR-6-pending-payment-not-deletable",
            "ROB-wrong-content-type",
        ),
        operations=PAYMENT_OPERATIONS,
    ),
    Fault(
        "day-of-execution-unchecked",
        "spec 2.7 (dayOfExecution is a day of month)",
        "accepts a periodic payment whose dayOfExecution is no day of a month (00, 32)",
        rules=("E-day-of-execution-in-month",),
        level="should",
    ),
)


#: Cross-field checks (``conformance.contract.crossfield`` function names) a fault switches off.
SKIPPED_CHECKS: Mapping[str, str] = MappingProxyType(
    {
        "check_amount_fraction_digits": "ignore-minor-units",
        "check_regulatory_reporting_threshold": "no-regulatory-check",
        "check_duplicate_months_rejected": "duplicate-months-accepted",
        "check_remittance_forms_exclusive": "remittance-forms-mixed-accepted",
        "check_debtor_account_exactly_one": "two-debtor-references-accepted",
        "check_creditor_agent_required_for_bban": "ncbct-without-creditor-agent-accepted",
    }
)

#: Schema errors a fault lets through: (operation id or ``*`` for any, the field the error path
#: ends in, JSON Schema keyword) → fault.
TOLERATED_SCHEMA_ERRORS: Mapping[tuple[str, str, str], str] = MappingProxyType(
    {
        ("E1", "paymentIds", "maxItems"): "no-basket-limit",
        ("E17", "monthsOfExecution", "uniqueItems"): "duplicate-months-accepted",
        ("*", "creditorName", "maxLength"): "long-creditor-name-accepted",
        ("*", "remittanceInformationUnstructured", "maxLength"): "long-remittance-accepted",
        ("*", "remittanceInformationUnstructured", "minLength"): "empty-remittance-accepted",
        ("*", "ultimateDebtor", "maxLength"): "long-ultimate-debtor-accepted",
        ("*", "iban", "maxLength"): "long-iban-accepted",
    }
)

#: Cross-field violation codes whose status a fault changes: code → (fault, status).
_STATUS_FAULTS: Mapping[str, tuple[str, int]] = MappingProxyType(
    {"KID_INVALID": ("kid-error-401", 401), "KID_MISSING": ("kid-error-401", 401)}
)


def skipped_check(state: ServerState, check_name: str) -> bool:
    """Whether a fault switches the cross-field check ``check_name`` off."""
    fault = SKIPPED_CHECKS.get(check_name)
    return fault is not None and state.faulty(fault)


def tolerated_schema_error(
    state: ServerState, operation_id: str, path: str | None, keyword: str
) -> bool:
    """Whether a fault lets the schema error (``keyword`` failing at ``path``, as
    ``validation.error_path`` writes it) of ``operation_id`` through."""
    field = (path or "").rpartition("/")[2]
    for operation in (operation_id, "*"):
        fault = TOLERATED_SCHEMA_ERRORS.get((operation, path or "", keyword))
        fault = fault or TOLERATED_SCHEMA_ERRORS.get((operation, field, keyword))
        if fault is not None and state.faulty(fault):
            return True
    return False


def violation_status(state: ServerState, code: str, default: int = 400) -> int:
    """The status of a cross-field violation with ``code``: 400 (spec 7 rule 2 for KIDs), or
    what a switched-on fault makes of it."""
    fault = _STATUS_FAULTS.get(code)
    if fault is not None and state.faulty(fault[0]):
        return fault[1]
    return default


#: An amount that only breaks precision 18, scale 5 (14 to 18 integer digits).
_TOO_PRECISE = re.compile(r"[0-9]{14,18}(?:\.[0-9]{1,5})?")


def tolerated_amount_precision(state: ServerState, keyword: str, value: object) -> bool:
    """Whether the fault ``amount-precision-unchecked`` lets an amount with too many integer
    digits through (its pattern error, and only that one)."""
    return (
        keyword == "pattern"
        and isinstance(value, str)
        and _TOO_PRECISE.fullmatch(value) is not None
        and state.faulty("amount-precision-unchecked")
    )
