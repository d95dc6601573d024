"""Paging to the end: a list read page by page gives every transaction once, and each page read
again is the same page (spec 4.3 E3's ``offset`` and ``limit``; spec 8's page size and the
"links in pagination answers" of the production transactions list, AT).

- E3 answers an array (spec 4.3 E3), so it has no links: the walk moves ``offset`` on by
  ``limit`` until a page is short, over more than one page of data it created with E7.
- AT carries ``_links`` (NextGenPSD2 shape, assumed): the walk starts without pagination
  parameters and follows ``_links.next`` until there is none, reading each page's ``self``
  again. With the sandbox the account holds more than 200 transactions (spec 8's page size:
  two pages); without it the profile's consented account, paged by a ``limit`` of half its
  transactions where one page holds them all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from conformance.checks import NotApplicable, check_equal
from conformance.operations.accounts import (
    consented_transactions_request,
    large_account_consent,
)
from conformance.runners.flow.steps import fail, response_document, send_step
from conformance.runners.flow.transactions import (
    create_account_transactions,
    dated_account_transactions,
    get_account_transactions,
)

if TYPE_CHECKING:
    from conformance.bankside.setup_data import Consent
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["page_account_transactions", "page_consented_transactions"]

#: E3: transactions created and the page size they are walked with (three pages: 3, 3, 1).
_E3_TRANSACTIONS = 7
_E3_LIMIT = 3
#: Spec 8: "default page size when no pagination parameters are sent | 200".
_PAGE_SIZE = 200
#: A walk stops after this many pages (a ``next`` that never ends is a finding, not a hang).
_MAX_PAGES = 50


def _duplicates(ids: Sequence[str]) -> list[str]:
    return sorted(value for value, count in Counter(ids).items() if count > 1)


def _judge_walk(
    scenario: Scenario,
    walked: Sequence[str],
    total: int,
    last: Exchange,
    what: str,
    related: Sequence[Exchange],
) -> None:
    """Every transaction once: as many as the list holds, none twice."""
    twice = _duplicates(walked)
    if twice:
        raise fail(
            f"{what} lists {len(twice)} transaction(s) twice: {', '.join(twice[:5])}",
            scenario.spec,
            last,
            "a list walked page by page gives each transaction once",
            *related,
        )
    if len(walked) != total:
        raise fail(
            f"{what} gives {len(walked)} transactions, the list holds {total}",
            scenario.spec,
            last,
            "a list walked page by page to its end gives every transaction it holds",
            *related,
        )


def page_account_transactions(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """E3 walked with ``offset`` and ``limit`` over three pages of E7's transactions: every
    transaction once, and each page the same when read again."""
    account = ctx.data.new_account(seed)
    days = tuple(range(5, 5 + 4 * _E3_TRANSACTIONS, 4))
    items = dated_account_transactions(ctx, account, seed, days)
    created = create_account_transactions(scenario, ctx, account, items)
    whole = get_account_transactions(scenario, ctx, account)
    total = len(response_document(whole))
    walked: list[str] = []
    pages: list[Exchange] = []
    for number in range(_MAX_PAGES):
        query = {"offset": number * _E3_LIMIT, "limit": _E3_LIMIT}
        page = get_account_transactions(scenario, ctx, account, **query)
        ids = [str(item.get("id")) for item in response_document(page) if isinstance(item, dict)]
        again = get_account_transactions(scenario, ctx, account, **query)
        check_equal(
            again,
            f"page {number + 1} (offset {query['offset']}, limit {_E3_LIMIT}) read again",
            ids,
            [str(item.get("id")) for item in response_document(again) if isinstance(item, dict)],
            spec=scenario.spec,
            related=(page,),
        )
        walked += ids
        pages.append(page)
        if len(ids) < _E3_LIMIT:
            break
    if total < _E3_TRANSACTIONS:
        raise fail(
            f"E3 lists {total} transactions after E7 created {_E3_TRANSACTIONS}",
            scenario.spec,
            whole,
            "E3 lists the account's transactions, including those created with E7",
            created,
        )
    _judge_walk(
        scenario, walked, total, pages[-1], f"E3 walked by {_E3_LIMIT} to its end", (whole,)
    )


def _booked(exchange: Exchange) -> tuple[list[str], Mapping[str, Any]]:
    """The booked transactionIds of an AT page and its ``_links``."""
    document = response_document(exchange)
    transactions = document.get("transactions") if isinstance(document, Mapping) else None
    if not isinstance(transactions, Mapping) or not isinstance(transactions.get("booked"), list):
        raise fail(
            "the answer has no transactions.booked list to page through",
            "spec 4.1",
            exchange,
            "transactions.booked and transactions._links (NextGenPSD2; AT's shape is not shown)",
        )
    links = transactions.get("_links")
    ids = [str(item.get("transactionId")) for item in transactions["booked"] if item]
    return ids, links if isinstance(links, Mapping) else {}


def _href(links: Mapping[str, Any], name: str) -> str | None:
    link = links.get(name)
    href = link.get("href") if isinstance(link, Mapping) else link
    return str(href) if isinstance(href, str) and href else None


def _consent(ctx: RunContext) -> tuple[Consent, int | None]:
    """The consented account to walk, and how many booked transactions it is known to hold
    (None: read from the list itself)."""
    if ctx.profile.sandbox and ctx.unsupported_reason("E7") is None:
        return large_account_consent(ctx, _PAGE_SIZE + 1), _PAGE_SIZE + 1
    consent = ctx.data.consent()
    if consent.account_id is None:
        raise NotApplicable("the consent gives access to no account (AL) to page through")
    return consent, None


def page_consented_transactions(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """AT from its first page along ``_links.next`` to the last: every booked transaction once,
    as many as the account holds, and each page's ``self`` the same page again."""
    consent, known = _consent(ctx)
    first = send_step(scenario, ctx, consented_transactions_request(ctx, consent))
    ids, links = _booked(first)
    if _href(links, "next") is None:
        if known is not None and known > len(ids):
            raise fail(
                f"the first page holds {len(ids)} of the account's {known} transactions and has "
                "no _links.next",
                scenario.spec,
                first,
                "a page that does not hold the whole list links to the next one",
            )
        if len(ids) < 2:
            raise NotApplicable(
                f"the consented account holds {len(ids)} booked transaction(s): not enough for "
                "more than one page"
            )
        known = len(ids)
        limit = max(1, len(ids) // 2)
        first = send_step(scenario, ctx, consented_transactions_request(ctx, consent, limit=limit))
        ids, links = _booked(first)
        if _href(links, "next") is None:
            raise fail(
                f"a page of limit={limit} holds {len(ids)} of {known} transactions and has no "
                "_links.next",
                scenario.spec,
                first,
                "a page that does not hold the whole list links to the next one",
            )
    headers = dict(consented_transactions_request(ctx, consent).headers)
    walked, pages, page = list(ids), [first], first
    for _ in range(_MAX_PAGES):
        self_href = _href(links, "self")
        if self_href is not None:
            again = ctx.client.request("GET", self_href, headers=headers)
            check_equal(
                again,
                f"page {len(pages)} read again at its _links.self",
                ids,
                _booked(again)[0],
                spec=scenario.spec,
                related=(page,),
            )
        following = _href(links, "next")
        if following is None:
            break
        page = ctx.client.request("GET", following, headers=headers)
        check_equal(page, "the status of the next page", 200, page.status, spec=scenario.spec)
        ids, links = _booked(page)
        walked += ids
        pages.append(page)
    else:
        raise fail(
            f"_links.next still leads on after {_MAX_PAGES} pages",
            scenario.spec,
            page,
            "the last page of a list has no _links.next",
        )
    total = known if known is not None else len(walked)
    what = f"AT followed along _links.next ({len(pages)} pages)"
    _judge_walk(scenario, walked, total, page, what, pages[:1])
