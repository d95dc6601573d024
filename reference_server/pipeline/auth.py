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

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from conformance.contract.catalogue import HEADER_FORMAT, broken
from conformance.contract.facts import AUTH_TPP_CODE
from conformance.contract.request_rules import (
    PSU_ID,
    PSU_IDENTITY,
    RequestView,
    header_misfits,
    missing_headers,
    missing_role,
    psu_violations,
    replayed,
    signature_verification,
    signature_violation,
    stale_date,
    untrusted_certificate,
)
from conformance.contract.violation import Violation
from conformance.signing import VerificationFailure, read_psd2_roles
from reference_server.api import (
    ApiError,
    AuthContext,
    Headers,
    Request,
    ServerState,
    TppMessage,
    decoded_header,
)
from reference_server.model import sandbox_data
from reference_server.pipeline.due import answer, due, refuse

if TYPE_CHECKING:
    from cryptography import x509

    from conformance.contract import Operation

__all__ = ["authenticate"]

#: Verification failures a fault lets through: failure → the fault that tolerates it.
_TOLERATED: Mapping[VerificationFailure, str] = {
    VerificationFailure.DIGEST_MISMATCH: "skip-digest-check",
    VerificationFailure.BAD_SIGNATURE: "accept-any-signature",
    VerificationFailure.KEYID_MISMATCH: "accept-keyid-mismatch",
}

_CORPORATE_ID = "PSU-Corporate-ID"
_CONTEXT = "PSU-Context"


def authenticate(app: ServerState, request: Request, operation: Operation) -> AuthContext:
    """Every check of spec 5 / spec 4.2 for ``operation``; raises :class:`ApiError`. The rules
    are ``conformance.contract.request_rules``'s; each step here answers a violation with its
    error, its fault switches around the call."""
    headers = request.headers
    view = RequestView(request.method, request.target, headers, request.body)
    check_gateway_headers(app, headers)
    check_required_headers(app, operation, view)
    certificate = check_signature(app, operation, view)
    check_date_fresh(app, operation, view)
    check_not_replayed(app, operation, view)
    roles = check_certificate(app, operation, certificate)
    check_header_formats(app, operation, view)
    return identify_psu(app, operation, view, certificate, roles)


def _refused(app: ServerState, operation: Operation, violation: Violation) -> ApiError:
    """The reference server's answer to a broken request rule: what the requirement it breaks
    makes due (``catalogue.broken``, ``due.answer``: the violation's status where it is due,
    its code where none is), placed at its path; a 401 names ``AUTH_TPP_CODE`` in
    ``tppMessages`` (assumptions.md)."""
    answer_due = broken(app.contract, violation, operation).expected
    status, code = answer(answer_due, violation.status, violation.code)
    tpp_code = AUTH_TPP_CODE if status == 401 else None
    return ApiError(status, code, violation.text, path=violation.path, tpp_code=tpp_code)


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


def check_required_headers(app: ServerState, operation: Operation, view: RequestView) -> None:
    """Spec 4.2: every required header present and non-empty (``request_rules.missing_headers``:
    X-PSU-IDENTITY stands in for PSU-ID where the operation takes it). Every missing header is
    named (one ``tppMessages`` entry each), not only the first."""
    required = app.bank.required_headers.get(operation.id)
    if required is None:
        required = operation.required_headers
        if app.reads("unshown-header-sets-as-nearest"):
            required = (*required, *operation.also_sent)
    empty_ok = app.reads("empty-header-values")
    missing = missing_headers(view, operation, required, empty_ok=empty_ok)
    if missing and not app.faulty("ignore-required-header"):
        names = [violation.path for violation in missing]
        verb = "is" if len(names) == 1 else "are"
        first = missing[0]
        raise refuse(
            broken(app.contract, first, operation).expected,
            f"{', '.join(names)} {verb} required for {operation.id} (spec 4.2)",
            code=first.code,
            status=first.status,
            path=names[0],
            messages=[
                TppMessage(violation.code, violation.text, violation.path) for violation in missing
            ],
        )


# -- 2. signature -------------------------------------------------------------------------------


def check_signature(
    app: ServerState, operation: Operation, view: RequestView
) -> x509.Certificate | None:
    """Spec 5 parts 1–4 (``request_rules.signature_verification``); the certificate."""
    now = app.clock.now()
    validity = not app.reads("certificates-unvalidated")
    verdict = signature_verification(view, now=now, check_validity=validity)
    if (
        not verdict.ok
        and verdict.failure is VerificationFailure.HEADERS_INCOMPLETE
        and app.faulty("ignore-headers-list")
    ):
        verdict = signature_verification(view, now=now, check_validity=validity, required_signed=())
    violation = signature_violation(verdict)
    if violation is None:
        return verdict.certificate
    assert verdict.failure is not None
    tolerated_by = _TOLERATED.get(verdict.failure)
    if tolerated_by is not None and app.faulty(tolerated_by):
        return verdict.certificate
    raise _refused(app, operation, violation)


def check_date_fresh(app: ServerState, operation: Operation, view: RequestView) -> None:
    """A signed ``Date`` within the allowed clock skew of the server's own wall clock (the
    profile's ``date_skew``, 300 s by default): an older or later one is a replayed or
    pre-made request, 401 ``SIGNATURE_INVALID`` (assumptions.md; spec 5 signs Date but states no
    window). The wall clock, not the sandbox clock ``/_control/clock`` moves: a TPP's clock is
    real time. A Date that does not parse is left to the header format checks."""
    violation = stale_date(
        view, now=time.time(), skew=app.bank.date_skew, clock="the server's clock"
    )
    if violation is not None and not app.faulty("stale-date-accepted"):
        raise _refused(app, operation, violation)


