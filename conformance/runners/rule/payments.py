"""Rule checks for payments and signing baskets: basket kind and size, duplicates, KID references,
corporate ids, creditor agents, remittance, debtor account, amounts, reporting threshold,
cancellation.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import OperationRequest
from conformance.bankside.setup_data import prepared
from conformance.checks import (
    NotApplicable,
    check_json_body,
    check_status,
)
from conformance.contract.identifiers import is_valid_kid
from conformance.generate import factories
from conformance.operations.payments import (
    basket_authorisation_request,
    basket_request,
    payment_request,
)
from conformance.runners.rule.common import (
    rule_request,
    send_and_judge,
    send_expecting_success,
)

if TYPE_CHECKING:
    from conformance.bankside.setup_data import Payment
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario


#: Spec 8: at most 10 payments per signing basket.
BASKET_LIMIT = 10
#: The reading behind the accepted KWD payment of XF-amount-minor-units (PD14).
KWD_READING = (
    "the product accepts a payment in KWD (3 minor units); spec 2.1 states the fraction digits "
    "of an amount, not which currencies a bank accepts"
)


def check_basket_rejects_payment_kind(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A signing basket with a periodic payment is refused: 400 REFERENCE_MIX_INVALID."""
    if scenario.rule.endswith("-bulk"):
        raise NotApplicable(
            "bulk payments cannot be created through this interface (spec 1 names three "
            "products, none of them bulk), so a basket cannot be given one"
        )
    periodic = ctx.data.payment(seed, "E17", single_sca=False)
    single = ctx.data.payment(seed + 1, "E16", single_sca=False)
    request = basket_request(ctx, single.psu, [single.payment_id, periodic.payment_id])
    send_and_judge(scenario, ctx, request)


