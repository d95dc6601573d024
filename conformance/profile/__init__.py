"""The target profile (one TOML file, every key checked, an unknown key an error): read, validated
and merged with command-line options. Every key is documented in ``profiles/README.md``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import urlsplit

from conformance._data import data_directory
from conformance.contract import Contract, Operation, load_contract
from conformance.contract.identifiers import is_valid_bban
from conformance.errors import ProfileError
from conformance.profile.bank import (
    ENV_PREFIX,
    Waiver,
    check_static_header,
    read_product_ids,
    read_query_names,
    read_required_headers,
    read_waivers,
)
from conformance.profile.parts import (
    SCA_APPROACHES,
    SCA_MODES,
    SCA_STARTS,
    CorporatePsu,
    PaymentAccounts,
    PrivatePsu,
    ProductionData,
    ScaMode,
    ScaSettings,
)
from conformance.profile.paths import (
    DEFAULT_REDIRECT_URI,
    PAYMENT_SERVICE,
    PERIODIC_SERVICE,
    check_op_id,
    check_redirect_uri,
    read_paths,
)
from conformance.profile.templates import read_templates
from conformance.profile.tls_settings import CA_TRUST_MODES, CaTrust, TlsSettings
from conformance.profile.toml_table import Table, read_toml

__all__ = [
    "ENV_PREFIX",
    "PAYMENT_SERVICE",
    "PERIODIC_SERVICE",
    "PRODUCT_OPERATIONS",
    "REFERENCE_PROFILE",
    "SCA_MODES",
    "CorporatePsu",
    "PrivatePsu",
    "ProductionData",
    "ScaMode",
    "ScaSettings",
    "TargetProfile",
    "Waiver",
    "load_profile",
    "profile_from_options",
]

#: The path parameter that carries the payment product identifier (spec 4.1).
PRODUCT_PARAMETER = "payment-product"

#: Payment products a profile can name (spec 1) and the creation operation of each (spec 4.1).
PRODUCT_OPERATIONS: Mapping[str, str] = MappingProxyType(
    {"ndct": "E16", "periodic-ndct": "E17", "ncbct": "E18"}
)


#: The profile of the bundled reference server (shipped with the project).
REFERENCE_PROFILE = data_directory("profiles") / "reference-server.toml"

#: Environment variables that stand in for the CLI flags (DESIGN.md: "CLI flags / environment
#: variables"); a flag wins over its variable, a variable over the file.
ENV_PROFILE = "CONFORMANCE_PROFILE"
ENV_TARGET = "CONFORMANCE_TARGET"
ENV_CERT = "CONFORMANCE_CERT"
ENV_KEY = "CONFORMANCE_KEY"
ENV_KEY_PASSWORD = "CONFORMANCE_KEY_PASSWORD"
ENV_TLS_CERT = "CONFORMANCE_TLS_CERT"
ENV_TLS_KEY = "CONFORMANCE_TLS_KEY"

_DEFAULT_TIMEOUT = 30.0
_DEFAULT_X_ACCEPT_FIX = "amount-as-string"

_T = TypeVar("_T")
_D = TypeVar("_D")


@dataclass(frozen=True)
class TargetProfile:
    """One target, as read from its TOML file (see the module docstring for the keys).

    ``supported_operations`` is ``None`` when the profile does not narrow the operations (all
    supported); ``unsupported_operations`` lists the ones it excludes. Use :meth:`supports` rather
    than reading them: products and the sandbox switch narrow the set too.
    """

    name: str
    base_url: str
    certificate: Path | None = None
    key: Path | None = None
    key_password: str | None = field(default=None, repr=False)
    ca_certificate: Path | None = None
    #: ``replace``: ca_certificate is the only trust anchor; ``add``: beside the system's.
    ca_trust: CaTrust = "replace"
    #: The TLS client certificate (QWAC) of mutual TLS, apart from the signing one; its key when
    #: not in the certificate file; the environment variable that holds the key's password.
    tls_certificate: Path | None = None
    tls_key: Path | None = None
    tls_key_password_env: str | None = None
    #: A second TPP's signing certificate (another organisation) and key, for the scenarios in
    #: which one TPP must not reach another's resources; the key's password from the environment.
    second_certificate: Path | None = None
    second_key: Path | None = None
    second_key_password_env: str | None = None
    #: The most requests per second the whole run sends (None: no cap).
    rate_limit: float | None = None
    #: ``[mask]``: secrets (None: masked unless this is the reference server), account numbers,
    #: names, in every report (``conformance.report.masking``).
    mask_secrets: bool | None = None
    mask_accounts: bool = False
    mask_names: bool = False
    #: Scenarios reported ``waived`` with a reason, never run and never passed.
    waivers: tuple[Waiver, ...] = ()
    timeout: float = _DEFAULT_TIMEOUT
    #: The clock skew (seconds) the bank allows between a signed Date and its own clock; the
    #: stale-Date scenarios sign a Date an hour beyond it.
    date_skew: float = 300.0
    #: Seconds to wait for a connection (None: ``timeout``); an HTTP(S) proxy URL to go through.
    connect_timeout: float | None = None
    proxy: str | None = None
    #: Retries of a throttled answer (429/503 with Retry-After): how many, and the total wait.
    retry_attempts: int = 3
    retry_max_wait: float = 30.0
    redirect_uri: str = DEFAULT_REDIRECT_URI
    psu_private: PrivatePsu = field(default_factory=PrivatePsu)
    psu_corporate: CorporatePsu = field(default_factory=CorporatePsu)
    #: ``[psu.second]``: another private PSU, for checks that one PSU never reaches another's
    #: resources.
    psu_second: PrivatePsu = field(default_factory=PrivatePsu)
    products: frozenset[str] = frozenset(PRODUCT_OPERATIONS)
    supported_operations: frozenset[str] | None = None
    unsupported_operations: frozenset[str] = frozenset()
    paths: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: ``[paths] OP = { method = ..., periodic = ... }``: the bank's method where spec 4.1 does
    #: not show it, and the path of PS, PC or PA for a periodic payment.
    methods: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    periodic_paths: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    sandbox: bool = True
    production: ProductionData = field(default_factory=ProductionData)
    #: ``[payments]``: the debtor and creditor accounts of payments on a target without sandbox.
    payment_accounts: PaymentAccounts = field(default_factory=PaymentAccounts)
    #: ``[setup] templates``: per sandbox creation, an object merged into the suite's body.
    setup_templates: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    sca: ScaSettings = field(default_factory=ScaSettings)
    x_accept_fix: str = _DEFAULT_X_ACCEPT_FIX
    #: ``[headers]``: sent on every request (an API gateway's client id); a value
    #: ``env:NAME`` is read from the environment variable NAME when the run starts.
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: ``[psu] ip_address``, ``user_agent``: the PSU-IP-Address and PSU-User-Agent values sent.
    psu_ip_address: str | None = None
    psu_user_agent: str | None = None
    #: The ``referenceType`` of a KID in the structured remittance array (spec 2.7 leaves the
    #: value open: "KID", or ISO 20022's "SCOR" as several banks' own samples have it).
    kid_reference_type: str = "KID"
    #: ``[query.<op id>]``: the bank's names of an operation's query parameters where the spec
    #: does not name them (AT's ``fromDate`` → ``dateFrom``, as Berlin Group banks name them).
    query_names: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    #: ``[product_ids]``: the contract's product identifier → the bank's (only NCBCT's is open:
    #: spec 4.1 "The NCBCT product identifier: not shown").
    product_ids: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: ``[required_headers]``: the bank's required header set of an operation whose set the
    #: spec does not show (``required_for``).
    required_headers: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    reference_server: bool = False
    source: Path | None = None

    @property
    def tls(self) -> TlsSettings:
        """The client's TLS settings: trusted CAs and the client certificate."""
        return TlsSettings(
            ca_certificate=self.ca_certificate,
            ca_trust=self.ca_trust,
            certificate=self.tls_certificate,
            key=self.tls_key,
            password_env=self.tls_key_password_env,
        )

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
        """The ``[headers]`` whose values come from the environment (lower case): secrets,
        masked in every report."""
        return frozenset(
            name.lower() for name, value in self.headers.items() if value.startswith(ENV_PREFIX)
        )

    def required_for(self, operation: Operation) -> tuple[str, ...]:
        """The headers ``operation`` requires at this bank: the profile's set, else the
        contract's."""
        return self.required_headers.get(operation.id, operation.required_headers)

    def query_name(self, op_id: str, name: str) -> str:
        """The bank's name of the query parameter ``name`` of ``op_id``."""
        return self.query_names.get(op_id, {}).get(name, name)

    def waiver_for(self, scenario_id: str) -> str | None:
        """The reason the profile waives ``scenario_id`` (the first waiver naming it), or None."""
        for waiver in self.waivers:
            if waiver.covers(scenario_id):
                return waiver.reason
        return None

    def unsupported_reason(self, op_id: str) -> str | None:
        """Why the target does not offer ``op_id`` (one sentence), or None when it does.

        A scenario of an operation the target does not offer is "not applicable", never passed
        (DESIGN.md, Verdicts); the reason is what the report shows.
        """
        family = _family(op_id)  # also rejects an unknown id
        if self.supported_operations is not None and op_id not in self.supported_operations:
            return f"{op_id} is not in the profile's operations.supported"
        if op_id in self.unsupported_operations:
            return f"{op_id} is in the profile's operations.unsupported"
        for product, product_op in PRODUCT_OPERATIONS.items():
            if product_op == op_id and product not in self.products:
                return f"the profile's products do not include {product} ({op_id})"
        if not self.sandbox and family == "sandbox":
            return f"{op_id} is a sandbox operation and the profile says sandbox = false"
        return None

    def supports(self, op_id: str) -> bool:
        """Whether the target offers ``op_id`` (operations, products and sandbox considered)."""
        return self.unsupported_reason(op_id) is None

    def path_for(self, operation: Operation | str, *, periodic: bool = False) -> str:
        """The path template of ``operation`` here: the profile's override (for a periodic
        payment its ``periodic`` one, when given), else the contract's."""
        op = _operation(operation)
        if periodic and op.id in self.periodic_paths:
            return self.periodic_paths[op.id]
        return self.paths.get(op.id, op.path)

    def method_for(self, operation: Operation | str) -> str:
        """The HTTP method of ``operation`` here: the profile's, else the contract's."""
        op = _operation(operation)
        return self.methods.get(op.id, op.method)

    def render_path(self, operation: Operation | str, /, **path_values: str) -> str:
        """:meth:`path_for` filled like ``Operation.render_path`` (consts filled, encoded), with
        the bank's product identifier where the profile names one (``[product_ids]``). The
        value ``payment-service`` (``periodic-payments`` for a periodic payment) picks the
        template and is not itself in the path."""
        op = _operation(operation)
        service = path_values.pop(PAYMENT_SERVICE, None)
        values = {**op.fixed_path_values, **path_values}
        product = values.get(PRODUCT_PARAMETER)
        if product is not None:
            values[PRODUCT_PARAMETER] = self.product_ids.get(product, product)
        template = self.path_for(op, periodic=service == PERIODIC_SERVICE)
        return dataclasses.replace(op, path=template).render_path(**values)

    def with_options(
        self,
        *,
        target: str | None = None,
        cert: str | os.PathLike[str] | None = None,
        key: str | os.PathLike[str] | None = None,
        tls_cert: str | os.PathLike[str] | None = None,
        tls_key: str | os.PathLike[str] | None = None,
        tls_ca: str | os.PathLike[str] | None = None,
    ) -> TargetProfile:
        """This profile with CLI values on top; paths from the command line are relative to the cwd.

        A certificate given without a key means the key is in the certificate file (or PKCS#12),
        so the profile's key is dropped rather than paired with a certificate it does not fit
        (the same for the TLS client certificate and its key).
        """
        changes: dict[str, Any] = {}
        if target is not None:
            changes["base_url"] = _check_base_url(target, "--target")
        if cert is not None:
            changes["certificate"] = _existing_file(Path(cert).resolve(), "--cert")
            changes["key"] = None
        if key is not None:
            changes["key"] = _existing_file(Path(key).resolve(), "--key")
        if tls_cert is not None:
            changes["tls_certificate"] = _existing_file(Path(tls_cert).resolve(), "--tls-cert")
            changes["tls_key"] = None
        if tls_key is not None:
            changes["tls_key"] = _existing_file(Path(tls_key).resolve(), "--tls-key")
        if tls_ca is not None:
            changes["ca_certificate"] = _existing_file(Path(tls_ca).resolve(), "--tls-ca")
        return dataclasses.replace(self, **changes)


