"""Versioning scenarios (spec 9): x-accept-fix values, deprecated members, the /v1 prefix.

``params["effect"]`` names what an ``x-accept-fix`` value must change (spec 9 and the limits of
spec 8), checked on the answer to the base request sent with that value:

- ``amounts-are-strings`` (amount-as-string): amounts in the transaction details are JSON strings
  with exactly the currency's minor units (spec 2.1, spec 4.2);
- ``account-name-up-to-70`` (longer-name): an account name of 70 characters reads back whole;
- ``cash-account-type-is-iso`` (cash-account-type-iso): cashAccountType is an ISO 20022 code;
- ``amounts-switched`` (cardaccount-switch-originalamount-and-transactionamount): a card
  transaction's originalAmount and transactionAmount trade places compared with the same read
  without the value;
- ``accepted`` / ``ignored``: the request is answered with its documented success.

``params["member"]`` (a deprecated request member, spec 9 1.16.2) and ``params["strip_prefix"]``
(the request without ``/v1`` is not the interface: 404) are the other two cases.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import OperationRequest, apply_mutation
from conformance.checks import (
    ConformanceFailure,
    NotApplicable,
    check_equal,
    check_json_body,
    check_status,
)
from conformance.operations import base_request
from conformance.runners.judging import judge
from conformance.scenario import scenario_seed

if TYPE_CHECKING:
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["EFFECTS", "run"]

ACCEPT_FIX = "x-accept-fix"
#: An account name of exactly 70 characters (spec 8: "extended to 70 characters").
LONG_NAME = ("Driftskonto for Nordmann Consulting AS avdeling Trondheim og omegn nr 7" * 2)[:70]
_DECIMAL = re.compile(r"^-?[0-9]+(?:\.([0-9]+))?$")


def run(scenario: Scenario, ctx: RunContext) -> None:
    seed = scenario_seed(ctx.seed, scenario.id)
    prefix = scenario.param("strip_prefix")
    if prefix:
        _without_prefix(scenario, ctx, seed, str(prefix))
        return
    effect = str(scenario.param("effect", "accepted"))
    try:
        check = EFFECTS[effect]
    except KeyError:
        raise ValueError(
            f"version scenario {scenario.id} has an unknown effect {effect!r}"
        ) from None
    check(scenario, ctx, seed)


def _with_fix(scenario: Scenario, request: OperationRequest) -> OperationRequest:
    if scenario.mutation is not None:
        return apply_mutation(request, scenario.mutation)
    return request


def _accepted(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The value is accepted (or, unknown, ignored): the documented success."""
    request = base_request(ctx, scenario.operation, scenario.variant, seed)
    judge(_with_fix(scenario, request).send(ctx), scenario, ctx)


