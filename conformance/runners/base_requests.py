"""The valid base request of every operation, per variant (``conformance.generate.variants``).

A scenario changes one thing in a request the target must accept, so the base has to be right
in every respect the scenario does not test: path values that name existing resources (set up
through :class:`~conformance.target.setup_data.DataFactory`), the headers spec 4.2 requires, and a
body valid against the operation's schema and the cross-field rules of spec 2.7 (seeded factories).

Variants: ``""`` (the default request), ``minimal`` (only the required members, plus what a
cross-field rule makes necessary), ``complete`` (every optional member too), the product variants
of E1, E16 and E18, one variant per frequency of E17 (``periodic-monthly``), and for PS, PC and PA
the payment product itself. :data:`BUILDERS` maps each operation to its builder.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Mapping
from datetime import timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from conformance.bankside.request import OperationRequest
from conformance.bankside.setup_data import NDCT_PRODUCT, PRODUCT_OF_OPERATION
from conformance.checks import NotApplicable
from conformance.contract import identifiers as ids
from conformance.generate import factories

if TYPE_CHECKING:
    from conformance.bankside.setup_data import Consent
    from conformance.contract import Contract
    from conformance.runners.context import RunContext

__all__ = [
    "BUILDERS",
    "Builder",
    "base_request",
    "consented_transactions_request",
    "minimal_body",
]

#: One signature for every builder: the context, the variant name, the scenario's seed.
Builder = Callable[["RunContext", str, int], OperationRequest]

MINIMAL = "minimal"
COMPLETE = "complete"

#: Optional members a ``minimal`` body keeps because a cross-field rule needs them (spec 2.7:
#: an NDCT debtorAccount holds exactly one of bban or other; an account reference without iban
#: or bban names nothing).
_MINIMAL_KEEP: Mapping[str, tuple[tuple[str, ...], ...]] = MappingProxyType(
    {
        "E16": (("debtorAccount", "bban"),),
        "E17": (("debtorAccount", "bban"), ("creditorAccount", "bban")),
        "E18": (("debtorAccount", "bban"), ("creditorAccount", "iban")),
        "CC": (("access",), ("access", "accounts"), ("access", "accounts", "iban")),
    }
)


def base_request(ctx: RunContext, op_id: str, variant: str, seed: int) -> OperationRequest:
    """The valid request of ``op_id`` in ``variant``, its set-up data created or reused."""
    try:
        builder = BUILDERS[op_id]
    except KeyError:
        raise NotApplicable(f"the suite has no base request for operation {op_id}") from None
    return builder(ctx, variant, seed)


# --- minimal bodies -----------------------------------------------------------------------------


#: A request body, of whatever JSON type.
Body = TypeVar("Body")


def minimal_body(
    contract: Contract,
    schema: Mapping[str, Any],
    body: Body,
    keep: tuple[tuple[str, ...], ...] = (),
) -> Body:
    """``body`` with every member its schema does not require removed (recursively), except
    the pointers in ``keep``."""
    stripped: Body = _strip(contract, schema, copy.deepcopy(body), (), keep)
    return stripped


def _strip(
    contract: Contract,
    schema: Mapping[str, Any],
    node: Any,
    path: tuple[str, ...],
    keep: tuple[tuple[str, ...], ...],
) -> Any:
    resolved = contract.resolve(schema)
    if isinstance(node, list):
        items = resolved.get("items")
        if isinstance(items, Mapping):
            return [_strip(contract, items, item, path, keep) for item in node]
        return node
    if not isinstance(node, dict):
        return node
    required = set(resolved.get("required", ()))
    properties = resolved.get("properties", {})
    for name in list(node):
        if name not in required and (*path, name) not in keep:
            del node[name]
        elif name in properties and isinstance(properties[name], Mapping):
            node[name] = _strip(contract, properties[name], node[name], (*path, name), keep)
    return node


def _variant_body(ctx: RunContext, op_id: str, variant: str, complete: Any) -> Any:
    operation = ctx.contract.operations[op_id]
    if variant == MINIMAL and operation.request_schema is not None:
        return minimal_body(
            ctx.contract, operation.request_schema, complete, _MINIMAL_KEEP.get(op_id, ())
        )
    return complete


# --- payments (spec 2.7) ------------------------------------------------------------------------


def _later(ctx: RunContext, days: int) -> str:
    return (ctx.data.today() + timedelta(days=days)).isoformat()


def _ndct_body(ctx: RunContext, variant: str, seed: int) -> dict[str, Any]:
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
        return minimal_body(
            ctx.contract,
            ctx.contract.operations["E16"].request_schema or {},
            body,
            _MINIMAL_KEEP["E16"],
        )
    body["ultimateDebtor"] = f"{body['creditorName'][:20]} Holding"
    body["purposeCode"] = "OTHR"
    body["requestedExecutionDate"] = _later(ctx, 7)
    if name != "ndct-card-debtor":
        body["creditorAgent"] = ids.generate_bic(rng, country="NO")
    return body


def _ncbct_body(ctx: RunContext, variant: str, seed: int) -> dict[str, Any]:
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
        return minimal_body(
            ctx.contract,
            ctx.contract.operations["E18"].request_schema or {},
            body,
            _MINIMAL_KEEP["E18"],
        )
    body["requestedExecutionDate"] = _later(ctx, 7)
    return body


def _periodic_body(ctx: RunContext, variant: str, seed: int) -> dict[str, Any]:
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
        return minimal_body(
            ctx.contract,
            ctx.contract.operations["E17"].request_schema or {},
            body,
            _MINIMAL_KEEP["E17"],
        )
    body["ultimateDebtor"] = f"{body['creditorName'][:20]} Holding"
    body["purposeCode"] = "OTHR"
    return body


def _frequency(ctx: RunContext, slug: str) -> str:
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


def _payment_builder(
    make_body: Callable[[RunContext, str, int], dict[str, Any]], op_id: str
) -> Builder:
    """The builder of a payment creation (E16, E17, E18) for the worker's private PSU."""

    def build(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
        return OperationRequest.build(
            ctx, op_id, psu=ctx.data.psu("PRIVATE"), body=make_body(ctx, variant, seed)
        )

    return build


def _basket(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    """E1: a basket of fresh payments (spec 4.3 E1: created with the payments operations)."""
    name = variant or "basket-ndct"
    if name == "basket-ten-payments":
        payments = ctx.data.payments(seed, 10, "E16")
    elif name == "basket-ncbct":
        payments = ctx.data.payments(seed, 2, "E18")
    elif name == "basket-mixed-products":
        payments = [ctx.data.payment(seed, "E16"), ctx.data.payment(seed + 1, "E18")]
    else:
        payments = ctx.data.payments(seed, 2, "E16")
    return OperationRequest.build(
        ctx,
        "E1",
        psu=payments[0].psu,
        body=factories.signing_basket(payment.payment_id for payment in payments),
    )


def _basket_authorisation(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    """E2: a fresh basket of one payment."""
    basket = ctx.data.basket(seed, [ctx.data.payment(seed, "E16")])
    return OperationRequest.build(
        ctx, "E2", psu=basket.psu, path_values={"basketId": basket.basket_id}
    )


def _payment_subresource(op_id: str) -> Builder:
    """PS, PC, PA: a payment of the variant's product (NDCT by E16, NCBCT by E18): fresh for
    PC and PA, which change it when they succeed; the worker's own for PS, which only reads."""

    def build(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
        product = variant or NDCT_PRODUCT
        creator = next(
            (op for op, name in PRODUCT_OF_OPERATION.items() if name == product and op != "E17"),
            "E16",
        )
        if op_id == "PS":  # a status read changes nothing: the worker's payment serves
            payment = ctx.data.shared_payment(creator)
        else:
            payment = ctx.data.payment(seed, creator)
        return OperationRequest.build(
            ctx,
            op_id,
            psu=payment.psu,
            path_values=payment.path_values,
        )

    return build


# --- sandbox (spec 2.9, spec 4.3) ---------------------------------------------------------------


def _customer_number(seed: int) -> str:
    """A customer number no server assigns itself (7 followed by 7 digits; spec 5 item 7)."""
    return f"7{random.Random(f'customer-number:{seed}').randint(0, 9_999_999):07d}"


def _sandbox_customer(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    body = factories.sandbox_customer_create(seed, "PRIVATE")
    if variant == COMPLETE:
        body["customerNumber"] = _customer_number(seed)
    return OperationRequest.build(ctx, "SCU", body=_variant_body(ctx, "SCU", variant, body))


def _sandbox_account(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    owner = ctx.data.customer("PRIVATE")
    body = factories.sandbox_account_create(seed, owner.customer_number or "")
    return OperationRequest.build(ctx, "SA", body=_variant_body(ctx, "SA", variant, body))


def _sandbox_card_account(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    owner = ctx.data.customer("PRIVATE")
    body = factories.sandbox_card_account_create(seed, owner.customer_number or "")
    if variant == COMPLETE:
        body["status"] = "enabled"
    return OperationRequest.build(ctx, "SCA", body=_variant_body(ctx, "SCA", variant, body))


def _sandbox_agreement(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    owner = ctx.data.corporate_customer().customer_id if variant != MINIMAL else None
    body = factories.sandbox_agreement_create(seed, owner)
    return OperationRequest.build(ctx, "SAG", body=body)


def _engagement_create(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    """E6 on the worker's corporate agreement: its account, for the member PSU (spec 4.3 E6)."""
    shared = ctx.data.engagement()
    body = factories.sandbox_engagement(seed, shared.member.customer_id, shared.account.iban)
    return OperationRequest.build(
        ctx,
        "E6",
        path_values={"mockAgreementId": shared.agreement_id},
        body=_variant_body(ctx, "E6", variant, body),
    )


def _account_transactions_create(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    """E7 on the worker's account: the debtor is the account itself (spec 7 rule 5)."""
    account = ctx.data.account()
    body = factories.sandbox_account_transactions(
        seed,
        {"iban": account.iban, "bban": account.bban, "currency": account.currency},
        1,
        today=ctx.data.today(),
    )
    return OperationRequest.build(
        ctx,
        "E7",
        path_values={"mockAccountId": account.id},
        body=_variant_body(ctx, "E7", variant, body),
    )


def _card_transactions_create(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    """E5 on the worker's card account (a fresh cardTransactionId per seed)."""
    card = ctx.data.card_account()
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
    return OperationRequest.build(
        ctx,
        "E5",
        path_values={"mockCardAccountId": card.id},
        body=_variant_body(ctx, "E5", variant, items),
    )


def _balances(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    account = ctx.data.account()
    body = factories.balance_update(seed, account.currency)
    return OperationRequest.build(
        ctx,
        "E15",
        path_values={"mockAccountId": account.id},
        body=_variant_body(ctx, "E15", variant, body),
    )


def _reader(op_id: str, values: Callable[[RunContext], Mapping[str, str]], **query: Any) -> Builder:
    """The builder of a read: path values from set-up data, a fixed query."""

    def build(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
        return OperationRequest.build(ctx, op_id, path_values=values(ctx), query=query)

    return build


def _account_id(ctx: RunContext) -> Mapping[str, str]:
    return {"mockAccountId": ctx.data.account().id}


def _account_transaction(ctx: RunContext) -> Mapping[str, str]:
    account = ctx.data.account()
    if not account.transaction_ids:
        raise NotApplicable("the worker's sandbox account shows no transaction to read")
    return {"mockAccountId": account.id, "mockTransactionId": account.transaction_ids[0]}


def _card_id(ctx: RunContext) -> Mapping[str, str]:
    return {"mockCardAccountId": ctx.data.card_account().id}


def _agreement_id(ctx: RunContext) -> Mapping[str, str]:
    return {"mockAgreementId": ctx.data.engagement().agreement_id}


def _engagement_ids(ctx: RunContext) -> Mapping[str, str]:
    shared = ctx.data.engagement()
    return {"mockAgreementId": shared.agreement_id, "mockEngagementId": shared.engagement_id}


def _no_path(ctx: RunContext) -> Mapping[str, str]:
    return {}


def _data_fill(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    return OperationRequest.build(ctx, "SDF")


# --- account information (spec 8; consents assumed NextGenPSD2) ---------------------------------


def _transaction_details(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    """E8 for a transaction from the consented account list; with PSU-IP-Address, so the call
    does not count against the daily limit of spec 8."""
    consent = ctx.data.consent()
    if consent.account_id is None or consent.transaction_id is None:
        raise NotApplicable("the consented account shows no booked transaction to read (AT)")
    return OperationRequest.build(
        ctx,
        "E8",
        psu=consent.psu,
        path_values={"id": consent.account_id, "transactionId": consent.transaction_id},
    )


def _account_list(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    consent = ctx.data.consent()
    return OperationRequest.build(
        ctx, "AL", psu=consent.psu, headers={"Consent-ID": consent.consent_id}
    )


def _account_transactions(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    consent = ctx.data.consent()
    if consent.account_id is None:
        raise NotApplicable("the consent gives access to no account (AL)")
    return consented_transactions_request(ctx, consent)


def consented_transactions_request(
    ctx: RunContext, consent: Consent, **query: Any
) -> OperationRequest:
    """AT for the consent's account, booked transactions, with its Consent-ID (and ``query``)."""
    return OperationRequest.build(
        ctx,
        "AT",
        psu=consent.psu,
        path_values={"id": consent.account_id or ""},
        query={"bookingStatus": "booked", **query},
        headers={"Consent-ID": consent.consent_id},
    )


def _consent_create(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    account = ctx.data.account()
    body = factories.consent_request(seed, [account.iban])
    return OperationRequest.build(
        ctx, "CC", psu=account.owner.psu, body=_variant_body(ctx, "CC", variant, body)
    )


def _consent_status(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    consent = ctx.data.consent()
    return OperationRequest.build(
        ctx, "CS", psu=consent.psu, path_values={"consentId": consent.consent_id}
    )


def _consent_authorisation(ctx: RunContext, variant: str, seed: int) -> OperationRequest:
    """CA for a fresh consent that has not been authorised yet."""
    consent_id, psu = ctx.data.new_consent_request(seed, ctx.data.account())
    return OperationRequest.build(ctx, "CA", psu=psu, path_values={"consentId": consent_id})


#: Builder per operation (immutable).
BUILDERS: Mapping[str, Builder] = MappingProxyType(
    {
        "E1": _basket,
        "E2": _basket_authorisation,
        "E3": _reader("E3", _account_id),
        "E4": _reader("E4", _card_id, bookingStatus="both"),
        "E5": _card_transactions_create,
        "E6": _engagement_create,
        "E7": _account_transactions_create,
        "E8": _transaction_details,
        "E9": _reader("E9", _no_path),
        "E10": _reader("E10", _card_id),
        "E11": _reader("E11", _account_transaction),
        "E12": _reader("E12", _account_id),
        "E13": _reader("E13", _engagement_ids),
        "E14": _reader("E14", _agreement_id),
        "E15": _balances,
        "E16": _payment_builder(_ndct_body, "E16"),
        "E17": _payment_builder(_periodic_body, "E17"),
        "E18": _payment_builder(_ncbct_body, "E18"),
        "PS": _payment_subresource("PS"),
        "PC": _payment_subresource("PC"),
        "PA": _payment_subresource("PA"),
        "AL": _account_list,
        "AT": _account_transactions,
        "CC": _consent_create,
        "CS": _consent_status,
        "CA": _consent_authorisation,
        "SA": _sandbox_account,
        "SCA": _sandbox_card_account,
        "SCU": _sandbox_customer,
        "SAG": _sandbox_agreement,
        "SDF": _data_fill,
    }
)