def check_not_replayed(app: ServerState, operation: Operation, view: RequestView) -> None:
    """A state-changing request whose signature was already used on the same method and target
    (``request_rules.replayed``, keyed by ``request_rules.replay_key``) is refused with 401
    ``SIGNATURE_INVALID`` while its Date is still fresh (``replay.py``); a safe method is never
    a replay."""
    if not app.replay_protection:
        return
    keep_seconds = 2 * app.bank.date_skew
    violation = replayed(view, seen=lambda key: not app.signatures.first_use(key, keep_seconds))
    if violation is not None and not app.faulty("replay-accepted"):
        raise _refused(app, operation, violation)


def _psu_id_unchecked(app: ServerState, folded: str) -> bool:
    """Whether a refused PSU-ID goes through (the fault ``no-psu-id-format-check``), asked only
    where it changes the answer (the self-check's switch trace, ``faults/trace.py``)."""
    return folded == "psu-id" and app.faulty("no-psu-id-format-check")


# -- 3. certificate trust and role --------------------------------------------------------------


def check_certificate(
    app: ServerState, operation: Operation, certificate: x509.Certificate | None
) -> frozenset[str] | None:
    """``--trust``: the certificate chains to one of the CAs (spec 5 part 1); PSD2 role by
    family (``request_rules.untrusted_certificate``, ``request_rules.missing_role``)."""
    if certificate is None:
        return None
    if app.trust_cas and not app.reads("certificates-unvalidated"):
        untrusted = untrusted_certificate(certificate, app.trust_cas, app.clock.now())
        if untrusted is not None:
            raise _refused(app, operation, untrusted)
    roles = read_psd2_roles(certificate)
    violation = missing_role(operation, roles)
    if violation is not None:
        raise _refused(app, operation, violation)
    return roles


# -- 4. header formats --------------------------------------------------------------------------


def check_header_formats(app: ServerState, operation: Operation, view: RequestView) -> None:
    """Each present header with a schema in ``types/headers.json`` matches it (RFC 2047-decoded;
    ``request_rules.header_misfits``).

    A malformed PSU-ID is spec 7 rule 7's validation error; the same answer serves every header.
    Headers are judged in arrival order, the first misfit answers.
    """
    if view.headers.get("TPP-Redirect-Preferred") == "false" and app.faulty(
        "redirect-preferred-false-refused"
    ):
        raise refuse(
            due(app.contract, HEADER_FORMAT, operation, "TPP-Redirect-Preferred"),
            "TPP-Redirect-Preferred: false is not supported",
            code="FORMAT_ERROR",
            status=400,
            path="header",
        )
    misfits = header_misfits(
        view,
        operation,
        app.contract,
        skip=_lenient_headers(app, operation),
        empty_ok=app.reads("empty-header-values"),
        tolerated=lambda folded: _psu_id_unchecked(app, folded),
    )
    first = next(misfits, None)
    if first is not None:
        raise _refused(app, operation, first)


#: The TPP-* headers whose values the permissive reading ``tpp-header-values`` takes as they
#: come: spec 4.2 calls TPP-Redirect-URI a "TPP address" and says only what TPP-Redirect-Preferred
#: false does ("default true"), so another value means the default.
_TPP_VALUES = frozenset({"tpp-redirect-uri", "tpp-redirect-preferred"})

#: The PSU-* headers the permissive reading ``psu-headers-on-named-operations`` does not check
#: on an operation without a header set in spec 4.2 (PSU-ID stays checked on the sandbox ones:
#: spec 7 rule 7).
_PSU_FORMATS = frozenset({"psu-id", "psu-device-id", "psu-context", "psu-http-method"})


def _lenient_headers(app: ServerState, operation: Operation) -> frozenset[str]:
    """The lowercased headers whose format this request is not refused for (the permissive
    readings ``tpp-header-values`` and ``psu-headers-on-named-operations``); empty otherwise."""
    lenient: frozenset[str] = frozenset()
    if app.reads("tpp-header-values"):
        lenient |= _TPP_VALUES
    if app.reads("psu-headers-on-named-operations") and not operation.numbered:
        psu_id_stated = operation.family == "sandbox"  # spec 7 rule 7
        lenient |= _PSU_FORMATS - ({"psu-id"} if psu_id_stated else set())
    return lenient


# -- 5. the PSU ---------------------------------------------------------------------------------


def identify_psu(
    app: ServerState,
    operation: Operation,
    view: RequestView,
    certificate: x509.Certificate | None,
    roles: frozenset[str] | None,
) -> AuthContext:
    """The PSU of the request (spec 5 part 5) and the rules on it (``request_rules.
    psu_violations``: the customer's own corporate standing counts as a corporate context)."""
    headers = view.headers
    psu_id = decoded_header(headers, PSU_ID) or None
    identity = decoded_header(headers, PSU_IDENTITY) or None
    decoded_header(headers, _CORPORATE_ID)  # its encoding is checked (FORMAT_ERROR); not kept
    context = decoded_header(headers, _CONTEXT) or None
    customer = None
    if psu_id is not None:
        customer = sandbox_data.customer_for_psu(app.store, psu_id)
    if customer is None and identity is not None:
        customer = sandbox_data.customer_by_national_id(app.store, identity)
    for violation in psu_violations(
        view,
        operation,
        corporate_customer=customer is not None and customer.corporate,
        empty_ok=app.reads("empty-header-values"),
    ):
        if violation.path == _CORPORATE_ID and app.faulty("corporate-without-id-accepted"):
            continue
        raise _refused(app, operation, violation)
    return AuthContext(
        certificate=certificate,
        roles=roles,
        psu_id=psu_id,
        psu_identity=identity,
        psu_context=context,
        customer_id=customer.id if customer is not None else None,
    )
