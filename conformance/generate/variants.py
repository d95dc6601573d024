"""The names of the base requests the factories build (``minimal``, ``complete``, product and enum
variants), and which one a scenario needs.
"""

from __future__ import annotations

from collections.abc import Mapping

from conformance.contract import Operation
from conformance.generate._common import Context, has_body, kebab

__all__ = [
    "COMPLETE",
    "DEFAULT",
    "ENUM_VARIANTS",
    "EXTRA_VARIANTS",
    "MINIMAL",
    "POINTER_VARIANTS",
    "PRODUCT_VARIANTS",
    "VARIANT_READINGS",
    "base_variant",
    "variants",
]

DEFAULT = ""
MINIMAL = "minimal"
COMPLETE = "complete"

#: Base requests of the payment and basket operations; the first is the default base of the
#: operation's constraint scenarios.
PRODUCT_VARIANTS: Mapping[str, tuple[str, ...]] = {
    # spec 2.7 NDCT: remittance as unstructured text, as a structured array (a non-KID reference),
    # as a KID with a MOD10 or a MOD11 check digit (spec 7 rule 2), a card account as debtor
    # (debtorAccount.other), only the required members.
    "E16": (
        "ndct-unstructured",
        "ndct-structured",
        "ndct-kid-mod10",
        "ndct-kid-mod11",
        "ndct-card-debtor",
        "ndct-minimal",
    ),
    # spec 2.7 NCBCT / spec 8: below NOK 100 000 (creditor IBAN, no regulatory reporting), at or
    # above it with regulatory reporting, creditor BBAN with creditorAgent, creditor IBAN without
    # creditorAgent, only the required members.
    "E18": (
        "ncbct-below-threshold",
        "ncbct-regulatory",
        "ncbct-bban-with-agent",
        "ncbct-iban",
        "ncbct-minimal",
    ),
    # spec 4.3 E1 / spec 8 / spec 9 (1.21.20): a basket of NDCT payments, of NCBCT payments, of
    # both, and of exactly 10 payments (the limit).
    "E1": ("basket-ndct", "basket-ncbct", "basket-mixed-products", "basket-ten-payments"),
}

#: Operations whose base requests are one per value of a body enum: ``(member, name prefix)``;
#: the variant is the prefix plus the kebab-cased value (``periodic-every-two-weeks``).
ENUM_VARIANTS: Mapping[str, tuple[str, str]] = {"E17": ("frequency", "periodic-")}

#: The default base of an operation with :data:`ENUM_VARIANTS`, when that value exists.
_ENUM_DEFAULT: Mapping[str, str] = {"E17": "periodic-monthly"}

#: Variants that have no positive scenario of their own: the deprecated single structured
#: remittance of E16 is the subject of a versioning scenario (spec 9, 1.16.2); a consent naming its
#: account (CC) is the base of the scenarios that break a member of an account reference, whatever
#: the bank's consent model (a bank-offered or global consent names none).
EXTRA_VARIANTS: frozenset[str] = frozenset({"ndct-structured-deprecated", "detailed-consent"})

#: The account lists of a consent's ``access`` (CC, NextGenPSD2).
CONSENT_LISTS = ("accounts", "balances", "transactions")
#: Variants whose acceptance rests on a value the spec does not give (the positive scenario of the
#: variant is then should, with this reading).
VARIANT_READINGS: Mapping[str, str] = {
    "ndct-card-debtor": "spec 2.7 gives debtorAccount.other an 'identification string required' "
    "without saying which identifier of the card account it holds; we send the card account's "
    "resource id (E10), which a bank may not take there",
}

#: Bases for mutations under a pointer prefix the default base cannot carry.
POINTER_VARIANTS: Mapping[str, tuple[tuple[tuple[str | int, ...], str], ...]] = {
    "E16": (
        (("debtorAccount", "other"), "ndct-card-debtor"),
        (("remittanceInformationStructuredArray",), "ndct-structured"),
        # deprecated single structured form (spec 9, 1.16.2), never combined with another form
        (("remittanceInformationStructured",), "ndct-structured-deprecated"),
    ),
    "E17": ((("monthsOfExecution",), "periodic-monthly-variable"),),
    "CC": tuple((("access", member), "detailed-consent") for member in CONSENT_LISTS),
    "E18": (
        (("creditorAccount", "bban"), "ncbct-bban-with-agent"),
        (("creditorAgent",), "ncbct-bban-with-agent"),
        (("creditorAccount", "iban"), "ncbct-iban"),
        (("regulatoryReportingCode",), "ncbct-regulatory"),
        (("regulatoryReportingInformation",), "ncbct-regulatory"),
    ),
}


def _enum_variants(op: Operation, context: Context) -> tuple[str, ...]:
    member, prefix = ENUM_VARIANTS[op.id]
    assert op.request_schema is not None
    body = context.resolver(op.request_schema)
    schema = body.get("properties", {}).get(member)
    values = context.resolver(schema).get("enum", []) if schema is not None else []
    return tuple(prefix + kebab(str(value)) for value in values)


def _path_enum_variants(op: Operation, context: Context) -> tuple[str, ...]:
    for parameter in op.path_parameters:
        values = context.resolver(parameter.schema).get("enum")
        if isinstance(values, list) and values:
            return tuple(str(value) for value in values)
    return ()


def variants(op: Operation, context: Context) -> tuple[str, ...]:
    """The base requests of an operation, each the subject of one positive scenario."""
    if op.id in PRODUCT_VARIANTS:
        return PRODUCT_VARIANTS[op.id]
    if op.id in ENUM_VARIANTS and has_body(op):
        derived = _enum_variants(op, context)
        if derived:
            return derived
    by_path = _path_enum_variants(op, context)
    if by_path:
        return by_path
    return (MINIMAL, COMPLETE) if has_body(op) else (DEFAULT,)


def base_variant(op: Operation, context: Context, pointer: tuple[str | int, ...] = ()) -> str:
    """The base a scenario changing ``pointer`` of the body starts from.

    A pointer under a prefix of :data:`POINTER_VARIANTS` takes that variant (when the operation
    has it); otherwise the operation's default base: its first product variant, the
    :data:`_ENUM_DEFAULT` value, ``complete`` for other bodies, the first path-enum value.
    """
    names = variants(op, context)
    for prefix, name in POINTER_VARIANTS.get(op.id, ()):
        if pointer[: len(prefix)] == prefix and (name in names or name in EXTRA_VARIANTS):
            return name
    if op.id in _ENUM_DEFAULT and _ENUM_DEFAULT[op.id] in names:
        return _ENUM_DEFAULT[op.id]
    if COMPLETE in names:
        return COMPLETE
    return names[0]
