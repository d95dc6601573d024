"""The target profile as a value: :class:`TargetProfile` and the settings it nests (TLS,
masking, the connection, the second identity), frozen dataclasses with no I/O of their own.

``conformance.profile.load`` makes one from a TOML file, ``conformance.profile.options`` puts the
command line and environment on top. The methods that need an operation take the contract's
:class:`~conformance.contract.Operation`; the profile never loads the contract itself.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conformance.errors import ProfileError
from conformance.profile import key_docs
from conformance.profile.bank import ENV_PREFIX, Waiver
from conformance.profile.consent_model import ConsentSettings
from conformance.profile.lifecycle import Lifecycle
from conformance.profile.negative_certificates import NegativeCertificates
from conformance.profile.oauth import OAuthSettings
from conformance.profile.operation_promises import OperationPromises
from conformance.profile.parts import (
    AgreementOwner,
    CorporatePsu,
    Hooks,
    PaymentAccounts,
    PreparedStates,
    PrivatePsu,
    ProductionData,
    ScaSettings,
)
from conformance.profile.paths import DEFAULT_REDIRECT_URI, PAYMENT_SERVICE, PERIODIC_SERVICE
from conformance.profile.response_headers import ResponseHeaderPromises
from conformance.profile.tls_settings import TlsSettings
from conformance.signing import KeyIdStyle

if TYPE_CHECKING:
    from conformance.contract import Operation

__all__ = [
    "CANCELLATION_AUTHORISATION",
    "DEFAULT_TIMEOUT",
    "DEFAULT_X_ACCEPT_FIX",
    "PRODUCT_OPERATIONS",
    "PRODUCT_PARAMETER",
    "ConnectionSettings",
    "MaskSettings",
    "SecondIdentity",
    "TargetProfile",
]

#: The path parameter that carries the payment product identifier (spec 4.1).
PRODUCT_PARAMETER = "payment-product"

#: Payment products a profile can name (spec 1) and the creation operation of each (spec 4.1).
PRODUCT_OPERATIONS: Mapping[str, str] = MappingProxyType(
    {"ndct": "E16", "periodic-ndct": "E17", "ncbct": "E18"}
)

#: The operation that starts a payment cancellation's own authorisation (issue 23: the
#: platform's banks ask it for a payment already authorised; ``[cancellation] sca``).
CANCELLATION_AUTHORISATION = "PCA"

DEFAULT_TIMEOUT = 30.0
DEFAULT_X_ACCEPT_FIX = "amount-as-string"


@dataclass(frozen=True)
class ConnectionSettings:
    """How the client reaches the bank (top-level keys ``timeout``, ``connect_timeout``,
    ``proxy``, ``retry_attempts``, ``retry_max_wait``, ``rate_limit``).

    ``connect_timeout`` None waits ``timeout`` for a connection too; retries are of a throttled
    answer (429/503 with Retry-After): how many, and the total wait; ``rate_limit`` is the most
    requests per second the whole run sends (None: no cap).
    """

    timeout: float = DEFAULT_TIMEOUT
    connect_timeout: float | None = None
    #: An HTTP(S) proxy URL to go through.
    proxy: str | None = None
    retry_attempts: int = 3
    retry_max_wait: float = 30.0
    rate_limit: float | None = None


@dataclass(frozen=True)
class MaskSettings:
    """``[mask]``: secrets (None: masked unless this is the reference server), account numbers,
    names, in every report (``conformance.report.masking``)."""

    secrets: bool | None = None
    accounts: bool = False
    names: bool = False


@dataclass(frozen=True)
class SecondIdentity:
    """A second TPP's signing certificate (another organisation) and key, for the scenarios in
    which one TPP must not reach another's resources (top-level keys ``second_certificate``,
    ``second_key``, ``second_key_password_env``); the key's password from the environment."""

    certificate: Path | None = None
    key: Path | None = None
    password_env: str | None = None


