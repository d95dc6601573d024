"""The bank the server plays: the choices a target profile describes where the spec leaves them
open (``python -m reference_server --profile FILE``), read through the suite's own profile loader.

Played:

- ``[headers]``: the static headers an API gateway requires on every contract request (missing:
  401 ``HTTP_HEADER_REQUIRED``; wrong value: 401 ``FORBIDDEN``; both with the spec 7 body);
- ``kid_reference_type``: the ``referenceType`` that marks a KID in the structured remittance;
- ``[query]``: the bank's names of query parameters (the contract's name is then unknown, ignored);
- ``[required_headers]``: the required header set where the spec does not show it;
- ``[product_ids]``: requests read in the bank's NCBCT identifier, answers written in it;
- ``[sca] start``: every payment creation starts its own authorisation; ``[sca] approach``
  decoupled: answers carry ``scaStatus`` and no ``scaRedirect``, and the SCA page plays the
  bank's app where the PSU decides;
- ``[paths]``: a request in the bank's method and path is routed as the contract's (links in
  answers keep the contract's paths, which stay reachable as aliases; ``[prepared]
  basket_status_path`` is read as ``[paths] BS``, the basket status read);
- ``sandbox = false``: the data a production-like bank holds already (its PSU, accounts, consent
  and transactions: ``existing_data``), and the states its ``[prepared]`` table names (a payment
  in PDNG, consents aged past 90 and 180 days, a consent on a closed account, a basket whose
  payment was cancelled), under the profile's ids;
- ``rate_limit``: beyond it a contract request is answered 429 with ``Retry-After``;
- ``[cancellation] sca = "never"``: an authorised payment is cancelled at once (204), as a
  RCVD one is; by default its cancellation waits for its own SCA (PCA);
- ``release``: an older release has not what spec 9 dates later; played: NCBCT payments are
  refused in a signing basket before 1.21.20 (400 PRODUCT_INVALID);
- ``[oauth]``: a token endpoint at the path of ``token_url`` issues client-credentials tokens to
  the profile's client (authenticated as ``auth`` says), and every contract request needs one as
  ``Authorization: Bearer`` (``pipeline/tokens.py``); ``[sca] approach = "oauth"``: answers carry
  ``scaOAuth`` (the authorisation server's metadata) and no ``scaRedirect``;
- ``[consent] model``: a bank-offered or global bank takes only that model's consent body (and
  every answer names the SCA approach in ``ASPSP-SCA-Approach``, whatever the profile); a
  first-access bank has no consent endpoint (404) and gives the consent at a TPP session's first
  account access: 401 with ``_links.scaRedirect``, then the session is served
  (``services/consent_access.py``);
- ``readings``: the readings of the spec played where it reads two ways or is silent
  (``model/readings.py``, asked with ``app.reads``; ``profiles/reference-server-permissive.toml``
  and ``-demanding.toml`` play every one of a direction).

Without a profile the server is the bundled one (assumptions.md, "Bank styles").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.x509.oid import NameOID

from conformance.contract import load_contract
from conformance.contract.crossfield import KID_REFERENCE_TYPES
from conformance.contract.releases import Release
from conformance.errors import ConformanceError
from conformance.profile import ConsentSettings, PreparedStates, TargetProfile
from conformance.signing import default_identity, load_identity

__all__ = [
    "BankRoute",
    "BankStyle",
    "ExistingData",
    "OAuthStyle",
    "bank_methods",
    "certificate_owner_of",
    "contract_route",
    "existing_data_of",
    "inbound_path",
    "organisation_of",
    "outbound_text",
    "style_of",
]

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True)
class BankRoute:
    """One of the bank's own method and path templates (``[paths]``), and the contract's method
    and path template of the same operation, which the server routes by."""

    method: str
    pattern: re.Pattern[str]
    names: tuple[str, ...]
    contract_method: str
    contract_path: str

    @classmethod
    def of(cls, method: str, template: str, contract_method: str, contract_path: str) -> BankRoute:
        names = tuple(_PLACEHOLDER.findall(template))
        parts = _PLACEHOLDER.split(template)
        # split alternates literal text and placeholder names: literals at even positions.
        regex = "".join(
            re.escape(part) if index % 2 == 0 else "([^/]+)" for index, part in enumerate(parts)
        )
        return cls(method, re.compile(regex), names, contract_method, contract_path)

    def contract_form(self, method: str, path: str) -> tuple[str, str] | None:
        """The contract's method and path of a request in this route's form, else None."""
        found = self.pattern.fullmatch(path)
        if found is None or method != self.method:
            return None
        values = dict(zip(self.names, found.groups(), strict=True))
        return self.contract_method, _PLACEHOLDER.sub(
            lambda name: values[name.group(1)], self.contract_path
        )


@dataclass(frozen=True)
class ExistingData:
    """What the profile says exists at the bank."""

    psu_id: str
    customer_number: str
    national_id: str | None
    account_ids: tuple[str, ...]
    debtor_bban: str | None
    consent_id: str | None
    transaction_ids: tuple[str, ...]
    #: ``[psu.second]``: another private PSU (its PSU-ID and customerNumber), or None.
    second: tuple[str, str] | None = None
    #: The TPP the existing consent was given to: the profile's signing certificate's
    #: organisation identifier (``ownership.py``), else the default test identity's.
    tpp_id: str | None = None
    #: ``[prepared]``: the states the bank holds ready for a run, under the profile's ids.
    prepared: PreparedStates = field(default_factory=PreparedStates)
    #: The same TPP known by its certificate (``certificate_owner_of``), for a server that owns
    #: resources per certificate (the permissive reading ``ownership-per-certificate``).
    tpp_certificate: str | None = None


def existing_data_of(profile: TargetProfile) -> ExistingData | None:
    """The existing data of a profile without the sandbox that names a private PSU; else None
    (with the sandbox, a run creates its own data)."""
    private = profile.psu_private
    if profile.sandbox or private.psu_id is None:
        return None
    return ExistingData(
        psu_id=private.psu_id,
        customer_number=private.customer_number or "10000001",
        national_id=private.national_id,
        account_ids=profile.production.account_ids,
        debtor_bban=profile.payment_accounts.debtor_bban,
        consent_id=profile.production.consent_id,
        transaction_ids=profile.production.transaction_ids,
        second=(
            (profile.psu_second.psu_id, profile.psu_second.customer_number or "10000002")
            if profile.psu_second.psu_id is not None
            else None
        ),
        tpp_id=_profile_tpp(profile, organisation_of),
        tpp_certificate=_profile_tpp(profile, certificate_owner_of),
        prepared=profile.prepared,
    )


def organisation_of(certificate: x509.Certificate) -> str:
    """A TPP certificate's organisation identifier (the PSD2 authorisation number), else its
    whole subject: the TPP a resource belongs to."""
    found = certificate.subject.get_attributes_for_oid(NameOID.ORGANIZATION_IDENTIFIER)
    return str(found[0].value) if found else certificate.subject.rfc4514_string()


def certificate_owner_of(certificate: x509.Certificate) -> str:
    """A TPP certificate itself as an owner: its issuer and serial number (spec 5 item 2's
    keyId names a certificate the same way), for ownership per certificate."""
    return f"SN={certificate.serial_number:x},CA={certificate.issuer.rfc4514_string()}"


def _profile_tpp(profile: TargetProfile, owner: Callable[[x509.Certificate], str]) -> str | None:
    """The TPP the profile signs as, as ``owner`` names it (None when unreadable)."""
    try:
        identity = (
            load_identity(profile.certificate, profile.key, password=profile.key_password)
            if profile.certificate is not None
            else default_identity()
        )
    except ConformanceError:
        return None
    return owner(identity.certificate)


@dataclass(frozen=True)
class OAuthStyle:
    """The bank's OAuth 2.0 server (``[oauth]``): where its token endpoint is, the one client it
    knows and how that client authenticates (its secret read from the server's environment)."""

    token_path: str
    client_id: str
    auth: str
    scope: frozenset[str] = frozenset()
    client_secret: str | None = field(default=None, repr=False)


def oauth_style_of(
    profile: TargetProfile, environ: Mapping[str, str] | None = None
) -> OAuthStyle | None:
    settings = profile.oauth
    if settings is None:
        return None
    path = urlsplit(settings.token_url).path or "/"
    return OAuthStyle(
        token_path=path,
        client_id=settings.client_id,
        auth=settings.auth,
        scope=frozenset((settings.scope or "").split()),
        client_secret=settings.client_secret(environ),
    )


@dataclass(frozen=True)
class BankStyle:
    """What differs from the bundled server's defaults: those of a profile that says nothing
    (where a key's default is a value here, it is read from the profile model, its one home)."""

    gateway_headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    kid_reference_types: frozenset[str] = KID_REFERENCE_TYPES
    #: Per operation, the bank's names of its query parameters (AT: ``fromDate`` → ``dateFrom``).
    query_names: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    #: The contract's product identifier → the bank's (NCBCT's, which the spec does not show).
    product_ids: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Per operation, the bank's required header set where the spec does not show it.
    required_headers: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    #: ``[paths]``: the bank's methods and path templates where they differ from the contract's.
    routes: tuple[BankRoute, ...] = ()
    #: ``date_skew``: seconds a signed Date may lie from the server's clock.
    date_skew: float = TargetProfile.date_skew
    #: ``rate_limit``: requests a second beyond which a contract request is answered 429.
    rate_limit: float = 0.0
    #: ``sandbox = false``: the customers, accounts, consent and transactions the profile
    #: lists, which the server holds from its start (``existing_data``).
    existing: ExistingData | None = None
    #: ``[sca] start = "creation"``: every payment creation starts its own authorisation.
    sca_at_creation: bool = False
    #: ``[sca] approach = "decoupled"``: answers carry ``scaStatus`` and no ``scaRedirect``.
    sca_decoupled: bool = False
    #: ``[oauth]``: the token endpoint and its client; every contract request needs a token.
    oauth: OAuthStyle | None = None
    #: ``[sca] approach = "oauth"``: answers carry ``scaOAuth`` and no ``scaRedirect``.
    sca_oauth: bool = False
    #: ``[cancellation] sca``: cancelling an authorised payment needs its own SCA (PCA).
    cancellation_sca: bool = True
    #: ``release``: the release the bank runs (None: the latest, 1.22.0); what spec 9 dates
    #: later is not there (``schemas/releases.json``: NCBCT in signing baskets from 1.21.20).
    release: Release | None = None
    #: ``[consent] model``: detailed (every form taken), bank-offered or global (only its own),
    #: first-access (no consent endpoint: the consent is bound to the TPP session).
    consent_model: str = ConsentSettings.model
    #: ``[setup] agreement_owner = "customerNumber"``: an agreement's ``owner`` is taken as a
    #: customer number only (a customer id is refused).
    owner_by_number: bool = False
    #: ``readings``: the readings of the spec played (``model/readings.py``; ``app.reads``).
    readings: frozenset[str] = frozenset()


def style_of(profile: TargetProfile, environ: Mapping[str, str] | None = None) -> BankStyle:
    """The style a profile describes; its ``env:`` header values are read from ``environ``
    (the server's environment by default), as the suite reads them from its own."""
    kid = profile.kid_reference_type.upper()
    return BankStyle(
        gateway_headers=MappingProxyType(profile.static_headers(environ)),
        kid_reference_types=KID_REFERENCE_TYPES if kid in KID_REFERENCE_TYPES else frozenset({kid}),
        query_names=profile.query_names,
        required_headers=profile.required_headers,
        product_ids=profile.product_ids,
        routes=tuple(_routes(profile)),
        rate_limit=profile.connection.rate_limit or 0.0,
        date_skew=profile.date_skew,
        existing=existing_data_of(profile),
        sca_at_creation=profile.sca.start == "creation",  # psu-context: the bundled way
        owner_by_number=profile.agreement_owner == "customerNumber",
        sca_decoupled=profile.sca.decoupled,
        oauth=oauth_style_of(profile, environ),
        sca_oauth=profile.sca.oauth,
        cancellation_sca=profile.lifecycle.cancellation_needs_sca,
        release=profile.lifecycle.release,
        consent_model=profile.consent.model,
        readings=profile.readings,
    )


def _routes(profile: TargetProfile) -> Iterator[BankRoute]:
    """The bank's routes, fewest placeholders first (a literal segment wins over a value)."""
    operations = load_contract().operations
    chosen = {*profile.paths, *profile.methods, *profile.periodic_paths}
    routes: list[BankRoute] = []
    for op_id in sorted(chosen):
        operation = operations[op_id]
        templates = {profile.path_for(operation), profile.path_for(operation, periodic=True)}
        routes += [
            BankRoute.of(profile.method_for(operation), template, operation.method, operation.path)
            for template in sorted(templates)
        ]
    yield from sorted(routes, key=lambda route: len(route.names))


def bank_methods(style: BankStyle, path: str) -> tuple[str, ...]:
    """The methods the bank's own paths (``[paths]``) take at ``path`` (none: not one of them),
    so that a wrong method there is answered 405 with them, as on the contract's paths."""
    return tuple(sorted({route.method for route in style.routes if route.pattern.fullmatch(path)}))


def contract_route(style: BankStyle, method: str, path: str) -> tuple[str, str]:
    """The method and path the server routes a request by: the contract's form of a request
    in one of the bank's own (``[paths]``), else the request's. The contract's own paths of
    those operations stay reachable too, as aliases a gateway might keep."""
    for route in style.routes:
        contract_form = route.contract_form(method, path)
        if contract_form is not None:
            return contract_form
    return method, path


#: The segment a contract product id is turned into where the bank uses its own: no product.
_UNKNOWN_HERE = "unknown-product"


def inbound_path(style: BankStyle, path: str) -> str:
    """A request path in the contract's product ids: the bank's id becomes the contract's, and
    the contract's (which this bank does not use) an unknown product, as a gateway in front of
    the bundled routes would do."""
    if not style.product_ids:
        return path
    contract_of = {bank: contract for contract, bank in style.product_ids.items()}
    segments = path.split("/")
    for index, segment in enumerate(segments):
        if segment in contract_of:
            segments[index] = contract_of[segment]
        elif segment in style.product_ids:
            segments[index] = _UNKNOWN_HERE
    return "/".join(segments)


def outbound_text(style: BankStyle, data: bytes) -> bytes:
    """An answer (body or a Location header) in the bank's product ids."""
    for contract, bank in style.product_ids.items():
        data = data.replace(f"/{contract}/".encode(), f"/{bank}/".encode())
        data = data.replace(f'/{contract}"'.encode(), f'/{bank}"'.encode())
    return data
