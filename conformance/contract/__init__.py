"""The contract of ``schemas/`` as one checked, read-only object (:func:`load_contract`), with its
cached validators and compiled checks.

``loader`` reads and checks every file (a bad one is a ``ContractError`` naming the file and the
JSON pointer), ``model`` holds the values (``Operation``, ``Rule``, ...), ``router`` matches a
method and path, ``validators`` and ``compiled`` judge bodies (``compiled``: the same verdicts as
``jsonschema``, for less work), ``fixes`` the ``x-accept-fix`` variants, ``crossfield`` the spec
2.7 rules both sides enforce, ``request_rules`` the header, signature, Date and PSU rules both
sides enforce (each broken rule a ``violation.Violation``), ``facts`` the spec's small facts
every side reads, ``identifiers`` Norwegian account and identity numbers, ``annotations`` the
reading and quotes a schema records for an error's place, ``openapi`` the export, ``silences``
the ledger of the spec's silences (``schemas/silences.json``), ``coverage`` the ledger of its
statements and what judges each (``schemas/coverage.json``). One of the kernels the reference
server may import.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator
from referencing import Registry
from referencing.exceptions import Unresolvable

from conformance._data import data_directory
from conformance._types import Schema
from conformance.contract.compiled import Check, CheckCompiler
from conformance.contract.loader import LoadedContract, load
from conformance.contract.model import (
    Assumption,
    FlowRow,
    Operation,
    Parameter,
    Quote,
    Response,
    Rule,
    operation_order,
    said,
)
from conformance.contract.router import Router
from conformance.contract.validators import ContractValidator, inline_refs
from conformance.errors import ContractError

if TYPE_CHECKING:
    from conformance.contract.requirements import Requirement

__all__ = [
    "DEFAULT_ROOT",
    "TYPES_BASE",
    "Assumption",
    "Check",
    "Contract",
    "FlowRow",
    "Operation",
    "Parameter",
    "Quote",
    "Response",
    "Rule",
    "Schema",
    "load_contract",
    "operation_order",
    "quoted",
    "said",
    "said_of",
]

#: ``schemas/`` of the checkout, beside the ``conformance`` package.
DEFAULT_ROOT = data_directory("schemas")
#: Base of every shared type's ``$id`` (schemas/README.md).
TYPES_BASE = "https://psd2-conformance.invalid/schemas/types/"
#: Environment variable naming another ``schemas/`` directory.
ROOT_VARIABLE = "CONFORMANCE_SCHEMAS"

# How :meth:`Contract.resolve` layers keywords written beside a top-level ``$ref``.
_MERGE_UNION = frozenset({"required", "x-quotes"})
_MERGE_MAPPING = frozenset({"properties", "patternProperties", "$defs", "x-readings"})
_IDENTITY_CACHE_LIMIT = 4096


class Contract:
    """The loaded contract: operations, rules, shared types and the lookups built over them."""

    def __init__(self, root: Path, loaded: LoadedContract) -> None:
        self.root = root
        self.operations: Mapping[str, Operation] = loaded.operations
        self.rules: tuple[Rule, ...] = loaded.rules
        #: Type documents by file stem (``"common"``), every ``$ref`` made absolute.
        self.types: Mapping[str, Mapping[str, Any]] = loaded.types
        self.registry: Registry[Any] = loaded.registry
        #: ISO 4217 minor units per currency code (``common.json`` ``x-minorUnits``, spec 2.1).
        self.minor_units: Mapping[str, int] = loaded.minor_units
        #: Requirement-id prefix (``"ERR"``) → spec part (``spec-parts.json``).
        self.spec_parts: Mapping[str, str] = loaded.spec_parts
        #: SHA-256 of the files as read (``_contract_load.contract_digest``).
        self.digest: str = loaded.digest
        #: The verbatim quotes of the spec by label (``quotes.json``).
        self.quotes: Mapping[str, Quote] = loaded.quotes
        #: The flow table (``flows.json``), rows as written (``each`` not yet expanded).
        self.flows: tuple[FlowRow, ...] = loaded.flows
        self._headers = loaded.headers
        self._headers_folded = {name.lower(): schema for name, schema in loaded.headers.items()}
        self._rules_by_id = {rule.id: rule for rule in loaded.rules}
        self._router = Router(loaded.operations.values())
        self._by_identity: dict[int, tuple[Any, Validator]] = {}
        self._by_content: dict[str, Validator] = {}
        self._checks_by_identity: dict[int, tuple[Any, Check]] = {}
        self._checks_by_content: dict[str, Check] = {}
        self._compiler = CheckCompiler(
            self.lookup,
            lambda schema: self._new_validator(schema).is_valid,
            Draft202012Validator.FORMAT_CHECKER,
        )
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<Contract {self.root} operations={len(self.operations)} rules={len(self.rules)}>"

    # ---------------------------------------------------------------- lookups

    @functools.cached_property
    def requirements(self) -> Mapping[tuple[str, str, str], Requirement]:
        """Every requirement by (id, operation, place), built once (``catalogue.build``)."""
        from conformance.contract.catalogue import build

        return build(self)

    def requirement(self, requirement_id: str, operation: str = "", place: str = "") -> Requirement:
        """The requirement ``requirement_id`` on ``operation`` at ``place`` (a header's name):
        the one of that place, else of the operation, else the one judged on every operation;
        ``KeyError`` names it when there is none."""
        table = self.requirements
        for key in (
            (requirement_id, operation, place.lower()),
            (requirement_id, operation, ""),
            (requirement_id, "", ""),
        ):
            if key in table:
                return table[key]
        raise KeyError(f"no requirement {requirement_id!r} on {operation or 'any operation'!r}")

    def rule(self, rule_id: str) -> Rule:
        """The rule row with this id; ``KeyError`` names the id when there is none."""
        try:
            return self._rules_by_id[rule_id]
        except KeyError:
            raise KeyError(f"no rule {rule_id!r} in rules.json") from None

    @property
    def header_names(self) -> tuple[str, ...]:
        """Every header of ``types/headers.json``, spelled as spec 4.2 spells it."""
        return tuple(self._headers)

    def header_schema(self, name: str) -> Mapping[str, Any]:
        """The schema of a request header; HTTP header names are case-insensitive (RFC 9110)."""
        try:
            return self._headers_folded[name.lower()]
        except KeyError:
            raise KeyError(f"no header {name!r} in types/headers.json") from None

    def quoted(self, labels: Iterable[str]) -> tuple[Quote, ...]:
        """The quotes of ``labels`` in their order; an unknown label is a ``KeyError``."""
        try:
            return tuple(self.quotes[label] for label in labels)
        except KeyError as error:
            raise KeyError(f"no quote {error.args[0]!r} in quotes.json") from None

    # ---------------------------------------------------------------- routing

    def match(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        """The operation for a request and its path values; see :class:`Router.match`."""
        return self._router.match(method, path)

    def allowed_methods(self, path: str) -> tuple[str, ...]:
        """Methods for ``path`` (405 with ``Allow``); an empty tuple means 404."""
        return self._router.allowed_methods(path)

    def templates_for(self, path: str) -> tuple[Operation, ...]:
        """Operations whose template matches ``path`` whatever their method or pinned values."""
        return self._router.templates_for(path)

    # ---------------------------------------------------------------- schemas

    def validator(self, schema: Schema | bool) -> Validator:
        """A cached Draft 2020-12 validator for ``schema``: format checker on, shared types
        resolvable; it reports exactly stock ``jsonschema``'s errors, for less work
        (``conformance.contract.validators``).

        The first lookup is by identity (the contract's own schemas live as long as it does);
        a schema built by a caller falls back to its canonical JSON text, so rebuilding the same
        dict does not rebuild the validator.
        """
        entry = self._by_identity.get(id(schema))
        if entry is not None and entry[0] is schema:
            return entry[1]
        key = _content_key(schema)
        with self._lock:
            validator = self._by_content.get(key)
            if validator is None:
                validator = self._by_content[key] = self._new_validator(schema)
            _remember(self._by_identity, schema, validator)
        return validator

    def checker(self, schema: Schema | bool) -> Check:
        """``check(instance) -> bool``, the verdict of ``validator(schema).is_valid``, compiled.

        For the hot path of a server that validates every request: a True answer costs a few
        closure calls instead of the ``jsonschema`` interpreter and ``$ref`` resolution; on
        False, ask :meth:`validator` why (messages, paths, ``best_match``). Built once per
        schema and cached like :meth:`validator`; the contract is read-only, so nothing
        invalidates it. How the verdicts are kept equal: ``conformance.contract.compiled``.
        """
        entry = self._checks_by_identity.get(id(schema))
        if entry is not None and entry[0] is schema:
            return entry[1]
        key = _content_key(schema)
        with self._lock:
            check = self._checks_by_content.get(key)
            if check is None:
                check = self._checks_by_content[key] = self._compiler.compile(schema)
            _remember(self._checks_by_identity, schema, check)
        return check

    def _new_validator(self, schema: Schema | bool) -> Validator:
        # References inlined, enums of strings by set: the same errors as stock jsonschema on
        # the schema as written, for less work (``conformance.contract.validators``).
        return ContractValidator(
            inline_refs(schema, self.lookup),
            registry=self.registry,
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )

    def lookup(self, uri: str) -> Mapping[str, Any]:
        """The schema an absolute ``$ref`` names (``…/types/common.json#/$defs/Link``)."""
        try:
            contents: Mapping[str, Any] = self.registry.resolver().lookup(uri).contents
            return contents
        except Unresolvable as error:
            raise KeyError(f"{uri} does not resolve: {error}") from None

    def resolve(self, schema: Schema) -> Mapping[str, Any]:
        """``schema`` with a top-level ``$ref`` (or an ``allOf`` of one) followed, repeatedly.

        Generators walk ``properties`` and need the referenced object itself. Keywords beside
        the reference are layered on top: ``required`` is united, ``properties`` are merged per
        name, any other sibling keyword replaces the referenced one (it is the narrower use).
        """
        seen: set[str] = set()
        current: Mapping[str, Any] = schema
        while True:
            ref, siblings = _top_reference(current)
            if ref is None:
                return current
            if ref in seen:
                raise ContractError(f"$ref cycle at {ref}")
            seen.add(ref)
            target = self.lookup(ref)
            current = _layer(target, siblings) if siblings else target


def _content_key(schema: Schema | bool) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), default=dict)


def _remember(cache: dict[int, tuple[Any, Any]], schema: Any, value: Any) -> None:
    """Remember ``value`` for ``schema`` by identity, keeping ``schema`` alive so that its id
    cannot be reused by another object while the entry exists (bounded: cleared when full)."""
    if len(cache) >= _IDENTITY_CACHE_LIMIT:
        cache.clear()
    cache[id(schema)] = (schema, value)


def _top_reference(schema: Mapping[str, Any]) -> tuple[str | None, dict[str, Any]]:
    if isinstance(schema.get("$ref"), str):
        return schema["$ref"], {k: v for k, v in schema.items() if k != "$ref"}
    all_of = schema.get("allOf")
    if (
        isinstance(all_of, list)
        and len(all_of) == 1
        and isinstance(all_of[0], dict)
        and set(all_of[0]) == {"$ref"}
    ):
        return all_of[0]["$ref"], {k: v for k, v in schema.items() if k != "allOf"}
    return None, {}


def _layer(target: Mapping[str, Any], siblings: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(target)
    for key, value in siblings.items():
        if key in _MERGE_UNION and isinstance(merged.get(key), list):
            merged[key] = list(dict.fromkeys([*merged[key], *value]))
        elif key in _MERGE_MAPPING and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def load_contract(root: Path | None = None) -> Contract:
    """The contract in ``root`` (default: ``$CONFORMANCE_SCHEMAS`` or the checkout's ``schemas/``).

    Loaded and checked once per directory and process; later calls return the same object.
    """
    if root is None:
        root = Path(os.environ.get(ROOT_VARIABLE) or DEFAULT_ROOT)
    root = Path(root)
    return _load_cached(_resolved(root) if root.is_absolute() else root.resolve())


@functools.lru_cache(maxsize=64)
def _resolved(root: Path) -> Path:
    """An absolute root with its symbolic links resolved, remembered: the suite asks for the
    contract a few times per scenario, and each ``resolve`` is a ``stat`` per path component."""
    return root.resolve()


@functools.cache
def _load_cached(root: Path) -> Contract:
    return Contract(root, load(root))


def said_of(labels: Iterable[str], contract: Contract | None = None) -> str:
    """What the quotes of ``labels`` say, each sentence once, as plain text (:func:`said`)."""
    return said(quoted(labels, contract))


def quoted(labels: Iterable[str], contract: Contract | None = None) -> tuple[Quote, ...]:
    """The quotes of the spec that ``labels`` name (``Scenario.quotes``, a failure's quotes), from
    ``contract`` or the default contract; a label no quote has is left out (a scenario made from
    another contract), so a report never fails for want of a quote."""
    quotes = (contract or load_contract()).quotes
    return tuple(quotes[label] for label in labels if label in quotes)