def _empty() -> Mapping[Any, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class TargetProfile:
    """One target, as read from its TOML file. Each field's metadata says which keys set it and
    what they mean (``key_docs``; ``docs/reference/profile.md`` is made of them).

    ``supported_operations`` is ``None`` when the profile does not narrow the operations (all
    supported); ``unsupported_operations`` lists the ones it excludes. Use :meth:`supports` rather
    than reading them: products and the sandbox switch narrow the set too.
    """

    name: str = field(metadata=key_docs.NAME)
    base_url: str = field(metadata=key_docs.BASE_URL)
    certificate: Path | None = field(default=None, metadata=key_docs.CERTIFICATE)
    key: Path | None = field(default=None, metadata=key_docs.NOT_A_KEY)
    key_password: str | None = field(default=None, repr=False, metadata=key_docs.KEY_PASSWORD)
    #: The trusted CAs and the TLS client certificate (QWAC) of mutual TLS, apart from the
    #: signing one (top-level keys ``ca_certificate``, ``ca_trust``, ``tls_certificate``,
    #: ``tls_key``, ``tls_key_password_env``).
    tls: TlsSettings = field(default_factory=TlsSettings, metadata=key_docs.TLS)
    second_identity: SecondIdentity = field(
        default_factory=SecondIdentity, metadata=key_docs.SECOND_IDENTITY
    )
    #: ``[negative_certificates]``: ready-made certificates for the negative scenarios of
    #: spec 5 item 1 (expired, without role, another CA, revoked, QWACs), so they need no CA key.
    negative_certificates: NegativeCertificates = field(
        default_factory=NegativeCertificates, metadata=key_docs.NEGATIVE_CERTIFICATES
    )
    #: ``[oauth]``: the token endpoint the run fetches its bearer tokens from (spec 5 item 8:
    #: "Access token or OAuth flow: not shown."); None: no token is sent.
    oauth: OAuthSettings | None = field(default=None, metadata=key_docs.OAUTH)
    connection: ConnectionSettings = field(
        default_factory=ConnectionSettings, metadata=key_docs.CONNECTION
    )
    mask: MaskSettings = field(default_factory=MaskSettings, metadata=key_docs.MASK)
    #: Scenarios reported ``waived`` with a reason, never run and never passed.
    waivers: tuple[Waiver, ...] = field(default=(), metadata=key_docs.WAIVERS)
    #: The clock skew (seconds) the bank allows between a signed Date and its own clock; the
    #: stale-Date scenarios sign a Date an hour beyond it.
    date_skew: float = field(default=300.0, metadata=key_docs.DATE_SKEW)
    redirect_uri: str = field(default=DEFAULT_REDIRECT_URI, metadata=key_docs.REDIRECT_URI)
    psu_private: PrivatePsu = field(default_factory=PrivatePsu, metadata=key_docs.PSU_PRIVATE)
    psu_corporate: CorporatePsu = field(
        default_factory=CorporatePsu, metadata=key_docs.PSU_CORPORATE
    )
    #: ``[psu.second]``: another private PSU, for checks that one PSU never reaches another's
    #: resources.
    psu_second: PrivatePsu = field(default_factory=PrivatePsu, metadata=key_docs.PSU_SECOND)
    products: frozenset[str] = field(
        default=frozenset(PRODUCT_OPERATIONS), metadata=key_docs.PRODUCTS
    )
    supported_operations: frozenset[str] | None = field(
        default=None, metadata=key_docs.SUPPORTED_OPERATIONS
    )
    unsupported_operations: frozenset[str] = field(default=frozenset(), metadata=key_docs.NOT_A_KEY)
    paths: Mapping[str, str] = field(default_factory=_empty, metadata=key_docs.PATHS)
    #: ``[paths] OP = { method = ..., periodic = ... }``: the bank's method where spec 4.1 does
    #: not show it, and the path of PS, PC or PA for a periodic payment.
    methods: Mapping[str, str] = field(default_factory=_empty, metadata=key_docs.METHODS)
    periodic_paths: Mapping[str, str] = field(default_factory=_empty, metadata=key_docs.NOT_A_KEY)
    sandbox: bool = field(default=True, metadata=key_docs.SANDBOX)
    production: ProductionData = field(default_factory=ProductionData, metadata=key_docs.PRODUCTION)
    #: ``[payments]``: the debtor and creditor accounts of payments on a target without sandbox.
    payment_accounts: PaymentAccounts = field(
        default_factory=PaymentAccounts, metadata=key_docs.PAYMENT_ACCOUNTS
    )
    #: ``[prepared]``: states the bank prepared for the run (a PDNG payment, aged consents, ...).
    prepared: PreparedStates = field(default_factory=PreparedStates, metadata=key_docs.PREPARED)
    #: ``[hooks]``: commands run at the bank's side (its batch processing run).
    hooks: Hooks = field(default_factory=Hooks, metadata=key_docs.HOOKS)
    #: ``[setup] templates``: per sandbox creation, an object merged into the suite's body.
    setup_templates: Mapping[str, Mapping[str, Any]] = field(
        default_factory=_empty, metadata=key_docs.SETUP_TEMPLATES
    )
    #: ``[setup] agreement_owner``: the owner's identifier a sandbox agreement names.
    agreement_owner: AgreementOwner = field(default="customerId", metadata=key_docs.AGREEMENT_OWNER)
    sca: ScaSettings = field(default_factory=ScaSettings, metadata=key_docs.SCA)
    #: ``[cancellation] sca``, ``nok_redirect_uri``, ``release``, ``[operations] optional``: the
    #: bank's choices about its payments' lifecycle and the release it runs.
    lifecycle: Lifecycle = field(default_factory=Lifecycle, metadata=key_docs.LIFECYCLE)
    x_accept_fix: str = field(default=DEFAULT_X_ACCEPT_FIX, metadata=key_docs.X_ACCEPT_FIX)
    #: ``[headers]``: sent on every request (an API gateway's client id); a value
    #: ``env:NAME`` is read from the environment variable NAME when the run starts.
    headers: Mapping[str, str] = field(default_factory=_empty, metadata=key_docs.HEADERS)
    #: ``[psu] ip_address``, ``user_agent``: the PSU-IP-Address and PSU-User-Agent values sent.
    psu_ip_address: str | None = field(default=None, metadata=key_docs.PSU_HEADERS)
    psu_user_agent: str | None = field(default=None, metadata=key_docs.NOT_A_KEY)
    #: ``[key_id]``: how the signer writes the keyId (spec 5 item 2 fixes neither the case of the
    #: hexadecimal serial nor how the DN is written), for a bank that compares it as text.
    key_id: KeyIdStyle = field(default_factory=KeyIdStyle, metadata=key_docs.KEY_ID)
    #: The ``referenceType`` of a KID in the structured remittance array (spec 2.7 leaves the
    #: value open: "KID", or ISO 20022's "SCOR" as several banks' own samples have it).
    kid_reference_type: str = field(default="KID", metadata=key_docs.KID_REFERENCE_TYPE)
    #: ``[query.<op id>]``: the bank's names of an operation's query parameters where the spec
    #: does not name them (AT's ``fromDate`` → ``dateFrom``, as Berlin Group banks name them).
    query_names: Mapping[str, Mapping[str, str]] = field(
        default_factory=_empty, metadata=key_docs.QUERY_NAMES
    )
    #: ``[product_ids]``: the contract's product identifier → the bank's (only NCBCT's is open:
    #: spec 4.1 "The NCBCT product identifier: not shown").
    product_ids: Mapping[str, str] = field(default_factory=_empty, metadata=key_docs.PRODUCT_IDS)
    #: ``[required_headers]``: the bank's required header set of an operation whose set the
    #: spec does not show (``required_for``).
    required_headers: Mapping[str, tuple[str, ...]] = field(
        default_factory=_empty, metadata=key_docs.REQUIRED_HEADERS
    )
    #: ``[consent] model``: detailed, bank-offered, global or first-access (spec 8 shows no
    #: consent operation).
    consent: ConsentSettings = field(default_factory=ConsentSettings, metadata=key_docs.CONSENT)
    #: ``[response_headers] promised``: the response headers the bank promises; a broken promise
    #: counts as a must failure for it, reported as its own promise, not the spec's.
    response_headers: ResponseHeaderPromises = field(
        default_factory=ResponseHeaderPromises, metadata=key_docs.RESPONSE_HEADERS
    )
    #: ``[operations] promised``: the operations interface.md neither shows nor names that the
    #: bank promises; a failure on one counts as a must failure for it, reported as its promise.
    operation_promises: OperationPromises = field(
        default_factory=OperationPromises, metadata=key_docs.OPERATION_PROMISES
    )
    reference_server: bool = field(default=False, metadata=key_docs.REFERENCE_SERVER)
    #: ``extends``: the profile this one starts from (resolved), or None.
    extends: Path | None = field(default=None, metadata=key_docs.EXTENDS)
    #: ``readings``: the readings the reference server plays when it plays this profile.
    readings: frozenset[str] = field(default=frozenset(), metadata=key_docs.READINGS)
    source: Path | None = field(default=None, metadata=key_docs.NOT_A_KEY)

    def static_headers(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """``[headers]`` with ``env:NAME`` values read from the environment; a variable that is
        not set is a :class:`ProfileError` naming it."""
        env = os.environ if environ is None else environ
        resolved: dict[str, str] = {}
        for name, value in self.headers.items():
            if value.startswith(ENV_PREFIX):
                variable = value.removeprefix(ENV_PREFIX)
                if not env.get(variable):
                    raise ProfileError(
                        f"profile {self.source}: [headers] {name} is read from the environment "
                        f"variable {variable}, which is not set"
                    )
                value = env[variable]
            resolved[name] = value
        return resolved

    @property
    def secret_headers(self) -> frozenset[str]:
        """The ``[headers]`` whose values come from the environment (lower case), and
        Authorization when the run sends bearer tokens (``[oauth]``): secrets, masked in every
        report."""
        named = frozenset(
            name.lower() for name, value in self.headers.items() if value.startswith(ENV_PREFIX)
        )
        return named | {"authorization"} if self.oauth is not None else named

    def required_for(self, operation: Operation) -> tuple[str, ...]:
        """The headers ``operation`` requires at this bank: the profile's set, else the
        contract's."""
        return self.required_headers.get(operation.id, operation.required_headers)

    def owner_reference(self, customer_id: str, customer_number: str | None) -> str:
        """How a sandbox agreement names its owner at this bank (``[setup] agreement_owner``):
        the customer's id, or its customer number where the bank takes that."""
        if self.agreement_owner == "customerNumber" and customer_number:
            return customer_number
        return customer_id

    def query_name(self, op_id: str, name: str) -> str:
        """The bank's name of the query parameter ``name`` of ``op_id``."""
        return self.query_names.get(op_id, {}).get(name, name)

    def waiver_for(self, scenario_id: str) -> str | None:
        """The reason the profile waives ``scenario_id`` (the first waiver naming it), or None."""
        for waiver in self.waivers:
            if waiver.covers(scenario_id):
                return waiver.reason
        return None

    def unsupported_reason(self, operation: Operation) -> str | None:
        """Why the target does not offer ``operation`` (one sentence), or None when it does.

        A scenario of an operation the target does not offer is "not applicable", never passed
        (docs/explanation/verdicts-and-causes.md); the reason is what the report shows.
        """
        op_id = operation.id
        if self.supported_operations is not None and op_id not in self.supported_operations:
            return f"{op_id} is not in the profile's operations.supported"
        if op_id in self.unsupported_operations:
            return f"{op_id} is in the profile's operations.unsupported"
        for product, product_op in PRODUCT_OPERATIONS.items():
            if product_op == op_id and product not in self.products:
                return f"the profile's products do not include {product} ({op_id})"
        if not self.sandbox and operation.family == "sandbox":
            return f"{op_id} is a sandbox operation and the profile says sandbox = false"
        consent_endpoint = self.consent.unsupported_reason(op_id, operation.family)
        if consent_endpoint is not None:
            return consent_endpoint
        if (
            operation.optional
            and op_id not in self.lifecycle.optional_operations
            and not self.operation_promises.promises(operation)
        ):
            return (
                f"{op_id} ({operation.name}) is an optional operation and the profile's "
                "operations.optional (or operations.promised) does not name it"
            )
        if op_id == CANCELLATION_AUTHORISATION and not self.lifecycle.cancellation_needs_sca:
            return (
                f"{op_id} authorises a cancellation, and the profile says a cancellation needs "
                'no SCA ([cancellation] sca = "never")'
            )
        return None

    def supports(self, operation: Operation) -> bool:
        """Whether the target offers ``operation`` (operations, products and sandbox considered)."""
        return self.unsupported_reason(operation) is None

    def path_for(self, operation: Operation, *, periodic: bool = False) -> str:
        """The path template of ``operation`` here: the profile's override (for a periodic
        payment its ``periodic`` one, when given), else the contract's."""
        if periodic and operation.id in self.periodic_paths:
            return self.periodic_paths[operation.id]
        return self.paths.get(operation.id, operation.path)

    def method_for(self, operation: Operation) -> str:
        """The HTTP method of ``operation`` here: the profile's, else the contract's."""
        return self.methods.get(operation.id, operation.method)

    def render_path(self, operation: Operation, /, **path_values: str) -> str:
        """:meth:`path_for` filled like ``Operation.render_path`` (consts filled, encoded), with
        the bank's product identifier where the profile names one (``[product_ids]``). The
        value ``payment-service`` (``periodic-payments`` for a periodic payment) picks the
        template and is not itself in the path."""
        service = path_values.pop(PAYMENT_SERVICE, None)
        values = {**operation.fixed_path_values, **path_values}
        product = values.get(PRODUCT_PARAMETER)
        if product is not None:
            values[PRODUCT_PARAMETER] = self.product_ids.get(product, product)
        template = self.path_for(operation, periodic=service == PERIODIC_SERVICE)
        return dataclasses.replace(operation, path=template).render_path(**values)
