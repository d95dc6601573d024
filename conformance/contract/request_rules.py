"""The request rules of spec 4.2, spec 5 and spec 7 rule 3, each written once as a function from a
request (:class:`RequestView`) to its :class:`~conformance.contract.violation.Violation`\\ s, used
by both sides, as ``crossfield`` is for the body rules of spec 2.7:

- :func:`missing_headers`: the required headers present and not empty (spec 4.2);
- :func:`signature_verification` and :func:`signature_violation`: Signature, Digest and certificate
  (spec 5 items 1–4, through ``conformance.signing.verify_request``);
- :func:`untrusted_certificate` and :func:`missing_role`: the certificate's trust (``--trust``)
  and its PSD2 role (``facts.ROLE_OF_FAMILY``);
- :func:`stale_date`: a signed Date within the clock skew of the time it is judged at;
- :func:`replayed` (with :func:`replay_key`): a state-changing request that repeats the signature
  of an earlier one on the same method and request target;
- :func:`header_misfits`: each header the operation lists fits its schema
  (``types/headers.json``, RFC 2047 encoded words decoded);
- :func:`psu_violations`: X-PSU-IDENTITY a national identity or D-number (spec 5 item 5), a
  corporate PSU names its PSU-Corporate-ID (spec 7 rule 3).

A rule reads the request and what it is told (the operation, the clock to judge by, the header
set the bank requires); it never reads a clock, a fault switch or a setting of its own. The
reference server answers a violation with its error (``reference_server.pipeline.auth``; its fault
switches stay around the call); the traffic judge grades it as a finding
(``conformance.traffic.request_checks``). A violation names the requirement it breaks
(``catalogue.broken`` finds it on the operation): both sides read the answer due from it, and the
violation's ``status`` is the reference server's own choice among the statuses due.
"""

from __future__ import annotations

import email.utils
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conformance.contract.annotations import quotes_at, reading_at
from conformance.contract.catalogue import CORPORATE_RULE, HEADER_FORMAT, HEADER_REQUIRED
from conformance.contract.facts import ROLE_OF_FAMILY
from conformance.contract.identifiers import is_valid_national_id
from conformance.contract.violation import Violation
from conformance.signing import (
    SPEC5_SIGNED_HEADERS,
    Verification,
    VerificationFailure,
    decode_header_value,
    verify_chain,
    verify_request,
)

if TYPE_CHECKING:
    from datetime import datetime

    from cryptography import x509

    from conformance.contract import Check, Contract, Operation

__all__ = [
    "CORPORATE_RULE",
    "PSU_ID",
    "PSU_IDENTITY",
    "REPLAY_RULE",
    "ROLE_READING",
    "SAFE_METHODS",
    "Headers",
    "RequestView",
    "header_misfits",
    "lists",
    "missing_headers",
    "missing_role",
    "present",
    "psu_violations",
    "replay_key",
    "replayed",
    "signature_verification",
    "signature_violation",
    "stale_date",
    "untrusted_certificate",
]

PSU_ID = "PSU-ID"
PSU_IDENTITY = "X-PSU-IDENTITY"
_CORPORATE_ID = "PSU-Corporate-ID"
_CONTEXT = "PSU-Context"
_CERTIFICATE = "TPP-Signature-Certificate"
#: The reading behind the PSD2 role per family (spec 5 states none).
ROLE_READING = (
    "spec 5 states a TPP certificate but no PSD2 role per operation; the suite reads PSP_PI for "
    "payments and baskets, PSP_AI for accounts and consents"
)


