"""Authentication scenarios (spec 5): signature, digest, certificate and PSD2 role cases, per
operation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from conformance.contract import Operation
from conformance.contract.catalogue import MISSING_ROLE, success
from conformance.contract.facts import ROLE_OF_FAMILY
from conformance.contract.requirements import (
    AnswerDue,
)
from conformance.generate._common import (
    Context,
    has_body,
    params,
    scenario_id,
    takes_header,
)
from conformance.generate.variants import base_variant
from conformance.scenario import Scenario

__all__ = [
    "CASES",
    "OWNED_RESOURCE_OPERATIONS",
    "PSU_RESOURCE_OPERATIONS",
    "REPLAYED_CREATIONS",
    "STALE_DATE_MARGIN",
    "AuthCase",
    "generate",
]

_STATUS_ASSUMPTION = (
    "The status of a refused signature or certificate is not shown (spec 5, spec 7): 400, 401 "
    "and 403 are accepted."
)


@dataclass(frozen=True)
class AuthCase:
    """One authentication case: its name (the requirement is ``AUTH-<name>``, graded with its
    spec part and answer due by the contract: ``catalogue.SIGNING_CASES``), whether it applies
    only to requests with a body, and what it sends."""

    name: str
    what: str
    body_only: bool = False
    needs_trust_anchor: bool = False


#: The rejected cases, in the order of spec 5.
CASES: tuple[AuthCase, ...] = (
    AuthCase("no-certificate", "no TPP-Signature-Certificate header"),
    AuthCase("no-signature", "no Signature header"),
    AuthCase("keyid-serial-mismatch", "a keyId whose SN is not the certificate's serial number"),
    AuthCase("keyid-ca-mismatch", "a keyId whose CA is not the certificate's issuer"),
    AuthCase(
        "wrong-algorithm", "an algorithm (hmac-sha256) that is not the certificate's rsa-sha256"
    ),
    AuthCase(
        "headers-list-incomplete",
        "a signed headers list that leaves out x-request-id although it is sent",
    ),
    AuthCase("wrong-key", "a signature made with a key that is not the certificate's"),
    AuthCase("no-digest", "a body but no Digest header", body_only=True),
    AuthCase("stale-digest", "a Digest of another body", body_only=True),
    AuthCase(
        "body-changed-after-signing",
        "a body changed after the Digest and Signature were made",
        body_only=True,
    ),
    AuthCase(
        "expired-certificate", "a signing certificate that has expired", needs_trust_anchor=True
    ),
    AuthCase(
        "certificate-other-ca",
        "a well-formed certificate from a CA the target does not trust",
        needs_trust_anchor=True,
    ),
)


def _rejected(op: Operation, context: Context, case: AuthCase) -> Scenario:
    requirement = context.contract.requirement(f"AUTH-{case.name}", op.id)
    return Scenario(
        id=scenario_id(op.id, "auth", case.name, "rejected"),
        operation=op.id,
        rule=requirement.id,
        spec=requirement.spec,
        level=requirement.level,
        kind="auth",
        title=f"{op.id} {op.name}: a request with {case.what} is refused (400/401/403)",
        expect=requirement.expected,
        variant=base_variant(op, context),
        params=params(case=case.name, needs_trust_anchor=case.needs_trust_anchor),
        assumptions=(_STATUS_ASSUMPTION,),
        quotes=requirement.quotes,
        reading=requirement.reading,
        requirement=requirement.id,
    )


def _missing_role(op: Operation, context: Context) -> Iterator[Scenario]:
    role = ROLE_OF_FAMILY.get(op.family)
    if role is None:
        return
    requirement = context.contract.requirement(MISSING_ROLE, op.id)
    yield Scenario(
        id=scenario_id(op.id, "auth", "missing-role", "rejected"),
        operation=op.id,
        rule=requirement.id,
        spec=requirement.spec,
        level=requirement.level,
        kind="auth",
        title=f"{op.id} {op.name}: a certificate without the PSD2 role {role} is refused with 403",
        expect=requirement.expected,
        variant=base_variant(op, context),
        params=params(case="missing-role", needs_trust_anchor=True, role=role),
        assumptions=(
            f"PSD2 practice: {op.family} operations need a certificate with the {role} role; "
            "the spec names no roles.",
        ),
        reading=requirement.reading,
        requirement=requirement.id,
    )


#: How far outside the allowed clock skew the stale-Date cases put the signed Date (seconds).
STALE_DATE_MARGIN = 3600


def _security(
    op: Operation,
    context: Context,
    name: str,
    *,
    title: str,
    also: tuple[str, ...] = (),
    outcome: str = "refused",
    **extra: object,
) -> Scenario:
    """One scenario of the security group (``scenario.SECURITY_RULES``), graded by the
    contract's requirement (``catalogue.SECURITY_CASES``: should, a refusal with the spec 7
    error body whose status the suite chose); its reading is its first assumption, ``also``
    the others."""
    requirement = context.contract.requirement(f"AUTH-{name}")
    return Scenario(
        id=scenario_id(op.id, "auth", name, outcome),
        operation=op.id,
        rule=requirement.id,
        spec=requirement.spec,
        level=requirement.level,
        kind="auth",
        title=f"{op.id} {op.name}: {title}",
        expect=requirement.expected,
        variant=base_variant(op, context),
        params=params(case=name, **extra),
        assumptions=(requirement.reading, *also),
        reading=requirement.reading,
        requirement=requirement.id,
    )


def _stale_date(op: Operation, context: Context) -> Iterator[Scenario]:
    for name, when in (("date-far-past", "before"), ("date-far-future", "after")):
        yield _security(
            op,
            context,
            name,
            title=f"a request signed with a Date an hour {when} the allowed clock skew is "
            "refused (400/401/403)",
            also=(_STATUS_ASSUMPTION,),
            outcome="rejected",
        )


#: The creations whose byte-identical replay is tried: each would otherwise make a second resource.
REPLAYED_CREATIONS = ("E16", "E17", "E18", "CC")


def _replay(op: Operation, context: Context) -> Iterator[Scenario]:
    if op.id in REPLAYED_CREATIONS:
        yield _security(
            op,
            context,
            "replay",
            title="a byte-identical replay of an accepted creation (same X-Request-ID, Date and "
            "Signature) is refused or answered with the same resource, never carried out twice",
        )


#: Operations that name a payment, basket or consent the worker's TPP made (in the path, the body
#: or Consent-ID), which a second TPP must not reach.
OWNED_RESOURCE_OPERATIONS = (
    *("E1", "E2", "E8", "PS", "PC", "PA", "CS", "CA", "CG", "CD", "AL", "AT"),
    *("BR", "BS", "PCA"),
)
#: Operations on a payment, basket or consent of one PSU that name the PSU (PSU-ID).
PSU_RESOURCE_OPERATIONS = (
    *("E2", "E8", "PS", "PC", "PA", "CS", "CA", "CG", "CD", "AL", "AT"),
    *("BR", "BS", "PCA"),
)


def _ownership(op: Operation, context: Context) -> Iterator[Scenario]:
    if op.id in OWNED_RESOURCE_OPERATIONS:
        yield _security(
            op,
            context,
            "other-tpp",
            title="a second TPP, signing with a valid certificate of its own, does not reach "
            "the resource the first TPP made (400/401/403/404)",
            needs_trust_anchor=True,
        )
    if op.id in PSU_RESOURCE_OPERATIONS:
        yield _security(
            op,
            context,
            "other-psu",
            title="the same TPP naming a second PSU (PSU-ID of another customer) does not reach "
            "the first PSU's payment, basket or consent (400/401/403/404)",
        )


# --- certificates as banks and supervisors check them (security group) -------------------------


def _certificate_checks(op: Operation, context: Context) -> Iterator[Scenario]:
    """Revocation, the certificate's type, the QWAC's roles and the pairing of QWAC and seal:
    what a bank and its supervisor check beyond spec 5 (``scenario.CERTIFICATE_RULES``)."""
    yield _security(
        op,
        context,
        "revoked-certificate",
        title="a request signed with a certificate its CA has revoked is refused (400/401/403)",
        also=(_STATUS_ASSUMPTION,),
        outcome="rejected",
    )
    yield _security(
        op,
        context,
        "seal-is-qwac",
        title="a request signed with a QWAC-type certificate (QcType web) is refused (400/401/403)",
        also=(_STATUS_ASSUMPTION,),
        outcome="rejected",
    )
    role = ROLE_OF_FAMILY.get(op.family)
    if role is not None:
        yield _security(
            op,
            context,
            "qwac-missing-role",
            title=f"a request over a TLS connection whose client certificate (QWAC) lacks the "
            f"PSD2 role {role} is refused (400/401/403)",
            also=(_STATUS_ASSUMPTION,),
            outcome="rejected",
            role=role,
        )
    yield _security(
        op,
        context,
        "qwac-other-organisation",
        title="a request over a TLS connection whose client certificate (QWAC) names another "
        "organisation than the signing certificate is refused (400/401/403)",
        also=(_STATUS_ASSUMPTION,),
        outcome="rejected",
    )


def _accepted(op: Operation, context: Context) -> Iterator[Scenario]:
    ok: AnswerDue = success(op)
    variant = base_variant(op, context)

    def scenario(name: str, title: str, **extra: object) -> Scenario:
        requirement = context.contract.requirement(f"AUTH-{name}", op.id)
        return Scenario(
            id=scenario_id(op.id, "auth", name, "accepted"),
            operation=op.id,
            rule=requirement.id,
            spec=requirement.spec,
            level=requirement.level,
            kind="auth",
            title=f"{op.id} {op.name}: {title} is accepted",
            expect=ok,
            variant=variant,
            params=params(case=name, **extra),
            quotes=requirement.quotes,
            reading=requirement.reading,
            requirement=requirement.id,
        )

    if has_body(op):
        yield scenario("sha512-digest", "a request with a SHA-512 Digest")
    yield scenario(
        "rfc2047-signature",
        "a Signature header MIME-encoded per RFC 2047 (its keyId names a CA with a UTF-8 name)",
        needs_trust_anchor=True,
    )
    yield scenario(
        "rfc2047-signed-header",
        "a signed X-Request-ID with a UTF-8 value sent RFC 2047-encoded",
        header="X-Request-ID",
    )
    if takes_header(op, "X-PSU-IDENTITY") and takes_header(op, "PSU-ID"):
        yield scenario("psu-identity", "a PSU identified by X-PSU-IDENTITY instead of PSU-ID")


def generate(context: Context) -> Iterator[Scenario]:
    """Authentication scenarios of every operation."""
    for op in context.operations():
        for case in CASES:
            if case.body_only and not has_body(op):
                continue
            yield _rejected(op, context, case)
        yield from _missing_role(op, context)
        yield from _stale_date(op, context)
        yield from _replay(op, context)
        yield from _ownership(op, context)
        yield from _certificate_checks(op, context)
        yield from _accepted(op, context)
