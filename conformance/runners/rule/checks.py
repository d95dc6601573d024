"""The checks of the rule table (``schemas/rules.json``), one function per ``check`` name.

Each function builds the situation the row's precondition describes, performs its action and
judges the answer against the row's expectation (status and code, via the scenario's
:class:`~conformance.scenario.Expectation`). Where the row's action names a conforming case as
well ("then with 10 of them", "then of 140"), it is sent after the violating one and must be
accepted: a limit is only right when both sides of it are. A function does not know the row id
beyond choosing, for the rows that share it, what exactly to break (:data:`_LENGTH_FIELDS`).

Situations a target can only reach with a control it may lack (the clock for spec 8's consent age
and SCA renewal, the batch for spec 3's PDNG, deleting an account for spec 7 rule 8) use the
reference server's ``/_control`` routes and are not applicable elsewhere.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from datetime import timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from conformance.checks import (
    ConformanceFailure,
    NotApplicable,
    check_json_body,
    check_max_length,
    check_status,
)
from conformance.contract.identifiers import is_valid_kid
from conformance.generate import factories
from conformance.runners.base_requests import base_request
from conformance.runners.verdict import judge, judge_expectation
from conformance.scenario import BODY_SCHEMA_RESPONSE, Expectation
from conformance.target.request import OperationRequest

if TYPE_CHECKING:
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario
    from conformance.target.setup_data import Account, Consent

__all__ = ["RULE_CHECKS", "RuleCheck", "expect_success"]

#: One signature for every rule check: the scenario, the run context, the scenario's seed.
RuleCheck = Callable[["Scenario", "RunContext", int], None]

#: Spec 8: at most 10 payments per signing basket.
BASKET_LIMIT = 10
#: Spec 8: calls of E8 without PSU-IP-Address per day.
DAILY_CALLS = 4
#: Spec 8: default page size of the production transactions list.
PAGE_SIZE = 200
#: Spec 8 / spec 9 1.17.4: SCA renewal; spec 8: consent age for E8 without the PSU.
SCA_RENEWAL_DAYS = 180
CONSENT_AGE_DAYS = 90
HISTORY_DAYS = 90


# --- shared helpers ---------------------------------------------------------------------------


def expect_success(exchange: Exchange, scenario: Scenario, ctx: RunContext) -> None:
    """The conforming half of a rule: the operation's documented success and response body."""
    operation = ctx.contract.operations[scenario.operation]
    statuses = tuple(sorted(s for s in operation.responses if 200 <= s < 300)) or (
        operation.success_status,
    )
    judge_expectation(
        exchange,
        Expectation(statuses, None, BODY_SCHEMA_RESPONSE),
        operation,
        ctx.contract,
        spec=scenario.spec,
    )


def _base(scenario: Scenario, ctx: RunContext, seed: int) -> OperationRequest:
    return base_request(ctx, scenario.operation, scenario.variant, seed)


def _changed(request: OperationRequest, change: Callable[[Any], None]) -> OperationRequest:
    """The request with its body changed in a copy by ``change``."""
    body = copy.deepcopy(request.body)
    change(body)
    return request.with_body(body)


def _set(body: Any, pointer: tuple[str | int, ...], value: Any) -> None:
    node = body
    for part in pointer[:-1]:
        node = node[part]
    node[pointer[-1]] = value


def _pop(body: Any, pointer: tuple[str | int, ...]) -> None:
    node = body
    for part in pointer[:-1]:
        node = node[part]
    node.pop(pointer[-1], None)