class Headers(Mapping[str, str]):
    """Case-insensitive, immutable request headers (first value wins for repeated names)."""

    __slots__ = ("_items", "_lookup", "_names")

    def __init__(self, items: Iterable[tuple[str, str]] = ()) -> None:
        self._items: tuple[tuple[str, str], ...] = tuple(items)
        lookup: dict[str, str] = {}
        names: dict[str, str] = {}
        for name, value in self._items:
            key = name.lower()
            if key not in lookup:
                lookup[key] = value
                names[key] = name
        self._lookup = lookup
        #: Lowercased name → the name as first received; insertion order is arrival order.
        self._names = names

    def __getitem__(self, name: str) -> str:
        return self._lookup[name.lower()]

    def get(self, name: str, default: Any = None) -> Any:
        # Mapping.get goes through __getitem__ and a KeyError for every absent header.
        return self._lookup.get(name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._lookup

    def __iter__(self) -> Iterator[str]:
        """Each name once, as first received, in arrival order."""
        return iter(self._names.values())

    def __len__(self) -> int:
        return len(self._lookup)

    def folded(self) -> Mapping[str, str]:
        """Lowercased name → value (the first of repeated names), read-only: what a lookup
        sees, without a copy (the signature check reads every header of every request)."""
        return MappingProxyType(self._lookup)

    def named(self) -> Iterator[tuple[str, str, str]]:
        """``(lowercased name, name as first received, value)`` per name, in arrival order."""
        lookup = self._lookup
        for key, name in self._names.items():
            yield key, name, lookup[key]

    def raw(self) -> tuple[tuple[str, str], ...]:
        """Every header line in arrival order, repeats included."""
        return self._items

    def __repr__(self) -> str:
        return f"Headers({list(self._items)!r})"


@dataclass(frozen=True)
class RequestView:
    """One request as the rules read it: the method, the request target as sent (path and
    query, for the signing string), the headers and the body."""

    method: str
    target: str
    headers: Headers
    body: bytes = b""


# -- helpers --------------------------------------------------------------------------------------


def present(headers: Headers, name: str, *, empty_ok: bool = False) -> bool:
    """Whether the header is sent with a value; an empty value counts as absent unless
    ``empty_ok`` (the reference server's permissive reading ``empty-header-values``: spec 4.2
    types headers as strings)."""
    value = headers.get(name)
    return value is not None and (empty_ok or value.strip() != "")


def lists(operation: Operation, header: str) -> bool:
    """Whether ``operation`` lists ``header`` (required or optional; case-insensitive)."""
    return header.lower() in _folded_names(operation.required_headers, operation.optional_headers)


@lru_cache(maxsize=256)
def _folded_names(required: tuple[str, ...], optional: tuple[str, ...]) -> frozenset[str]:
    """Cached on the two tuples themselves (an operation is read-only, its lists are tuples),
    so that the set is not rebuilt for every header of every request."""
    return frozenset(name.lower() for name in required + optional)


def _decoded(value: str) -> str:
    """``value`` RFC 2047-decoded and stripped; as sent (stripped) when it does not decode."""
    try:
        return decode_header_value(value.strip())
    except ValueError:
        return value.strip()


# -- spec 4.2: required headers ---------------------------------------------------------------


def missing_headers(
    view: RequestView, operation: Operation, required: Iterable[str], *, empty_ok: bool = False
) -> list[Violation]:
    """Spec 4.2: each of ``required`` (the operation's required set, or the bank's) present and
    not empty; on an operation that lists X-PSU-IDENTITY it stands in for PSU-ID (spec 5 item
    5). One violation per missing header, in ``required``'s order."""
    headers = view.headers
    return [
        Violation(
            name,
            "HTTP_HEADER_REQUIRED",
            f"{name} is required (spec 4.2)",
            rule="TPP-header-required",
            requirement=HEADER_REQUIRED,
            status=400,
            spec=operation.headers_spec,
        )
        for name in required
        if not present(headers, name, empty_ok=empty_ok)
        and not (
            name.lower() == PSU_ID.lower()
            and lists(operation, PSU_IDENTITY)
            and present(headers, PSU_IDENTITY, empty_ok=empty_ok)
        )
    ]


# -- spec 5 items 1–4: signature, digest, certificate ------------------------------------------


def signature_verification(
    view: RequestView,
    *,
    now: datetime,
    check_validity: bool = True,
    required_signed: Iterable[str] = SPEC5_SIGNED_HEADERS,
) -> Verification:
    """Spec 5 items 1–4 on the request (``conformance.signing.verify_request``), the
    certificate's validity judged at ``now``."""
    return verify_request(
        view.method,
        view.target,
        view.headers.folded(),
        view.body,
        required_signed=tuple(required_signed),
        now=now,
        check_validity=check_validity,
    )


@dataclass(frozen=True)
class _SignatureRule:
    rule: str
    quote: str
    path: str
    requirement: str
    status: int
    code: str


#: Each verification failure: its rule id, the label of its quote (``quotes.json``), where, the
#: requirement it breaks (``catalogue.SIGNING_CASES``) and the reference server's answer among
#: those due (spec 5 and 7 show none: ``assumptions.md``). A missing header is placed by
#: :func:`signature_violation`.
_SIGNATURE_RULES: Mapping[VerificationFailure, _SignatureRule] = {
    VerificationFailure.MISSING_HEADER: _SignatureRule(
        "TPP-signature-header-missing",
        "5-2",
        "Signature",
        "AUTH-no-signature",
        400,
        "HTTP_HEADER_REQUIRED",
    ),
    VerificationFailure.MALFORMED_SIGNATURE: _SignatureRule(
        "TPP-signature-malformed", "5-2", "Signature", "AUTH-no-signature", 400, "FORMAT_ERROR"
    ),
    VerificationFailure.BAD_CERTIFICATE: _SignatureRule(
        "TPP-certificate-invalid",
        "5-1",
        _CERTIFICATE,
        "AUTH-no-certificate",
        401,
        "CERTIFICATE_INVALID",
    ),
    VerificationFailure.UNSUPPORTED_ALGORITHM: _SignatureRule(
        "TPP-signature-algorithm",
        "5-2-algorithm",
        "Signature",
        "AUTH-wrong-algorithm",
        401,
        "SIGNATURE_INVALID",
    ),
    VerificationFailure.KEYID_MISMATCH: _SignatureRule(
        "TPP-signature-keyid",
        "5-2-keyid",
        "Signature",
        "AUTH-keyid-serial-mismatch",
        401,
        "SIGNATURE_INVALID",
    ),
    VerificationFailure.DIGEST_MISMATCH: _SignatureRule(
        "TPP-digest-mismatch", "5-4", "Digest", "AUTH-stale-digest", 401, "SIGNATURE_INVALID"
    ),
    VerificationFailure.UNSUPPORTED_DIGEST_ALGORITHM: _SignatureRule(
        "TPP-digest-algorithm", "5-4", "Digest", "AUTH-stale-digest", 400, "FORMAT_ERROR"
    ),
    VerificationFailure.HEADERS_INCOMPLETE: _SignatureRule(
        "TPP-signature-headers-list",
        "5-2-headers",
        "Signature",
        "AUTH-headers-list-incomplete",
        401,
        "SIGNATURE_INVALID",
    ),
    VerificationFailure.BAD_SIGNATURE: _SignatureRule(
        "TPP-signature-value", "5-2-value", "Signature", "AUTH-wrong-key", 401, "SIGNATURE_INVALID"
    ),
}
#: The requirement a missing signing header breaks, by the header (lowercased): the certificate
#: (spec 5 item 1), the Digest (spec 5 item 4), else the Signature (spec 5 item 2).
_MISSING_HEADER_REQUIREMENTS: Mapping[str, str] = MappingProxyType(
    {_CERTIFICATE.lower(): "AUTH-no-certificate", "digest": "AUTH-no-digest"}
)
#: The requirement a certificate outside its validity period breaks (it parsed: a should).
_EXPIRED_CERTIFICATE = "AUTH-expired-certificate"


def signature_violation(verification: Verification) -> Violation | None:
    """The broken rule of a failed verification (stated by spec 5: must), None when it held;
    placed at the header the verifier names (a missing one, one left out of the signed list),
    else at the rule's own header."""
    if verification.ok or verification.failure is None:
        return None
    rule = _SIGNATURE_RULES[verification.failure]
    path = verification.header or rule.path
    requirement = rule.requirement
    if verification.failure is VerificationFailure.MISSING_HEADER:
        requirement = _MISSING_HEADER_REQUIREMENTS.get(path.lower(), requirement)
    elif verification.failure is VerificationFailure.BAD_CERTIFICATE and verification.certificate:
        requirement = _EXPIRED_CERTIFICATE  # it parsed: its validity failed
    return Violation(
        path,
        rule.code,
        verification.detail,
        rule=rule.rule,
        requirement=requirement,
        status=rule.status,
        spec="spec 5",
        quotes=(rule.quote,),
    )


def untrusted_certificate(
    certificate: x509.Certificate, cas: Iterable[x509.Certificate], now: datetime
) -> Violation | None:
    """Spec 5 item 1 with ``--trust``: the signing certificate chains to one of ``cas``; else
    why not, told against the CA its issuer names (the first CA when it names none): the reason
    a bank would give."""
    problems: list[tuple[bool, str]] = []
    for ca in cas:
        problem = verify_chain(certificate, ca, now=now)
        if problem is None:
            return None
        problems.append((ca.subject != certificate.issuer, problem))
    if not problems:
        return None
    reason = min(problems, key=lambda named: named[0])[1]
    return Violation(
        _CERTIFICATE,
        "CERTIFICATE_INVALID",
        f"the signing certificate is not issued by a trusted CA: {reason}",
        rule="TPP-certificate-untrusted",
        requirement="AUTH-certificate-other-ca",
        status=401,
        spec="spec 5 item 1",
        quotes=("5-1",),
    )


def missing_role(
    operation: Operation,
    roles: frozenset[str] | None,
    *,
    what: str = "the certificate",
    path: str = _CERTIFICATE,
) -> Violation | None:
    """A certificate that carries PSD2 roles carries the one ``operation``'s family needs
    (``facts.ROLE_OF_FAMILY``; our reading, :data:`ROLE_READING`); ``what`` names the
    certificate in the text."""
    needed = ROLE_OF_FAMILY.get(operation.family)
    if roles is None or needed is None or needed in roles:
        return None
    return Violation(
        path,
        "FORBIDDEN",
        f"{operation.id} needs the PSD2 role {needed}; {what} carries "
        f"{', '.join(sorted(roles)) or 'none'}",
        rule="TPP-certificate-role",
        requirement="AUTH-missing-role",
        status=403,
        spec="spec 5 item 1",
        reading=ROLE_READING,
    )


# -- spec 5: the signed Date's freshness --------------------------------------------------------


def stale_date(view: RequestView, *, now: float, skew: float, clock: str) -> Violation | None:
    """A signed ``Date`` within ``skew`` seconds of ``now`` (POSIX time; ``clock`` names it in
    the text): an older or later one is a stale or pre-made request (security, our reading:
    spec 5 signs Date but states no window). A Date that does not parse, or names no zone, is
    left to the header format rule."""
    value = view.headers.get("Date")
    if not value:
        return None
    sent = date_timestamp(value)
    if sent is None:
        return None
    apart = abs(now - sent)
    if apart <= skew:
        return None
    return Violation(
        "Date",
        "SIGNATURE_INVALID",
        f"the signed Date is {apart:.0f} s from {clock}, more than the {skew:g} s allowed: a "
        "stale or replayed request",
        rule="TPP-date-stale",
        requirement="AUTH-date-far-future" if sent > now else "AUTH-date-far-past",
        status=401,
        spec="spec 5",
        reading="spec 5 signs Date but states no freshness window; a request dated outside "
        f"the bank's clock skew ({skew:g} s) is a stale or pre-made one (security)",
    )


# -- spec 5: a signature used once ------------------------------------------------------------

#: Methods that change nothing (RFC 9110 9.2.1): a repeated read is harmless, never a replay.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: The id of the replay rule's findings.
REPLAY_RULE = "TPP-replay"
_SIGNATURE_VALUE = re.compile(r'signature="([^"]+)"')


def replay_key(view: RequestView) -> str | None:
    """What makes two requests one for replay protection: the method, the request target as sent
    and the value of the signature; None for a safe method or a request without a signature
    value. The target is part of the key because spec 5's signing string need not cover it: two
    different bodiless requests with the same signed headers (an empty X-Request-ID, say) in
    the same second carry the same signature, and the second is no replay of the first."""
    if view.method in SAFE_METHODS:
        return None
    found = _SIGNATURE_VALUE.search(view.headers.get("Signature") or "")
    if found is None:
        return None
    return f"{view.method} {view.target} {found.group(1)}"


def replayed(view: RequestView, *, seen: Callable[[str], bool]) -> Violation | None:
    """A state-changing request whose :func:`replay_key` was ``seen`` before (a replay: security,
    our reading, spec 5 signs each request but states no replay rule). ``seen`` is what the
    side remembers: the reference server's memory of recent signatures (which records the key
    as it answers), the traffic judge's keys of the requests a bank accepted so far."""
    key = replay_key(view)
    if key is None or not seen(key):
        return None
    return Violation(
        "Signature",
        "SIGNATURE_INVALID",
        "this signature was already used on the same method and request target: a replayed "
        "request is not carried out again",
        rule=REPLAY_RULE,
        requirement="AUTH-replay",
        status=401,
        spec="spec 5",
        reading="spec 5 signs each request but states no replay rule; a state-changing request "
        "that repeats the signature of an earlier one on the same method and request target is "
        "a replay (security)",
    )


@lru_cache(maxsize=256)
def date_timestamp(value: str) -> float | None:
    """The POSIX time a ``Date`` value names, None when it does not parse or names no zone.
    Remembered per value: a client's requests within one second carry the same Date, and
    ``email.utils`` parses one in ~10 us; the comparison with the clock is made on every
    request."""
    try:
        sent = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return None if sent.tzinfo is None else sent.timestamp()


# -- spec 4.2, spec 7 rule 7: header formats ---------------------------------------------------


#: Checked by the signature verification (spec 5), not by their schema.
_SIGNATURE_HEADERS = frozenset({"signature", "digest", _CERTIFICATE.lower()})
#: The reading behind refusing a header whose RFC 2047 encoding is malformed.
_ENCODING_READING = (
    "a header value whose RFC 2047 encoded words do not decode (spec 5 item 3 encodes "
    "non-ASCII values so) is malformed and refused as a format error"
)


def header_misfits(
    view: RequestView,
    operation: Operation,
    contract: Contract,
    *,
    skip: frozenset[str] = frozenset(),
    empty_ok: bool = False,
    tolerated: Callable[[str], bool] | None = None,
) -> Iterator[Violation]:
    """Each header the operation lists, with a schema in ``types/headers.json`` (the signature
    headers aside), fits it, RFC 2047-decoded; in arrival order. ``skip`` holds lowercased
    names not judged; ``empty_ok`` lets an empty value pass (spec 4.2 "type string");
    ``tolerated(lowercased name)`` is asked for each misfit, and only then (the reference
    server's fault switches), and a tolerated one is not reported."""
    checks = _header_checks(contract, operation.required_headers, operation.optional_headers)
    for folded, name, raw in view.headers.named():
        check = checks.get(folded)
        if check is None or folded in skip:
            continue
        try:
            value = decode_header_value(raw.strip())
        except ValueError as undecodable:
            if tolerated is not None and tolerated(folded):
                continue
            yield Violation(
                name,
                "FORMAT_ERROR",
                f"{name}: {undecodable}",
                rule="TPP-header-format",
                requirement=HEADER_FORMAT,
                status=400,
                spec="spec 5 item 3",
                reading=_ENCODING_READING,
            )
            continue
        if check(value) or (tolerated is not None and tolerated(folded)):
            continue  # valid: the compiled check's verdict is the validator's
        schema = contract.header_schema(name)
        validator = contract.validator(schema)
        errors = list(validator.iter_errors(value))
        if empty_ok and not value and all(error.validator == "minLength" for error in errors):
            continue
        if not errors:
            continue
        error = errors[0]
        yield Violation(
            name,
            "FORMAT_ERROR",
            f"header {name}: {error.message}",
            rule="TPP-header-format",
            requirement=HEADER_FORMAT,
            status=400,
            spec=str(schema.get("x-spec", "spec 4.2")),
            quotes=tuple(quotes_at(validator.schema, error)),
            reading=reading_at(validator.schema, error),
        )


@lru_cache(maxsize=256)
def _header_checks(
    contract: Contract, required: tuple[str, ...], optional: tuple[str, ...]
) -> Mapping[str, Check]:
    """Lowercased name → compiled check, for the headers an operation lists that have a schema
    in ``types/headers.json`` (the signature headers aside).

    Cached per (contract, header lists): a contract is read-only once loaded and the key holds
    it (hashed by identity), so the table can never go stale.
    """
    checks: dict[str, Check] = {}
    for name in required + optional:
        folded = name.lower()
        if folded in _SIGNATURE_HEADERS:
            continue
        try:
            schema = contract.header_schema(name)
        except KeyError:
            continue
        checks[folded] = contract.checker(schema)
    return MappingProxyType(checks)


# -- spec 5 item 5, spec 7 rule 3: the PSU -------------------------------------------------------


def psu_violations(
    view: RequestView,
    operation: Operation,
    *,
    corporate_customer: bool = False,
    empty_ok: bool = False,
) -> list[Violation]:
    """Spec 5 item 5: an X-PSU-IDENTITY the operation lists is a Norwegian national identity or
    D-number; spec 7 rule 3: a corporate PSU (PSU-Context CORPORATE, or ``corporate_customer``:
    a PSU the bank knows as corporate) names its PSU-Corporate-ID where the operation lists it
    (``empty_ok``: an empty one counts as named)."""
    headers = view.headers
    found: list[Violation] = []
    identity = _decoded(headers.get(PSU_IDENTITY) or "")
    if identity and lists(operation, PSU_IDENTITY) and not is_valid_national_id(identity):
        found.append(
            Violation(
                PSU_IDENTITY,
                "FORMAT_ERROR",
                "X-PSU-IDENTITY is not a valid Norwegian national identity or D-number "
                "(spec 5 item 5)",
                rule="TPP-psu-identity",
                requirement=HEADER_FORMAT,
                status=400,
                spec="spec 5 item 5",
                quotes=("5-5",),
            )
        )
    corporate = corporate_customer or _decoded(headers.get(_CONTEXT) or "").upper() == "CORPORATE"
    if (
        corporate
        and not present(headers, _CORPORATE_ID, empty_ok=empty_ok)
        and lists(operation, _CORPORATE_ID)
    ):
        found.append(
            Violation(
                _CORPORATE_ID,
                "HTTP_HEADER_REQUIRED",
                "a corporate PSU must send PSU-Corporate-ID (spec 7 rule 3)",
                rule=CORPORATE_RULE,
                requirement=CORPORATE_RULE,
                status=400,
                spec="spec 7 rule 3",
                quotes=("7-rule-3",),
            )
        )
    return found
