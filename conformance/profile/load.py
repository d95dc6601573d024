"""Reading a profile: one TOML file → :class:`~conformance.profile.model.TargetProfile`, every
key checked and every unknown key an error naming the file and the key (``docs/reference/
profile.md`` is the list). Each table has its reader below; :func:`load_profile` puts them together.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from conformance.contract import load_contract
from conformance.contract.identifiers import is_valid_bban
from conformance.errors import ProfileError
from conformance.profile import consent_model, negative_certificates, oauth, response_headers
from conformance.profile.bank import (
    check_static_header,
    read_product_ids,
    read_query_names,
    read_required_headers,
    read_waivers,
)
from conformance.profile.lifecycle import read_lifecycle
from conformance.profile.model import (
    DEFAULT_TIMEOUT,
    DEFAULT_X_ACCEPT_FIX,
    PRODUCT_OPERATIONS,
    ConnectionSettings,
    MaskSettings,
    SecondIdentity,
    TargetProfile,
)
from conformance.profile.operation_promises import OperationPromises
from conformance.profile.parts import (
    AGREEMENT_OWNERS,
    SCA_APPROACHES,
    SCA_MODES,
    SCA_STARTS,
    AgreementOwner,
    CorporatePsu,
    Hooks,
    PaymentAccounts,
    PreparedStates,
    PrivatePsu,
    ProductionData,
    ScaSettings,
)
from conformance.profile.paths import check_op_id, check_redirect_uri, read_paths
from conformance.profile.templates import read_templates
from conformance.profile.tls_settings import CA_TRUST_MODES, CaTrust, TlsSettings
from conformance.profile.toml_table import Table, read_toml
from conformance.signing import KeyIdStyle

if TYPE_CHECKING:
    from conformance.contract import Contract, Operation

__all__ = ["check_base_url", "load_profile", "profile_data", "profile_files"]

_C = TypeVar("_C", bound=str)
_PSU = TypeVar("_PSU", PrivatePsu, CorporatePsu)


def load_profile(path: str | os.PathLike[str], contract: Contract | None = None) -> TargetProfile:
    """Read and check a profile against ``contract`` (the project's when None); any problem is a
    :class:`ProfileError` naming file and key."""
    source = Path(path).resolve()
    data, base = _with_base(source)
    top = Table(data, "", source)
    known_ops = (load_contract() if contract is None else contract).operations
    base_url = _base_url(top, source)
    date_skew = _positive_seconds(top, "date_skew", TargetProfile.date_skew)
    connection = _read_connection(top, source)
    ca_trust = _choice(top, "ca_trust", CA_TRUST_MODES, TlsSettings.ca_trust)
    products = _read_products(top)
    supported, unsupported, optional, promised = _read_operations(top, known_ops)
    path_choices = read_paths(top, known_ops)
    prepared, basket_status_path = _read_prepared(top.table("prepared"), products)
    psu = top.table("psu")
    private, corporate, second = _read_psus(psu)
    psu_ip_address = psu.optional_str("ip_address")
    psu_user_agent = psu.optional_str("user_agent")
    psu.finish()
    setup_templates, agreement_owner = _read_setup(top.table("setup"), source, known_ops)
    # Read in this order (keyword arguments are evaluated in order): a file with several
    # mistakes names the same one first as before the loader was split.
    profile = TargetProfile(
        headers=_read_static_headers(top),
        query_names=_read_query(top, known_ops),
        production=_read_production(top.table("production")),
        sca=_read_sca(top.table("sca")),
        lifecycle=read_lifecycle(top, optional),
        oauth=oauth.read(top.table("oauth")),
        payment_accounts=_read_payment_accounts(top.table("payments")),
        prepared=prepared,
        hooks=_read_hooks(top.table("hooks"), source),
        setup_templates=setup_templates,
        agreement_owner=agreement_owner,
        mask=_read_mask(top.table("mask")),
        waivers=read_waivers(top),
        x_accept_fix=_read_x_accept_fix(top.table("x_accept_fix")),
        name=top.get("name", str, source.stem),
        base_url=base_url,
        certificate=_file_path(top, "certificate", source),
        second_identity=_read_second_identity(top, source),
        negative_certificates=negative_certificates.read(
            top.table("negative_certificates"), source
        ),
        key=_file_path(top, "key", source),
        key_password=top.optional_str("key_password"),
        tls=_read_tls(top, source, ca_trust),
        psu_ip_address=psu_ip_address,
        psu_user_agent=psu_user_agent,
        kid_reference_type=top.get("kid_reference_type", str, TargetProfile.kid_reference_type),
        key_id=_read_key_id(top.table("key_id")),
        required_headers=read_required_headers(top, known_ops),
        consent=consent_model.read(top.table("consent")),
        response_headers=response_headers.read(top.table("response_headers")),
        operation_promises=promised,
        product_ids=read_product_ids(top, known_ops),
        connection=connection,
        redirect_uri=check_redirect_uri(top),
        psu_private=private,
        psu_corporate=corporate,
        psu_second=second,
        products=products,
        supported_operations=supported,
        unsupported_operations=unsupported or frozenset(),
        paths=_with_basket_status(top, path_choices.paths, basket_status_path),
        methods=path_choices.methods,
        periodic_paths=path_choices.periodic,
        sandbox=top.get("sandbox", bool, TargetProfile.sandbox),
        date_skew=date_skew,
        reference_server=top.get("reference_server", bool, TargetProfile.reference_server),
        extends=base,
        readings=frozenset(top.strings("readings") or ()),
        source=source,
    )
    _check_key_pairs(top, profile)
    if profile.sca.approach == "oauth" and profile.oauth is None:
        raise top.error("sca.approach", 'is "oauth": the [oauth] table says how to get the token')
    top.finish()
    return profile


# --- extends ------------------------------------------------------------------------------------


def profile_files(path: str | os.PathLike[str]) -> tuple[Path, ...]:
    """The profile file at ``path`` and each profile it extends, in that order (a report's
    digest and a sealed record's copy cover them all)."""
    return tuple(source for source, _ in _chain(Path(path).resolve()))


def _chain(source: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The profile at ``source`` and the bases its ``extends`` names, each a file of the same
    folder (so that relative paths mean the same in all), with their keys (``extends`` taken
    out); a circle is an error."""
    chain: list[tuple[Path, dict[str, Any]]] = []
    path: Path | None = source
    while path is not None:
        if any(path == seen for seen, _ in chain):
            raise ProfileError(
                f"profile {source}: extends leads back to {path}: profiles extend in a circle"
            )
        data = read_toml(path)
        name = data.pop("extends", None)
        chain.append((path, data))
        if name is not None and (
            not isinstance(name, str) or not name.strip() or Path(name).name != name
        ):
            raise ProfileError(
                f"profile {path}: extends must be the file name of a profile in the same folder"
            )
        path = None if name is None else path.parent / name
    return chain


def profile_data(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The keys of the profile at ``path`` as its TOML says them, with those of every profile it
    extends merged in (``extends`` itself left out): what a copy of it elsewhere must say."""
    data, _ = _with_base(Path(path).resolve())
    return data


def _with_base(source: Path) -> tuple[dict[str, Any], Path | None]:
    """The keys of the profile at ``source`` merged over those of the profiles it extends (the
    nearest wins), and the base it names itself (None: it extends none)."""
    chain = _chain(source)
    merged: dict[str, Any] = {}
    for _, data in reversed(chain):
        merged = _merged(merged, data)
    return merged, chain[1][0] if len(chain) > 1 else None


def _merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over``'s keys over ``base``'s: tables merged key by key, any other value replaced."""
    merged = dict(base)
    for key, value in over.items():
        below = merged.get(key)
        if isinstance(value, dict) and isinstance(below, dict):
            merged[key] = _merged(below, value)
        else:
            merged[key] = value
    return merged


# --- values -------------------------------------------------------------------------------------


def check_base_url(value: str, what: str) -> str:
    """``value`` as a base URL (http or https, a host, no query or fragment; no trailing /)."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ProfileError(f"{what} must be an http:// or https:// URL, not {value!r}")
    if parts.query or parts.fragment:
        raise ProfileError(f"{what} must not carry a query or fragment: {value!r}")
    return value.rstrip("/")


def _url(table: Table, key: str, source: Path) -> str | None:
    value = table.optional_str(key)
    if value is None:
        return None
    try:
        return check_base_url(value, key)
    except ProfileError as error:
        raise ProfileError(f"profile {source}: {error.message}") from None


def _base_url(top: Table, source: Path) -> str:
    base_url = _url(top, "base_url", source)
    if base_url is None:
        raise top.error("base_url", "is required (the URL all spec paths are relative to)")
    return base_url


def _file_path(table: Table, key: str, source: Path) -> Path | None:
    """A file named relative to the profile's folder; it must exist."""
    value = table.optional_str(key)
    if value is None:
        return None
    resolved = (source.parent / Path(value).expanduser()).resolve()
    if not resolved.is_file():
        raise table.error(key, f"names {value!r}, and {resolved} does not exist")
    return resolved


def _choice(table: Table, key: str, choices: tuple[_C, ...], default: _C) -> _C:
    """The value of ``key``, one of ``choices`` (a Literal type's values)."""
    value = table.get(key, str, default)
    for choice in choices:
        if value == choice:
            return choice
    raise table.error(key, f"must be one of {', '.join(choices)}, not {value!r}")


def _positive_seconds(table: Table, key: str, default: float) -> float:
    value = table.get(key, float, default)
    if not value > 0:
        raise table.error(key, f"must be a positive number of seconds, not {value}")
    return float(value)


def _op_ids(table: Table, key: str, known_ops: Mapping[str, Operation]) -> frozenset[str] | None:
    ids = table.strings(key)
    if ids is None:
        return None
    return frozenset(check_op_id(table, key, op_id, known_ops) for op_id in ids)


# --- the top-level keys -------------------------------------------------------------------------


def _read_connection(top: Table, source: Path) -> ConnectionSettings:
    """``timeout``, ``connect_timeout`` (default: ``timeout``), ``proxy``, ``retry_attempts``,
    ``retry_max_wait``, ``rate_limit``."""
    timeout = _positive_seconds(top, "timeout", DEFAULT_TIMEOUT)
    connect_timeout = _positive_seconds(top, "connect_timeout", timeout)
    proxy = _url(top, "proxy", source)
    retry_attempts = top.get("retry_attempts", int, ConnectionSettings.retry_attempts)
    if retry_attempts < 0:
        raise top.error("retry_attempts", f"must be 0 or more, not {retry_attempts}")
    retry_max_wait = top.get("retry_max_wait", float, ConnectionSettings.retry_max_wait)
    if retry_max_wait < 0:
        raise top.error("retry_max_wait", f"must be 0 or more seconds, not {retry_max_wait}")
    rate_limit = top.get("rate_limit", float, None)
    if rate_limit is not None and rate_limit <= 0:
        raise top.error(
            "rate_limit", f"must be a positive number of requests per second, not {rate_limit}"
        )
    return ConnectionSettings(
        timeout=timeout,
        connect_timeout=connect_timeout,
        proxy=proxy,
        retry_attempts=retry_attempts,
        retry_max_wait=retry_max_wait,
        rate_limit=rate_limit,
    )


def _read_tls(top: Table, source: Path, ca_trust: CaTrust) -> TlsSettings:
    """``ca_certificate`` (trusted as ``ca_trust`` says), ``tls_certificate``, ``tls_key``,
    ``tls_key_password_env``."""
    return TlsSettings(
        ca_trust=ca_trust,
        ca_certificate=_file_path(top, "ca_certificate", source),
        certificate=_file_path(top, "tls_certificate", source),
        key=_file_path(top, "tls_key", source),
        password_env=top.optional_str("tls_key_password_env"),
    )


def _read_second_identity(top: Table, source: Path) -> SecondIdentity:
    """``second_certificate``, ``second_key``, ``second_key_password_env``."""
    return SecondIdentity(
        certificate=_file_path(top, "second_certificate", source),
        key=_file_path(top, "second_key", source),
        password_env=top.optional_str("second_key_password_env"),
    )


def _check_key_pairs(top: Table, profile: TargetProfile) -> None:
    if profile.key is not None and profile.certificate is None:
        raise top.error("key", "is given without certificate")
    if profile.tls.key is not None and profile.tls.certificate is None:
        raise top.error("tls_key", "is given without tls_certificate")


def _read_products(top: Table) -> frozenset[str]:
    products = top.strings("products")
    if products is None:
        return frozenset(PRODUCT_OPERATIONS)
    for product in products:
        if product not in PRODUCT_OPERATIONS:
            known = ", ".join(PRODUCT_OPERATIONS)
            raise top.error("products", f"names an unknown product {product!r} (known: {known})")
    return frozenset(products)


# --- the tables ---------------------------------------------------------------------------------


def _read_operations(
    top: Table, known_ops: Mapping[str, Operation]
) -> tuple[frozenset[str] | None, frozenset[str] | None, frozenset[str], OperationPromises]:
    """``[operations] supported`` or ``unsupported``, ``optional`` (the contract's optional
    operations the bank offers) and ``promised`` (the unnamed operations the bank promises):
    (supported, unsupported, optional, promises)."""
    operations = top.table("operations")
    supported = _op_ids(operations, "supported", known_ops)
    unsupported = _op_ids(operations, "unsupported", known_ops)
    if supported is not None and unsupported is not None:
        raise operations.error("supported", "and operations.unsupported cannot both be given")
    optional = _op_ids(operations, "optional", known_ops) or frozenset()
    for op_id in sorted(optional):
        if not known_ops[op_id].optional:
            raise operations.error(
                "optional", f"names {op_id}, which is not an optional operation of the contract"
            )
    promised = _op_ids(operations, "promised", known_ops) or frozenset()
    for op_id in sorted(promised):
        if not known_ops[op_id].unnamed:
            unnamed = ", ".join(sorted(op for op, found in known_ops.items() if found.unnamed))
            raise operations.error(
                "promised",
                f"names {op_id}; only an operation interface.md neither shows nor names can be "
                f"promised ({unnamed}): the spec's own are held to it anyway",
            )
        if op_id in (unsupported or ()) or (supported is not None and op_id not in supported):
            raise operations.error("promised", f"names {op_id}, which the profile does not offer")
    operations.finish()
    return supported, unsupported, optional, OperationPromises(promised)


def _read_psus(psu: Table) -> tuple[PrivatePsu, CorporatePsu, PrivatePsu]:
    """``[psu.private]``, ``[psu.corporate]``, ``[psu.second]``."""
    private_table, corporate_table = psu.table("private"), psu.table("corporate")
    private = _read_dataclass(private_table, PrivatePsu)
    corporate = _read_dataclass(corporate_table, CorporatePsu)
    second = _read_dataclass(psu.table("second"), PrivatePsu)
    if second.psu_id is not None and second.psu_id == private.psu_id:
        raise psu.error("second.psu_id", "is the private PSU's; the second PSU is another one")
    return private, corporate, second


def _read_dataclass(table: Table, kind: type[_PSU]) -> _PSU:
    names = [f.name for f in dataclasses.fields(kind)]
    value = kind(**{name: table.optional_str(name) for name in names})
    table.finish()
    return value


def _read_static_headers(top: Table) -> Mapping[str, str]:
    """``[headers]``: sent on every request."""
    table = top.table("headers")
    headers = {name: check_static_header(table, name) for name in table.names()}
    table.finish()
    return MappingProxyType(headers)


def _read_query(top: Table, known_ops: Mapping[str, Operation]) -> Mapping[str, Mapping[str, str]]:
    """``[query.<op id>]``: the bank's names of query parameters."""
    table = top.table("query")
    names = {op_id: read_query_names(table, op_id, known_ops) for op_id in table.names()}
    table.finish()
    return MappingProxyType(names)


def _read_production(table: Table) -> ProductionData:
    """``[production]``: existing data of a target without the sandbox."""
    production = ProductionData(
        consent_id=table.optional_str("consent_id"),
        account_ids=table.strings("account_ids") or (),
        transaction_ids=table.strings("transaction_ids") or (),
    )
    table.finish()
    return production


#: The products a prepared PDNG payment may be of (single payments: a batch run skips periodic
#: ones, spec 3).
_PENDING_PRODUCTS = ("ndct", "ncbct")


def _read_prepared(table: Table, products: frozenset[str]) -> tuple[PreparedStates, str | None]:
    """``[prepared]``: the states the bank prepared (ids of its own), each checked for the keys
    that go with it; and ``basket_status_path``, the older name of ``[paths] BS`` (the basket
    status read, an operation of the contract now)."""
    ids = {
        key: table.optional_str(key)
        for key in (
            "pending_payment_id",
            "aged_consent_id",
            "renewal_due_consent_id",
            "renewal_due_account_id",
            "renewal_due_transaction_id",
            "closed_account_consent_id",
            "closed_account_id",
            "changed_basket_id",
        )
    }
    product = _choice(
        table, "pending_payment_product", _PENDING_PRODUCTS, PreparedStates.pending_payment_product
    )
    if table.peek("pending_payment_product") is not None and product not in products:
        raise table.error("pending_payment_product", f"names {product}, which products leaves out")
    basket_payments = table.strings("changed_basket_payment_ids") or ()
    _together(table, ids, "closed_account_consent_id", "closed_account_id")
    for key in ("renewal_due_account_id", "renewal_due_transaction_id"):
        if ids[key] is not None and ids["renewal_due_consent_id"] is None:
            raise table.error(key, "is given without renewal_due_consent_id")
    if ids["renewal_due_transaction_id"] is not None and ids["renewal_due_account_id"] is None:
        raise table.error("renewal_due_transaction_id", "is given without renewal_due_account_id")
    if ids["changed_basket_id"] is not None and not basket_payments:
        raise table.error(
            "changed_basket_id", "needs changed_basket_payment_ids (the basket's payments)"
        )
    if basket_payments and ids["changed_basket_id"] is None:
        raise table.error("changed_basket_payment_ids", "is given without changed_basket_id")
    path = table.optional_str("basket_status_path")
    if path is not None and not (path.startswith("/") and "{basketId}" in path):
        raise table.error("basket_status_path", f"must be a path with {{basketId}}, not {path!r}")
    table.finish()
    prepared = PreparedStates(
        pending_payment_product=product,
        changed_basket_payment_ids=basket_payments,
        **ids,
    )
    return prepared, path


def _with_basket_status(
    top: Table, paths: Mapping[str, str], basket_status_path: str | None
) -> Mapping[str, str]:
    """``[paths]`` with ``[prepared] basket_status_path`` as BS's path (the key is older than the
    contract's basket status read, BS, and says the same); the two may not differ."""
    if basket_status_path is None:
        return paths
    chosen = paths.get("BS")
    if chosen is not None and chosen != basket_status_path:
        raise top.error(
            "prepared.basket_status_path",
            f"is {basket_status_path!r} but [paths] BS is {chosen!r}: they name the same "
            "operation (the basket status read), give one",
        )
    return MappingProxyType({**paths, "BS": basket_status_path})


def _together(table: Table, values: Mapping[str, str | None], first: str, second: str) -> None:
    """``first`` and ``second`` are given both or neither."""
    for key, other in ((first, second), (second, first)):
        if values[key] is not None and values[other] is None:
            raise table.error(key, f"is given without {other}")


def _read_hooks(table: Table, source: Path) -> Hooks:
    """``[hooks] batch`` (a command; a relative program path is the profile folder's) and
    ``batch_timeout`` (seconds)."""
    command = table.optional_str("batch")
    timeout = _positive_seconds(table, "batch_timeout", Hooks.batch_timeout)
    table.finish()
    if command is None:
        return Hooks(batch_timeout=timeout)
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise table.error("batch", f"is not a command line: {error}") from None
    if not words:
        raise table.error("batch", "must not be empty")
    program = Path(words[0]).expanduser()
    if not program.is_absolute() and len(program.parts) > 1:
        words[0] = str((source.parent / program).resolve())
    return Hooks(batch=tuple(words), batch_timeout=timeout)


def _read_sca(table: Table) -> ScaSettings:
    """``[sca]``: mode, start, approach, polling and the command."""
    mode = _choice(table, "mode", SCA_MODES, ScaSettings.mode)
    start = _choice(table, "start", SCA_STARTS, ScaSettings.start)
    approach = _choice(table, "approach", SCA_APPROACHES, ScaSettings.approach)
    interval = _positive_seconds(table, "poll_interval", ScaSettings.poll_interval)
    timeout = _positive_seconds(table, "poll_timeout", ScaSettings.poll_timeout)
    if interval > timeout:
        raise table.error("poll_interval", f"is longer than poll_timeout ({timeout:g} s)")
    command = table.optional_str("command")
    if mode == "command" and command is None:
        raise table.error("command", 'is required when mode = "command"')
    if mode != "command" and command is not None:
        raise table.error("command", 'is only used with mode = "command"')
    table.finish()
    return ScaSettings(
        mode=mode,
        command=command,
        start=start,
        approach=approach,
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


def _read_setup(
    table: Table, source: Path, known_ops: Mapping[str, Operation]
) -> tuple[Mapping[str, Mapping[str, object]], AgreementOwner]:
    """``[setup]``: ``templates`` (a folder of set-up templates, relative to the profile) and
    ``agreement_owner``."""
    folder = table.optional_str("templates")
    directory = None if folder is None else (source.parent / Path(folder).expanduser()).resolve()
    templates = read_templates(table, directory, known_ops)
    owner = _choice(table, "agreement_owner", AGREEMENT_OWNERS, TargetProfile.agreement_owner)
    table.finish()
    return templates, owner


def _read_mask(table: Table) -> MaskSettings:
    """``[mask]``: secrets, accounts, names."""
    mask = MaskSettings(
        secrets=table.get("secrets", bool, None),
        accounts=table.get("accounts", bool, MaskSettings.accounts),
        names=table.get("names", bool, MaskSettings.names),
    )
    table.finish()
    return mask


#: ``[key_id] serial``: the case of the keyId's hexadecimal serial.
KEY_ID_SERIALS = ("lower", "upper")
#: ``[key_id] issuer``: the order of the keyId's DN (RFC 4514: most specific RDN first).
KEY_ID_ISSUERS = ("rfc4514", "reversed")


def _read_key_id(table: Table) -> KeyIdStyle:
    """``[key_id]``: ``serial`` (lower, upper), ``issuer`` (rfc4514, reversed), ``url_encoded``."""
    style = KeyIdStyle(
        upper_serial=_choice(table, "serial", KEY_ID_SERIALS, "lower") == "upper",
        reversed_issuer=_choice(table, "issuer", KEY_ID_ISSUERS, "rfc4514") == "reversed",
        url_encoded=table.get("url_encoded", bool, False),
    )
    table.finish()
    return style


def _read_x_accept_fix(table: Table) -> str:
    """``[x_accept_fix] default``: the x-accept-fix value sent (spec 9)."""
    value = table.get("default", str, DEFAULT_X_ACCEPT_FIX)
    table.finish()
    return value