def _contract() -> Contract:
    return load_contract()  # cached: read once per process


def _operation(operation: Operation | str) -> Operation:
    """The contract's operation; an unknown id is a bug in the caller (KeyError), not user input."""
    if not isinstance(operation, str):
        return operation
    try:
        return _contract().operations[operation]
    except KeyError:
        raise KeyError(f"unknown operation id {operation!r}") from None


def _family(op_id: str) -> str:
    return _operation(op_id).family


# ---------------------------------------------------------------------------------------------
# Reading the TOML file
# ---------------------------------------------------------------------------------------------


def _check_base_url(value: str, what: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ProfileError(f"{what} must be an http:// or https:// URL, not {value!r}")
    if parts.query or parts.fragment:
        raise ProfileError(f"{what} must not carry a query or fragment: {value!r}")
    return value.rstrip("/")


def _existing_file(path: Path, what: str) -> Path:
    if not path.is_file():
        raise ProfileError(f"{what}: the file {path} does not exist")
    return path


def load_profile(path: str | os.PathLike[str]) -> TargetProfile:
    """Read and check a profile; any problem is a :class:`ProfileError` naming file and key."""
    source = Path(path).resolve()
    top = Table(read_toml(source), "", source)
    known_ops = _contract().operations

    def file_path(table: Table, key: str) -> Path | None:
        value = table.optional_str(key)
        if value is None:
            return None
        resolved = (source.parent / Path(value).expanduser()).resolve()
        if not resolved.is_file():
            raise table.error(key, f"names {value!r}, and {resolved} does not exist")
        return resolved

    def op_ids(table: Table, key: str) -> frozenset[str] | None:
        ids = table.strings(key)
        if ids is None:
            return None
        return frozenset(check_op_id(table, key, op_id, known_ops) for op_id in ids)

    base_url = top.optional_str("base_url")
    if base_url is None:
        raise top.error("base_url", "is required (the URL all spec paths are relative to)")
    try:
        base_url = _check_base_url(base_url, "base_url")
    except ProfileError as error:
        raise ProfileError(f"profile {source}: {error.message}") from None

    date_skew = top.get("date_skew", float, 300.0)
    if not date_skew > 0:
        raise top.error("date_skew", f"must be a positive number of seconds, not {date_skew}")
    timeout = top.get("timeout", float, _DEFAULT_TIMEOUT)
    if timeout <= 0:
        raise top.error("timeout", f"must be a positive number of seconds, not {timeout}")
    connect_timeout = top.get("connect_timeout", float, timeout)
    if connect_timeout <= 0:
        raise top.error(
            "connect_timeout", f"must be a positive number of seconds, not {connect_timeout}"
        )
    proxy = top.optional_str("proxy")
    if proxy is not None:
        try:
            proxy = _check_base_url(proxy, "proxy")
        except ProfileError as error:
            raise ProfileError(f"profile {source}: {error.message}") from None
    retry_attempts = top.get("retry_attempts", int, 3)
    if retry_attempts < 0:
        raise top.error("retry_attempts", f"must be 0 or more, not {retry_attempts}")
    retry_max_wait = top.get("retry_max_wait", float, 30.0)
    if retry_max_wait < 0:
        raise top.error("retry_max_wait", f"must be 0 or more seconds, not {retry_max_wait}")

    ca_trust = top.get("ca_trust", str, "replace")
    if ca_trust not in CA_TRUST_MODES:
        raise top.error("ca_trust", f"must be one of {', '.join(CA_TRUST_MODES)}, not {ca_trust!r}")
    rate_limit = top.get("rate_limit", float, None)
    if rate_limit is not None and rate_limit <= 0:
        raise top.error(
            "rate_limit", f"must be a positive number of requests per second, not {rate_limit}"
        )

    products = top.strings("products")
    if products is not None:
        for product in products:
            if product not in PRODUCT_OPERATIONS:
                known = ", ".join(PRODUCT_OPERATIONS)
                raise top.error(
                    "products", f"names an unknown product {product!r} (known: {known})"
                )

    operations = top.table("operations")
    supported = op_ids(operations, "supported")
    unsupported = op_ids(operations, "unsupported")
    if supported is not None and unsupported is not None:
        raise operations.error("supported", "and operations.unsupported cannot both be given")
    operations.finish()

    path_choices = read_paths(top, known_ops)

    psu = top.table("psu")
    private_table, corporate_table = psu.table("private"), psu.table("corporate")
    private = _read_dataclass(private_table, PrivatePsu)
    corporate = _read_dataclass(corporate_table, CorporatePsu)
    second = _read_dataclass(psu.table("second"), PrivatePsu)
    if second.psu_id is not None and second.psu_id == private.psu_id:
        raise psu.error("second.psu_id", "is the private PSU's; the second PSU is another one")
    psu_ip_address = psu.optional_str("ip_address")
    psu_user_agent = psu.optional_str("user_agent")
    psu.finish()

    headers_table = top.table("headers")
    static_headers = {
        name: check_static_header(headers_table, name) for name in headers_table.names()
    }
    headers_table.finish()

    query_table = top.table("query")
    query_names = {
        op_id: read_query_names(query_table, op_id, known_ops) for op_id in query_table.names()
    }
    query_table.finish()

    production_table = top.table("production")
    production = ProductionData(
        consent_id=production_table.optional_str("consent_id"),
        account_ids=production_table.strings("account_ids") or (),
        transaction_ids=production_table.strings("transaction_ids") or (),
    )
    production_table.finish()

    sca = _read_sca(top.table("sca"))
    payment_accounts = _read_payment_accounts(top.table("payments"))
    setup = top.table("setup")
    folder = setup.optional_str("templates")
    templates = read_templates(
        setup,
        None if folder is None else (source.parent / Path(folder).expanduser()).resolve(),
        known_ops,
    )
    setup.finish()

    mask = top.table("mask")
    mask_secrets = mask.get("secrets", bool, None)
    mask_accounts = mask.get("accounts", bool, False)
    mask_names = mask.get("names", bool, False)
    mask.finish()
    waivers = read_waivers(top)

    fix_table = top.table("x_accept_fix")
    x_accept_fix = fix_table.get("default", str, _DEFAULT_X_ACCEPT_FIX)
    fix_table.finish()

    profile = TargetProfile(
        name=top.get("name", str, source.stem),
        base_url=base_url,
        certificate=file_path(top, "certificate"),
        second_certificate=file_path(top, "second_certificate"),
        second_key=file_path(top, "second_key"),
        second_key_password_env=top.optional_str("second_key_password_env"),
        key=file_path(top, "key"),
        key_password=top.optional_str("key_password"),
        ca_certificate=file_path(top, "ca_certificate"),
        ca_trust=ca_trust,  # type: ignore[arg-type]
        tls_certificate=file_path(top, "tls_certificate"),
        tls_key=file_path(top, "tls_key"),
        tls_key_password_env=top.optional_str("tls_key_password_env"),
        rate_limit=rate_limit,
        mask_secrets=mask_secrets,
        mask_accounts=mask_accounts,
        mask_names=mask_names,
        waivers=waivers,
        headers=MappingProxyType(static_headers),
        psu_ip_address=psu_ip_address,
        psu_user_agent=psu_user_agent,
        kid_reference_type=top.get("kid_reference_type", str, "KID"),
        query_names=MappingProxyType(query_names),
        required_headers=read_required_headers(top, known_ops),
        product_ids=read_product_ids(top, known_ops),
        timeout=timeout,
        connect_timeout=connect_timeout,
        proxy=proxy,
        retry_attempts=retry_attempts,
        retry_max_wait=retry_max_wait,
        redirect_uri=check_redirect_uri(top),
        psu_private=private,
        psu_corporate=corporate,
        psu_second=second,
        products=frozenset(PRODUCT_OPERATIONS if products is None else products),
        supported_operations=supported,
        unsupported_operations=unsupported or frozenset(),
        paths=path_choices.paths,
        methods=path_choices.methods,
        periodic_paths=path_choices.periodic,
        sandbox=top.get("sandbox", bool, True),
        production=production,
        sca=sca,
        payment_accounts=payment_accounts,
        date_skew=date_skew,
        setup_templates=templates,
        x_accept_fix=x_accept_fix,
        reference_server=top.get("reference_server", bool, False),
        source=source,
    )
    if profile.key is not None and profile.certificate is None:
        raise top.error("key", "is given without certificate")
    if profile.tls_key is not None and profile.tls_certificate is None:
        raise top.error("tls_key", "is given without tls_certificate")
    top.finish()
    return profile


_PSU = TypeVar("_PSU", PrivatePsu, CorporatePsu)


def _read_dataclass(table: Table, kind: Callable[..., _PSU]) -> _PSU:
    names = [f.name for f in dataclasses.fields(kind)]  # type: ignore[arg-type]
    value = kind(**{name: table.optional_str(name) for name in names})
    table.finish()
    return value


def _read_sca(table: Table) -> ScaSettings:
    mode = table.get("mode", str, "reference")
    if mode not in SCA_MODES:
        raise table.error("mode", f"must be one of {', '.join(SCA_MODES)}, not {mode!r}")
    start = table.get("start", str, "authorisation")
    if start not in SCA_STARTS:
        raise table.error("start", f"must be one of {', '.join(SCA_STARTS)}, not {start!r}")
    approach = table.get("approach", str, "redirect")
    if approach not in SCA_APPROACHES:
        raise table.error(
            "approach", f"must be one of {', '.join(SCA_APPROACHES)}, not {approach!r}"
        )
    interval = _positive_seconds(table, "poll_interval", 2.0)
    timeout = _positive_seconds(table, "poll_timeout", 120.0)
    if interval > timeout:
        raise table.error("poll_interval", f"is longer than poll_timeout ({timeout:g} s)")
    command = table.optional_str("command")
    if mode == "command" and command is None:
        raise table.error("command", 'is required when mode = "command"')
    if mode != "command" and command is not None:
        raise table.error("command", 'is only used with mode = "command"')
    table.finish()
    return ScaSettings(
        mode=mode,  # type: ignore[arg-type]
        command=command,
        start=start,  # type: ignore[arg-type]
        approach=approach,  # type: ignore[arg-type]
        poll_interval=interval,
        poll_timeout=timeout,
    )


def _read_payment_accounts(table: Table) -> PaymentAccounts:
    """``[payments] debtor_bban``, ``creditor_bban``: Norwegian BBANs (11 digits, MOD11)."""
    values: dict[str, str | None] = {}
    for key in ("debtor_bban", "creditor_bban"):
        value = table.optional_str(key)
        if value is not None and not is_valid_bban(value):
            raise table.error(key, f"is not a valid Norwegian BBAN (11 digits, MOD11): {value!r}")
        values[key] = value
    table.finish()
    return PaymentAccounts(**values)


def _positive_seconds(table: Table, key: str, default: float) -> float:
    value = table.get(key, float, default)
    if not value > 0:
        raise table.error(key, f"must be a positive number of seconds, not {value!r}")
    return float(value)


# ---------------------------------------------------------------------------------------------
# CLI flags over the file
# ---------------------------------------------------------------------------------------------


def profile_from_options(
    *,
    target: str | None = None,
    cert: str | os.PathLike[str] | None = None,
    key: str | os.PathLike[str] | None = None,
    profile: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    tls_cert: str | os.PathLike[str] | None = None,
    tls_key: str | os.PathLike[str] | None = None,
    tls_ca: str | os.PathLike[str] | None = None,
) -> TargetProfile:
    """The profile a command runs with: ``--profile`` (or the bundled reference server's),
    then environment variables, then CLI flags on top. The key's password can come from
    ``CONFORMANCE_KEY_PASSWORD`` rather than the file (a password in a flag shows in ``ps``).

    Without ``--profile`` and ``--target`` the bundled reference server is the target (what
    ``make run`` exercises). With ``--target`` but no profile, everything is assumed supported
    and the sandbox present: the profile is where a bank says otherwise.
    """
    env = os.environ if environ is None else environ
    profile = profile if profile is not None else env.get(ENV_PROFILE) or None
    target = target if target is not None else env.get(ENV_TARGET) or None
    cert = cert if cert is not None else env.get(ENV_CERT) or None
    key = key if key is not None else env.get(ENV_KEY) or None
    tls_cert = tls_cert if tls_cert is not None else env.get(ENV_TLS_CERT) or None
    tls_key = tls_key if tls_key is not None else env.get(ENV_TLS_KEY) or None
    if key is not None and cert is None:
        raise ProfileError("--key needs --cert (the certificate the key belongs to)")
    if tls_key is not None and tls_cert is None:
        raise ProfileError("--tls-key needs --tls-cert (the certificate the key belongs to)")
    if profile is not None:
        base = load_profile(profile)
    elif target is not None:
        base = TargetProfile(name=target, base_url=_check_base_url(target, "--target"))
    else:
        base = load_profile(REFERENCE_PROFILE)
    merged = base.with_options(
        target=target, cert=cert, key=key, tls_cert=tls_cert, tls_key=tls_key, tls_ca=tls_ca
    )
    password = env.get(ENV_KEY_PASSWORD)
    if password:
        merged = dataclasses.replace(merged, key_password=password)
    return merged