def _amounts_are_strings(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Every ``amount`` of the body is a string with the currency's minor units (spec 2.1)."""
    request = base_request(ctx, scenario.operation, scenario.variant, seed)
    exchange = _with_fix(scenario, request).send(ctx)
    judge(exchange, scenario, ctx)
    document = check_json_body(exchange, spec=scenario.spec)
    wrong = [
        f"{path}: {amount!r} ({currency})"
        for path, amount, currency in _amounts(document, "$")
        if not _well_formed(amount, currency, ctx.contract.minor_units)
    ]
    if wrong:
        raise ConformanceFailure(
            "with x-accept-fix amount-as-string, amounts are not strings with the currency's "
            "minor units: " + "; ".join(wrong[:5]),
            spec="spec 9, spec 2.1",
            sent=exchange,
            expected="amount-as-string serialises every amount as a string with exactly as "
            'many decimals as the currency\'s minor units (NOK 100 is "100.00")',
        )


def _amounts(node: Any, path: str) -> list[tuple[str, Any, str]]:
    found: list[tuple[str, Any, str]] = []
    if isinstance(node, Mapping):
        if "amount" in node and isinstance(node.get("currency"), str):
            found.append((f"{path}.amount", node["amount"], node["currency"]))
        for key, value in node.items():
            found += _amounts(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _amounts(value, f"{path}[{index}]")
    return found


def _well_formed(amount: Any, currency: str, minor_units: Mapping[str, int]) -> bool:
    if not isinstance(amount, str):
        return False
    match = _DECIMAL.match(amount)
    digits = minor_units.get(currency)
    return match is not None and (digits is None or len(match.group(1) or "") == digits)


def _account_name(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An account created with a 70-character name (SA, with the fix) reads back whole (E12)."""
    value = str(scenario.param("value", "longer-name"))
    account = ctx.data.new_account(seed, account_name=LONG_NAME, headers={ACCEPT_FIX: value})
    request = OperationRequest.build(
        ctx, scenario.operation, path_values={"mockAccountId": account.id}
    )
    exchange = _with_fix(scenario, request).send(ctx)
    judge(exchange, scenario, ctx)
    check_equal(
        exchange,
        "accountName read back with x-accept-fix longer-name",
        LONG_NAME,
        _first(check_json_body(exchange, spec=scenario.spec)).get("accountName"),
        spec="spec 8, spec 9",
    )


def _cash_account_type(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """cashAccountType is one of the ISO 20022 codes (``common.json`` CashAccountType)."""
    request = base_request(ctx, scenario.operation, scenario.variant, seed)
    exchange = _with_fix(scenario, request).send(ctx)
    judge(exchange, scenario, ctx)
    value = _first(check_json_body(exchange, spec=scenario.spec)).get("cashAccountType")
    schema = ctx.contract.lookup(
        "https://psd2-conformance.invalid/schemas/types/common.json#/$defs/CashAccountType"
    )
    if not ctx.contract.checker(schema)(value):
        raise ConformanceFailure(
            f"with x-accept-fix cash-account-type-iso, cashAccountType is {value!r}",
            spec="spec 9",
            sent=exchange,
            expected="cash-account-type-iso makes cashAccountType an ISO 20022 code "
            "(CACC, SVGS, ...)",
        )


def _first(document: Any) -> Mapping[str, Any]:
    """The account of an E12 answer (an array of one, spec 2.9) or the object itself."""
    if isinstance(document, list) and document and isinstance(document[0], Mapping):
        return document[0]
    return document if isinstance(document, Mapping) else {}


def _amounts_switched(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A card transaction whose original and transaction amounts differ, read without and with
    the value: the two amounts trade places (spec 9, 1.6.3)."""
    card = ctx.data.new_card_account(seed)
    items = ctx.data.card_transactions_body(card, seed, booked=1)
    item = items[0]
    item["originalAmount"] = {"currency": "EUR", "amount": 37}
    item["currencyExchange"] = {
        "sourceCurrency": "EUR",
        "targetCurrency": card.currency,
        "unitCurrency": "EUR",
        "exchangeRate": "11.5",
        "quotationDate": item["transactionDate"],
    }
    ctx.data.create(
        "E5",
        "creating a card transaction in a foreign currency",
        path_values={"mockCardAccountId": card.id},
        body=items,
    )
    request = OperationRequest.build(
        ctx,
        scenario.operation,
        path_values={"mockCardAccountId": card.id},
        query={"bookingStatus": "booked"},
    )
    plain = request.without_header(ACCEPT_FIX).send(ctx)
    check_status(plain, (200,), spec=scenario.spec)
    switched = _with_fix(scenario, request).send(ctx)
    judge(switched, scenario, ctx)
    before = _booked(check_json_body(plain, spec=scenario.spec))
    after = _booked(check_json_body(switched, spec=scenario.spec))
    check_equal(
        switched,
        "transactionAmount with the fix (the originalAmount without it)",
        before.get("originalAmount"),
        after.get("transactionAmount"),
        spec="spec 9",
        related=(plain,),
    )
    check_equal(
        switched,
        "originalAmount with the fix (the transactionAmount without it)",
        before.get("transactionAmount"),
        after.get("originalAmount"),
        spec="spec 9",
        related=(plain,),
    )


def _booked(document: Any) -> Mapping[str, Any]:
    booked = (
        (document.get("cardTransactions") or {}).get("booked")
        if isinstance(document, Mapping)
        else None
    )
    if not booked or not isinstance(booked[0], Mapping):
        raise NotApplicable("the card account lists no booked transaction to compare")
    first: Mapping[str, Any] = booked[0]
    return first


def _without_prefix(scenario: Scenario, ctx: RunContext, seed: int, prefix: str) -> None:
    """The same request without ``/v1`` is not the interface (spec 9): 404."""
    request = base_request(ctx, scenario.operation, scenario.variant, seed)
    path = request.target_path(ctx.profile)
    if not path.startswith(prefix + "/"):
        raise NotApplicable(f"the target's path {path} does not start with {prefix}")
    exchange = replace(request, path=path[len(prefix) :]).send(ctx)
    judge(exchange, scenario, ctx)


#: Effect name → check (immutable).
EFFECTS: Mapping[str, Callable[[Scenario, RunContext, int], None]] = MappingProxyType(
    {
        "accepted": _accepted,
        "ignored": _accepted,
        "amounts-are-strings": _amounts_are_strings,
        "account-name-up-to-70": _account_name,
        "cash-account-type-is-iso": _cash_account_type,
        "amounts-switched": _amounts_switched,
    }
)
