"""Transaction flows (spec 4.3 E3, E4, E5, E7, E11): round trips, date filters, paging, booking
status, and sandbox payments appearing in the account's transactions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from conformance.bankside.setup_data.base import MAX_BATCH_RUNS
from conformance.checks import (
    NotApplicable,
    check_equal,
)
from conformance.contract.facts import REJECTED
from conformance.findings import at_should
from conformance.generate import factories
from conformance.operations import sandbox
from conformance.runners.flow.sandbox import same_fields
from conformance.runners.flow.steps import (
    fail,
    payment_status,
    response_document,
    run_batch,
    send_step,
)

if TYPE_CHECKING:
    from conformance.bankside.setup_data import Account, CardAccount
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario


def dated_account_transactions(
    ctx: RunContext, account: Account, seed: int, dates: Sequence[int] = (30, 20, 10)
) -> list[dict[str, Any]]:
    """E7 items on ``account`` booked (and valued) the given numbers of days ago."""
    today = ctx.data.today()
    items = factories.sandbox_account_transactions(
        seed,
        {"iban": account.iban, "bban": account.bban, "currency": account.currency},
        len(dates),
        today=today,
    )
    for item, days in zip(items, dates, strict=True):
        item["bookingDate"] = item["valueDate"] = (today - timedelta(days=days)).isoformat()
    return items


def create_account_transactions(
    scenario: Scenario, ctx: RunContext, account: Account, items: list[Any]
) -> Exchange:
    return send_step(scenario, ctx, sandbox.account_transactions_create(ctx, account.id, items))


def get_account_transactions(
    scenario: Scenario, ctx: RunContext, account: Account, **query: Any
) -> Exchange:
    return send_step(scenario, ctx, sandbox.account_transactions_list(ctx, account.id, **query))


def _remittances(document: Any) -> list[str]:
    items = document if isinstance(document, list) else []
    return [str(item.get("remittanceInformationUnstructured")) for item in items]


def roundtrip_account_transaction(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A transaction created with E7 reads back from E11 with the same data."""
    account = ctx.data.new_account(seed)
    items = dated_account_transactions(ctx, account, seed, (15,))
    created = create_account_transactions(scenario, ctx, account, items)
    listed = get_account_transactions(scenario, ctx, account)
    found = [item for item in response_document(listed) if isinstance(item, Mapping)]
    if not found:
        raise fail(
            "E3 lists no transaction after E7 created one",
            scenario.spec,
            listed,
            "E3 lists the transactions created with E7",
            created,
        )
    read = send_step(
        scenario, ctx, sandbox.account_transaction_read(ctx, account.id, str(found[0]["id"]))
    )
    fields = [name for name in items[0] if name != "creditorId"]
    same_fields(
        read, items[0], response_document(read), fields, "the transaction", scenario.spec, created
    )