def _reject(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    exchange = request.send(ctx)
    judge(exchange, scenario, ctx)
    return exchange


def _accept(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    exchange = request.send(ctx)
    expect_success(exchange, scenario, ctx)
    return exchange


def _age_consent(ctx: RunContext, consent: Consent, days: int, why: str) -> None:
    """The consent ``days`` older on the reference server: its SCA moved back (spec 8 ages).

    Only this consent ages: moving the server's clock instead would age the consents of the
    scenarios other workers run meanwhile on the same server (a flaky CONSENT_EXPIRED there).
    """
    ctx.data.control(
        "POST", f"/_control/consents/{consent.consent_id}/age", {"days": days}, what=why
    )


def _require_reference(ctx: RunContext, what: str) -> None:
    if not ctx.profile.reference_server:
        raise NotApplicable(
            f"the scenario needs to {what}, which only the reference server's controls can do "
            "(the profile says reference_server = false)"
        )


# --- spec 7 rule 1: baskets ---------------------------------------------------------------------


def check_basket_rejects_payment_kind(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A signing basket with a periodic payment is refused: 400 REFERENCE_MIX_INVALID."""
    if scenario.rule.endswith("-bulk"):
        raise NotApplicable(
            "bulk payments cannot be created through this interface (spec 1 names three "
            "products, none of them bulk), so a basket cannot be given one"
        )
    periodic = ctx.data.payment(seed, "E17")
    single = ctx.data.payment(seed + 1, "E16")
    request = OperationRequest.build(
        ctx,
        "E1",
        psu=single.psu,
        body=factories.signing_basket([single.payment_id, periodic.payment_id]),
    )
    _reject(scenario, ctx, request)


def check_basket_size_limit(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """11 payments in a basket are refused (400); 10 of them are accepted (spec 8)."""
    payments = ctx.data.payments(seed, BASKET_LIMIT + 1, "E16")
    ids = [payment.payment_id for payment in payments]
    request = OperationRequest.build(
        ctx, "E1", psu=payments[0].psu, body=factories.signing_basket(ids)
    )
    _reject(scenario, ctx, request)
    _accept(scenario, ctx, request.with_body(factories.signing_basket(ids[:BASKET_LIMIT])))


# --- spec 4.3 E16/E18: logical duplicates --------------------------------------------------------


def check_logical_duplicate_refused(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The same payment sent twice: the second is refused unless allowLogicalDuplicate=true
    (spec 4.3 E16, E18: "whether logical duplicate payments are allowed"). No row of the rule
    table names this check yet; it is ready for one (expected status: a 4xx)."""
    request = _base(scenario, ctx, seed).with_query("allowLogicalDuplicate", None)
    _accept(scenario, ctx, request)
    _reject(scenario, ctx, request)
    _accept(scenario, ctx, request.with_query("allowLogicalDuplicate", "true"))


# --- spec 7 rule 2, spec 2.7: KIDs ----------------------------------------------------------------


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
    )
    if reference is not None:
        body["remittanceInformationStructuredArray"][0]["reference"] = reference
    return body


def _debtor(ctx: RunContext) -> str | None:
    return ctx.data.account().bban if ctx.profile.sandbox else None


def check_kid_check_digit(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A KID with a wrong check digit is 400 KID_INVALID, a blank one 400 KID_MISSING (spec 7
    rule 2); with XF-kid-check-digit, valid MOD10 and MOD11 KIDs are accepted as well."""
    psu = ctx.data.psu("PRIVATE")
    if scenario.rule == "ERR-2-kid-missing":
        body = _kid_body(ctx, seed, " ")
    else:
        valid = _kid_body(ctx, seed, None)["remittanceInformationStructuredArray"][0]["reference"]
        body = _kid_body(ctx, seed, _invalid_kid(valid))
    _reject(scenario, ctx, OperationRequest.build(ctx, "E16", psu=psu, body=body))
    if scenario.rule.startswith("XF-"):
        for offset, algorithm in ((1, "MOD10"), (2, "MOD11")):
            good = _kid_body(ctx, seed + offset, None, algorithm)
            _accept(scenario, ctx, OperationRequest.build(ctx, "E16", psu=psu, body=good))


# --- spec 7 rule 3 ----------------------------------------------------------------------------


def check_corporate_request_requires_corporate_id(
    scenario: Scenario, ctx: RunContext, seed: int
) -> None:
    """A corporate PSU (PSU-Context CORPORATE) without PSU-Corporate-ID: 400 (spec 7 rule 3)."""
    request = _base(scenario, ctx, seed).as_psu(ctx.data.psu("CORPORATE"))
    _reject(scenario, ctx, request.without_header("PSU-Corporate-ID"))


# --- spec 7 rule 4, spec 2.7: months ------------------------------------------------------------


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

    _reject(scenario, ctx, periodic([3, 3], 0))
    if scenario.rule.startswith("XF-"):
        _accept(scenario, ctx, periodic([3, 6], 1))


# --- spec 7 rule 5 ----------------------------------------------------------------------------


def check_foreign_debtor_transaction_rejected(
    scenario: Scenario, ctx: RunContext, seed: int
) -> None:
    """A sandbox transaction on account A whose debtor is account B: an error (spec 7 rule 5)."""
    first = ctx.data.new_account(seed)
    other = ctx.data.new_account(seed + 1)
    body = factories.sandbox_account_transactions(
        seed, {"iban": first.iban, "bban": first.bban}, 1, today=ctx.data.today()
    )
    body[0]["debtorAccount"] = {"iban": other.iban, "bban": other.bban}
    request = OperationRequest.build(ctx, "E7", path_values={"mockAccountId": first.id}, body=body)
    _reject(scenario, ctx, request)


# --- spec 7 rule 6, spec 3 ----------------------------------------------------------------------


def check_pending_payment_cancellation_refused(
    scenario: Scenario, ctx: RunContext, seed: int
) -> None:
    """A payment in PDNG cannot be deleted (spec 7 rule 6). PDNG is reached the reference
    server's way: authorised, with a requested execution date ahead, then one batch run."""
    _require_reference(ctx, "run the sandbox's batch processing (spec 3)")
    body = ctx.data.payment_body("E16", seed)
    body["requestedExecutionDate"] = (ctx.data.today() + timedelta(days=14)).isoformat()
    payment = ctx.data.payment(seed, "E16", body=body, authorise=True)
    ctx.data.control("POST", "/_control/batch", {}, what="run the batch processing")
    status = ctx.data.payment_status(payment)
    check_status(status, (200,), spec="spec 3")
    reached = check_json_body(status).get("transactionStatus")
    if reached != "PDNG":
        raise NotApplicable(
            f"the precondition was not reached: after SCA and a batch run the payment is "
            f"{reached}, not PDNG"
        )
    request = OperationRequest.build(
        ctx,
        "PC",
        psu=payment.psu,
        path_values={"payment-product": payment.product, "payment-id": payment.payment_id},
    )
    _reject(scenario, ctx, request)


# --- spec 7 rule 7 ----------------------------------------------------------------------------


def check_malformed_header_rejected(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A malformed PSU-ID (not a UUID) is a validation error (spec 7 rule 7)."""
    _reject(scenario, ctx, _base(scenario, ctx, seed).with_header("PSU-ID", "not-a-uuid"))


def check_invalid_customer_type_rejected(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A customerType other than PRIVATE or CORPORATE is a validation error (spec 7 rule 7)."""
    request = _base(scenario, ctx, seed)
    _reject(
        scenario, ctx, _changed(request, lambda body: _set(body, ("customerType",), "BUSINESS"))
    )


# --- spec 7 rule 8 ----------------------------------------------------------------------------


def check_account_list_empty_when_account_gone(
    scenario: Scenario, ctx: RunContext, seed: int
) -> None:
    """The consent's account deleted in the backend: AL answers 200 without it, not 404."""
    _require_reference(ctx, "delete an account in the backend")
    account = ctx.data.new_account(seed, transactions=1)
    consent = ctx.data.new_consent(seed, account)
    ctx.data.control("DELETE", f"/_control/accounts/{account.id}", what="delete the account")
    request = OperationRequest.build(
        ctx, "AL", psu=consent.psu, headers={"Consent-ID": consent.consent_id}
    )
    exchange = _reject_or_hold(scenario, ctx, request)
    listed = check_json_body(exchange).get("accounts") or []
    if any(item.get("resourceId") == account.id for item in listed if isinstance(item, Mapping)):
        raise ConformanceFailure(
            "the account list still shows an account that no longer exists",
            spec="spec 7 rule 8",
            sent=exchange,
            expected="an account with consent that no longer exists is left out of the list",
        )


def _reject_or_hold(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    """Send and judge against the row's expectation (a success for the "holds" rows)."""
    exchange = request.send(ctx)
    judge(exchange, scenario, ctx)
    return exchange


# --- spec 8: E8 limits and consent ages --------------------------------------------------------


def _fresh_consent(ctx: RunContext, seed: int) -> Consent:
    """A consent on an account of its own: the only consent an E8 request without Consent-ID
    can resolve to (the newest valid one of the PSU covering the account), however the consents
    of other scenarios on the worker's shared account are aged or counted."""
    account = ctx.data.new_account(seed, transactions=1)
    consent = ctx.data.new_consent(seed, account)
    if consent.account_id is None or consent.transaction_id is None:
        raise NotApplicable("the consented account shows no booked transaction (AT) to read")
    return consent


def _details(ctx: RunContext, consent: Consent, *, with_ip: bool) -> OperationRequest:
    request = OperationRequest.build(
        ctx,
        "E8",
        psu=consent.psu,
        path_values={"id": consent.account_id or "", "transactionId": consent.transaction_id or ""},
    )
    return request if with_ip else request.without_header("PSU-IP-Address")


def check_daily_call_limit(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """E8 without PSU-IP-Address: 4 calls a day are served, the 5th is refused (spec 8)."""
    consent = _fresh_consent(ctx, seed)
    request = _details(ctx, consent, with_ip=False)
    for _ in range(DAILY_CALLS):
        _accept(scenario, ctx, request)
    _reject(scenario, ctx, request)


def check_consent_age_limit(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """E8 without PSU-IP-Address on a consent more than 90 days old is refused (spec 8)."""
    _require_reference(ctx, "age a consent past its 90 days")
    consent = _fresh_consent(ctx, seed)
    request = _details(ctx, consent, with_ip=False)
    _age_consent(ctx, consent, CONSENT_AGE_DAYS + 1, "age the consent by 91 days")
    exchange = request.send(ctx)
    judge(exchange, scenario, ctx)


def check_sca_renewal_required(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A consent whose SCA is more than 180 days old is refused on AL, AT and E8 (spec 8)."""
    _require_reference(ctx, "age a consent past its 180 days")
    consent = _fresh_consent(ctx, seed)
    header = {"Consent-ID": consent.consent_id}
    if scenario.operation == "AL":
        request = OperationRequest.build(ctx, "AL", psu=consent.psu, headers=header)
    elif scenario.operation == "AT":
        request = OperationRequest.build(
            ctx,
            "AT",
            psu=consent.psu,
            path_values={"id": consent.account_id or ""},
            query={"bookingStatus": "booked"},
            headers=header,
        )
    else:
        request = _details(ctx, consent, with_ip=True)
    _age_consent(ctx, consent, SCA_RENEWAL_DAYS + 1, "age the consent's SCA by 181 days")
    exchange = request.send(ctx)
    judge(exchange, scenario, ctx)


# --- spec 8: the transactions list ------------------------------------------------------------


def _transactions_request(ctx: RunContext, consent: Consent, **query: Any) -> OperationRequest:
    return OperationRequest.build(
        ctx,
        "AT",
        psu=consent.psu,
        path_values={"id": consent.account_id or ""},
        query={"bookingStatus": "booked", **query},
        headers={"Consent-ID": consent.consent_id},
    )


def check_history_window_without_sca(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """From more than 90 days back without SCA: refused (401), or no older transaction shown."""
    account = ctx.data.new_account(seed, transactions=1)
    today = ctx.data.today()
    old = factories.sandbox_account_transactions(
        seed, {"iban": account.iban, "bban": account.bban}, 1, today=today
    )
    old[0]["bookingDate"] = old[0]["valueDate"] = (today - timedelta(days=120)).isoformat()
    ctx.data.create(
        "E7", "creating an old transaction", path_values={"mockAccountId": account.id}, body=old
    )
    consent = ctx.data.new_consent(seed, account)
    request = _transactions_request(
        ctx, consent, fromDate=(today - timedelta(days=150)).isoformat()
    )
    exchange = _reject_or_hold(scenario, ctx, request)
    if exchange.status != 200:
        return
    limit = (today - timedelta(days=HISTORY_DAYS + 1)).isoformat()
    booked = (check_json_body(exchange).get("transactions") or {}).get("booked") or []
    older = [item.get("bookingDate") for item in booked if str(item.get("bookingDate")) < limit]
    if older:
        raise ConformanceFailure(
            f"transactions booked more than 90 days ago are listed without SCA: {older[:3]}",
            spec="spec 8",
            sent=exchange,
            expected="transaction history without SCA reaches back 90 days",
        )


def _large_account(ctx: RunContext, seed: int) -> Consent:
    """An account with more than 200 transactions and a consent on it (shared per worker: the
    scenarios using it only read)."""

    def make() -> Consent:
        account = ctx.data.new_account(seed, transactions=PAGE_SIZE + 1)
        return ctx.data.new_consent(seed, account)

    return ctx.data.shared("large-account-consent", make)


def check_default_page_size(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Without pagination parameters a page holds 200 transactions (spec 8)."""
    consent = _large_account(ctx, ctx.data.seed_for("large-account"))
    exchange = _reject_or_hold(scenario, ctx, _transactions_request(ctx, consent))
    booked = (check_json_body(exchange).get("transactions") or {}).get("booked") or []
    if len(booked) != PAGE_SIZE:
        raise ConformanceFailure(
            f"the first page holds {len(booked)} transactions of more than {PAGE_SIZE}",
            spec="spec 8",
            sent=exchange,
            expected=f"without pagination parameters the page size is {PAGE_SIZE}",
        )


def check_pagination_links_page_size(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The pagination links use the page size 200, and following ``next`` gives the rest."""
    consent = _large_account(ctx, ctx.data.seed_for("large-account"))
    first = _reject_or_hold(scenario, ctx, _transactions_request(ctx, consent))
    links = (check_json_body(first).get("transactions") or {}).get("_links") or {}
    wrong = {
        name: link.get("href")
        for name, link in links.items()
        if isinstance(link, Mapping)
        and "limit" in parse_qs(urlsplit(str(link.get("href", ""))).query)
        and parse_qs(urlsplit(str(link.get("href", ""))).query)["limit"] != [str(PAGE_SIZE)]
    }
    if wrong or "next" not in links:
        raise ConformanceFailure(
            "the pagination links do not page by 200"
            + (f": {wrong}" if wrong else " (no next link although more remain)"),
            spec="spec 8",
            sent=first,
            expected=f"links in pagination answers use the page size {PAGE_SIZE}",
        )
    following = ctx.client.request(
        "GET",
        str(links["next"]["href"]),
        headers=dict(_transactions_request(ctx, consent).headers),
    )
    expect_success(following, scenario, ctx)
    rest = (check_json_body(following).get("transactions") or {}).get("booked") or []
    if len(rest) != 1:
        raise ConformanceFailure(
            f"the next page holds {len(rest)} transactions, expected the 1 remaining",
            spec="spec 8",
            sent=following,
            expected=f"the next link continues after the first {PAGE_SIZE}",
        )


def check_query_minimum_enforced(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """limit=0 is refused (spec 8: at least 1); limit=1 returns at most one transaction."""
    request = _base(scenario, ctx, seed)
    _reject(scenario, ctx, request.with_query("limit", "0"))
    exchange = _accept(scenario, ctx, request.with_query("limit", "1"))
    document = check_json_body(exchange)
    if scenario.operation == "E4":
        booked = (document.get("cardTransactions") or {}).get("booked") or []
        pending = (document.get("cardTransactions") or {}).get("pending") or []
        count = len(booked) + len(pending)
    else:
        count = len(document) if isinstance(document, list) else 0
    if count > 1:
        raise ConformanceFailure(
            f"limit=1 returned {count} transactions",
            spec="spec 4.3 E3/E4",
            sent=exchange,
            expected="limit is the number of transactions returned",
        )


# --- spec 8 / spec 2.7: lengths -----------------------------------------------------------------

#: Rows of check_max_length_enforced / check_min_length_enforced: rule id → (pointer per
#: operation, the limit, whether a conforming value at the limit is sent too).
_LENGTH_FIELDS: Mapping[str, tuple[Mapping[str, tuple[str | int, ...]], int, bool]] = (
    MappingProxyType(
        {
            "LIM-remittance-unstructured-max-140": (
                {op: ("remittanceInformationUnstructured",) for op in ("E16", "E17", "E18")},
                140,
                True,
            ),
            "LIM-creditor-name-max-70": (
                {op: ("creditorName",) for op in ("E16", "E17", "E18")},
                70,
                True,
            ),
            "LIM-ultimate-debtor-max-70": (
                {op: ("ultimateDebtor",) for op in ("E16", "E17")},
                70,
                True,
            ),
            "LIM-bban-max-30": (
                {
                    "E16": ("creditorAccount", "bban"),
                    "E17": ("creditorAccount", "bban"),
                    "E18": ("debtorAccount", "bban"),
                    "SA": ("bban",),
                    "E7": (0, "creditorAccount", "bban"),
                },
                30,
                False,
            ),
            "LIM-iban-max-34": (
                {
                    "E17": ("creditorAccount", "iban"),
                    "E18": ("creditorAccount", "iban"),
                    "SA": ("iban",),
                    "E7": (0, "creditorAccount", "iban"),
                },
                34,
                False,
            ),
            "LIM-remittance-unstructured-non-empty": (
                {op: ("remittanceInformationUnstructured",) for op in ("E16", "E17", "E18")},
                1,
                False,
            ),
        }
    )
)


def _text(length: int, digits: bool) -> str:
    """A value of exactly ``length`` characters: digits for account numbers, else letters."""
    unit = "1234567890" if digits else "Nordmann-Regnskap-"
    return (unit * (length // len(unit) + 1))[:length]


def _length_pointer(scenario: Scenario) -> tuple[tuple[str | int, ...], int, bool]:
    try:
        pointers, limit, conforming = _LENGTH_FIELDS[scenario.rule]
        return pointers[scenario.operation], limit, conforming
    except KeyError:
        raise NotApplicable(
            f"the suite does not know which field {scenario.rule} limits on {scenario.operation}"
        ) from None


def check_max_length_enforced(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A value one character over the limit is refused; at the limit it is accepted."""
    pointer, limit, conforming = _length_pointer(scenario)
    digits = pointer[-1] in ("bban", "iban")
    request = _base(scenario, ctx, seed)
    _reject(
        scenario, ctx, _changed(request, lambda body: _set(body, pointer, _text(limit + 1, digits)))
    )
    if conforming:
        _accept(
            scenario, ctx, _changed(request, lambda body: _set(body, pointer, _text(limit, digits)))
        )


def check_min_length_enforced(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An empty remittance text is refused (spec 8: non-empty)."""
    pointer, _, _ = _length_pointer(scenario)
    request = _base(scenario, ctx, seed)
    _reject(scenario, ctx, _changed(request, lambda body: _set(body, pointer, "")))


def check_length_bounds_enforced(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """bankTransactionCode of 3 and of 15 characters are refused (spec 8: 4 to 14)."""
    request = _base(scenario, ctx, seed)
    for length in (3, 15):
        changed = _changed(
            request, lambda body, n=length: _set(body, (0, "bankTransactionCode"), "P" * n)
        )
        _reject(scenario, ctx, changed)


#: Response fields checked by check_response_field_length: rule id → (pointers, bounds).
_RESPONSE_LENGTHS: Mapping[str, tuple[tuple[str, ...], int, int]] = MappingProxyType(
    {
        "LIM-end-to-end-id-max-35": (("transactionsDetails/endToEndId",), 0, 35),
        "LIM-tpp-message-text-max-512": (("tppMessages/*/text",), 0, 512),
        "LIM-psu-message-max-512": (("psuMessage",), 0, 512),
        "LIM-bank-transaction-code-length-response": (
            (
                "transactionsDetails/bankTransactionCode",
                "*/bankTransactionCode",
                "bankTransactionCode",
            ),
            4,
            14,
        ),
    }
)


def check_response_field_length(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Lengths the spec bounds in answers (spec 8): endToEndId, tppMessages text, psuMessage,
    bankTransactionCode. Payment rows look at a success and at an error answer."""
    pointers, low, high = _RESPONSE_LENGTHS.get(scenario.rule, ((), 0, 0))
    if not pointers:
        raise NotApplicable(f"the suite does not know which answer field {scenario.rule} bounds")
    request = _base(scenario, ctx, seed)
    answers = [_reject_or_hold(scenario, ctx, request)]
    if ctx.contract.operations[scenario.operation].family == "payments":
        broken = _changed(request, lambda body: _set(body, ("creditorName",), "x" * 71))
        answers.append(_reject_or_hold(scenario, ctx, broken))
    for exchange in answers:
        document = check_json_body(exchange)
        for pointer in pointers:
            check_max_length(exchange, document, pointer, high, spec=scenario.spec)
            if low:
                _check_min_length(exchange, document, pointer, low, scenario.spec)


def _check_min_length(exchange: Exchange, document: Any, pointer: str, low: int, spec: str) -> None:
    found: list[Any] = []
    parts = pointer.split("/")

    def walk(node: Any, rest: list[str]) -> None:
        if not rest:
            found.append(node)
            return
        head, tail = rest[0], rest[1:]
        if head == "*" and isinstance(node, list):
            for item in node:
                walk(item, tail)
        elif isinstance(node, Mapping) and head in node:
            walk(node[head], tail)

    walk(document, parts)
    short = [value for value in found if isinstance(value, str) and len(value) < low]
    if short:
        raise ConformanceFailure(
            f"{pointer} is shorter than {low} characters: {short[:3]}",
            spec=spec,
            sent=exchange,
            expected=f"{pointer} has {low} characters or more",
        )


# --- spec 2.7 NCBCT -------------------------------------------------------------------------------


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
        _reject(scenario, ctx, ncbct("100000.00", code=True, information=False, offset=0))
        _reject(scenario, ctx, ncbct("100000.00", code=False, information=True, offset=1))
    else:
        _reject(scenario, ctx, ncbct("100000.00", code=False, information=False, offset=0))
        _accept(scenario, ctx, ncbct("99999.99", code=False, information=False, offset=1))


def check_creditor_agent_required_for_bban(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A creditor BBAN without creditorAgent is refused; with it, accepted (spec 2.7)."""
    psu = ctx.data.psu("PRIVATE")
    body = factories.ncbct_payment(
        seed, creditor_bban=True, regulatory=False, debtor_bban=_debtor(ctx)
    )
    without = {key: value for key, value in body.items() if key != "creditorAgent"}
    _reject(scenario, ctx, OperationRequest.build(ctx, "E18", psu=psu, body=without))
    _accept(scenario, ctx, OperationRequest.build(ctx, "E18", psu=psu, body=body))


# --- spec 2.7 NDCT --------------------------------------------------------------------------------


def check_remittance_forms_exclusive(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Unstructured and structured-array remittance together are refused (spec 2.7)."""
    body = _kid_body(ctx, seed, None)
    body["remittanceInformationUnstructured"] = "Faktura 2026-118"
    _reject(
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
    _reject(scenario, ctx, OperationRequest.build(ctx, "E16", psu=psu, body=both))
    neither = _kid_body(ctx, seed + 1, None)
    neither["debtorAccount"] = {"currency": "NOK"}
    _reject(scenario, ctx, OperationRequest.build(ctx, "E16", psu=psu, body=neither))


def check_amount_fraction_digits(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Amounts whose fraction digits differ from the currency's minor units are refused (NOK
    "100.5", "100.505", "100"; JPY "100.5"); KWD "1.234" is accepted (spec 2.1)."""
    psu = ctx.data.psu("PRIVATE")
    base = _base(scenario, ctx, seed)
    wrong = (("NOK", "100.5"), ("NOK", "100.505"), ("NOK", "100"), ("JPY", "100.5"))
    for index, (currency, amount) in enumerate(wrong):
        request = _amount_request(ctx, scenario, base, seed + index, currency, amount, psu)
        _reject(scenario, ctx, request)
    good = _amount_request(ctx, scenario, base, seed + len(wrong), "KWD", "1.234", psu)
    _accept(scenario, ctx, good)


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


# --- spec 4.3 E5/E7, spec 8: sandbox dates --------------------------------------------------------


def check_sandbox_dates_rejected(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Booking or value date in the future, or booking after value: refused (spec 4.3 E5/E7)."""
    request = _base(scenario, ctx, seed)
    today = ctx.data.today()
    ahead = (today + timedelta(days=2)).isoformat()
    value_field = "transactionDate" if scenario.operation == "E5" else "valueDate"
    rule = scenario.rule

    def change(body: Any) -> None:
        item = body[0]
        if rule.endswith("booking-future"):
            item["bookingDate"] = ahead
        elif rule.endswith("value-future"):
            item[value_field] = ahead
        else:
            value = today - timedelta(days=10)
            item[value_field] = value.isoformat()
            item["bookingDate"] = (value + timedelta(days=1)).isoformat()

    _reject(scenario, ctx, _changed(request, change))


# --- spec 4.3 E6 ------------------------------------------------------------------------------


def check_engagement_account_owner(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An engagement on an account the agreement's owner does not own is refused (spec 4.3 E6)."""
    shared = ctx.data.engagement()
    foreign: Account = ctx.data.account()
    body = factories.sandbox_engagement(seed, shared.member.customer_id, foreign.iban)
    request = OperationRequest.build(
        ctx, "E6", path_values={"mockAgreementId": shared.agreement_id}, body=body
    )
    _reject(scenario, ctx, request)


# --- spec 8, spec 9: account names --------------------------------------------------------------

LONG_NAME = ("Brukskonto for husholdningen i Storgata 12 og hytta paa Geilo nr 4567" * 2)[:70]


def check_account_name_length(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A 70-character account name: at most 35 characters in AL by default, whole with
    x-accept-fix longer-name (spec 8, spec 9)."""
    account = ctx.data.shared(
        "long-name-account",
        lambda: ctx.data.new_account(ctx.data.seed_for("long-name"), account_name=LONG_NAME),
    )
    consent = ctx.data.shared("long-name-consent", lambda: ctx.data.new_consent(ctx.seed, account))
    request = OperationRequest.build(
        ctx, "AL", psu=consent.psu, headers={"Consent-ID": consent.consent_id}
    )
    longer = scenario.rule.endswith("longer-name-70")
    if longer:
        request = request.with_header("x-accept-fix", "longer-name")
    exchange = _reject_or_hold(scenario, ctx, request)
    listed = [
        item
        for item in check_json_body(exchange).get("accounts") or []
        if isinstance(item, Mapping) and item.get("iban") == account.iban
    ]
    name = listed[0].get("name") if listed else None
    if longer and name != LONG_NAME:
        raise ConformanceFailure(
            f"with x-accept-fix longer-name the 70-character account name reads {name!r}",
            spec="spec 8, spec 9",
            sent=exchange,
            expected=f"the account name whole, up to 70 characters: {LONG_NAME!r}",
        )
    if not longer and isinstance(name, str) and len(name) > 35:
        raise ConformanceFailure(
            f"without x-accept-fix longer-name the account name has {len(name)} characters",
            spec="spec 8, spec 9",
            sent=exchange,
            expected="account names are extended to 70 characters only with longer-name "
            "(35 by default, assumed)",
        )


#: Rule-check function by the ``check`` name of the rule table (immutable).
RULE_CHECKS: Mapping[str, RuleCheck] = MappingProxyType(
    {
        check.__name__: check
        for check in (
            check_basket_rejects_payment_kind,
            check_basket_size_limit,
            check_logical_duplicate_refused,
            check_kid_check_digit,
            check_corporate_request_requires_corporate_id,
            check_duplicate_months_rejected,
            check_foreign_debtor_transaction_rejected,
            check_pending_payment_cancellation_refused,
            check_malformed_header_rejected,
            check_invalid_customer_type_rejected,
            check_account_list_empty_when_account_gone,
            check_daily_call_limit,
            check_consent_age_limit,
            check_sca_renewal_required,
            check_history_window_without_sca,
            check_default_page_size,
            check_pagination_links_page_size,
            check_query_minimum_enforced,
            check_max_length_enforced,
            check_min_length_enforced,
            check_length_bounds_enforced,
            check_response_field_length,
            check_regulatory_reporting_threshold,
            check_creditor_agent_required_for_bban,
            check_remittance_forms_exclusive,
            check_debtor_account_exactly_one,
            check_amount_fraction_digits,
            check_sandbox_dates_rejected,
            check_engagement_account_owner,
            check_account_name_length,
        )
    }
)
