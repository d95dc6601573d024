"""Sandbox round trips (spec 2.9, spec 4.3): what a creation sends is what the read returns
(customers, accounts, card accounts, agreements, engagements, balances), the data fill, and the
platform's sandbox reset (SI).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import OperationRequest
from conformance.checks import (
    NotApplicable,
    check_equal,
)
from conformance.generate import factories
from conformance.operations import sandbox
from conformance.profile.templates import apply_template
from conformance.runners.flow.steps import fail, response_document, send_step

if TYPE_CHECKING:
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario


def same_fields(
    exchange: Exchange,
    sent: Mapping[str, Any],
    read: Mapping[str, Any],
    fields: Iterable[str],
    what: str,
    spec: str,
    *related: Exchange,
) -> None:
    """Every one of ``fields`` reads back as it was sent (all differences listed)."""
    differences = {
        name: (sent.get(name), read.get(name))
        for name in fields
        if name in sent and sent.get(name) != read.get(name)
    }
    if differences:
        listed = "; ".join(
            f"{name}: sent {a!r}, read {b!r}" for name, (a, b) in differences.items()
        )
        raise fail(
            f"{what} does not read back as created: {listed}",
            spec,
            exchange,
            f"{what} created through the sandbox reads back with the same data",
            *related,
        )


def _templated(ctx: RunContext, op_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """A creation's body with the profile's set-up template merged in (``[setup] templates``):
    what the bank needs beyond the contract's shape, so that a round trip sends what the bank
    takes (and reads back what it sent)."""
    template = ctx.profile.setup_templates.get(op_id)
    return body if template is None else dict(apply_template(template, body))


def roundtrip_customer(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A customer created with SCU is listed by E9 with the same data."""
    body = _templated(ctx, "SCU", factories.sandbox_customer_create(seed, "CORPORATE"))
    created = send_step(scenario, ctx, OperationRequest.build(ctx, "SCU", body=body))
    customer_id = response_document(created).get("customerId")
    listed = send_step(scenario, ctx, OperationRequest.build(ctx, "E9"))
    found = next(
        (item for item in response_document(listed) if item.get("customerId") == customer_id), None
    )
    if found is None:
        raise fail(
            f"E9 does not list the customer {customer_id} just created",
            scenario.spec,
            listed,
            "E9 lists the customers created with POST /v1/sandbox/customers",
            created,
        )
    expected = {**body, "customerNumber": response_document(created).get("customerNumber")}
    same_fields(
        listed,
        expected,
        found,
        ("customerType", "customerName", "customerNumber"),
        "the customer",
        scenario.spec,
        created,
    )


_ACCOUNT_FIELDS = (
    "customerNumber",
    "accountName",
    "bban",
    "iban",
    "currency",
    "product",
    "cashAccountType",
    "creditLine",
)