def list_account_transactions(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Every transaction created with E7 is listed by E3."""
    account = ctx.data.new_account(seed)
    items = dated_account_transactions(ctx, account, seed)
    created = create_account_transactions(scenario, ctx, account, items)
    listed = get_account_transactions(scenario, ctx, account)
    missing = sorted(
        {item["remittanceInformationUnstructured"] for item in items}
        - set(_remittances(response_document(listed)))
    )
    if missing:
        raise fail(
            f"E3 does not list {len(missing)} of the {len(items)} transactions created with E7",
            scenario.spec,
            listed,
            "E3 lists the account's transactions, including those created with E7",
            created,
        )


def filter_dates(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """fromDate and toDate restrict the list to that range of booking dates (E3, E4)."""
    today = ctx.data.today()
    window = {
        "fromDate": (today - timedelta(days=25)).isoformat(),
        "toDate": (today - timedelta(days=15)).isoformat(),
    }
    if scenario.operation == "E4":
        card = _card_with_dates(scenario, ctx, seed)
        listed = get_card_transactions(scenario, ctx, card, bookingStatus="booked", **window)
        dates = [item.get("bookingDate") for item in _booked(listed)]
    else:
        account = ctx.data.new_account(seed)
        create_account_transactions(
            scenario, ctx, account, dated_account_transactions(ctx, account, seed)
        )
        listed = get_account_transactions(scenario, ctx, account, **window)
        dates = [item.get("bookingDate") for item in response_document(listed)]
    expected = [(today - timedelta(days=20)).isoformat()]
    check_equal(
        listed,
        f"booking dates listed between {window['fromDate']} and {window['toDate']}",
        expected,
        sorted(str(day) for day in dates),
        spec=scenario.spec,
    )


def filter_pagination(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """offset skips and limit caps the list: three transactions read as 2 + 1 (E3, E4)."""
    if scenario.operation == "E4":
        card = _card_with_dates(scenario, ctx, seed)

        def page(**query: Any) -> tuple[Exchange, list[Any]]:
            exchange = get_card_transactions(scenario, ctx, card, bookingStatus="booked", **query)
            return exchange, [item.get("cardTransactionId") for item in _booked(exchange)]

    else:
        account = ctx.data.new_account(seed)
        create_account_transactions(
            scenario, ctx, account, dated_account_transactions(ctx, account, seed)
        )

        def page(**query: Any) -> tuple[Exchange, list[Any]]:
            exchange = get_account_transactions(scenario, ctx, account, **query)
            return exchange, [item.get("id") for item in response_document(exchange)]

    whole, everything = page()
    first, head = page(offset=0, limit=2)
    second, tail = page(offset=2, limit=2)
    check_equal(first, "the number listed with limit=2", 2, len(head), spec=scenario.spec)
    check_equal(second, "the number listed with offset=2 of 3", 1, len(tail), spec=scenario.spec)
    check_equal(
        second,
        "the two pages together",
        sorted(map(str, everything)),
        sorted(map(str, head + tail)),
        spec=scenario.spec,
        related=(whole, first),
    )


def _card_with_dates(scenario: Scenario, ctx: RunContext, seed: int) -> CardAccount:
    card = ctx.data.new_card_account(seed)
    items = ctx.data.card_transactions_body(card, seed, booked=3)
    today = ctx.data.today()
    for item, days in zip(items, (30, 20, 10), strict=True):
        item["bookingDate"] = item["transactionDate"] = (today - timedelta(days=days)).isoformat()
    create_card_transactions(scenario, ctx, card, items)
    return card


def create_card_transactions(
    scenario: Scenario, ctx: RunContext, card: CardAccount, items: list[Any]
) -> Exchange:
    return send_step(scenario, ctx, sandbox.card_transactions_create(ctx, card.id, items))


def get_card_transactions(
    scenario: Scenario, ctx: RunContext, card: CardAccount, **query: Any
) -> Exchange:
    return send_step(scenario, ctx, sandbox.card_transactions_list(ctx, card.id, **query))


def _booked(exchange: Exchange) -> list[Mapping[str, Any]]:
    transactions = response_document(exchange).get("cardTransactions") or {}
    return [item for item in transactions.get("booked") or [] if isinstance(item, Mapping)]


def _pending(exchange: Exchange) -> list[str]:
    transactions = response_document(exchange).get("cardTransactions") or {}
    return [str(item) for item in transactions.get("pending") or []]


def _card_with_both(
    scenario: Scenario, ctx: RunContext, seed: int
) -> tuple[CardAccount, list[dict[str, Any]]]:
    card = ctx.data.new_card_account(seed)
    items = ctx.data.card_transactions_body(card, seed, booked=2, pending=1)
    create_card_transactions(scenario, ctx, card, items)
    return card, items


def list_card_transactions(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Card transactions created with E5, and only those, are listed by E4."""
    card, items = _card_with_both(scenario, ctx, seed)
    listed = get_card_transactions(scenario, ctx, card, bookingStatus="both")
    created = sorted(item["cardTransactionId"] for item in items)
    booked = [str(item.get("cardTransactionId")) for item in _booked(listed)]
    pending = list(_pending(listed))
    # must (spec 4.3 E4: "only includes transactions made through E5"): every created item is
    # listed once, booked by its id or among the pending entries, and nothing else
    check_equal(
        listed,
        "how many card transactions are listed (booked and pending)",
        len(created),
        len(booked) + len(pending),
        spec=scenario.spec,
    )
    check_equal(
        listed,
        "the booked card transactions that E5 did not create",
        [],
        sorted(set(booked) - set(created)),
        spec=scenario.spec,
    )
    at_should(
        lambda: check_equal(
            listed,
            "the card transactions listed (booked and pending)",
            created,
            sorted({*booked, *pending}),
            spec=scenario.spec,
        ),
        reading="a pending entry (spec 2.9: 'pending string[]') is the cardTransactionId of a "
        "created item that is not invoiced",
    )


def filter_booking_status(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """bookingStatus=booked, pending or both lists the matching part of E5's transactions."""
    wanted = str(scenario.param("booking_status", "both"))
    card, items = _card_with_both(scenario, ctx, seed)
    listed = get_card_transactions(scenario, ctx, card, bookingStatus=wanted)
    booked_ids = sorted(i["cardTransactionId"] for i in items if i["invoiced"] == "true")
    pending_ids = sorted(i["cardTransactionId"] for i in items if i["invoiced"] != "true")
    expected_booked = booked_ids if wanted in ("booked", "both") else []
    expected_pending = pending_ids if wanted in ("pending", "both") else []
    check_equal(
        listed,
        f"booked transactions listed with bookingStatus={wanted}",
        expected_booked,
        sorted(str(item.get("cardTransactionId")) for item in _booked(listed)),
        spec=scenario.spec,
    )
    check_equal(
        listed,
        f"pending transactions listed with bookingStatus={wanted}",
        expected_pending,
        sorted(_pending(listed)),
        spec=scenario.spec,
    )


def payment_in_transactions(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A sandbox payment from the account, once booked by the batch, appears in E3 (spec 4.3
    E3: "including those from sandbox payments")."""
    account = ctx.data.new_account(seed)
    body = ctx.data.payment_body("E16", seed, debtor=account)
    payment = ctx.data.payment(seed, "E16", body=body, authorise=True)
    status = ""
    for _ in range(MAX_BATCH_RUNS):
        run_batch(ctx)
        status, _ = payment_status(scenario, ctx, payment)
        if status == "ACSC" or status in REJECTED:
            break
    if status != "ACSC":
        raise NotApplicable(f"the payment did not get booked by the batch runs (it is {status})")
    listed = get_account_transactions(scenario, ctx, account)
    creditor = body["creditorName"]
    if not any(
        isinstance(item, Mapping) and item.get("creditorName") == creditor
        for item in response_document(listed)
    ):
        raise fail(
            f"E3 does not list the booked sandbox payment to {creditor}",
            scenario.spec,
            listed,
            "E3 lists the transactions of sandbox payments from the account",
        )
