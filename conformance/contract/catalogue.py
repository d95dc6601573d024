"""Every requirement of the contract as one :class:`~conformance.contract.requirements.Requirement`,
built once when the contract is first asked (``Contract.requirements``) from what it carries:

- each row of ``rules.json`` on each operation it lists (its ``stated``, its readings per
  operation, its expected answer);
- each flow of ``flows.json`` (its level, quotes or reading);
- what an operation's place in the spec and its ``assumptions`` make of the breaks every
  operation has: a required header missing (``HDR-required``), a header's value malformed
  (``HDR-format``, one per header), a body or query constraint broken (``SCH-request``), a
  payments path naming an unknown product (``SCH-product``), a broken body (``ROB-<case>`` of
  ``facts.BODY_CASES``), a misrouted request (``ROB-unknown-path``, ``ROB-wrong-method``, ...),
  a corporate PSU without its id (``HDR-corporate-id``), the spec 5 cases of a signed request
  (``AUTH-<case>`` of ``SIGNING_CASES``) and those whose grade is not the request rule's own
  (``AUTH-no-digest``, ``AUTH-expired-certificate``, ``AUTH-certificate-other-ca``), a payment
  creation's SCA link where the profile starts every payment's SCA there
  (``SCA-link-at-creation``), and each operation's success (``POS-<operation>``);
- spec 9's versioning: each known ``x-accept-fix`` value (``VER-<value>``), an unknown one, a
  deprecated request member and the ``/v1`` prefix.

The scenario generators (``conformance.generate``) grade their scenarios by these values and the
traffic judge (``conformance.traffic``) its findings; ``docs/reference/requirements.md`` lists
them (``scripts/reference_docs.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from conformance.contract.crossfield import FORMAT_ERROR
from conformance.contract.facts import (
    AUTH_REJECTION_STATUSES,
    BODY_CASES,
    ROLE_OF_FAMILY,
    STATUS_SHOWN,
)
from conformance.contract.requirements import (
    BODY_SCHEMA_ERROR,
    BODY_SCHEMA_RESPONSE,
    CHOSEN_CODE,
    CHOSEN_STATUS,
    MUST,
    AnswerDue,
    Grade,
    Requirement,
    answer_due,
    grade,
    grade_rule,
    on_unnamed,
)

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.contract.model import Operation, Rule
    from conformance.contract.violation import Violation

__all__ = [
    "ACCEPTED_CASES",
    "ACCEPT_FIX",
    "ALLOW_HEADER",
    "CERTIFICATE_OTHER_CA",
    "CERTIFICATE_OTHER_CA_READING",
    "CORPORATE_ID",
    "CORPORATE_RULE",
    "CORPORATE_RULE_SPEC",
    "DEPRECATED_MEMBER",
    "DOCUMENTED_NOT_FOUND",
    "EXPIRED_CERTIFICATE",
    "EXPIRED_CERTIFICATE_READING",
    "FORMAT_ERROR",
    "HEADER_FORMAT",
    "HEADER_REQUIRED",
    "MISSING_ROLE",
    "NO_DIGEST",
    "REDIRECT",
    "REQUEST_SCHEMA",
    "SCA_LINK_AT_CREATION",
    "SECURITY_CASES",
    "SIGNING_CASES",
    "SIGNING_REFUSAL",
    "TRACE_NOT_ALLOWED",
    "UNKNOWN_FIX",
    "UNKNOWN_ID",
    "UNKNOWN_PATH",
    "UNKNOWN_PATH_VALUE_STATUSES",
    "UNKNOWN_PRODUCT",
    "UNKNOWN_PRODUCT_READING",
    "WITHOUT_PREFIX",
    "WRONG_METHOD",
    "Key",
    "body_case_id",
    "broken",
    "build",
    "creates_payment",
    "fix_id",
    "positive_id",
    "reading_of",
    "refusal",
    "sca_link_at_creation",
    "success",
    "success_quotes",
    "success_statuses",
]

#: A required header missing (spec 4.2), one requirement per operation.
HEADER_REQUIRED = "HDR-required"
#: A header's value breaking its schema (spec 4.2), one requirement per operation and header.
HEADER_FORMAT = "HDR-format"
#: The row of ``rules.json`` of a corporate PSU without PSU-Corporate-ID (spec 7 rule 3).
CORPORATE_RULE = "ERR-3-corporate-without-corporate-id"
#: A corporate PSU without PSU-Corporate-ID (spec 7 rule 3) on an operation that takes the header
#: and that no row of ``rules.json`` lists for the rule.
CORPORATE_ID = "HDR-corporate-id"
#: Why spec 7 rule 3 is a reading on the operations its row does not list: the rule names "a
#: corporate user", and spec 4.2 says what makes one only on payment creation and transaction
#: details (PSU-Context); elsewhere the context is chosen at SCA, so a bank may take a request
#: with PSU-Context CORPORATE to another operation (a sandbox one, which names no PSU) as no
#: corporate user's and answer it.
_CORPORATE_READING = (
    "spec 7 rule 3 answers a corporate user without PSU-Corporate-ID with 400; spec 4.2 gives "
    "PSU-Context its effect on payment creation and transaction details only ('otherwise the "
    "PSU chooses one at the first SCA'): that a request to %s with PSU-Context CORPORATE comes "
    "from a corporate user is our reading"
)
#: The spec part of the corporate-user rule.
CORPORATE_RULE_SPEC = "spec 7 rule 3"
#: Where every payment creation starts its SCA (a profile's ``[sca] start = "creation"``), a
#: creation answered 2xx carries the SCA link: spec 5 item 6's ``_links.scaRedirect`` with a
#: redirect, one per payment creation.
SCA_LINK_AT_CREATION = "SCA-link-at-creation"
#: The SCA approach spec 5 item 6 states (a profile's ``[sca] approach``).
REDIRECT = "redirect"
#: A misrouted request (spec 7; the spec shows no such answer): a path no operation has, a method
#: the path does not take (its 405 with Allow; TRACE), an unknown resource id in the path.
UNKNOWN_PATH = "ROB-unknown-path"
WRONG_METHOD = "ROB-wrong-method"
ALLOW_HEADER = "ROB-allow-header"
TRACE_NOT_ALLOWED = "ROB-trace-not-allowed"
UNKNOWN_ID = "ROB-unknown-id"
#: Operations whose 404 answer spec 7 shows, with its code: there an unknown id is a must.
DOCUMENTED_NOT_FOUND: Mapping[str, str] = MappingProxyType({"E2": "RESOURCE_UNKNOWN"})
_METHOD_READING = (
    "a method the path does not take is answered 405 with Allow (RFC 9110); the spec shows no "
    "such answer"
)
_MISROUTED = (
    (UNKNOWN_PATH, (404,), "a path no operation has is answered 404 with the spec 7 error body"),
    (WRONG_METHOD, (405,), _METHOD_READING),
    (ALLOW_HEADER, (405,), _METHOD_READING),
    (
        TRACE_NOT_ALLOWED,
        (405,),
        "TRACE, which no operation takes, is answered 405 with Allow, not 501 (RFC 9110 section "
        "15.5.6); the spec says nothing of TRACE",
    ),
    (
        UNKNOWN_ID,
        (404,),
        "an unknown resource id in the path is answered 404 with the spec 7 error body; the spec "
        "shows that answer for E2 only (spec 7: 404 RESOURCE_UNKNOWN)",
    ),
)
#: A request with a body but no Digest (spec 5 item 4), per operation: must where spec 4.2 requires
#: Digest of it, should where it leaves Digest out of the required headers.
NO_DIGEST = "AUTH-no-digest"
#: A signing certificate outside its validity period (security, should).
EXPIRED_CERTIFICATE = "AUTH-expired-certificate"
#: A signing certificate from a CA the bank does not trust (security, should).
CERTIFICATE_OTHER_CA = "AUTH-certificate-other-ca"
#: The spec 5 cases refused on every operation, each stated (must with the sentences that state
#: it): ``AUTH-<name>``, its spec part, its quotes. A missing Digest and the certificate's
#: validity and CA are graded apart (:data:`NO_DIGEST`, the readings below).
SIGNING_CASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("no-certificate", "spec 5 item 1", ("5-every", "5-1")),
    ("no-signature", "spec 5 item 2", ("5-every", "5-2")),
    ("keyid-serial-mismatch", "spec 5 item 2", ("5-2-keyid",)),
    ("keyid-ca-mismatch", "spec 5 item 2", ("5-2-keyid",)),
    ("wrong-algorithm", "spec 5 item 2", ("5-2-algorithm",)),
    ("headers-list-incomplete", "spec 5 item 2", ("5-2-headers",)),
    ("wrong-key", "spec 5 item 2", ("5-every", "5-2-value")),
    ("stale-digest", "spec 5 item 4", ("5-4", "4.2-digest")),
    ("body-changed-after-signing", "spec 5 item 4", ("5-4", "5-2-value")),
)
#: The answer due to a refused signature or certificate: the spec 7 error body (not the
#: operation's documented 401, which on a payment creation is the SCA redirect); the spec says
#: the request is refused but not with which status.
SIGNING_REFUSAL = answer_due(AUTH_REJECTION_STATUSES, None, BODY_SCHEMA_ERROR, CHOSEN_STATUS)
_FRESHNESS = (
    "Spec 5 signs the Date header but states no freshness window. A signed request whose Date "
    "lies an hour outside the clock skew the bank allows (the profile's date_skew, 300 s by "
    "default) should be refused: otherwise a captured request can be replayed later (security, "
    "graded should)."
)

_REPLAY = (
    "Spec 5 signs each request but states no replay rule. A byte-identical copy of a creation "
    "(same X-Request-ID, Date and Signature) should be refused, or answered with the same "
    "resource, never carried out a second time (security, graded should)."
)

_OWNERSHIP = (
    "The spec does not say that a TPP, or a PSU, reaches only the payments, baskets and consents "
    "it made (object-level authorisation, OWASP API Security Top 10 API1). Another TPP, with a "
    "valid certificate of its own, or another PSU should get 400, 401, 403 or 404, never the "
    "resource (security, graded should)."
)

_REVOCATION = (
    "Spec 5 item 1 asks for the TPP's signing certificate and states no revocation check. A bank "
    "relies on eIDAS certificates (PSD2 RTS Art. 34) and consults their status (the CA's "
    "revocation list or OCSP): a certificate its CA has revoked should be refused (security, "
    "graded should)."
)

_SEAL_TYPE = (
    'Spec 5 speaks only of "the TPP certificate". Under ETSI TS 119 495 a TPP signs with its '
    "sealing certificate (QcType eseal, EN 319 412-5) and authenticates TLS with its QWAC (QcType "
    "web): a request signed with a QWAC-type certificate should be refused (security, graded "
    "should)."
)

_QWAC_ROLE = (
    "Spec 5 names no PSD2 roles and no TLS client certificate. The QWAC a TPP shows in the TLS "
    "handshake carries its roles as the seal does (ETSI TS 119 495): a QWAC without the role the "
    "operation needs should be refused as the signing certificate is (security, graded should)."
)

_PAIRING = (
    "Spec 5 speaks of one TPP certificate. A TPP's QWAC and its sealing certificate name the same "
    "organisation (organizationIdentifier, ETSI TS 119 495): a connection made with one TPP's "
    "QWAC carrying requests sealed by another should be refused (security, graded should)."
)
#: The security group (``scenario.SECURITY_RULES``): what a bank and its supervisor check beyond
#: spec 5, each should with its reading and the statuses a refusal may have (the suite's choice).
SECURITY_CASES: tuple[tuple[str, str, str, tuple[int, ...]], ...] = (
    ("date-far-past", "spec 5 item 2", _FRESHNESS, AUTH_REJECTION_STATUSES),
    ("date-far-future", "spec 5 item 2", _FRESHNESS, AUTH_REJECTION_STATUSES),
    ("replay", "spec 5 item 2", _REPLAY, (400, 401, 403, 409)),
    ("other-tpp", "spec 5 item 1", _OWNERSHIP, (400, 401, 403, 404)),
    ("other-psu", "spec 5 item 5", _OWNERSHIP, (400, 401, 403, 404)),
    ("revoked-certificate", "spec 5 item 1", _REVOCATION, AUTH_REJECTION_STATUSES),
    ("seal-is-qwac", "spec 5 item 1", _SEAL_TYPE, AUTH_REJECTION_STATUSES),
    ("qwac-missing-role", "spec 5 item 1", _QWAC_ROLE, AUTH_REJECTION_STATUSES),
    ("qwac-other-organisation", "spec 5 item 1", _PAIRING, AUTH_REJECTION_STATUSES),
)
#: The spec 5 forms of a signed request a bank accepts (``AUTH-<name>``): must where spec 5
#: states the form, should with the reading where the suite reads it.
ACCEPTED_CASES: tuple[tuple[str, str, Grade], ...] = (
    ("sha512-digest", "spec 5 item 4", Grade(MUST, ("5-4", "4.2-digest"))),
    ("rfc2047-signature", "spec 5 item 3", Grade(MUST, ("5-3",))),
    (
        "rfc2047-signed-header",
        "spec 5 item 3",
        grade(
            stated=False,
            reading="spec 5 item 3 speaks of values in the Signature header; a signed header "
            "sent RFC 2047-encoded is verified on its encoded form and accepted",
        ),
    ),
    (
        "psu-identity",
        "spec 5 item 5",
        grade(
            stated=False,
            reading="a request naming the PSU by X-PSU-IDENTITY alone (spec 5 item 5) is "
            "accepted where the contract makes PSU-ID required (spec 4.2's row for E16 and E18)",
        ),
    ),
)
#: A signing certificate without the PSD2 role its operation's family needs (should, per
#: operation: ``facts.ROLE_OF_FAMILY``), refused with 403.
MISSING_ROLE = "AUTH-missing-role"
#: The readings of the two certificate requirements.
EXPIRED_CERTIFICATE_READING = (
    "only a certificate within its validity period authenticates (RFC 5280 path validation); "
    "spec 5 items 1 and 2 say only that the TPP sends its signing certificate and signs with it"
)
CERTIFICATE_OTHER_CA_READING = (
    "only a certificate issued by a CA the bank trusts authenticates; spec 5 items 1 and 2 say "
    "only that the TPP sends its signing certificate and signs with it"
)
#: A request breaking a constraint of its body's or a query parameter's schema (spec 2.7, 2.9,
#: 4.3), per operation.
REQUEST_SCHEMA = "SCH-request"
#: A payments path naming a product the bank does not offer (spec 4.1).
UNKNOWN_PRODUCT = "SCH-product"
#: The reading behind :data:`UNKNOWN_PRODUCT`.
UNKNOWN_PRODUCT_READING = (
    "a payments path naming a product the bank does not offer is refused; spec 4.1 names the "
    "product identifier, and spec 7 shows '403 (for example PRODUCT_INVALID)' for E17 without "
    "saying when"
)
#: The statuses a path naming an unknown product may be answered with.
UNKNOWN_PATH_VALUE_STATUSES = (400, 403, 404)
#: The family of the payment operations (E16, E17, E18, PA, PC, PCA, PS).
_PAYMENTS = "payments"
#: Families whose operations answer format errors with the payment error body and FORMAT_ERROR.
_PAYMENT_FAMILIES = frozenset({_PAYMENTS})
#: Spec 7 rule 7 ("the sandbox receives a malformed PSU-ID") covers the PSU-ID of sandbox
#: operations whose header set the spec does not show.
_SANDBOX_PSU_ID_RULE = "7-rule-7"

#: A requirement's key: its id, its operation ("" for every operation) and its place ("", a
#: header's name case-folded).
Key = tuple[str, str, str]


def body_case_id(name: str) -> str:
    """The requirement id of a broken body of ``facts.BODY_CASES`` (``ROB-malformed-json``)."""
    return f"ROB-{name}"


def reading_of(op: Operation) -> str:
    """Our reading behind an operation the spec only names or implies (its request, answer and
    header set are the contract's assumptions)."""
    return (
        f"{op.id} is an operation the spec only names or implies (spec 4.1: 'Their request and "
        "response shapes: not shown'); it takes the request and gives the answer the contract "
        "assumes for it"
    )


def refusal(
    op: Operation, statuses: tuple[int, ...], code: str | None = None, *, chosen: str = ""
) -> AnswerDue:
    """An error answer on ``op``: the operation's documented error schema when every status has
    one, otherwise the spec 7 error body; ``chosen`` as ``requirements.answer_due`` says."""
    documented = all(
        status in op.responses and op.responses[status].schema is not None for status in statuses
    )
    return answer_due(
        statuses, code, BODY_SCHEMA_RESPONSE if documented else BODY_SCHEMA_ERROR, chosen
    )


def _texts(op: Operation, *topics: str) -> tuple[str, ...]:
    return tuple(item.text for item in op.assumptions if item.topic in topics)


def _rule_due(rule: Rule, op: Operation) -> AnswerDue:
    statuses = rule.expected_status
    if all(status >= 400 for status in statuses):
        return refusal(op, statuses, rule.expected_code, chosen=rule.chosen)
    documented = all(
        status in op.responses and op.responses[status].schema is not None for status in statuses
    )
    return answer_due(statuses, rule.expected_code, BODY_SCHEMA_RESPONSE if documented else None)


def _rules(contract: Contract) -> Iterator[Requirement]:
    for rule in contract.rules:
        for operation_id in rule.operations:
            op = contract.operations[operation_id]
            grade_ = on_unnamed(grade_rule(rule, operation_id), op)
            yield Requirement(rule.id, rule.spec, grade_, _rule_due(rule, op), operation_id)


def success_statuses(op: Operation) -> tuple[int, ...]:
    """Every documented 2xx status of the operation (E15: 200 or 204), else its success status."""
    documented = tuple(sorted(status for status in op.responses if 200 <= status < 300))
    return documented or (op.success_status,)


def success(op: Operation) -> AnswerDue:
    """A documented success whose body (when one is documented) validates against its schema;
    where the spec shows the body but not the exact status (``statusReading``), a 2xx is must
    and the exact status a should (``chosen``)."""
    statuses = success_statuses(op)
    with_body = any(op.responses[s].schema is not None for s in statuses if s in op.responses)
    chosen = CHOSEN_STATUS if op.status_reading else ""
    return answer_due(statuses, None, BODY_SCHEMA_RESPONSE if with_body else None, chosen)


def success_quotes(op: Operation) -> tuple[str, ...]:
    """The quotes that state the operation's success (its 2xx answers, and the SCA redirect
    form where it has one)."""
    responses = [*op.success_responses]
    if op.sca_redirect_status is not None:
        responses.append(op.responses[op.sca_redirect_status])
    return tuple(dict.fromkeys(label for response in responses for label in response.quotes))


def positive_id(operation: str) -> str:
    """The requirement id of an operation's success (``POS-E16``)."""
    return f"POS-{operation}"


def _positives(contract: Contract) -> Iterator[Requirement]:
    """Each operation's success: must with the sentences that state it on an operation spec 4.1
    numbers, should on one it only names or implies (our reading of its request and answer)."""
    for op in contract.operations.values():
        stated = grade(stated=op.numbered, quotes=success_quotes(op), reading=reading_of(op))
        yield Requirement(positive_id(op.id), op.spec, stated, success(op), op.id)


#: Spec 9's x-accept-fix header, whose values opt in to a release's change.
ACCEPT_FIX = "x-accept-fix"
#: The grade of each x-accept-fix value whose effect the suite judges (``VER-<value>``): must
#: with the sentences that state the effect, else should with the reading it rests on.
_FIX_GRADES: Mapping[str, Grade] = MappingProxyType(
    {
        "amount-as-string": Grade(MUST, ("4.2-x-accept-fix", "9-accept-fix", "2.1-amount")),
        "longer-name": grade(
            stated=False,
            reading="spec 8 extends the 'account details' name to 70 characters; that E12's "
            "sandbox accountName (created with SA's assumed body) is that name is our reading",
        ),
        "cash-account-type-iso": grade(
            stated=False,
            reading="spec 9 names the value (ISO-compliant cashAccountType, a future breaking "
            "change) without showing its effect: we expect an ISO 20022 code",
        ),
        "cardaccount-switch-originalamount-and-transactionamount": grade(
            stated=False,
            reading="spec 9 names the value without showing its effect: we read it as the two "
            "amounts of a card transaction switched",
        ),
    }
)
#: A request with an x-accept-fix value no release defines (``VER-unknown-value``).
UNKNOWN_FIX = "VER-unknown-value"
#: A request using a deprecated member of its body (``VER-deprecated-<member>`` scenarios).
DEPRECATED_MEMBER = "VER-deprecated"
#: A request without the /v1 path prefix.
WITHOUT_PREFIX = "VER-v1-prefix"


def fix_id(value: str) -> str:
    """The requirement id of an x-accept-fix value (``VER-amount-as-string``)."""
    return f"VER-{value}"


def _versions(contract: Contract) -> Iterator[Requirement]:
    """Spec 9: each known x-accept-fix value, an unknown one, a deprecated member, the prefix."""
    try:
        known = contract.header_schema(ACCEPT_FIX).get("x-knownValues", ())
    except KeyError:
        known = ()
    for value in map(str, known):
        stated = _FIX_GRADES.get(value) or grade(
            stated=False,
            reading=f"a request opting in to {value} (spec 9 names it) is accepted where the "
            "effect is not shown",
        )
        yield Requirement(fix_id(value), "spec 9", stated)
    unknown = grade(
        stated=False,
        reading="an x-accept-fix value no release defines is ignored (spec 9 names the known "
        "values and says nothing of others)",
    )
    yield Requirement(UNKNOWN_FIX, "spec 9", unknown)
    yield Requirement(DEPRECATED_MEMBER, "spec 9", Grade(MUST, ("9-deprecated",)))
    prefix = grade(
        stated=False,
        reading="a path without the /v1 prefix (spec 9: 'The interface is under the path "
        "prefix /v1') is answered 404",
    )
    yield Requirement(WITHOUT_PREFIX, "spec 9", prefix, answer_due((404,)))


def _flows(contract: Contract) -> Iterator[Requirement]:
    for row in contract.flows:
        grade_ = grade(stated=row.level == MUST, quotes=row.quotes, reading=row.reading)
        yield Requirement(row.name, row.spec, grade_)


def _header_required(op: Operation) -> Grade:
    """Must with the operation's spec 4.2 row, should where its required set is assumed or the
    spec shows no row for it."""
    reading = "; ".join(_texts(op, "required-headers"))
    if not reading and not op.headers_quotes:
        reading = (
            f"spec 4.2 shows no header row for {op.id}; we expect the required headers the "
            "contract lists for it"
        )
    return grade(
        stated=not reading, quotes=(*op.headers_quotes, "4.2-required-intro"), reading=reading
    )


def _header_format(op: Operation, name: str) -> Grade:
    """Must (with the place's quotes) where the spec shows the operation's header set or states
    the header (the sandbox's PSU-ID, spec 7 rule 7); should where it shows neither."""
    if name.lower() == "psu-id" and op.family == "sandbox":
        return Grade(MUST, (_SANDBOX_PSU_ID_RULE,))
    if name.lower() in _FORWARDED and not any(
        header.lower() == name.lower() for header in op.required_headers
    ):
        return grade(
            stated=False,
            reading=f"spec 4.2 describes {name} as a value the TPP forwards from the PSU's "
            f"client; that {op.id}, where it is optional, refuses a malformed one rather than "
            "ignoring it is our reading",
        )
    if _psu_header(name) and not any(_psu_header(header) for header in op.required_headers):
        return grade(
            stated=False,
            reading=f"spec 4.2 shows {op.id}'s header set without a PSU header (the PSU-* "
            f"headers are optional on every operation): that {op.id}, which acts for no PSU, "
            f"checks the value of {name} is our reading",
        )
    if op.numbered:
        return Grade(MUST)
    return grade(
        stated=False,
        reading=f"spec 4.2 does not show {op.id}'s header set (spec 4.1: 'only named'); we "
        f"expect it to take {name} and check its value",
    )


#: The headers spec 4.2 describes as forwarded from the PSU's client ("forwarded client address
#: and port", "forwarded client header values, when available", "forwarded method", "forwarded
#: device identifier", "forwarded geo location"), lowercased.
_FORWARDED = frozenset(
    {
        "psu-ip-address",
        "psu-ip-port",
        "psu-user-agent",
        "psu-accept",
        "psu-accept-charset",
        "psu-accept-encoding",
        "psu-accept-language",
        "psu-http-method",
        "psu-device-id",
        "psu-geo-location",
    }
)


def _psu_header(name: str) -> bool:
    """Whether ``name`` is one of spec 4.2's PSU headers (PSU-*, X-PSU-IDENTITY)."""
    folded = name.lower()
    return folded.startswith("psu-") or folded == "x-psu-identity"


def _schema(op: Operation, *topics: str) -> Grade:
    """Must (with the place's quotes) where the spec shows the operation's request; should on an
    operation it only names, or where the contract assumes the request's shape (``topics``)."""
    if not op.numbered:
        return grade(stated=False, reading=reading_of(op))
    texts = _texts(op, *topics)
    if texts:
        return grade(stated=False, reading="; ".join(dict.fromkeys(texts)))
    return Grade(MUST)


def _format_refusal(op: Operation) -> AnswerDue:
    """A request breaking a constraint: 400 stated where spec 7 shows it (E17's row), chosen
    elsewhere; FORMAT_ERROR for a payment, always chosen (spec 7 gives it "for example")."""
    chosen = CHOSEN_CODE if op.id in STATUS_SHOWN else CHOSEN_STATUS
    code = FORMAT_ERROR if op.family in _PAYMENT_FAMILIES else None
    return refusal(op, (400,), code, chosen=chosen)


def _corporate(contract: Contract) -> Iterator[Requirement]:
    """Spec 7 rule 3 on each operation that takes PSU-Corporate-ID and that no row of the rule
    lists (the rows grade it where they do)."""
    covered = {
        operation
        for rule in contract.rules
        if CORPORATE_RULE_SPEC in rule.spec
        for operation in rule.operations
    }
    for op in contract.operations.values():
        headers = {name.lower() for name in (*op.required_headers, *op.optional_headers)}
        if op.id in covered or "psu-corporate-id" not in headers:
            continue
        stated = grade(stated=False, quotes=("7-rule-3", "5-5"), reading=_CORPORATE_READING % op.id)
        due = refusal(op, (400,))
        yield Requirement(CORPORATE_ID, CORPORATE_RULE_SPEC, stated, due, op.id)


def creates_payment(op: Operation) -> bool:
    """Whether ``op`` creates a payment (E16, E17, E18): a POST of the payments family whose path
    names nothing but the product."""
    pinned = all("const" in p.schema or "enum" in p.schema for p in op.path_parameters)
    return op.family == _PAYMENTS and op.method == "POST" and pinned


def _sca_links(contract: Contract) -> Iterator[Requirement]:
    for op in contract.operations.values():
        if creates_payment(op):
            stated = Grade(MUST, ("5-6",))
            yield Requirement(SCA_LINK_AT_CREATION, "spec 5 item 6", stated, None, op.id)


def sca_link_at_creation(contract: Contract, operation: str, approach: str) -> Grade:
    """The grade of a payment creation's SCA link where the profile starts every payment's SCA
    at its creation: with a redirect, spec 5 item 6's ``_links.scaRedirect`` (the requirement's
    must); with the decoupled or OAuth approach the link the approach names, should (the
    approach is the profile's, not the spec's)."""
    requirement = contract.requirement(SCA_LINK_AT_CREATION, operation)
    if approach == REDIRECT:
        return requirement.grade
    return grade(
        stated=False,
        reading="the profile says every payment creation starts its SCA ([sca] start = "
        f'"creation", approach "{approach}"): its answer carries that link',
    )


def _accepted(contract: Contract) -> Iterator[Requirement]:
    """The spec 5 forms a bank accepts (``ACCEPTED_CASES``), and each on an operation the spec
    does not number: its success rests on the request the contract assumes, so should there."""
    for name, spec, stated in ACCEPTED_CASES:
        yield Requirement(f"AUTH-{name}", spec, stated)
        for op in contract.operations.values():
            if not op.numbered:
                reading = "; ".join(text for text in (stated.reading, reading_of(op)) if text)
                assumed = grade(stated=False, quotes=stated.quotes, reading=reading)
                yield Requirement(f"AUTH-{name}", spec, assumed, None, op.id)


def _signing(contract: Contract) -> Iterator[Requirement]:
    """The spec 5 cases a request breaks (``SIGNING_CASES``), and those whose grade is not the
    request rule's own (``request_rules``): a missing Digest where spec 4.2 does not require it,
    and the certificate's validity and CA."""
    for name, spec, quotes in SIGNING_CASES:
        yield Requirement(f"AUTH-{name}", spec, Grade(MUST, quotes), SIGNING_REFUSAL)
    yield from _accepted(contract)
    for name, spec, reading, statuses in SECURITY_CASES:
        due = answer_due(statuses, None, BODY_SCHEMA_ERROR, CHOSEN_STATUS)
        yield Requirement(f"AUTH-{name}", spec, grade(stated=False, reading=reading), due)
    role_refusal = answer_due((403,), None, BODY_SCHEMA_ERROR, CHOSEN_STATUS)
    for op in contract.operations.values():
        role = ROLE_OF_FAMILY.get(op.family)
        if role is not None:
            reading = (
                f"{op.family} operations need a certificate with the PSD2 role {role} (PSD2 "
                "practice, ETSI TS 119 495); the spec names no roles"
            )
            stated = grade(stated=False, reading=reading)
            yield Requirement(MISSING_ROLE, "spec 5 item 1", stated, role_refusal, op.id)
    for op in contract.operations.values():
        if op.request_schema is None:
            continue
        required = any(name.lower() == "digest" for name in op.required_headers)
        stated = grade(
            stated=required,
            quotes=("5-4", "4.2-digest"),
            reading=f"{op.id} refuses a body without Digest although spec 4.2 leaves Digest out "
            "of its required headers",
        )
        yield Requirement(
            NO_DIGEST, "spec 5 item 4", on_unnamed(stated, op), SIGNING_REFUSAL, op.id
        )
    # a body sent without Digest to an operation that takes none: spec 5 item 4 digests "the body"
    yield Requirement(NO_DIGEST, "spec 5 item 4", Grade(MUST, ("5-4",)), SIGNING_REFUSAL)
    for requirement_id, reading in (
        (EXPIRED_CERTIFICATE, EXPIRED_CERTIFICATE_READING),
        (CERTIFICATE_OTHER_CA, CERTIFICATE_OTHER_CA_READING),
    ):
        stated = grade(stated=False, reading=reading)
        yield Requirement(requirement_id, "spec 5 item 1", stated, SIGNING_REFUSAL)


def _operations(contract: Contract) -> Iterator[Requirement]:
    for op in contract.operations.values():
        missing = refusal(op, (400,), chosen=CHOSEN_STATUS)
        yield Requirement(HEADER_REQUIRED, op.headers_spec, _header_required(op), missing, op.id)
        listed = _header_format(op, "each header it lists")
        yield Requirement(HEADER_FORMAT, op.headers_spec, listed, missing, op.id)
        for name in (*op.required_headers, *op.optional_headers):
            grade_ = _header_format(op, name)
            yield Requirement(HEADER_FORMAT, op.headers_spec, grade_, missing, op.id, name)
        due = _format_refusal(op)
        spec = op.request_spec or op.spec
        yield Requirement(REQUEST_SCHEMA, spec, _schema(op, "request"), due, op.id)
        if any("const" in p.schema or "enum" in p.schema for p in op.path_parameters):
            product = refusal(op, UNKNOWN_PATH_VALUE_STATUSES, chosen=CHOSEN_STATUS)
            unknown = grade(stated=False, reading=UNKNOWN_PRODUCT_READING)
            yield Requirement(UNKNOWN_PRODUCT, "spec 4.1", unknown, product, op.id)
        if op.request_schema is None:
            continue
        for case in BODY_CASES:
            stated = grade(stated=bool(case.quotes), quotes=case.quotes, reading=case.reading)
            chosen = CHOSEN_STATUS if case.quotes else ""
            case_due = answer_due(case.statuses, None, BODY_SCHEMA_ERROR, chosen)
            yield Requirement(
                body_case_id(case.name), "spec 7", on_unnamed(stated, op), case_due, op.id
            )


def _misrouted(contract: Contract) -> Iterator[Requirement]:
    """A misrouted request, on every operation alike (should: the spec shows no such answer),
    and an unknown id where spec 7 shows the 404 (must)."""
    for requirement_id, statuses, reading in _MISROUTED:
        due = answer_due(statuses, None, BODY_SCHEMA_ERROR)
        yield Requirement(requirement_id, "spec 7", grade(stated=False, reading=reading), due)
    for operation, code in DOCUMENTED_NOT_FOUND.items():
        stated = Grade(MUST, (f"7-{operation}", f"4.3-{operation}"))
        due = answer_due((404,), code, BODY_SCHEMA_RESPONSE)
        yield Requirement(UNKNOWN_ID, "spec 7", stated, due, operation)


def _body_cases() -> Iterator[Requirement]:
    """The broken bodies on a request whose operation takes none."""
    for case in BODY_CASES:
        stated = grade(stated=bool(case.quotes), quotes=case.quotes, reading=case.reading)
        chosen = CHOSEN_STATUS if case.quotes else ""
        due = answer_due(case.statuses, None, BODY_SCHEMA_ERROR, chosen)
        yield Requirement(body_case_id(case.name), "spec 7", stated, due)


def broken(contract: Contract, violation: Violation, operation: Operation) -> Requirement:
    """The requirement a request rule's ``violation`` breaks on ``operation``
    (``request_rules``: it names the requirement, this finds it at the operation and the
    violation's place): spec 7 rule 3 is its ``rules.json`` row where the row lists the
    operation and :data:`CORPORATE_ID` elsewhere. The reference server answers what it makes due
    and the traffic judge holds the bank's answer to it."""
    requirement = violation.requirement
    if (
        requirement == CORPORATE_RULE
        and operation.id not in contract.rule(CORPORATE_RULE).operations
    ):
        requirement = CORPORATE_ID
    return contract.requirement(requirement, operation.id, violation.path)


def build(contract: Contract) -> Mapping[Key, Requirement]:
    """Every requirement of ``contract`` by its key (the first of a flow's rows where several
    share its name)."""
    table: dict[Key, Requirement] = {}
    for requirement in (
        *_rules(contract),
        *_flows(contract),
        *_positives(contract),
        *_versions(contract),
        *_operations(contract),
        *_corporate(contract),
        *_sca_links(contract),
        *_signing(contract),
        *_misrouted(contract),
        *_body_cases(),
    ):
        key = (requirement.id, requirement.operation, requirement.place.lower())
        table.setdefault(key, requirement)
    return MappingProxyType(table)
