"""Authentication scenarios (spec 5): signatures, digests and certificates, refused or accepted.

``params["case"]`` names the case. Refused cases send the valid base request through one of the
deliberately broken signers of :mod:`conformance.signing` (each breaks one step of spec 5), or
signed with a certificate that must not be accepted (expired, without the PSD2 role the
operation's family needs, from a CA the target does not trust). Accepted cases send it in a way
spec 5 allows and a target might forget: a SHA-512 Digest, RFC 2047-encoded values, X-PSU-IDENTITY.

Certificates the suite mints itself are only meaningful when the target trusts their issuer: the
issuer is ``RunContext.trust_anchor`` when the run declares one, else the suite's default CA when
the client signs with the default identity (the target then trusts that CA, or nothing is
accepted at all). A CA the target does not trust can only be told apart from "any CA goes" when a
trust anchor is declared; otherwise that case is not applicable. The RFC 2047 case needs a
trusted issuer named outside ASCII: the run's own, or ``RunContext.utf8_trust_anchor`` (the
bundled run declares one); when the declared anchors are all named in ASCII it is not applicable.

A certificate the profile names ready-made (``[negative_certificates]``: expired, no_role,
other_ca, revoked, qwac_no_role, qwac_other_organisation) goes before any the suite could mint,
so a TPP holding a trust service provider's test certificates needs no CA key. The checks of the
TLS client certificate (the QWAC) send over a connection that shows another QWAC
(``TargetClient.over_tls_as``), minted from ``RunContext.tls_trust_anchor`` when no ready-made
one is named; without mutual TLS in the run they are not applicable.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import httpx
from cryptography.x509.oid import NameOID

from conformance.bankside.client import DEFAULT_AUTH
from conformance.bankside.sca import sca_link
from conformance.checks import (
    ConformanceFailure,
    NotApplicable,
    SetUpFailure,
    breaking,
    check_not_server_error,
    json_document,
)
from conformance.generate.auth import STALE_DATE_MARGIN
from conformance.operations import base_request, parts_of
from conformance.problems import Breach
from conformance.runners.judging import judge
from conformance.scenario import scenario_seed
from conformance.signing import (
    PSD2_ROLES,
    BodyChangedAfterSigningSigner,
    IncompleteHeadersSigner,
    KeyIdIssuerMismatchSigner,
    KeyIdSerialMismatchSigner,
    NoDigestSigner,
    NoSignatureSigner,
    SignatureAuth,
    StaleDigestSigner,
    WrongAlgorithmSigner,
    WrongKeySigner,
    default_ca,
    generate_ca,
    generate_qwac,
    generate_tpp_identity,
    load_identity,
)

if TYPE_CHECKING:
    from conformance.bankside.client import TargetClient
    from conformance.bankside.request import OperationRequest
    from conformance.exchange import Exchange
    from conformance.profile import ScaSettings
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario
    from conformance.signing import CertificateAuthority, TppIdentity

__all__ = ["CASES", "SENT_TWICE", "SIGNED_AS", "NoCertificateSigner", "run"]

#: A name with a character outside ASCII, for the CA of the RFC 2047 case (spec 5 item 3).
UTF8_CA_NAME = "Conformance Test CA Ærlig Østfold"
#: A value with characters outside ASCII for a signed header (spec 5 item 3).
UTF8_REQUEST_ID_PREFIX = "forespørsel-"


class NoCertificateSigner(SignatureAuth):
    """Signs, then leaves TPP-Signature-Certificate out: expect a refusal (spec 5 item 1)."""

    def outgoing(self, request: httpx.Request) -> httpx.Request:
        del request.headers["TPP-Signature-Certificate"]
        return request


#: Refused cases that need only a broken signer: case → signer class.
_SIGNERS: Mapping[str, type[SignatureAuth]] = MappingProxyType(
    {
        "no-certificate": NoCertificateSigner,
        "no-signature": NoSignatureSigner,
        "keyid-serial-mismatch": KeyIdSerialMismatchSigner,
        "keyid-ca-mismatch": KeyIdIssuerMismatchSigner,
        "wrong-algorithm": WrongAlgorithmSigner,
        "headers-list-incomplete": IncompleteHeadersSigner,
        "wrong-key": WrongKeySigner,
        "no-digest": NoDigestSigner,
        "stale-digest": StaleDigestSigner,
        "body-changed-after-signing": BodyChangedAfterSigningSigner,
    }
)


def run(scenario: Scenario, ctx: RunContext) -> None:
    case = str(scenario.param("case", ""))
    seed = scenario_seed(ctx.seed, scenario.id)
    signer = SIGNED_AS.get(case)
    if signer is not None:
        _send_as(scenario, ctx, seed, signer(ctx))
        return
    twice = SENT_TWICE.get(case)
    if twice is not None:
        twice(scenario, ctx, base_request(ctx, scenario.operation, scenario.variant, seed))
        return
    try:
        prepare = CASES[case]
    except KeyError:
        raise ValueError(f"auth scenario {scenario.id} has an unknown case {case!r}") from None
    base = base_request(ctx, scenario.operation, scenario.variant, seed)
    request, auth = prepare(scenario, ctx, base)
    with breaking(BREACHES.get(case)):
        if isinstance(auth, _OverTls):
            via = _Via(ctx, ctx.client.over_tls_as(auth.qwac))
            judge(request.send(via, auth=auth.auth), scenario, ctx)
            return
        judge(request.send(ctx, auth=auth), scenario, ctx)


def _send_as(scenario: Scenario, ctx: RunContext, seed: int, identity: TppIdentity | None) -> None:
    """The valid base request built, signed and sent as ``identity`` (None: the run's own), with
    that identity's own set-up data (``RunContext.as_identity``): a scenario about how a request
    is signed must not ask one TPP for another's payments, baskets or consents, which a bank
    that owns them per certificate rightly does not show (only the security scenarios
    ``AUTH-other-tpp`` and ``AUTH-other-psu`` ask for them, on purpose). A set-up the target
    refuses this identity blocks the scenario."""
    if identity is None:
        request = base_request(ctx, scenario.operation, scenario.variant, seed)
        judge(request.send(ctx), scenario, ctx)
        return
    second = ctx.as_identity(str(scenario.param("case", "identity")), identity)
    # A record of its own in the second client: scenarios in flight in threads share it.
    with second.client.recording():
        try:
            request = base_request(second, scenario.operation, scenario.variant, seed)
            judge(request.send(second), scenario, ctx)
        finally:
            ctx.exchanges.extend(second.client.take_exchanges())


class _Via:
    """The run context's contract and profile with another client (``Target`` of a request)."""

    def __init__(self, ctx: RunContext, client: TargetClient) -> None:
        self.contract, self.profile, self.client = ctx.contract, ctx.profile, client


#: Headers httpx makes for each request itself; the replay gives it the rest as they were.
_TRANSPORT = frozenset({"host", "content-length", "accept-encoding", "connection", "user-agent"})


def _created(exchange: Exchange, name: str, sca: ScaSettings) -> Any:
    """The id a creation answered with: a 2xx's, or that of spec 5 item 6's 401 carrying the
    SCA link (payment creation: the payment is made, its SCA is due; the link the profile's
    ``[sca] approach`` names, ``scaRedirect`` for a redirect); else None."""
    document = json_document(exchange)
    if not isinstance(document, dict):
        return None
    linked = sca_link(document, sca) is not None
    if 200 <= exchange.status < 300 or (exchange.status == 401 and linked):
        return document.get(name)
    return None


def _replay(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> None:
    """Send the valid creation, then its byte-identical copy: the copy must be refused (with the
    spec 7 error body) or answered with the same resource; a second resource fails the scenario,
    a 5xx always does. A creation answered in spec 5 item 6's 401 form (the payment and its
    ``_links.scaRedirect``) was carried out as much as one answered 201."""
    name = parts_of(scenario.operation).created_id
    if name is None:  # tests/suite/test_operations.py keeps every replayed creation's named
        raise KeyError(f"{scenario.operation} has no created_id (conformance.operations)")
    first = request.send(ctx)
    if not 200 <= first.status < 300 and _created(first, name, ctx.profile.sca) is None:
        raise SetUpFailure(
            f"Set-up failed: the creation to replay was answered HTTP {first.status}",
            spec=scenario.spec,
            sent=first,
            expected="a valid creation is accepted, so that its copy can be sent",
        )
    again = ctx.client.request(
        first.method,
        first.url,
        content=first.request_body or None,
        headers=[(k, v) for k, v in first.request_headers if k.lower() not in _TRANSPORT],
        auth=None,
    )
    check_not_server_error(again, spec=scenario.spec)
    before, after = _created(first, name, ctx.profile.sca), _created(again, name, ctx.profile.sca)
    if after is None and 400 <= again.status < 500:
        judge(again, scenario, ctx)
        return
    if (after is not None or 200 <= again.status < 300) and before == after:
        return  # the same resource again: nothing was carried out twice
    raise ConformanceFailure(
        f"the replayed creation was carried out again: HTTP {again.status}, {name} "
        f"{after!r} beside the first {before!r}",
        spec=scenario.spec,
        sent=again,
        related=(first,),
        expected="a byte-identical replay is refused, or answered with the same resource",
    )


Prepared = tuple["OperationRequest", Any]
Case = Callable[["Scenario", "RunContext", "OperationRequest"], Prepared]


def _broken_signer(case: str) -> Case:
    def prepare(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
        return request, _signer(ctx, request, _SIGNERS[case])

    return prepare


# --- certificates ---------------------------------------------------------------------------


def _issuer(ctx: RunContext, what: str) -> CertificateAuthority:
    """The CA whose certificates the target trusts, or NotApplicable."""
    if ctx.trust_anchor is not None:
        return ctx.trust_anchor
    if ctx.profile.certificate is None:
        return default_ca()
    raise NotApplicable(
        f"the scenario needs {what} issued by a CA the target trusts; the run signs with the "
        "profile's own certificate and declares no trust anchor whose key the suite holds"
    )


def _key(ctx: RunContext) -> Any:
    """One RSA key for every certificate the suite mints here: a certificate's validity, roles
    and issuer are what these cases change, and a new RSA key costs ~100 ms."""
    return ctx.client.identity().signing_credentials().private_key


@functools.cache
def _expired_identity(ca: CertificateAuthority, key: Any) -> TppIdentity:
    now = datetime.now(UTC)
    return generate_tpp_identity(
        ca, not_before=now - timedelta(days=400), not_after=now - timedelta(days=30), key=key
    )


@functools.cache
def _identity_without(ca: CertificateAuthority, role: str, key: Any) -> TppIdentity:
    return generate_tpp_identity(ca, roles=[name for name in PSD2_ROLES if name != role], key=key)


@functools.cache
def _untrusted_identity(key: Any) -> TppIdentity:
    return generate_tpp_identity(generate_ca("Conformance Untrusted CA", key=key), key=key)


@functools.cache
def _minted_identity(ca: CertificateAuthority, key: Any) -> TppIdentity:
    return generate_tpp_identity(ca, key=key)


@functools.cache
def _utf8_identity(key: Any) -> TppIdentity:
    return generate_tpp_identity(generate_ca(UTF8_CA_NAME, key=key), key=key)


def _signer(
    ctx: RunContext,
    request: OperationRequest,
    kind: type[SignatureAuth] = SignatureAuth,
    **options: Any,
) -> httpx.Auth:
    """A signer of ``kind`` for this request; it digests an empty body where the suite's own
    signer does (``OperationRequest.digests_empty_body``: E13, a bodiless POST), so only the
    case's own fault remains."""
    if request.digests_empty_body(ctx.profile):
        options.setdefault("digest_empty_body", True)
    return ctx.client.make_signer(kind, **options)


def _expired(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
    identity = _ready_made(ctx, "expired") or _expired_identity(
        _issuer(ctx, "an expired certificate"), _key(ctx)
    )
    return request, _signer(ctx, request, identity=identity)


def _missing_role(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
    role = _role_left_out(scenario)
    identity = _ready_made(ctx, "no_role", without=role) or _identity_without(
        _issuer(ctx, f"a certificate without {role}"), role, _key(ctx)
    )
    return request, _signer(ctx, request, identity=identity)


def _role_left_out(scenario: Scenario) -> str:
    role = str(scenario.param("role", ""))
    if role not in PSD2_ROLES:
        raise ValueError(f"auth scenario {scenario.id} names no PSD2 role to leave out")
    return role


# --- ready-made certificates ([negative_certificates]) ---------------------------------------


def _ready_made(ctx: RunContext, name: str, *, without: str | None = None) -> TppIdentity | None:
    """The profile's ready-made certificate ``name`` with its key, None when it names none. With
    ``without``, a certificate that carries that role anyway makes the scenario not applicable
    (it could not show what the scenario asks)."""
    settings = ctx.profile.negative_certificates
    entry = settings.get(name)
    if entry is None:
        return None
    identity = _load_ready_made(entry.certificate, entry.key, settings.password())
    if without is not None and identity.roles is not None and without in identity.roles:
        raise NotApplicable(
            f"the profile's [negative_certificates] {name} certificate carries {without}, so it "
            f"cannot show a certificate without it"
        )
    return identity


@functools.cache
def _load_ready_made(certificate: Path, key: Path | None, password: str | None) -> TppIdentity:
    """A ready-made certificate, read once per worker."""
    return load_identity(certificate, key, password=password)


# --- certificates as banks and supervisors check them (security group) -----------------------


def _revoked(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
    """Signed with a certificate its CA has revoked: the profile's, else the run's (the bundled
    run revokes one and gives the server the list; ``--revoked-cert``)."""
    identity = _ready_made(ctx, "revoked") or ctx.revoked_identity
    if identity is None:
        raise NotApplicable(
            "the scenario needs a signing certificate whose CA has revoked it, with its key: name "
            "one in the profile's [negative_certificates] revoked (conformance certs --revoke "
            "revokes one of a CA of yours)"
        )
    return request, _signer(ctx, request, identity=identity)


def _seal_is_qwac(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
    """Signed with a QWAC-type certificate (QcType web): minted by the CA the target trusts for
    signing certificates when the run holds its key (so the type is all that is wrong), else the
    run's own QWAC (the profile's tls_certificate)."""
    if ctx.trust_anchor is not None or ctx.profile.certificate is None:
        anchor = _issuer(ctx, "a QWAC-type certificate")
        return request, _signer(ctx, request, identity=_web_type_identity(anchor, _key(ctx)))
    tls = ctx.profile.tls
    if tls.certificate is None:
        raise NotApplicable(
            "the scenario signs with a QWAC-type certificate: the run's own QWAC "
            "(tls_certificate) or one minted from a CA the target trusts (--trust-anchor)"
        )
    identity = _load_ready_made(tls.certificate, tls.key, tls.password())
    return request, _signer(ctx, request, identity=identity)


@functools.cache
def _web_type_identity(ca: CertificateAuthority, key: Any) -> TppIdentity:
    return generate_qwac(ca, key=key)


def _qwac_missing_role(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
    role = _role_left_out(scenario)
    qwac = _ready_made(ctx, "qwac_no_role", without=role) or _minted_qwac(
        ctx, f"a QWAC without {role}", roles=tuple(name for name in PSD2_ROLES if name != role)
    )
    return request, _OverTls(qwac)


def _qwac_other_organisation(
    scenario: Scenario, ctx: RunContext, request: OperationRequest
) -> Prepared:
    qwac = _ready_made(ctx, "qwac_other_organisation") or _minted_qwac(
        ctx, "a QWAC of another organisation", organisation=OTHER_TPP_ORGANISATION
    )
    return request, _OverTls(qwac)


def _minted_qwac(
    ctx: RunContext,
    what: str,
    *,
    roles: tuple[str, ...] = PSD2_ROLES,
    organisation: str | None = None,
) -> TppIdentity:
    """A QWAC from the CA the target accepts TLS client certificates from."""
    if ctx.profile.tls.certificate is None:
        raise NotApplicable(
            "the run shows no TLS client certificate (no mutual TLS: tls_certificate, "
            "--tls-cert, or conformance run --tls), so the target's checks of it cannot be seen"
        )
    anchor = ctx.tls_trust_anchor
    if anchor is None:
        raise NotApplicable(
            f"the scenario needs {what} the target accepts in the TLS handshake: name one in the "
            "profile's [negative_certificates], or give the CA of its QWACs with its key "
            "(--tls-trust-anchor, --tls-trust-anchor-key)"
        )
    own = _own_organisation(ctx)
    return _qwac(anchor, _key(ctx), roles, organisation or own)


def _own_organisation(ctx: RunContext) -> str:
    return _organisation(ctx.client.identity())


def _organisation(identity: TppIdentity) -> str:
    """The organizationIdentifier a certificate names (the suite's default when none)."""
    found = identity.certificate.subject.get_attributes_for_oid(NameOID.ORGANIZATION_IDENTIFIER)
    return str(found[0].value) if found else "PSDNO-FSA-123456789"


@functools.cache
def _qwac(
    ca: CertificateAuthority, key: Any, roles: tuple[str, ...], organisation: str
) -> TppIdentity:
    return generate_qwac(ca, roles=roles, organisation_id=organisation, key=key)


class _OverTls:
    """A prepared case's "auth" that says: send signed by ``auth`` (the run's signer unless
    given), over a connection showing this QWAC (see :func:`run`)."""

    def __init__(self, qwac: TppIdentity, auth: Any = DEFAULT_AUTH) -> None:
        self.qwac = qwac
        self.auth = auth


def _other_ca(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
    ready = _ready_made(ctx, "other_ca")
    if ready is not None:
        return request, _signer(ctx, request, identity=ready)
    if ctx.trust_anchor is None:
        raise NotApplicable(
            "a certificate from an untrusted CA can only be judged against a target that "
            "declares which CA it trusts (no trust anchor is declared for this run)"
        )
    return request, _signer(ctx, request, identity=_untrusted_identity(_key(ctx)))


# --- accepted cases -------------------------------------------------------------------------


def _sha512(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
    return request, _signer(ctx, request, digest_algorithm="SHA-512")


def _rfc2047_identity(ctx: RunContext) -> TppIdentity | None:
    """The identity whose keyId names a CA with a UTF-8 name, so that the Signature header is
    sent MIME-encoded (spec 5 item 3); None when it is the run's own.

    The certificate's issuer must be trusted by the target and named outside ASCII: the run's
    own certificate when its issuer is, else one minted from the UTF-8-named trust anchor
    (``--trust-anchor-utf8``), else from the trust anchor when its name is not ASCII.
    """
    if not ctx.client.identity().signing_credentials().issuer.isascii():
        return None
    for anchor in (ctx.utf8_trust_anchor, ctx.trust_anchor):
        if anchor is not None and not anchor.certificate.subject.rfc4514_string().isascii():
            return _minted_identity(anchor, _key(ctx))
    if ctx.trust_anchor is not None or ctx.utf8_trust_anchor is not None:
        raise NotApplicable(
            "no CA the target is declared to trust has a name outside ASCII, so no certificate "
            "it trusts makes the Signature header non-ASCII (spec 5 item 3); declare one with "
            "--trust-anchor-utf8 and --trust-anchor-utf8-key"
        )
    _issuer(ctx, "a certificate from a CA with a UTF-8 name")
    return _utf8_identity(_key(ctx))


def _rfc2047_header(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
    name = str(scenario.param("header", "X-Request-ID"))
    seed = scenario_seed(ctx.seed, scenario.id)
    return request.with_header(name, f"{UTF8_REQUEST_ID_PREFIX}{seed:08x}"), DEFAULT_AUTH


def _psu_identity(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
    """X-PSU-IDENTITY instead of PSU-ID (spec 5 item 5): a customer known by national identity."""
    seed = scenario_seed(ctx.seed, scenario.id)
    customer = ctx.data.identity_customer(seed)
    if customer.national_id is None:
        raise NotApplicable("the target's PSU has no national identity number to send")
    changed = request.without_header("PSU-ID").with_header("X-PSU-IDENTITY", customer.national_id)
    return changed, DEFAULT_AUTH


#: The second TPP of the ownership scenarios: another PSD2 authorisation number.
OTHER_TPP_ORGANISATION = "PSDNO-FSA-987654321"


def _other_tpp(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
    """The request for the first TPP's resource, signed by a second TPP with a valid certificate
    of its own from the same trusted CA (another organisation identifier)."""
    second = ctx.profile.second_identity
    if second.certificate is not None:
        variable = second.password_env
        identity = _profile_second_tpp(
            second.certificate,
            second.key,
            os.environ.get(variable) if variable else None,
        )
    else:
        what = "a second TPP's certificate (or one named by the profile's second_certificate)"
        identity = _second_tpp(_issuer(ctx, what), _key(ctx))
    signer = _signer(ctx, request, identity=identity)
    if ctx.profile.tls.certificate is not None and ctx.tls_trust_anchor is not None:
        # over mutual TLS the second TPP shows a QWAC of its own: a bank that pairs QWAC and
        # seal would otherwise refuse it for the pairing before its ownership check is reached
        organisation = _organisation(identity)
        return request, _OverTls(
            _qwac(ctx.tls_trust_anchor, _key(ctx), PSD2_ROLES, organisation), signer
        )
    return request, signer


@functools.cache
def _profile_second_tpp(certificate: Path, key: Path | None, password: str | None) -> TppIdentity:
    """The profile's second TPP (``second_certificate``), read once per worker."""
    return load_identity(certificate, key, password=password)


@functools.cache
def _second_tpp(ca: CertificateAuthority, key: Any) -> TppIdentity:
    return generate_tpp_identity(
        ca, organisation_id=OTHER_TPP_ORGANISATION, common_name="Conformance Test TPP B", key=key
    )


def _other_psu(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
    """The request for the first PSU's resource, naming a second PSU of the same TPP (another
    customer the bank knows: ``[psu.second]``, or one made through the sandbox)."""
    return request.as_psu(ctx.data.second_customer().psu), DEFAULT_AUTH


def _stale_date(direction: int) -> Case:
    """Signed with a Date an hour outside the bank's clock skew (``date_skew``), before or after
    now: a replayed or pre-made request (spec 5 item 2 signs Date; freshness is not stated)."""

    def prepare(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Prepared:
        shift = timedelta(seconds=direction * (ctx.profile.date_skew + STALE_DATE_MARGIN))
        return request, _signer(ctx, request, clock=lambda: datetime.now(UTC) + shift)

    return prepare


#: Every case: name → how the request is prepared (immutable).
CASES: Mapping[str, Case] = MappingProxyType(
    {
        **{case: _broken_signer(case) for case in _SIGNERS},
        "expired-certificate": _expired,
        "missing-role": _missing_role,
        "certificate-other-ca": _other_ca,
        "sha512-digest": _sha512,
        "rfc2047-signed-header": _rfc2047_header,
        "psu-identity": _psu_identity,
        "other-tpp": _other_tpp,
        "other-psu": _other_psu,
        "date-far-past": _stale_date(-1),
        "date-far-future": _stale_date(+1),
        "revoked-certificate": _revoked,
        "seal-is-qwac": _seal_is_qwac,
        "qwac-missing-role": _qwac_missing_role,
        "qwac-other-organisation": _qwac_other_organisation,
    }
)


#: What a case's request breaks, where one place and rule says it: a Date an hour before or after
#: the clock skew breaks one rule (an acceptance of either is one cause).
BREACHES: Mapping[str, Breach] = MappingProxyType(
    {
        "date-far-past": Breach("header", "Date", "the allowed clock skew", "an hour before"),
        "date-far-future": Breach("header", "Date", "the allowed clock skew", "an hour after"),
    }
)


#: Accepted cases that sign as another TPP certificate than the run's: case → that identity
#: (None: the run's own will do). Their base request is built by that identity (``_send_as``).
SIGNED_AS: Mapping[str, Callable[[RunContext], TppIdentity | None]] = MappingProxyType(
    {"rfc2047-signature": _rfc2047_identity}
)


#: Cases that send the request twice and judge the second answer themselves.
SENT_TWICE: Mapping[str, Callable[[Scenario, RunContext, OperationRequest], None]] = (
    MappingProxyType({"replay": _replay})
)