def roundtrip_account(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An account created with SA reads back from E12 with the same data."""
    owner = ctx.data.own_customer(seed)
    body = _templated(
        ctx, "SA", factories.sandbox_account_create(seed, owner.customer_number or "")
    )
    created = send_step(scenario, ctx, OperationRequest.build(ctx, "SA", body=body))
    account_id = str(response_document(created).get("id"))
    read = send_step(scenario, ctx, sandbox.account_read(ctx, account_id))
    document = response_document(read)
    account = document[0] if isinstance(document, list) and document else document
    same_fields(read, body, account, _ACCOUNT_FIELDS, "the account", scenario.spec, created)
    _same_balances(read, body.get("balances") or [], account.get("balances") or [], scenario)


def _same_balances(
    exchange: Exchange, sent: Sequence[Any], read: Sequence[Any], scenario: Scenario
) -> None:
    by_type = {item.get("balanceType"): item for item in read if isinstance(item, Mapping)}
    for item in sent:
        check_equal(
            exchange,
            f"the {item['balanceType']} balance",
            item,
            by_type.get(item["balanceType"]),
            spec=scenario.spec,
        )


def roundtrip_card_account(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A card account created with SCA reads back from E10 with the same data."""
    owner = ctx.data.own_customer(seed)
    body = _templated(
        ctx, "SCA", factories.sandbox_card_account_create(seed, owner.customer_number or "")
    )
    created = send_step(scenario, ctx, OperationRequest.build(ctx, "SCA", body=body))
    resource = response_document(created).get("cardAccount") or {}
    read = send_step(scenario, ctx, sandbox.card_account_read(ctx, str(resource.get("resourceId"))))
    fields = ("maskedPan", "currency", "creditLimit", "name", "product", "accountNumber", "expiry")
    read_back = response_document(read).get("cardAccount") or {}
    same_fields(read, body, read_back, fields, "the card account", scenario.spec, created)


def roundtrip_agreement(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A private or corporate agreement created with SAG reads back from E14 (spec 4.3 E14).
    The owner, sent as the corporation's customerId (or its customerNumber, ``[setup]
    agreement_owner``), may read back as either: spec 2.9 says only that an agreement has an
    optional ``owner``, not in which of the customer's two identifiers it is shown."""
    corporate = scenario.param("agreement") == "corporate"
    owner = ctx.data.own_customer(seed, "CORPORATE") if corporate else None
    body = _templated(
        ctx,
        "SAG",
        factories.sandbox_agreement_create(
            seed,
            None
            if owner is None
            else ctx.profile.owner_reference(owner.customer_id, owner.customer_number),
        ),
    )
    created = send_step(scenario, ctx, OperationRequest.build(ctx, "SAG", body=body))
    agreement_id = str(response_document(created).get("id"))
    read = send_step(scenario, ctx, sandbox.agreement_read(ctx, agreement_id))
    document = response_document(read)
    sent = {**body, "id": agreement_id}
    if owner is not None and document.get("owner") in (owner.customer_id, owner.customer_number):
        sent["owner"] = document["owner"]  # the same customer, by either identifier
    same_fields(
        read, sent, document, ("id", "name", "owner"), "the agreement", scenario.spec, created
    )


def roundtrip_engagement(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An engagement created with E6, on an agreement made for the scenario, reads back from
    E13 with the same data."""
    shared = ctx.data.own_agreement(seed)
    body = factories.sandbox_engagement(seed, shared.member.customer_id, shared.account.iban)
    body = _templated(ctx, "E6", body)
    created = send_step(scenario, ctx, sandbox.engagement_create(ctx, shared.agreement_id, body))
    engagement_id = response_document(created).get("id")
    if engagement_id is None:
        raise NotApplicable("E6 answers without the engagement id that E13 needs")
    read = send_step(
        scenario, ctx, sandbox.engagement_read(ctx, shared.agreement_id, str(engagement_id))
    )
    document = response_document(read)
    fields = ("customer", "roles", "registerLimit", "approvalLimit")
    same_fields(read, body, document, fields, "the engagement", scenario.spec, created)
    check_equal(
        read,
        "the engagement's account iban",
        body["account"]["iban"],
        (document.get("account") or {}).get("iban"),
        spec=scenario.spec,
    )


def roundtrip_balances(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Balances changed with E15 read back from E12."""
    account = ctx.data.own_account(seed)
    body = factories.balance_update(seed, account.currency)
    send_step(scenario, ctx, sandbox.balances_update(ctx, account.id, body))
    read = send_step(scenario, ctx, sandbox.account_read(ctx, account.id))
    document = response_document(read)
    shown = document[0] if isinstance(document, list) and document else document
    _same_balances(read, body, (shown or {}).get("balances") or [], scenario)


def data_fill(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The ids the data fill returns can be read: customers (E9), accounts (E12), cards (E10)."""
    filled = response_document(send_step(scenario, ctx, OperationRequest.build(ctx, "SDF")))
    listed = send_step(scenario, ctx, OperationRequest.build(ctx, "E9"))
    known = {item.get("customerId") for item in response_document(listed)}
    missing = [customer for customer in filled.get("customers") or [] if customer not in known]
    if missing:
        raise fail(
            f"E9 does not list the filled customers {missing}",
            scenario.spec,
            listed,
            "the customers the data fill created are listed",
        )
    for account_id in filled.get("accounts") or []:
        send_step(scenario, ctx, sandbox.account_read(ctx, str(account_id)))
    for card_id in filled.get("cardAccounts") or []:
        send_step(scenario, ctx, sandbox.card_account_read(ctx, str(card_id)))


def sandbox_reset(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The sandbox reset (SI) answers the default customers it created, which E9 lists; a
    transaction added to one of their accounts (E7) is gone after the next reset (E3)."""
    reset = send_step(scenario, ctx, OperationRequest.build(ctx, "SI"))
    customers = [item for item in response_document(reset) or [] if isinstance(item, Mapping)]
    if not customers:
        raise fail(
            "the sandbox reset answered no default customer",
            scenario.spec,
            reset,
            "the reset creates default customers and answers them",
        )
    listed = send_step(scenario, ctx, OperationRequest.build(ctx, "E9"))
    known = {item.get("customerId") for item in response_document(listed)}
    missing = [item.get("customerId") for item in customers if item.get("customerId") not in known]
    if missing:
        raise fail(
            f"E9 does not list the default customers {missing}",
            scenario.spec,
            listed,
            "the customers the reset created are listed",
            reset,
        )
    account_id = next(
        (str(item["accounts"][0]) for item in customers if item.get("accounts")), None
    )
    if account_id is None:
        raise NotApplicable("the default customers the reset created hold no account")
    read = send_step(scenario, ctx, sandbox.account_read(ctx, account_id))
    document = response_document(read)
    account = document[0] if isinstance(document, list) and document else document
    reference = {name: account.get(name) for name in ("iban", "bban", "currency")}
    items = factories.sandbox_account_transactions(seed, reference, 1, today=ctx.data.today())
    text = items[0]["remittanceInformationUnstructured"]
    added = send_step(scenario, ctx, sandbox.account_transactions_create(ctx, account_id, items))
    again = send_step(scenario, ctx, OperationRequest.build(ctx, "SI"))
    after = send_step(scenario, ctx, sandbox.account_transactions_list(ctx, account_id))
    left = [
        item
        for item in response_document(after) or []
        if isinstance(item, Mapping) and item.get("remittanceInformationUnstructured") == text
    ]
    if left:
        raise fail(
            f"after a second reset the default account {account_id} still lists the transaction "
            "added to it since the first",
            scenario.spec,
            after,
            "a reset puts the default customers back as new: what was added to them is gone",
            added,
            again,
        )
