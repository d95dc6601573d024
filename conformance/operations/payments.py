"""Payments and signing baskets (spec 2.7, spec 4.3; contract families ``payments`` and
``baskets``): the parts of E1, E2, E16, E17, E18, PS, PC and PA, of the basket reads BR and BS
and of the cancellation authorisation PCA, and the typed requests the runners build of them.

Base request variants: the product variants of E1, E16 and E18, one variant per frequency of E17
(``periodic-monthly``), ``minimal``, and for PS, PC and PA the payment product itself.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from conformance._types import JsonObject
from conformance.bankside.request import OperationRequest
from conformance.bankside.setup_data import NDCT_PRODUCT, PRODUCT_OF_OPERATION
from conformance.checks import NotApplicable
from conformance.contract import identifiers as ids
from conformance.generate import factories
from conformance.operations.minimal import MINIMAL, Keep, operation_minimal_body
from conformance.operations.parts import (
    NO_BODY,
    BuildContext,
    Builder,
    ExampleInputs,
    OperationParts,
)

if TYPE_CHECKING:
    from conformance.bankside.request import Psu, Target
    from conformance.bankside.setup_data import Basket, Payment

__all__ = [
    "FAMILIES",
    "OPERATIONS",
    "basket_authorisation_request",
    "basket_read_request",
    "basket_request",
    "payment_request",
]

#: The contract families this module holds.
FAMILIES = ("payments", "baskets")

#: Optional members a ``minimal`` body keeps because a cross-field rule needs them (spec 2.7:
#: an NDCT debtorAccount holds exactly one of bban or other).
_E16_KEEP: Keep = (("debtorAccount", "bban"),)
_E17_KEEP: Keep = (("debtorAccount", "bban"), ("creditorAccount", "bban"))
_E18_KEEP: Keep = (("debtorAccount", "bban"), ("creditorAccount", "iban"))

#: The member of a payment creation's answer that names the payment (spec 2.6).
_PAYMENT_ID = "paymentId"


# --- typed requests -----------------------------------------------------------------------------


def basket_request(ctx: Target, psu: Psu, payment_ids: Iterable[str]) -> OperationRequest:
    """E1: a signing basket of ``payment_ids`` for ``psu``."""
    return OperationRequest.build(ctx, "E1", psu=psu, body=factories.signing_basket(payment_ids))


def basket_authorisation_request(ctx: Target, psu: Psu, basket_id: str) -> OperationRequest:
    """E2: start the authorisation of the basket ``basket_id``."""
    return OperationRequest.build(ctx, "E2", psu=psu, path_values={"basketId": basket_id})


def basket_read_request(ctx: Target, op_id: str, psu: Psu, basket_id: str) -> OperationRequest:
    """BR or BS: read the basket ``basket_id`` (its details, or its status alone)."""
    return OperationRequest.build(ctx, op_id, psu=psu, path_values={"basketId": basket_id})


def payment_request(ctx: Target, op_id: str, payment: Payment) -> OperationRequest:
    """PS, PC, PA or PCA on ``payment``, for its PSU (its product, id and service in the
    path)."""
    return OperationRequest.build(ctx, op_id, psu=payment.psu, path_values=payment.path_values)


# --- bodies (spec 2.7) --------------------------------------------------------------------------


def _later(ctx: BuildContext, days: int) -> str:
    return (ctx.data.today() + timedelta(days=days)).isoformat()


def _ndct_body(ctx: BuildContext, variant: str, seed: int) -> JsonObject:
    """E16 bodies: each remittance form (spec 2.7, spec 7 rule 2), a card debtor, minimal."""
    debtor = ctx.data.debtor_bban()
    creditor = ctx.profile.payment_accounts.creditor_bban
    name = variant or "ndct-unstructured"
    if name.startswith("ndct-kid-"):
        algorithm: Literal["MOD10", "MOD11"] = "MOD11" if name.endswith("mod11") else "MOD10"
        body = factories.ndct_payment(
            seed,
            debtor_bban=debtor,
            creditor_bban=creditor,
            kid=True,
            kid_algorithm=algorithm,
            kid_reference_type=ctx.profile.kid_reference_type,
        )
    else:
        body = factories.ndct_payment(seed, debtor_bban=debtor, creditor_bban=creditor, kid=False)
    rng = random.Random(f"ndct-variant:{seed}")
    if name in ("ndct-structured", "ndct-structured-deprecated"):
        del body["remittanceInformationUnstructured"]
        item = {
            "reference": f"INV-{rng.randint(10_000, 99_999_999)}",
            "referenceType": "INVOICE",
            "referenceIssuer": body["creditorName"][:35],
        }
        if name == "ndct-structured":
            body["remittanceInformationStructuredArray"] = [item]
        else:
            body["remittanceInformationStructured"] = item
    if name == "ndct-card-debtor":
        card = ctx.data.card_account()
        body["debtorAccount"] = {
            "other": {"identification": card.id, "schemeNameProprietary": "creditCardAccount"},
            "currency": card.currency,
        }
    if name == "ndct-minimal":
        return operation_minimal_body(ctx, "E16", body, _E16_KEEP)
    body["ultimateDebtor"] = f"{body['creditorName'][:20]} Holding"
    body["purposeCode"] = "OTHR"
    body["requestedExecutionDate"] = _later(ctx, 7)
    if name != "ndct-card-debtor":
        body["creditorAgent"] = ids.generate_bic(rng, country="NO")
    return body


def _ncbct_body(ctx: BuildContext, variant: str, seed: int) -> JsonObject:
    """E18 bodies: below/above NOK 100 000 (spec 2.7, spec 8), creditor BBAN with agent or IBAN."""
    debtor = ctx.data.debtor_bban()
    name = variant or "ncbct-below-threshold"
    regulatory = name == "ncbct-regulatory"
    body = factories.ncbct_payment(
        seed,
        regulatory=regulatory,
        creditor_bban=name == "ncbct-bban-with-agent",
        debtor_bban=debtor,
    )
    if name == "ncbct-iban":
        del body["creditorAgent"]
    if name == "ncbct-minimal":
        return operation_minimal_body(ctx, "E18", body, _E18_KEEP)
    body["requestedExecutionDate"] = _later(ctx, 7)
    return body


def _periodic_body(ctx: BuildContext, variant: str, seed: int) -> JsonObject:
    """E17 bodies, one per frequency (``periodic-every-two-weeks``); MonthlyVariable with months."""
    debtor = ctx.data.debtor_bban()
    frequency = _frequency(ctx, variant.removeprefix("periodic-") or "monthly")
    body = factories.periodic_payment(
        seed,
        today=ctx.data.today(),
        frequency=frequency,
        debtor_bban=debtor,
        creditor_bban=ctx.profile.payment_accounts.creditor_bban,
    )
    if variant == MINIMAL:
        return operation_minimal_body(ctx, "E17", body, _E17_KEEP)
    body["ultimateDebtor"] = f"{body['creditorName'][:20]} Holding"
    body["purposeCode"] = "OTHR"
    return body


def _frequency(ctx: BuildContext, slug: str) -> str:
    """The Frequency enum value whose kebab form is ``slug`` (``every-two-weeks``)."""
    schema = ctx.contract.resolve(ctx.contract.operations["E17"].request_schema or {})
    values = ctx.contract.resolve(schema["properties"]["frequency"]).get("enum", [])
    for value in values:
        if _kebab(str(value)) == slug:
            return str(value)
    raise NotApplicable(f"the contract has no periodic frequency for the variant {slug!r}")


def _kebab(name: str) -> str:
    out = []
    for index, char in enumerate(name):
        if char.isupper() and index and (name[index - 1].islower() or name[index - 1].isdigit()):
            out.append("-")
        out.append(char.lower())
    return "".join(out).replace("_", "-")


# --- builders -----------------------------------------------------------------------------------


def _payment_builder(
    make_body: Callable[[BuildContext, str, int], JsonObject], op_id: str
) -> Builder:
    """The builder of a payment creation (E16, E17, E18) for the worker's private PSU."""

    def build(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
        return OperationRequest.build(
            ctx, op_id, psu=ctx.data.psu("PRIVATE"), body=make_body(ctx, variant, seed)
        )

    return build


def _basket(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    """E1: a basket of fresh payments (spec 4.3 E1: created with the payments operations)."""
    name = variant or "basket-ndct"

    def make(made: int) -> list[Payment]:
        if name == "basket-ten-payments":
            return ctx.data.payments(made, 10, "E16")
        if name == "basket-ncbct":
            return ctx.data.payments(made, 2, "E18")
        if name == "basket-mixed-products":
            return [
                ctx.data.payment(made, "E16", single_sca=False),
                ctx.data.payment(made + 1, "E18", single_sca=False),
            ]
        return ctx.data.payments(made, 2, "E16")

    payments = ctx.data.own_recent(seed, f"payments:{name}", make)
    return basket_request(ctx, payments[0].psu, (payment.payment_id for payment in payments))


def _basket_authorisation(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
    """E2: a fresh basket of one payment."""
    basket = ctx.data.own_recent(
        seed,
        "basket",
        lambda made: ctx.data.basket(made, [ctx.data.payment(made, "E16", single_sca=False)]),
    )
    return basket_authorisation_request(ctx, basket.psu, basket.basket_id)


def _basket_read(op_id: str) -> Builder:
    """BR, BS: the worker's basket of one NDCT payment (a read changes nothing: one serves)."""

    def build(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
        def make() -> Basket:
            basket_seed = ctx.data.seed_for("basket")
            return ctx.data.basket(
                basket_seed, [ctx.data.payment(basket_seed, "E16", single_sca=False)]
            )

        basket = ctx.data.shared("basket:read", make)
        return basket_read_request(ctx, op_id, basket.psu, basket.basket_id)

    return build


def _payment_subresource(op_id: str) -> Builder:
    """PS, PC, PA, PCA: a payment of the variant's product (NDCT by E16, NCBCT by E18): fresh
    for PC and PA, which change it when they succeed, and for PCA an authorised payment of its
    own whose cancellation waits for its authorisation (a bank may refuse a second start of
    it); the worker's own for PS, which only reads."""

    def build(ctx: BuildContext, variant: str, seed: int) -> OperationRequest:
        product = variant or NDCT_PRODUCT
        creator = next(
            (op for op, name in PRODUCT_OF_OPERATION.items() if name == product and op != "E17"),
            "E16",
        )
        if op_id == "PS":  # a status read changes nothing: the worker's payment serves
            payment = ctx.data.shared_payment(creator)
        elif op_id == "PCA":
            payment = ctx.data.cancellation_pending_payment(seed, creator)
        else:
            payment = ctx.data.own_recent(
                seed, f"payment:{creator}", lambda made: ctx.data.payment(made, creator)
            )
        return payment_request(ctx, op_id, payment)

    return build


# --- examples -----------------------------------------------------------------------------------


def _basket_example(inputs: ExampleInputs) -> JsonObject:
    """E1: two made-up payment ids (replace them with created ones)."""
    rng = inputs.rng()
    return factories.signing_basket(str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(2))


#: The parts of each operation of the family (immutable).
OPERATIONS: Mapping[str, OperationParts] = MappingProxyType(
    {
        "E1": OperationParts(_basket, _basket_example),
        "E2": OperationParts(_basket_authorisation, NO_BODY),
        "E16": OperationParts(
            _payment_builder(_ndct_body, "E16"),
            lambda inputs: factories.ndct_payment(inputs.seed),
            created_id=_PAYMENT_ID,
        ),
        "E17": OperationParts(
            _payment_builder(_periodic_body, "E17"),
            lambda inputs: factories.periodic_payment(inputs.seed, today=inputs.today),
            created_id=_PAYMENT_ID,
        ),
        "E18": OperationParts(
            _payment_builder(_ncbct_body, "E18"),
            lambda inputs: factories.ncbct_payment(inputs.seed),
            created_id=_PAYMENT_ID,
        ),
        "PS": OperationParts(_payment_subresource("PS"), NO_BODY),
        "PC": OperationParts(_payment_subresource("PC"), NO_BODY),
        "PA": OperationParts(_payment_subresource("PA"), NO_BODY),
        "PCA": OperationParts(_payment_subresource("PCA"), NO_BODY),
        "BR": OperationParts(_basket_read("BR"), NO_BODY),
        "BS": OperationParts(_basket_read("BS"), NO_BODY),
    }
)