def check_basket_size_limit(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """11 payments in a basket are refused (400); 10 of them are accepted (spec 8)."""
    payments = ctx.data.payments(seed, BASKET_LIMIT + 1, "E16")
    ids = [payment.payment_id for payment in payments]
    request = basket_request(ctx, payments[0].psu, ids)
    send_and_judge(scenario, ctx, request)
    send_expecting_success(
        scenario, ctx, request.with_body(factories.signing_basket(ids[:BASKET_LIMIT]))
    )


def check_logical_duplicate_refused(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The same payment sent twice: the second is refused unless allowLogicalDuplicate=true
    (spec 4.3 E16, E18: "whether logical duplicate payments are allowed"). The row
    ``...-when-false`` sends allowLogicalDuplicate=false both times (the value that says they are
    not allowed); the other row sends none (our reading: the default refuses them)."""
    explicit = "false" if scenario.rule.endswith("-when-false") else None
    request = rule_request(scenario, ctx, seed).with_query("allowLogicalDuplicate", explicit)
    send_expecting_success(scenario, ctx, request)
    send_and_judge(scenario, ctx, request)
    send_expecting_success(scenario, ctx, request.with_query("allowLogicalDuplicate", "true"))


def _invalid_kid(valid: str) -> str:
    """``valid`` with its check digit changed so that neither MOD10 nor MOD11 fits."""
    for digit in "0123456789":
        candidate = valid[:-1] + digit
        if not is_valid_kid(candidate):
            return candidate
    raise ValueError(f"no invalid KID next to {valid}")


def _kid_body(ctx: RunContext, seed: int, reference: str | None, algorithm: str = "MOD10") -> Any:
    body = factories.ndct_payment(
        seed,
        debtor_bban=_debtor(ctx),
        kid=True,
        kid_algorithm=algorithm,  # type: ignore[arg-type]
        kid_reference_type=ctx.profile.kid_reference_type,
    )
    if reference is not None:
        body["remittanceInformationStructuredArray"][0]["reference"] = reference
    return body


def _debtor(ctx: RunContext) -> str | None:
    return ctx.data.debtor_bban()


def check_kid_check_digit(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A KID with a wrong check digit is 400 KID_INVALID, a blank one 400 KID_MISSING (spec 7
    rule 2); with XF-kid-check-digit, valid MOD10 and MOD11 KIDs are accepted as well."""
    psu = ctx.data.psu("PRIVATE")
    if scenario.rule == "ERR-2-kid-missing-empty":
        body = _kid_body(ctx, seed, "")
    elif scenario.rule == "ERR-2-kid-missing":
        body = _kid_body(ctx, seed, " ")
    else:
        valid = _kid_body(ctx, seed, None)["remittanceInformationStructuredArray"][0]["reference"]
        body = _kid_body(ctx, seed, _invalid_kid(valid))
    send_and_judge(scenario, ctx, OperationRequest.build(ctx, "E16", psu=psu, body=body))
    if scenario.rule.startswith("XF-"):
        for offset, algorithm in ((1, "MOD10"), (2, "MOD11")):
            good = _kid_body(ctx, seed + offset, None, algorithm)
            send_expecting_success(
                scenario, ctx, OperationRequest.build(ctx, "E16", psu=psu, body=good)
            )


def check_corporate_request_requires_corporate_id(
    scenario: Scenario, ctx: RunContext, seed: int
) -> None:
    """A corporate PSU (PSU-Context CORPORATE) without PSU-Corporate-ID: 400 (spec 7 rule 3)."""
    request = rule_request(scenario, ctx, seed).as_psu(ctx.data.psu("CORPORATE"))
    send_and_judge(scenario, ctx, request.without_header("PSU-Corporate-ID"))


def check_duplicate_months_rejected(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """MonthlyVariable with a month twice: 400 FORMAT_ERROR; with XF-months-unique, distinct
    months are accepted."""
    psu = ctx.data.psu("PRIVATE")

    def periodic(months: list[int], offset: int) -> OperationRequest:
        body = factories.periodic_payment(
            seed + offset,
            today=ctx.data.today(),
            frequency="MonthlyVariable",
            months=months,
            debtor_bban=_debtor(ctx),
        )
        return OperationRequest.build(ctx, "E17", psu=psu, body=body)

    send_and_judge(scenario, ctx, periodic([3, 3], 0))
    if scenario.rule.startswith("XF-"):
        send_expecting_success(scenario, ctx, periodic([3, 6], 1))


def check_pending_payment_cancellation_refused(
    scenario: Scenario, ctx: RunContext, seed: int
) -> None:
    """A payment in PDNG cannot be deleted (spec 7 rule 6). PDNG is the payment the bank
    prepared (``[prepared] pending_payment_id``), or reached the reference server's way:
    authorised, with a requested execution date ahead, then one batch run (the reference
    server's control, or the profile's batch hook)."""
    profile = ctx.profile
    if not profile.reference_server and (
        profile.prepared.pending_payment_id is not None or not ctx.data.can_run_batch
    ):
        payment = prepared.pending_payment(ctx.data)
    else:
        payment = _brought_to_pending(ctx, seed)
    request = payment_request(ctx, "PC", payment)
    send_and_judge(scenario, ctx, request)


def _brought_to_pending(ctx: RunContext, seed: int) -> Payment:
    """An authorised payment with a requested execution date ahead, after one batch run: PDNG."""
    body = ctx.data.payment_body("E16", seed)
    body["requestedExecutionDate"] = (ctx.data.today() + timedelta(days=14)).isoformat()
    payment = ctx.data.payment(seed, "E16", body=body, authorise=True)
    ctx.data.run_batch("run the batch processing")
    status = ctx.data.payment_status(payment)
    check_status(status, (200,), spec="spec 3")
    reached = check_json_body(status).get("transactionStatus")
    if reached != "PDNG":
        raise NotApplicable(
            f"the precondition was not reached: after SCA and a batch run the payment is "
            f"{reached}, not PDNG",
            supply="" if ctx.profile.reference_server else prepared.PENDING_PAYMENT_SUPPLY,
        )
    return payment


def check_regulatory_reporting_threshold(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """NOK 100 000 without (part of) the regulatory reporting is refused; NOK 99 999.99 without
    it is accepted (spec 2.7, spec 8)."""
    psu = ctx.data.psu("PRIVATE")

    def ncbct(amount: str, *, code: bool, information: bool, offset: int) -> OperationRequest:
        body = factories.ncbct_payment(seed + offset, amount=amount, debtor_bban=_debtor(ctx))
        body["regulatoryReportingCode"] = "14"
        body["regulatoryReportingInformation"] = "Kjøp av tjenester fra utlandet"
        if not code:
            del body["regulatoryReportingCode"]
        if not information:
            del body["regulatoryReportingInformation"]
        return OperationRequest.build(ctx, "E18", psu=psu, body=body)

    if scenario.rule.startswith("LIM-"):
        send_and_judge(scenario, ctx, ncbct("100000.00", code=True, information=False, offset=0))
        send_and_judge(scenario, ctx, ncbct("100000.00", code=False, information=True, offset=1))
    else:
        send_and_judge(scenario, ctx, ncbct("100000.00", code=False, information=False, offset=0))
        send_expecting_success(
            scenario, ctx, ncbct("99999.99", code=False, information=False, offset=1)
        )


def check_creditor_agent_required_for_bban(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A creditor BBAN without creditorAgent is refused; with it, accepted (spec 2.7)."""
    psu = ctx.data.psu("PRIVATE")
    body = factories.ncbct_payment(
        seed, creditor_bban=True, regulatory=False, debtor_bban=_debtor(ctx)
    )
    without = {key: value for key, value in body.items() if key != "creditorAgent"}
    send_and_judge(scenario, ctx, OperationRequest.build(ctx, "E18", psu=psu, body=without))
    send_expecting_success(scenario, ctx, OperationRequest.build(ctx, "E18", psu=psu, body=body))


def check_remittance_forms_exclusive(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Unstructured and structured-array remittance together are refused (spec 2.7)."""
    body = _kid_body(ctx, seed, None)
    body["remittanceInformationUnstructured"] = "Faktura 2026-118"
    send_and_judge(
        scenario, ctx, OperationRequest.build(ctx, "E16", psu=ctx.data.psu("PRIVATE"), body=body)
    )


def check_debtor_account_exactly_one(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """debtorAccount with both bban and other, then with neither: refused (spec 2.7)."""
    psu = ctx.data.psu("PRIVATE")
    card = ctx.data.card_account() if ctx.profile.sandbox else None
    other = {
        "identification": card.id if card is not None else "4925000000001234",
        "schemeNameProprietary": "creditCardAccount",
    }
    both = _kid_body(ctx, seed, None)
    both["debtorAccount"]["other"] = other
    send_and_judge(scenario, ctx, OperationRequest.build(ctx, "E16", psu=psu, body=both))
    neither = _kid_body(ctx, seed + 1, None)
    neither["debtorAccount"] = {"currency": "NOK"}
    send_and_judge(scenario, ctx, OperationRequest.build(ctx, "E16", psu=psu, body=neither))


def check_amount_fraction_digits(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Amounts whose fraction digits differ from the currency's minor units are refused (NOK
    "100.5", "100.505", "100"; JPY "100.5"); KWD "1.234" is accepted (spec 2.1)."""
    psu = ctx.data.psu("PRIVATE")
    base = rule_request(scenario, ctx, seed)
    wrong = (("NOK", "100.5"), ("NOK", "100.505"), ("NOK", "100"), ("JPY", "100.5"))
    for index, (currency, amount) in enumerate(wrong):
        request = _amount_request(ctx, scenario, base, seed + index, currency, amount, psu)
        send_and_judge(scenario, ctx, request)
    good = _amount_request(ctx, scenario, base, seed + len(wrong), "KWD", "1.234", psu)
    send_expecting_success(scenario, ctx, good, reading=KWD_READING)


def _amount_request(
    ctx: RunContext,
    scenario: Scenario,
    base: OperationRequest,
    seed: int,
    currency: str,
    amount: str,
    psu: Any,
) -> OperationRequest:
    """The operation's base body with another amount; a foreign currency goes to a currency
    account and so names the creditor's BIC (spec 2.7)."""
    body = copy.deepcopy(base.body)
    body["instructedAmount"] = {"amount": amount, "currency": currency}
    body["creditorAccount"]["currency"] = currency
    if currency != "NOK" and scenario.operation == "E16":
        body.setdefault("creditorAgent", "DNBANOKK")
    # a different remittance per request keeps them from being logical duplicates (spec 4.3 E16)
    if "remittanceInformationUnstructured" in body:
        body["remittanceInformationUnstructured"] = f"Faktura {seed}"
    return base.with_body(body).as_psu(psu)


def check_basket_authorised_again_blocked(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A basket whose SCA is finalised: a second E2 is 400 RESOURCE_BLOCKED (spec 7, E2 row)."""
    payments = [
        ctx.data.payment(seed, "E16", single_sca=False),
        ctx.data.payment(seed + 1, "E16", single_sca=False),
    ]
    basket = ctx.data.basket(seed, payments)
    path_values = {"basketId": basket.basket_id}
    link = ctx.data.start_authorisation("E2", path_values, basket.psu, "starting the basket's SCA")
    ctx.data.complete_sca(link, basket.psu)
    again = basket_authorisation_request(ctx, basket.psu, basket.basket_id)
    send_and_judge(scenario, ctx, again)


def check_execution_date_not_past(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An execution date before the bank's today is refused with EXECUTION_DATE_INVALID (spec 7
    code list): ``requestedExecutionDate`` (E16, E18) or ``startDate`` (E17) of yesterday;
    today is accepted."""
    field = "startDate" if scenario.operation == "E17" else "requestedExecutionDate"
    today = ctx.data.today()
    _refused_then_accepted(
        scenario,
        ctx,
        seed,
        {field: (today - timedelta(days=1)).isoformat()},
        {field: today.isoformat()},
    )


def check_periodic_end_after_start(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A periodic payment whose endDate lies before its startDate is refused (spec 2.7: first and
    last execution); an endDate equal to the startDate is accepted."""
    start = ctx.data.today() + timedelta(days=7)
    _refused_then_accepted(
        scenario,
        ctx,
        seed,
        {"startDate": start.isoformat(), "endDate": (start - timedelta(days=1)).isoformat()},
        {"startDate": start.isoformat(), "endDate": start.isoformat()},
    )


def _refused_then_accepted(
    scenario: Scenario,
    ctx: RunContext,
    seed: int,
    refused: Mapping[str, Any],
    accepted: Mapping[str, Any],
) -> None:
    """The rule's base body with the ``refused`` fields is judged against the row (a refusal),
    then with the ``accepted`` ones must succeed; each with a remittance of its own."""
    request = rule_request(scenario, ctx, seed)
    sends = ((refused, send_and_judge), (accepted, send_expecting_success))
    for offset, (fields, send) in enumerate(sends):
        body = {**copy.deepcopy(request.body), **fields}
        _distinct_remittance(body, seed + offset)
        send(scenario, ctx, request.with_body(body))


def _distinct_remittance(body: Any, seed: int) -> None:
    """A remittance of its own, so that two requests of one check are no logical duplicates."""
    if "remittanceInformationUnstructured" in body:
        body["remittanceInformationUnstructured"] = f"Faktura {seed}"


def check_amount_precision(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An amount beyond precision 18, scale 5 is refused: 19 integer digits in both readings of
    spec 2.1 (``LIM-amount-19-integer-digits``); 14 integer digits in the DECIMAL(18,5) reading,
    where 13 are accepted (a bank may refuse such a sum for other reasons: a should)."""
    psu = ctx.data.psu("PRIVATE")
    base = rule_request(scenario, ctx, seed)
    if scenario.rule == "LIM-amount-19-integer-digits":
        beyond = _amount_request(ctx, scenario, base, seed, "NOK", "1234567890123456789.00", psu)
        send_and_judge(scenario, ctx, beyond)
        return
    too_long = _amount_request(ctx, scenario, base, seed, "NOK", "12345678901234.00", psu)
    send_and_judge(scenario, ctx, too_long)
    longest = _amount_request(ctx, scenario, base, seed + 1, "NOK", "1234567890123.00", psu)
    send_expecting_success(
        scenario,
        ctx,
        longest,
        reading="a payment of 13 integer digits is accepted; the spec states the precision, "
        "not that every such sum is accepted",
    )


def check_day_of_execution_in_month(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A periodic payment's dayOfExecution that is no day of a month ("32", "00") is refused;
    "31" is accepted (spec 2.7: day of month)."""
    request = rule_request(scenario, ctx, seed)
    for offset, day in enumerate(("32", "00", "31")):
        body = copy.deepcopy(request.body)
        body["dayOfExecution"] = day
        _distinct_remittance(body, seed + offset)
        if day == "31":
            send_expecting_success(scenario, ctx, request.with_body(body))
        else:
            send_and_judge(scenario, ctx, request.with_body(body))


def check_amount_positive(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A zero or negative instructed amount is refused ("0.00", "-1.00"): a payment transfers a
    positive amount (the suite's reading; the spec states precision and scale only)."""
    psu = ctx.data.psu("PRIVATE")
    base = rule_request(scenario, ctx, seed)
    for offset, amount in enumerate(("0.00", "-1.00")):
        request = _amount_request(ctx, scenario, base, seed + offset, "NOK", amount, psu)
        send_and_judge(scenario, ctx, request)
