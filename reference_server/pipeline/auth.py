"""Authentication and header checks of a contract operation (spec 5, spec 4.2, spec 7 rules 3, 7).

The order is fixed, so that one request gets one predictable answer:

1. required headers present (spec 4.2) → 400 ``HTTP_HEADER_REQUIRED``;
2. Signature, Digest and certificate (spec 5 parts 1–4, via ``conformance.signing``) → 400/401;
3. certificate trust (``--trust``) and PSD2 role → 401 ``CERTIFICATE_INVALID`` / 403 ``FORBIDDEN``;
4. header value formats (``types/headers.json``) → 400 ``FORMAT_ERROR`` (spec 7 rule 7);
5. PSU rules: X-PSU-IDENTITY a national identity or D-number, a corporate PSU names its
   PSU-Corporate-ID (spec 7 rule 3) → 400.

The status and code of each refusal are choices where spec 5 and 7 are silent; they are listed in
``assumptions.md``.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING

from conformance.contract.identifiers import is_valid_national_id
from conformance.signing import (
    SPEC5_SIGNED_HEADERS,
    Verification,
    VerificationFailure,
    read_psd2_roles,
    verify_chain,
    verify_request,
)
from reference_server.api import (
    ApiError,
    AuthContext,
    Headers,
    Request,
    ServerState,
    TppMessage,
    decoded_header,
    decoded_value,
)
from reference_server.model import sandbox_data

if TYPE_CHECKING:
    from datetime import datetime

    from cryptography import x509

    from conformance.contract import Check, Contract, Operation

__all__ = [
    "REQUIRED_ROLE",
    "authenticate",
]

#: PSD2 role a certificate must carry, when it carries roles at all, per operation family.
REQUIRED_ROLE: Mapping[str, str] = {
    "payments": "PSP_PI",
    "baskets": "PSP_PI",
    "accounts": "PSP_AI",
    "consents": "PSP_AI",
}

#: Code in ``tppMessages`` of a payment operation for a rejected signature or certificate: spec 7
#: lists no authentication code, FORBIDDEN is the closest of its list (assumption).
_AUTH_TPP_CODE = "FORBIDDEN"

#: Verification failures a fault lets through: failure → the fault that tolerates it.
_TOLERATED: Mapping[VerificationFailure, str] = {
    VerificationFailure.DIGEST_MISMATCH: "skip-digest-check",
    VerificationFailure.BAD_SIGNATURE: "accept-any-signature",
    VerificationFailure.KEYID_MISMATCH: "accept-keyid-mismatch",
}

_PSU_ID = "PSU-ID"
_PSU_IDENTITY = "X-PSU-IDENTITY"
_CORPORATE_ID = "PSU-Corporate-ID"
_CONTEXT = "PSU-Context"


def authenticate(app: ServerState, request: Request, operation: Operation) -> AuthContext:
    """Every check of spec 5 / spec 4.2 for ``operation``; raises :class:`ApiError`."""
    headers = request.headers
    check_gateway_headers(app, headers)
    check_required_headers(app, operation, headers)
    certificate = verify_signature(app, request)
    check_date_fresh(app, headers)
    check_not_replayed(app, request)
    roles = check_certificate(app, operation, certificate)
    check_header_formats(app, operation, headers)
    return identify_psu(app, operation, headers, certificate, roles)


# -- 0. the gateway's own headers (a bank style, ``--profile``) ---------------------------------


def check_gateway_headers(app: ServerState, headers: Headers) -> None:
    """The static headers the bank's API gateway requires (its client id, an API key): missing
    → 401 ``HTTP_HEADER_REQUIRED``, another value → 401 ``FORBIDDEN`` (assumptions.md)."""
    for name, wanted in app.bank.gateway_headers.items():
        given = headers.get(name)
        if not given:
            raise ApiError(401, "HTTP_HEADER_REQUIRED", f"the gateway requires {name}", path=name)
        if given != wanted:
            raise ApiError(401, "FORBIDDEN", f"the gateway does not know this {name}", path=name)


# -- 1. required headers --------------------------------------------------------------------------


def check_required_headers(app: ServerState, operation: Operation, headers: Headers) -> None:
    """Spec 4.2: every required header present and non-empty. On operations that accept
    X-PSU-IDENTITY, it stands in for PSU-ID (spec 4.2, spec 5 part 5). Every missing header is
    named (one ``tppMessages`` entry each), not only the first."""
    empty_ok = app.permissive("empty-header-values")
    missing = [
        name
        for name in app.bank.required_headers.get(operation.id, operation.required_headers)
        if not _present(headers, name, empty_ok=empty_ok)
        and not (
            name.lower() == _PSU_ID.lower()
            and _accepts_identity(operation)
            and _present(headers, _PSU_IDENTITY, empty_ok=empty_ok)
        )
    ]
    if missing and not app.faulty("ignore-required-header"):
        verb = "is" if len(missing) == 1 else "are"
        raise ApiError(
            400,
            "HTTP_HEADER_REQUIRED",
            f"{', '.join(missing)} {verb} required for {operation.id} (spec 4.2)",
            path=missing[0],
            messages=[
                TppMessage("HTTP_HEADER_REQUIRED", f"{name} is required (spec 4.2)", name)
                for name in missing
            ],
        )


def _present(headers: Headers, name: str, *, empty_ok: bool = False) -> bool:
    """Whether the header is sent with a value; an empty value counts as absent unless the
    permissive reading ``empty-header-values`` is played (spec 4.2 types headers as strings)."""
    value = headers.get(name)
    return value is not None and (empty_ok or value.strip() != "")


def _accepts_identity(operation: Operation) -> bool:
    return _PSU_IDENTITY.lower() in _listed(operation)


def _listed(operation: Operation) -> frozenset[str]:
    """The lowercased names of the headers ``operation`` lists (required or optional)."""
    return _folded_names(operation.required_headers, operation.optional_headers)


@lru_cache(maxsize=256)
def _folded_names(required: tuple[str, ...], optional: tuple[str, ...]) -> frozenset[str]:
    """Cached on the two tuples themselves (an operation is read-only, its lists are tuples),
    so that the set is not rebuilt for every header of every request."""
    return frozenset(name.lower() for name in required + optional)


# -- 2. signature -------------------------------------------------------------------------------


def verify_signature(app: ServerState, request: Request) -> x509.Certificate | None:
    """Spec 5 parts 1–4 through ``conformance.signing.verify_request``; the certificate."""
    raw = request.headers.folded()  # what {name: headers[name]} would be, lowercased
    now = app.clock.now()
    validity = not app.permissive("certificates-unvalidated")
    verdict = verify_request(
        request.method,
        request.target,
        raw,
        request.body,
        required_signed=SPEC5_SIGNED_HEADERS,
        now=now,
        check_validity=validity,
    )
    if (
        not verdict.ok
        and verdict.failure is VerificationFailure.HEADERS_INCOMPLETE
        and app.faulty("ignore-headers-list")
    ):
        verdict = verify_request(
            request.method,
            request.target,
            raw,
            request.body,
            required_signed=(),
            now=now,
            check_validity=validity,
        )
    if verdict.ok:
        return verdict.certificate
    assert verdict.failure is not None
    tolerated_by = _TOLERATED.get(verdict.failure)
    if tolerated_by is not None and app.faulty(tolerated_by):
        return verdict.certificate
    raise _signature_error(verdict)


def check_date_fresh(app: ServerState, headers: Headers) -> None:
    """A signed ``Date`` within the allowed clock skew of the server's own wall clock (the
    profile's ``date_skew``, 300 s by default): an older or later one is a replayed or
    pre-made request, 401 ``SIGNATURE_INVALID`` (assumptions.md; spec 5 signs Date but states no
    window). The wall clock, not the sandbox clock ``/_control/clock`` moves: a TPP's clock is
    real time. A Date that does not parse is left to the header format checks."""
    value = headers.get("Date")
    if not value:
        return
    sent = _date_timestamp(value)
    if sent is None:
        return
    apart = abs(time.time() - sent)
    if apart > app.bank.date_skew and not app.faulty("stale-date-accepted"):
        raise ApiError(
            401,
            "SIGNATURE_INVALID",
            f"the signed Date is {apart:.0f} s from the server's clock, more than the "
            f"{app.bank.date_skew:g} s allowed: a stale or replayed request",
            path="Date",
            tpp_code=_AUTH_TPP_CODE,
        )


@lru_cache(maxsize=256)
def _date_timestamp(value: str) -> float | None:
    """The POSIX time a ``Date`` value names, None when it does not parse or names no zone.
    Remembered per value: a client's requests within one second carry the same Date, and
    ``email.utils`` parses one in ~10 us; the comparison with the clock is made on every
    request."""
    try:
        sent = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return None if sent.tzinfo is None else sent.timestamp()


#: Methods that change nothing: a replayed read is harmless and not refused.
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_SIGNATURE_VALUE = re.compile(r'signature="([^"]+)"')


def check_not_replayed(app: ServerState, request: Request) -> None:
    """A state-changing request whose signature was already used on the same method and target
    (a replay of that request) is refused with 401 ``SIGNATURE_INVALID`` while its Date is still
    fresh (``replay.py``). The method and target are part of the key: spec 5's signing string
    need not cover the request target, so two different bodiless requests with the same signed
    headers (an empty X-Request-ID, say) in the same second carry the same signature, and the
    second is no replay of the first."""
    if request.method in _SAFE_METHODS or not app.replay_protection:
        return
    found = _SIGNATURE_VALUE.search(request.headers.get("Signature") or "")
    if found is None:
        return
    key = f"{request.method} {request.target} {found.group(1)}"
    if not app.signatures.first_use(key, 2 * app.bank.date_skew) and not app.faulty(
        "replay-accepted"
    ):
        raise ApiError(
            401,
            "SIGNATURE_INVALID",
            "this signature was already used: a replayed request is not carried out again",
            path="Signature",
            tpp_code=_AUTH_TPP_CODE,
        )


def _psu_id_unchecked(app: ServerState, folded: str) -> bool:
    """Whether a refused PSU-ID goes through (the fault ``no-psu-id-format-check``), asked only
    where it changes the answer (the self-check's switch trace, ``faults/trace.py``)."""
    return folded == "psu-id" and app.faulty("no-psu-id-format-check")


def _signature_error(verdict: Verification) -> ApiError:
    failure = verdict.failure
    if failure is VerificationFailure.MISSING_HEADER:
        header = verdict.header or "Signature"
        return ApiError(400, "HTTP_HEADER_REQUIRED", f"{verdict.detail}", path=header)
    if failure in (
        VerificationFailure.MALFORMED_SIGNATURE,
        VerificationFailure.UNSUPPORTED_DIGEST_ALGORITHM,
    ):
        header = "Signature" if failure is VerificationFailure.MALFORMED_SIGNATURE else "Digest"
        return ApiError(400, "FORMAT_ERROR", verdict.detail, path=header)
    if failure is VerificationFailure.BAD_CERTIFICATE:
        return ApiError(
            401,
            "CERTIFICATE_INVALID",
            verdict.detail,
            path="TPP-Signature-Certificate",
            tpp_code=_AUTH_TPP_CODE,
        )
    header = "Digest" if failure is VerificationFailure.DIGEST_MISMATCH else "Signature"
    return ApiError(401, "SIGNATURE_INVALID", verdict.detail, path=header, tpp_code=_AUTH_TPP_CODE)


# -- 3. certificate trust and role --------------------------------------------------------------


def check_certificate(
    app: ServerState, operation: Operation, certificate: x509.Certificate | None
) -> frozenset[str] | None:
    """``--trust``: the certificate chains to one of the CAs (spec 5 part 1); PSD2 role by
    family."""
    if certificate is None:
        return None
    if app.trust_cas and not app.permissive("certificates-unvalidated"):
        problem = _untrusted(certificate, app.trust_cas, app.clock.now())
        if problem is not None:
            raise ApiError(
                401,
                "CERTIFICATE_INVALID",
                f"the signing certificate is not trusted: {problem}",
                path="TPP-Signature-Certificate",
                tpp_code=_AUTH_TPP_CODE,
            )
    roles = read_psd2_roles(certificate)
    needed = REQUIRED_ROLE.get(operation.family)
    if roles is not None and needed is not None and needed not in roles:
        raise ApiError(
            403,
            "FORBIDDEN",
            f"{operation.id} needs the PSD2 role {needed}; the certificate carries "
            f"{', '.join(sorted(roles)) or 'none'}",
            path="TPP-Signature-Certificate",
        )
    return roles


def _untrusted(
    certificate: x509.Certificate, cas: tuple[x509.Certificate, ...], now: datetime
) -> str | None:
    """None when ``certificate`` chains to one of ``cas``; else why not, told against the CA
    its issuer names (the first CA when it names none): the reason a bank would give."""
    problems: list[tuple[bool, str]] = []
    for ca in cas:
        problem = verify_chain(certificate, ca, now=now)
        if problem is None:
            return None
        problems.append((ca.subject != certificate.issuer, problem))
    return min(problems, key=lambda named: named[0])[1]


# -- 4. header formats --------------------------------------------------------------------------


def check_header_formats(app: ServerState, operation: Operation, headers: Headers) -> None:
    """Each present header with a schema in ``types/headers.json`` matches it (RFC 2047-decoded).

    A malformed PSU-ID is spec 7 rule 7's validation error; the same answer serves every header.
    Headers are judged in arrival order, the first misfit answers.
    """
    checks = _header_checks(app.contract, operation.required_headers, operation.optional_headers)
    lenient = _lenient_headers(app, operation)
    if headers.get("TPP-Redirect-Preferred") == "false" and app.faulty(
        "redirect-preferred-false-refused"
    ):
        raise ApiError(
            400, "FORMAT_ERROR", "TPP-Redirect-Preferred: false is not supported", path="header"
        )
    for folded, name, raw in headers.named():
        check = checks.get(folded)
        if check is None or folded in lenient:
            continue
        try:
            value = decoded_value(name, raw)
        except ApiError:
            if _psu_id_unchecked(app, folded):
                continue
            raise
        if check(value) or _psu_id_unchecked(app, folded):
            continue  # valid: the compiled check's verdict is the validator's
        schema = app.contract.header_schema(name)
        errors = list(app.contract.validator(schema).iter_errors(value))
        empty = not value and all(e.validator == "minLength" for e in errors)
        if empty and app.permissive("empty-header-values"):
            continue  # spec 4.2: "type string"; an empty string is one
        error = errors[0] if errors else None
        if error is not None:
            raise ApiError(
                400,
                "FORMAT_ERROR",
                f"header {name}: {error.message}",
                path=name,
            )


#: The TPP-* headers whose values the permissive reading ``tpp-header-values`` takes as they
#: come: spec 4.2 calls TPP-Redirect-URI a "TPP address" and says only what TPP-Redirect-Preferred
#: false does ("default true"), so another value means the default.
_TPP_VALUES = frozenset({"tpp-redirect-uri", "tpp-redirect-preferred"})

#: The PSU-* headers the permissive reading ``psu-headers-on-named-operations`` does not check
#: on an operation without a header set in spec 4.2 (PSU-ID stays checked on the sandbox ones:
#: spec 7 rule 7).
_PSU_FORMATS = frozenset({"psu-id", "psu-device-id", "psu-context", "psu-http-method"})

#: The operations spec 4.1 numbers (E1-E18); the others are only named or implied.
_SPEC_OPERATION = re.compile(r"E[0-9]+")


def _lenient_headers(app: ServerState, operation: Operation) -> frozenset[str]:
    """The lowercased headers whose format this request is not refused for (the permissive
    readings ``tpp-header-values`` and ``psu-headers-on-named-operations``); empty otherwise."""
    lenient: frozenset[str] = frozenset()
    if app.permissive("tpp-header-values"):
        lenient |= _TPP_VALUES
    named_only = _SPEC_OPERATION.fullmatch(operation.id) is None  # no row in spec 4.2
    if app.permissive("psu-headers-on-named-operations") and named_only:
        psu_id_stated = operation.family == "sandbox"  # spec 7 rule 7
        lenient |= _PSU_FORMATS - ({"psu-id"} if psu_id_stated else set())
    return lenient


#: Checked by the signature verification (spec 5), not by their schema here.
_SIGNATURE_HEADERS = frozenset({"signature", "digest", "tpp-signature-certificate"})


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


# -- 5. the PSU ---------------------------------------------------------------------------------


def identify_psu(
    app: ServerState,
    operation: Operation,
    headers: Headers,
    certificate: x509.Certificate | None,
    roles: frozenset[str] | None,
) -> AuthContext:
    """The PSU of the request (spec 5 part 5) and the rules on it."""
    psu_id = decoded_header(headers, _PSU_ID) or None
    identity = decoded_header(headers, _PSU_IDENTITY) or None
    corporate_id = decoded_header(headers, _CORPORATE_ID) or None
    context = decoded_header(headers, _CONTEXT) or None
    if identity is not None and not is_valid_national_id(identity):
        raise ApiError(
            400,
            "FORMAT_ERROR",
            "X-PSU-IDENTITY is not a valid Norwegian national identity or D-number (spec 5 part 5)",
            path=_PSU_IDENTITY,
        )
    customer = None
    if psu_id is not None:
        customer = sandbox_data.customer_for_psu(app.store, psu_id)
    if customer is None and identity is not None:
        customer = sandbox_data.customer_by_national_id(app.store, identity)
    corporate = (context or "").upper() == "CORPORATE" or (
        customer is not None and customer.corporate
    )
    named = corporate_id is not None or (
        app.permissive("empty-header-values") and headers.get(_CORPORATE_ID) is not None
    )
    if (
        corporate
        and not named
        and _lists(operation, _CORPORATE_ID)
        and not app.faulty("corporate-without-id-accepted")
    ):
        raise ApiError(
            400,
            "HTTP_HEADER_REQUIRED",
            "a corporate PSU must send PSU-Corporate-ID (spec 7 rule 3)",
            path=_CORPORATE_ID,
        )
    return AuthContext(
        certificate=certificate,
        roles=roles,
        psu_id=psu_id,
        psu_identity=identity,
        psu_corporate_id=corporate_id,
        psu_context=context,
        customer_id=customer.id if customer is not None else None,
    )


def _lists(operation: Operation, header: str) -> bool:
    return header.lower() in _listed(operation)
