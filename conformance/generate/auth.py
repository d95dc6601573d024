"""Authentication scenarios (spec 5): signature, digest, certificate and PSD2 role cases, per
operation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from conformance.contract import Operation
from conformance.contract.catalogue import success
from conformance.contract.facts import AUTH_REJECTION_STATUSES, ROLE_OF_FAMILY
from conformance.contract.requirements import (
    BODY_SCHEMA_ERROR,
    CHOSEN_STATUS,
    AnswerDue,
    answer_due,
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
    yield Scenario(
        id=scenario_id(op.id, "auth", "missing-role", "rejected"),
        operation=op.id,
        rule="AUTH-missing-role",
        spec="spec 5 item 1",
        level="should",
        kind="auth",
        title=f"{op.id} {op.name}: a certificate without the PSD2 role {role} is refused with 403",
        expect=answer_due((403,), None, BODY_SCHEMA_ERROR, CHOSEN_STATUS),
        variant=base_variant(op, context),
        params=params(case="missing-role", needs_trust_anchor=True, role=role),
        assumptions=(
            f"PSD2 practice: {op.family} operations need a certificate with the {role} role; "
            "the spec names no roles.",
        ),
        reading=f"{op.family} operations need a certificate with the PSD2 role {role} (PSD2 "
        "practice, ETSI TS 119 495); the spec names no roles",
    )


#: How far outside the allowed clock skew the stale-Date cases put the signed Date (seconds).
STALE_DATE_MARGIN = 3600
_FRESHNESS_ASSUMPTION = (
    "Spec 5 signs the Date header but states no freshness window. A signed request whose Date "
    "lies an hour outside the clock skew the bank allows (the profile's date_skew, 300 s by "
    "default) should be refused: otherwise a captured request can be replayed later (security, "
    "graded should)."
)


def _security(
    op: Operation,
    context: Context,
    name: str,
    *,
    spec: str,
    title: str,
    statuses: tuple[int, ...],
    assumptions: tuple[str, ...],
    outcome: str = "refused",
    **extra: object,
) -> Scenario:
    """One scenario of the security group (``scenario.SECURITY_RULES``): graded should, a
    refusal with the spec 7 error body whose status the suite chose."""
    return Scenario(
        id=scenario_id(op.id, "auth", name, outcome),
        operation=op.id,
        rule=f"AUTH-{name}",
        spec=spec,
        level="should",
        kind="auth",
        title=f"{op.id} {op.name}: {title}",
        expect=answer_due(statuses, None, BODY_SCHEMA_ERROR, CHOSEN_STATUS),
        variant=base_variant(op, context),
        params=params(case=name, **extra),
        assumptions=assumptions,
        reading=assumptions[0],
    )


def _stale_date(op: Operation, context: Context) -> Iterator[Scenario]:
    for name, when in (("date-far-past", "before"), ("date-far-future", "after")):
        yield _security(
            op,
            context,
            name,
            spec="spec 5 item 2",
            title=f"a request signed with a Date an hour {when} the allowed clock skew is "
            "refused (400/401/403)",
            statuses=AUTH_REJECTION_STATUSES,
            assumptions=(_FRESHNESS_ASSUMPTION, _STATUS_ASSUMPTION),
            outcome="rejected",
        )


#: The creations whose byte-identical replay is tried: each would otherwise make a second resource.
REPLAYED_CREATIONS = ("E16", "E17", "E18", "CC")
_REPLAY_ASSUMPTION = (
    "Spec 5 signs each request but states no replay rule. A byte-identical copy of a creation "
    "(same X-Request-ID, Date and Signature) should be refused, or answered with the same "
    "resource, never carried out a second time (security, graded should)."
)


def _replay(op: Operation, context: Context) -> Iterator[Scenario]:
    if op.id in REPLAYED_CREATIONS:
        yield _security(
            op,
            context,
            "replay",
            spec="spec 5 item 2",
            title="a byte-identical replay of an accepted creation (same X-Request-ID, Date and "
            "Signature) is refused or answered with the same resource, never carried out twice",
            statuses=(400, 401, 403, 409),
            assumptions=(_REPLAY_ASSUMPTION,),
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
_OWNERSHIP_ASSUMPTION = (
    "The spec does not say that a TPP, or a PSU, reaches only the payments, baskets and consents "
    "it made (object-level authorisation, OWASP API Security Top 10 API1). Another TPP, with a "
    "valid certificate of its own, or another PSU should get 400, 401, 403 or 404, never the "
    "resource (security, graded should)."
)


def _ownership(op: Operation, context: Context) -> Iterator[Scenario]:
    if op.id in OWNED_RESOURCE_OPERATIONS:
        yield _security(
            op,
            context,
            "other-tpp",
            spec="spec 5 item 1",
            title="a second TPP, signing with a valid certificate of its own, does not reach "
            "the resource the first TPP made (400/401/403/404)",
            statuses=(400, 401, 403, 404),
            assumptions=(_OWNERSHIP_ASSUMPTION,),
            needs_trust_anchor=True,
        )
    if op.id in PSU_RESOURCE_OPERATIONS:
        yield _security(
            op,
            context,
            "other-psu",
            spec="spec 5 item 5",
            title="the same TPP naming a second PSU (PSU-ID of another customer) does not reach "
            "the first PSU's payment, basket or consent (400/401/403/404)",
            statuses=(400, 401, 403, 404),
            assumptions=(_OWNERSHIP_ASSUMPTION,),
        )


# --- certificates as banks and supervisors check them (security group) -------------------------

_REVOCATION_ASSUMPTION = (
    "Spec 5 item 1 asks for the TPP's signing certificate and states no revocation check. A bank "
    "relies on eIDAS certificates (PSD2 RTS Art. 34) and consults their status (the CA's "
    "revocation list or OCSP): a certificate its CA has revoked should be refused (security, "
    "graded should)."
)
_SEAL_TYPE_ASSUMPTION = (
    'Spec 5 speaks only of "the TPP certificate". Under ETSI TS 119 495 a TPP signs with its '
    "sealing certificate (QcType eseal, EN 319 412-5) and authenticates TLS with its QWAC (QcType "
    "web): a request signed with a QWAC-type certificate should be refused (security, graded "
    "should)."
)
_QWAC_ROLE_ASSUMPTION = (
    "Spec 5 names no PSD2 roles and no TLS client certificate. The QWAC a TPP shows in the TLS "
    "handshake carries its roles as the seal does (ETSI TS 119 495): a QWAC without the role the "
    "operation needs should be refused as the signing certificate is (security, graded should)."
)
_PAIRING_ASSUMPTION = (
    "Spec 5 speaks of one TPP certificate. A TPP's QWAC and its sealing certificate name the same "
    "organisation (organizationIdentifier, ETSI TS 119 495): a connection made with one TPP's "
    "QWAC carrying requests sealed by another should be refused (security, graded should)."
)


def _certificate_checks(op: Operation, context: Context) -> Iterator[Scenario]:
    """Revocation, the certificate's type, the QWAC's roles and the pairing of QWAC and seal:
    what a bank and its supervisor check beyond spec 5 (``scenario.CERTIFICATE_RULES``)."""
    yield _security(
        op,
        context,
        "revoked-certificate",
        spec="spec 5 item 1",
        title="a request signed with a certificate its CA has revoked is refused (400/401/403)",
        statuses=AUTH_REJECTION_STATUSES,
        assumptions=(_REVOCATION_ASSUMPTION, _STATUS_ASSUMPTION),
        outcome="rejected",
    )
    yield _security(
        op,
        context,
        "seal-is-qwac",
        spec="spec 5 item 1",
        title="a request signed with a QWAC-type certificate (QcType web) is refused (400/401/403)",
        statuses=AUTH_REJECTION_STATUSES,
        assumptions=(_SEAL_TYPE_ASSUMPTION, _STATUS_ASSUMPTION),
        outcome="rejected",
    )
    role = ROLE_OF_FAMILY.get(op.family)
    if role is not None:
        yield _security(
            op,
            context,
            "qwac-missing-role",
            spec="spec 5 item 1",
            title=f"a request over a TLS connection whose client certificate (QWAC) lacks the "
            f"PSD2 role {role} is refused (400/401/403)",
            statuses=AUTH_REJECTION_STATUSES,
            assumptions=(_QWAC_ROLE_ASSUMPTION, _STATUS_ASSUMPTION),
            outcome="rejected",
            role=role,
        )
    yield _security(
        op,
        context,
        "qwac-other-organisation",
        spec="spec 5 item 1",
        title="a request over a TLS connection whose client certificate (QWAC) names another "
        "organisation than the signing certificate is refused (400/401/403)",
        statuses=AUTH_REJECTION_STATUSES,
        assumptions=(_PAIRING_ASSUMPTION, _STATUS_ASSUMPTION),
        outcome="rejected",
    )


def _accepted(op: Operation, context: Context) -> Iterator[Scenario]:
    ok: AnswerDue = success(op)
    variant = base_variant(op, context)

    def scenario(
        name: str,
        spec: str,
        level: str,
        title: str,
        *,
        quotes: tuple[str, ...] = (),
        reading: str = "",
        **extra: object,
    ) -> Scenario:
        return Scenario(
            id=scenario_id(op.id, "auth", name, "accepted"),
            operation=op.id,
            rule=f"AUTH-{name}",
            spec=spec,
            level=level,
            kind="auth",
            title=f"{op.id} {op.name}: {title} is accepted",
            expect=ok,
            variant=variant,
            params=params(case=name, **extra),
            quotes=quotes,
            reading=reading,
        )

    if has_body(op):
        yield scenario(
            "sha512-digest",
            "spec 5 item 4",
            "must",
            "a request with a SHA-512 Digest",
            quotes=("5-4", "4.2-digest"),
        )
    yield scenario(
        "rfc2047-signature",
        "spec 5 item 3",
        "must",
        "a Signature header MIME-encoded per RFC 2047 (its keyId names a CA with a UTF-8 name)",
        quotes=("5-3",),
        needs_trust_anchor=True,
    )
    yield scenario(
        "rfc2047-signed-header",
        "spec 5 item 3",
        "should",
        "a signed X-Request-ID with a UTF-8 value sent RFC 2047-encoded",
        reading="spec 5 item 3 speaks of values in the Signature header; a signed header sent "
        "RFC 2047-encoded is verified on its encoded form and accepted",
        header="X-Request-ID",
    )
    if takes_header(op, "X-PSU-IDENTITY") and takes_header(op, "PSU-ID"):
        yield scenario(
            "psu-identity",
            "spec 5 item 5",
            "should",
            "a PSU identified by X-PSU-IDENTITY instead of PSU-ID",
            reading="a request naming the PSU by X-PSU-IDENTITY alone (spec 5 item 5) is accepted "
            "where the contract makes PSU-ID required (spec 4.2's row for E16 and E18)",
        )


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
