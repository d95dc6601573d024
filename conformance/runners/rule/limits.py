"""Rule checks for the limits of spec 8: accounts that vanish, daily calls, consent age, SCA
renewal, the history window, page sizes and query minimums.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from conformance.bankside.request import OperationRequest
from conformance.bankside.setup_data import prepared
from conformance.checks import (
    ConformanceFailure,
    NotApplicable,
    breaking,
    check_json_body,
)
from conformance.findings import record_should
from conformance.generate import factories
from conformance.operations.accounts import (
    account_list_request,
    consented_transactions_request,
    large_account_consent,
    transaction_details_request,
)
from conformance.problems import Breach
from conformance.runners.judging import judge
from conformance.runners.rule.common import (
    age_consent,
    expect_success,
    rule_request,
    send_and_judge,
    send_expecting_success,
)

if TYPE_CHECKING:
    from conformance.bankside.setup_data import Consent
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario


#: Spec 8: calls of E8 without PSU-IP-Address per day.
DAILY_CALLS = 4


#: Spec 8: default page size of the production transactions list.
PAGE_SIZE = 200


#: Spec 8 / spec 9 1.17.4: SCA renewal; spec 8: consent age for E8 without the PSU.
SCA_RENEWAL_DAYS = 180


CONSENT_AGE_DAYS = 90


HISTORY_DAYS = 90


def check_account_list_empty_when_account_gone(
    scenario: Scenario, ctx: RunContext, seed: int
) -> None:
    """The consent's account deleted in the backend: AL answers 200 without it, not 404. The
    account is deleted through the reference server's control, or is the one the bank closed
    (``[prepared] closed_account_consent_id``, ``closed_account_id``)."""
    if ctx.profile.reference_server:
        account = ctx.data.new_account(seed, transactions=1)
        consent = ctx.data.new_consent(seed, account)
        ctx.data.control("DELETE", f"/_control/accounts/{account.id}", what="delete the account")
        account_id = account.id
    else:
        consent, account_id = prepared.closed_account(ctx.data)
    request = account_list_request(ctx, consent)
    exchange = send_and_judge(scenario, ctx, request)
    listed = check_json_body(exchange).get("accounts") or []
    if any(item.get("resourceId") == account_id for item in listed if isinstance(item, Mapping)):
        raise ConformanceFailure(
            "the account list still shows an account that no longer exists",
            spec="spec 7 rule 8",
            sent=exchange,
            expected="an account with consent that no longer exists is left out of the list",
        )


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
    request = transaction_details_request(ctx, consent)
    return request if with_ip else request.without_header("PSU-IP-Address")


def check_daily_call_limit(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """E8 without PSU-IP-Address: 4 calls a day are served, the 5th is refused (spec 8)."""
    consent = _fresh_consent(ctx, seed)
    request = _details(ctx, consent, with_ip=False)
    for _ in range(DAILY_CALLS):
        send_expecting_success(scenario, ctx, request)
    send_and_judge(scenario, ctx, request)


def check_consent_age_limit(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """E8 without PSU-IP-Address on a consent more than 90 days old is refused (spec 8). The
    consent is aged through the reference server's control, or is the one the bank prepared
    (``[prepared] aged_consent_id``)."""
    if ctx.profile.reference_server:
        consent = _fresh_consent(ctx, seed)
        request = _details(ctx, consent, with_ip=False)
        age_consent(ctx, consent, CONSENT_AGE_DAYS + 1, "age the consent by 91 days")
    else:
        request = _details(ctx, prepared.aged_consent(ctx.data), with_ip=False)
    exchange = request.send(ctx)
    judge(exchange, scenario, ctx)


def check_sca_renewal_required(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A consent whose SCA is more than 180 days old is refused on AL, AT and E8 (spec 8). The
    consent is aged through the reference server's control, or is the one the bank prepared
    (``[prepared] renewal_due_consent_id``)."""
    reference = ctx.profile.reference_server
    consent = (
        _fresh_consent(ctx, seed)
        if reference
        else prepared.renewal_due_consent(ctx.data, scenario.operation)
    )
    if scenario.operation == "AL":
        request = account_list_request(ctx, consent)
    elif scenario.operation == "AT":
        request = consented_transactions_request(ctx, consent)
    else:
        request = _details(ctx, consent, with_ip=True)
    if reference:
        age_consent(ctx, consent, SCA_RENEWAL_DAYS + 1, "age the consent's SCA by 181 days")
    exchange = request.send(ctx)
    judge(exchange, scenario, ctx)


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
    request = consented_transactions_request(
        ctx, consent, fromDate=(today - timedelta(days=150)).isoformat()
    )
    exchange = send_and_judge(scenario, ctx, request)
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
    """An account with more than 200 transactions and a consent on it (shared per worker)."""
    return large_account_consent(ctx, PAGE_SIZE + 1)


#: The reading behind where AT's answer holds its transactions (spec 4.1: its shape is not shown).
AT_SHAPE_READING = (
    "the production transactions list (AT) answers with transactions.booked and "
    "transactions._links (NextGenPSD2); spec 4.1 says of it 'request and response shapes: not "
    "shown'"
)


def _at_transactions(exchange: Exchange) -> Mapping[str, Any] | None:
    """``transactions`` of an AT answer, or None (recorded as a should finding: the answer
    does not have the shape we read AT's as; spec 8's page size cannot be judged on it)."""
    document = check_json_body(exchange)
    transactions = document.get("transactions") if isinstance(document, Mapping) else None
    if isinstance(transactions, Mapping) and isinstance(transactions.get("booked"), list):
        return transactions
    record_should(
        ConformanceFailure(
            "the answer has no transactions.booked list",
            spec="spec 4.1",
            sent=exchange,
            expected="transactions.booked (the shape we read AT's answer as)",
        ),
        AT_SHAPE_READING,
    )
    return None


def check_default_page_size(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Without pagination parameters a page holds 200 transactions (spec 8)."""
    consent = _large_account(ctx, ctx.data.seed_for("large-account"))
    exchange = send_and_judge(scenario, ctx, consented_transactions_request(ctx, consent))
    transactions = _at_transactions(exchange)
    if transactions is None:
        return
    booked = transactions["booked"]
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
    first = send_and_judge(scenario, ctx, consented_transactions_request(ctx, consent))
    transactions = _at_transactions(first)
    if transactions is None:
        return
    links = transactions.get("_links") or {}
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
        headers=dict(consented_transactions_request(ctx, consent).headers),
    )
    expect_success(following, scenario, ctx)
    following_page = _at_transactions(following)
    if following_page is None:
        return
    rest = following_page["booked"]
    if len(rest) != 1:
        raise ConformanceFailure(
            f"the next page holds {len(rest)} transactions, expected the 1 remaining",
            spec="spec 8",
            sent=following,
            expected=f"the next link continues after the first {PAGE_SIZE}",
        )


def check_query_minimum_enforced(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """limit=0 is refused (spec 8: at least 1); limit=1 returns at most one transaction."""
    request = rule_request(scenario, ctx, seed)
    # the break the schema scenario of `limit` makes too: one cause when both are accepted
    with breaking(Breach("query", "limit", "minimum")):
        send_and_judge(scenario, ctx, request.with_query("limit", "0"))
    exchange = send_expecting_success(scenario, ctx, request.with_query("limit", "1"))
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
