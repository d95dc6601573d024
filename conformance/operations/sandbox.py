"""The sandbox (spec 2.9, spec 4.1, spec 4.3; contract family ``sandbox``): the parts of its
creations (SCU, SA, SCA, SAG, SDF, E5, E6, E7, E15) and reads (E3, E4, E9 to E14), and the typed
requests the runners build of them, each naming its path values once.

Base request variants: ``""``, ``minimal`` (only the required members) and ``complete`` (every
optional member too).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conformance._types import JsonObject
from conformance.bankside.request import OperationRequest
from conformance.checks import NotApplicable
from conformance.contract.identifiers import generate_masked_pan
from conformance.generate import factories
from conformance.operations.minimal import COMPLETE, MINIMAL, variant_body
from conformance.operations.parts import (
    NO_BODY,
    BuildContext,
    Builder,
    ExampleInputs,
    OperationParts,
)

if TYPE_CHECKING:
    from conformance.bankside.request import Target

__all__ = [
    "FAMILIES",
    "OPERATIONS",
    "account_read",
    "account_transaction_read",
    "account_transactions_create",
    "account_transactions_list",
    "agreement_read",
    "balances_update",
    "card_account_read",
    "card_transactions_create",
    "card_transactions_list",
    "engagement_create",
    "engagement_read",
]

#: The contract families this module holds.
FAMILIES = ("sandbox",)

#: The customer number of the examples' made-up owner (replace it with a created one).
_EXAMPLE_CUSTOMER_NUMBER = "31000001"


# --- typed requests -----------------------------------------------------------------------------


def account_transactions_list(ctx: Target, account_id: str, **query: Any) -> OperationRequest:
    """E3: the transactions of the sandbox account ``account_id`` (with ``query``)."""
    return OperationRequest.build(ctx, "E3", path_values={"mockAccountId": account_id}, query=query)


def card_transactions_list(ctx: Target, card_id: str, **query: Any) -> OperationRequest:
    """E4: the transactions of the sandbox card account ``card_id`` (with ``query``)."""
    return OperationRequest.build(
        ctx, "E4", path_values={"mockCardAccountId": card_id}, query=query
    )


def card_transactions_create(ctx: Target, card_id: str, items: Any) -> OperationRequest:
    """E5: card transactions ``items`` on the card account ``card_id``."""
    return OperationRequest.build(ctx, "E5", path_values={"mockCardAccountId": card_id}, body=items)


def engagement_create(ctx: Target, agreement_id: str, body: Any) -> OperationRequest:
    """E6: the engagement ``body`` in the agreement ``agreement_id``."""
    return OperationRequest.build(
        ctx, "E6", path_values={"mockAgreementId": agreement_id}, body=body
    )


def account_transactions_create(ctx: Target, account_id: str, items: Any) -> OperationRequest:
    """E7: transactions ``items`` on the sandbox account ``account_id``."""
    return OperationRequest.build(ctx, "E7", path_values={"mockAccountId": account_id}, body=items)


def card_account_read(ctx: Target, card_id: str) -> OperationRequest:
    """E10: the sandbox card account ``card_id``."""
    return OperationRequest.build(ctx, "E10", path_values={"mockCardAccountId": card_id})


def account_transaction_read(ctx: Target, account_id: str, transaction_id: str) -> OperationRequest:
    """E11: the transaction ``transaction_id`` of the sandbox account ``account_id``."""
    return OperationRequest.build(
        ctx,
        "E11",
        path_values={"mockAccountId": account_id, "mockTransactionId": transaction_id},
    )


def account_read(ctx: Target, account_id: str) -> OperationRequest:
    """E12: the sandbox account ``account_id``."""
    return OperationRequest.build(ctx, "E12", path_values={"mockAccountId": account_id})


def engagement_read(ctx: Target, agreement_id: str, engagement_id: str) -> OperationRequest:
    """E13: the engagement ``engagement_id`` of the agreement ``agreement_id``."""
    return OperationRequest.build(
        ctx,
        "E13",
        path_values={"mockAgreementId": agreement_id, "mockEngagementId": engagement_id},
    )


def agreement_read(ctx: Target, agreement_id: str) -> OperationRequest:
    """E14: the agreement ``agreement_id``."""
    return OperationRequest.build(ctx, "E14", path_values={"mockAgreementId": agreement_id})


def balances_update(ctx: Target, account_id: str, body: Any) -> OperationRequest:
    """E15: the balances ``body`` of the sandbox account ``account_id``."""
    return OperationRequest.build(ctx, "E15", path_values={"mockAccountId": account_id}, body=body)


# --- builders: creations ------------------------------------------------------------------------


def _customer_number(seed: int) -> str:
    """A customer number no server assigns itself (7 followed by 7 digits; spec 5 item 7)."""
    return f"7{random.Random(f'customer-number:{seed}').randint(0, 9_999_999):07d}"


def _sandbox_customer(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    body = factories.sandbox_customer_create(seed, "PRIVATE")
    if variant == COMPLETE:
        body["customerNumber"] = _customer_number(seed)
    return OperationRequest.build(ctx, "SCU", body=variant_body(ctx, "SCU", variant, body))


def _sandbox_account(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    owner = ctx.data.own_customer(seed)
    body = factories.sandbox_account_create(seed, owner.customer_number or "")
    return OperationRequest.build(ctx, "SA", body=variant_body(ctx, "SA", variant, body))


def _sandbox_card_account(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    owner = ctx.data.own_customer(seed)
    body = factories.sandbox_card_account_create(seed, owner.customer_number or "")
    if variant == COMPLETE:
        body["status"] = "enabled"
    return OperationRequest.build(ctx, "SCA", body=variant_body(ctx, "SCA", variant, body))


def _sandbox_agreement(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    owner = None
    if variant != MINIMAL:
        customer = ctx.data.own_customer(seed, "CORPORATE")
        owner = ctx.profile.owner_reference(customer.customer_id, customer.customer_number)
    body = factories.sandbox_agreement_create(seed, owner)
    return OperationRequest.build(ctx, "SAG", body=variant_body(ctx, "SAG", variant, body))


def _data_fill(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    return OperationRequest.build(ctx, "SDF")


def _sandbox_reset(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    """SI (the platform's sandbox reset, optional): an empty POST."""
    return OperationRequest.build(ctx, "SI")


def _engagement_create(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    """E6 on a corporate agreement made for the scenario: its account, for a member PSU of its
    own (spec 4.3 E6), the first engagement of that customer and account there."""
    own = ctx.data.own_agreement(seed)
    body = factories.sandbox_engagement(seed, own.member.customer_id, own.account.iban)
    return engagement_create(ctx, own.agreement_id, variant_body(ctx, "E6", variant, body))


def _account_transactions_create(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    """E7 on an account made for the scenario: the debtor is the account itself (spec 7
    rule 5)."""
    account = ctx.data.own_account(seed)
    body = factories.sandbox_account_transactions(
        seed,
        {"iban": account.iban, "bban": account.bban, "currency": account.currency},
        1,
        today=ctx.data.today(),
    )
    return account_transactions_create(ctx, account.id, variant_body(ctx, "E7", variant, body))


def _card_transactions_create(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    """E5 on a card account made for the scenario (a fresh cardTransactionId per seed)."""
    card = ctx.data.own_card_account(seed)
    items = ctx.data.card_transactions_body(card, seed, booked=1)
    if variant == COMPLETE:
        for item in items:
            item["currencyExchange"] = {
                "sourceCurrency": "EUR",
                "targetCurrency": card.currency,
                "unitCurrency": "EUR",
                "exchangeRate": "11.5",
                "quotationDate": item["transactionDate"],
            }
    return card_transactions_create(ctx, card.id, variant_body(ctx, "E5", variant, items))


def _balances(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    account = ctx.data.own_account(seed)
    body = factories.balance_update(seed, account.currency)
    return balances_update(ctx, account.id, variant_body(ctx, "E15", variant, body))


# --- builders: reads ----------------------------------------------------------------------------


def _reader(read: Callable[[BuildContext], OperationRequest]) -> Builder:
    """The builder of a read: the same request for every variant and seed."""

    def build(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
        return read(ctx)

    return build


def _account_transaction(ctx: BuildContext) -> OperationRequest:
    account = ctx.data.account()
    if not account.transaction_ids:
        raise NotApplicable("the worker's sandbox account shows no transaction to read")
    return account_transaction_read(ctx, account.id, account.transaction_ids[0])


def _engagement(ctx: BuildContext) -> OperationRequest:
    shared = ctx.data.engagement()
    return engagement_read(ctx, shared.agreement_id, shared.engagement_id)


# --- examples -----------------------------------------------------------------------------------


def _card_transactions_example(inputs: ExampleInputs) -> list[JsonObject]:
    """E5: one purchase on a made-up card (its masked PAN drawn from the seed)."""
    pan = generate_masked_pan(inputs.rng())
    return factories.sandbox_card_transactions(inputs.seed, pan, 1, today=inputs.today)


#: The parts of each operation of the family (immutable).
OPERATIONS: Mapping[str, OperationParts] = MappingProxyType(
    {
        "SCU": OperationParts(
            _sandbox_customer, lambda inputs: factories.sandbox_customer_create(inputs.seed)
        ),
        "SA": OperationParts(
            _sandbox_account,
            lambda inputs: factories.sandbox_account_create(inputs.seed, _EXAMPLE_CUSTOMER_NUMBER),
        ),
        "SCA": OperationParts(
            _sandbox_card_account,
            lambda inputs: factories.sandbox_card_account_create(
                inputs.seed, _EXAMPLE_CUSTOMER_NUMBER
            ),
        ),
        "SAG": OperationParts(
            _sandbox_agreement,
            lambda inputs: factories.sandbox_agreement_create(inputs.seed, None),
        ),
        "SDF": OperationParts(_data_fill, NO_BODY),
        "SI": OperationParts(_sandbox_reset, NO_BODY),
        "E3": OperationParts(
            _reader(lambda ctx: account_transactions_list(ctx, ctx.data.account().id)), NO_BODY
        ),
        "E4": OperationParts(
            _reader(
                lambda ctx: card_transactions_list(
                    ctx, ctx.data.card_account().id, bookingStatus="both"
                )
            ),
            NO_BODY,
        ),
        "E5": OperationParts(_card_transactions_create, _card_transactions_example),
        "E6": OperationParts(
            _engagement_create,
            lambda inputs: factories.sandbox_engagement(
                inputs.seed, inputs.psu_id, inputs.account["iban"]
            ),
        ),
        "E7": OperationParts(
            _account_transactions_create,
            lambda inputs: factories.sandbox_account_transactions(
                inputs.seed, inputs.account, 1, today=inputs.today
            ),
        ),
        "E9": OperationParts(_reader(lambda ctx: OperationRequest.build(ctx, "E9")), NO_BODY),
        "E10": OperationParts(
            _reader(lambda ctx: card_account_read(ctx, ctx.data.card_account().id)), NO_BODY
        ),
        "E11": OperationParts(_reader(_account_transaction), NO_BODY),
        "E12": OperationParts(
            _reader(lambda ctx: account_read(ctx, ctx.data.account().id)), NO_BODY
        ),
        "E13": OperationParts(_reader(_engagement), NO_BODY),
        "E14": OperationParts(
            _reader(lambda ctx: agreement_read(ctx, ctx.data.engagement().agreement_id)),
            NO_BODY,
        ),
        "E15": OperationParts(
            _balances, lambda inputs: factories.balance_update(inputs.seed, "NOK")
        ),
    }
)
