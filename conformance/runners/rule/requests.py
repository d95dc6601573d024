"""Rule checks on request headers and parties: malformed headers, customer types, foreign debtor
transactions, sandbox dates, engagement account owners.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import OperationRequest
from conformance.checks import ConformanceFailure, NotApplicable, breaking, json_document
from conformance.generate import factories
from conformance.operations import sandbox
from conformance.problems import Breach, body_breach
from conformance.runners.rule.common import changed_body, rule_request, send_and_judge, set_at

if TYPE_CHECKING:
    from conformance.bankside.setup_data import Account
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario


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
    request = sandbox.account_transactions_create(ctx, first.id, body)
    send_and_judge(scenario, ctx, request)


def check_malformed_header_rejected(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A malformed PSU-ID (not a UUID) is a validation error (spec 7 rule 7)."""
    with breaking(Breach("header", "PSU-ID", "format")):
        send_and_judge(
            scenario, ctx, rule_request(scenario, ctx, seed).with_header("PSU-ID", "not-a-uuid")
        )


def check_invalid_customer_type_rejected(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A customerType other than PRIVATE or CORPORATE is a validation error (spec 7 rule 7)."""
    request = rule_request(scenario, ctx, seed)
    with breaking(body_breach(("customerType",), "enum")):
        send_and_judge(
            scenario,
            ctx,
            changed_body(request, lambda body: set_at(body, ("customerType",), "BUSINESS")),
        )


def check_sandbox_dates_rejected(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Booking or value date in the future, or booking after value: refused (spec 4.3 E5/E7)."""
    request = rule_request(scenario, ctx, seed)
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

    send_and_judge(scenario, ctx, changed_body(request, change))


def check_engagement_account_owner(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An engagement on an account the agreement's owner does not own is refused (spec 4.3 E6)."""
    shared = ctx.data.engagement()
    foreign: Account = ctx.data.account()
    body = factories.sandbox_engagement(seed, shared.member.customer_id, foreign.iban)
    request = sandbox.engagement_create(ctx, shared.agreement_id, body)
    send_and_judge(scenario, ctx, request)


def check_customers_list_accounts(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """E9 with ``withAccounts=true`` includes each customer's mock accounts (spec 4.3 E9): the
    customer of a new account lists its id."""
    account = ctx.data.new_account(seed)
    _customer_lists(
        scenario, ctx, "withAccounts", account.owner.customer_id, "accounts", account.id
    )


def check_customers_list_agreements(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """E9 with ``withAgreements=true`` includes each customer's related agreements (spec 4.3 E9):
    the corporation that owns an agreement lists it."""
    engagement = ctx.data.new_engagement(seed)
    owner = engagement.owner.customer_id
    _customer_lists(scenario, ctx, "withAgreements", owner, "agreements", engagement.agreement_id)


def _customer_lists(
    scenario: Scenario, ctx: RunContext, parameter: str, customer_id: str, field: str, wanted: str
) -> None:
    """E9 with ``parameter=true``: the customer's entry lists ``wanted`` in ``field`` (an id, or
    an object with that ``id``)."""
    request = OperationRequest.build(ctx, "E9", query={parameter: "true"})
    exchange = send_and_judge(scenario, ctx, request)
    document = json_document(exchange)
    customers = document if isinstance(document, list) else []
    entry = next(
        (c for c in customers if isinstance(c, dict) and c.get("customerId") == customer_id), None
    )
    listed = entry.get(field) if entry is not None else None
    ids = [item.get("id") if isinstance(item, dict) else item for item in listed or ()]
    if wanted not in ids:
        raise ConformanceFailure(
            f"E9 with {parameter}=true does not list {wanted} in the {field} of its customer",
            spec=scenario.spec,
            sent=exchange,
            expected=f"{parameter}=true includes the customer's {field}, so the customer it "
            f"was created for lists {wanted}",
        )


def check_transaction_ids_stable(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Booked transactions keep their ids (spec 9, 1.18.0): every id of a first listing of the
    account (E3) is in a second one. A transaction booked in between (a payment settled by a batch
    run, spec 3) may add an id; no id may change or go."""
    account = ctx.data.account()
    request = sandbox.account_transactions_list(ctx, account.id)
    first = send_and_judge(scenario, ctx, request)
    second = send_and_judge(scenario, ctx, request)
    before, after = (_transaction_ids(exchange) for exchange in (first, second))
    if not before:
        raise NotApplicable("the account lists no transaction whose id could be compared")
    gone = [tid for tid in before if tid not in set(after)]
    if gone:
        raise ConformanceFailure(
            "two listings of the same account name its booked transactions with other ids",
            spec=scenario.spec,
            sent=second,
            related=(first,),
            expected=f"every id of the first listing in the second; missing: {', '.join(gone[:3])}",
        )


def _transaction_ids(exchange: Exchange) -> list[str]:
    document = json_document(exchange)
    items = document if isinstance(document, list) else []
    return sorted(str(item.get("id")) for item in items if isinstance(item, dict))
