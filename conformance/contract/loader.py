"""Read ``schemas/`` and check every file; a problem is a
:class:`~conformance.errors.ContractError` naming the file and the JSON pointer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from http import HTTPStatus
from pathlib import Path
from types import MappingProxyType
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from conformance._data import data_directory
from conformance.contract.model import (
    CHOSEN_OF_STATED,
    Assumption,
    FlowRow,
    Operation,
    Parameter,
    Quote,
    Response,
    Rule,
    operation_order,
)
from conformance.contract.router import route_key
from conformance.contract.walk import Pointer, absolute, iter_refs, pointer_text, rewrite_refs
from conformance.errors import ContractError

#: The suite's own meta-schema, used when a contract directory (a test fixture) has none.
DEFAULT_META_SCHEMA = data_directory("schemas") / "operation.schema.json"
#: The flow table's schema, used when a contract directory has none.
DEFAULT_FLOWS_SCHEMA = data_directory("schemas") / "flows.schema.json"

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
#: A spec reference starts with a part number: "spec 2.7", "spec 7 rule 4", "spec 2.4, spec 4.1".
_SPEC_PART = re.compile(r"^spec [1-9](\.[1-9][0-9]*)*(?![.0-9])")
_RULE_FIELDS = (
    "id",
    "spec",
    "operations",
    "precondition",
    "action",
    "expectedStatus",
    "expectedCode",
    "stated",
    "check",
)
_RULE_OPTIONAL = frozenset(
    {"description", "notes", "note", "assumption", "quotes", "reading", "readings"}
)
#: A quote label: the spec part it comes from first ("7-rule-1", "4.3-E16", "intro-json").
_QUOTE_LABEL = re.compile(r"^[0-9a-z][A-Za-z0-9.]*(-[A-Za-z0-9.]+)*$")
#: The spec part of a quote: a numbered part, or the introduction before part 1.
_QUOTE_PART = re.compile(
    r"^spec (introduction|[1-9](\.[1-9][0-9]*)*( (item|rule) [1-9]| E[0-9]+)?)$"
)


@dataclass(frozen=True, slots=True)
class LoadedContract:
    """Everything read from one ``schemas/`` directory, checked."""

    operations: Mapping[str, Operation]
    rules: tuple[Rule, ...]
    types: Mapping[str, Mapping[str, Any]]
    headers: Mapping[str, Mapping[str, Any]]
    registry: Registry[Any]
    minor_units: Mapping[str, int]
    spec_parts: Mapping[str, str]
    quotes: Mapping[str, Quote]
    flows: tuple[FlowRow, ...]
    digest: str
    """:func:`contract_digest` of the directory, as read."""


def fail(root: Path, file: Path, pointer: Pointer | str, message: str) -> ContractError:
    """The error for one problem at one place (the file relative to the contract root)."""
    where = pointer if isinstance(pointer, str) else pointer_text(pointer)
    try:
        name = file.relative_to(root).as_posix()
    except ValueError:
        name = str(file)
    return ContractError(f"{name}#{where}: {message}")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def read_json(root: Path, file: Path) -> Any:
    """Parse one file; a duplicate key is an error (JSON would silently keep the last one)."""
    try:
        return json.loads(file.read_text(encoding="utf-8"), object_pairs_hook=_no_duplicates)
    except FileNotFoundError:
        raise fail(root, file, "", "file is missing") from None
    except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
        raise fail(root, file, "", f"not valid JSON: {error}") from None


_META_CHECK = Draft202012Validator(
    Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
)


#: Digests (:func:`contract_digest`) of contracts whose schemas another process of this run has
#: already checked against the meta-schema (:func:`trust_checked`).
_CHECKED_ELSEWHERE: set[str] = set()


def contract_digest(root: Path) -> str:
    """SHA-256 over every JSON file of ``root`` (relative path and bytes, in path order), the
    meta-schema used when ``root`` has none, and ``jsonschema``'s Draft 2020-12 meta-schema: what
    the result of the ``check_schema`` step depends on."""
    digest = hashlib.sha256(json.dumps(Draft202012Validator.META_SCHEMA, sort_keys=True).encode())
    files = sorted(root.rglob("*.json"))
    if not (root / "operation.schema.json").exists() and DEFAULT_META_SCHEMA.exists():
        files.append(DEFAULT_META_SCHEMA)
    for file in files:
        name = file.relative_to(root).as_posix() if file.is_relative_to(root) else str(file)
        content = file.read_bytes()
        digest.update(f"{name}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()


def trust_checked(digest: str) -> None:
    """Skip the meta-schema checks (every embedded schema against Draft 2020-12, every operation
    file against the operation meta-schema) when loading a contract with this digest in this
    process: the xdist controller checked the very same bytes before it started the workers
    (~0.25 s per process). Every other check still runs."""
    _CHECKED_ELSEWHERE.add(digest)


#: Set (to anything) to neither read nor write the record of checked contracts.
ENV_NO_CHECK_RECORD = "CONFORMANCE_NO_CHECK_RECORD"


def checked_record(digest: str) -> Path | None:
    """Where a process records that the contract with ``digest`` passed the meta-schema check
    (``$XDG_CACHE_HOME``, else ``~/.cache``, ``psd2-conformance/checked-contracts/``): the
    check's verdict is a function of the bytes the digest covers (every schema file, the
    operation meta-schema, ``jsonschema``'s Draft 2020-12 meta-schema), so a later process
    loading the same bytes skips it (~0.5 s of every command's and the bundled server's
    start). Only a pass is recorded; a contract whose bytes changed has another digest and is
    checked in full. None when switched off (:data:`ENV_NO_CHECK_RECORD`)."""
    if os.environ.get(ENV_NO_CHECK_RECORD):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "psd2-conformance" / "checked-contracts" / digest


def _checked_before(digest: str) -> bool:
    record = checked_record(digest)
    return record is not None and record.is_file()


def _record_checked(digest: str) -> None:
    """Note the pass (:func:`checked_record`); a cache that cannot be written is no error."""
    record = checked_record(digest)
    if record is None:
        return
    with contextlib.suppress(OSError):
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text("passed the meta-schema check\n", encoding="utf-8")


def _check_schema(root: Path, file: Path, at: Pointer, schema: Any, *, check: bool = True) -> None:
    """``check_schema`` with the error's place reported inside the file."""
    if not check:
        return
    error = best_match(_META_CHECK.iter_errors(schema))
    if error is not None:
        raise fail(
            root, file, at + tuple(error.absolute_path), f"not a valid schema: {error.message}"
        )


def _check_refs(root: Path, file: Path, at: Pointer, schema: Any, registry: Registry[Any]) -> None:
    if not isinstance(schema, dict):
        return
    resolver = registry.resolver_with_root(DRAFT202012.create_resource(schema))
    for where, ref in iter_refs(schema):
        try:
            target = resolver.lookup(ref).contents
        except Unresolvable as error:
            raise fail(
                root, file, at + where + ("$ref",), f"$ref does not resolve: {error}"
            ) from None
        if not isinstance(target, dict | bool):
            raise fail(root, file, at + where + ("$ref",), f"$ref {ref} is not a schema")


# --------------------------------------------------------------------------- type files


def _load_types(root: Path, check: bool = True) -> dict[str, tuple[Path, dict[str, Any]]]:
    folder = root / "types"
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not any(file.name == "headers.json" for file in files):
        raise fail(root, folder / "headers.json", "", "file is missing (the spec 4.2 headers)")
    types: dict[str, tuple[Path, dict[str, Any]]] = {}
    ids: dict[str, Path] = {}
    for file in files:
        doc = read_json(root, file)
        if not isinstance(doc, dict):
            raise fail(root, file, "", "a type file is a JSON Schema object")
        type_id = doc.get("$id")
        if not isinstance(type_id, str) or not type_id.endswith("/types/" + file.name):
            raise fail(
                root, file, "/$id", f"$id must be an absolute URI ending in /types/{file.name}"
            )
        if type_id in ids:
            raise fail(root, file, "/$id", f"$id {type_id} is also used by {ids[type_id].name}")
        ids[type_id] = file
        defs = doc.get("$defs")
        if not isinstance(defs, dict) or not defs:
            raise fail(root, file, "/$defs", "a type file keeps its definitions in $defs")
        for name, schema in defs.items():
            _check_schema(root, file, ("$defs", name), schema, check=check)
        _check_schema(root, file, (), {k: v for k, v in doc.items() if k != "$defs"}, check=check)
        types[file.stem] = (file, rewrite_refs(doc, absolute))
    return types


def _minor_units(root: Path, types: Mapping[str, tuple[Path, dict[str, Any]]]) -> dict[str, int]:
    if "common" not in types:
        return {}
    file, doc = types["common"]
    table = doc.get("x-minorUnits", {})
    if not isinstance(table, dict):
        raise fail(root, file, "/x-minorUnits", "must map currency codes to minor units")
    for code, units in table.items():
        if not re.fullmatch(r"[A-Z]{3}", code) or type(units) is not int or not 0 <= units <= 4:
            raise fail(root, file, ("x-minorUnits", code), "needs a 3-letter code and units 0..4")
    return table


# --------------------------------------------------------------------------- operations


def _meta_validator(root: Path) -> Draft202012Validator:
    file = root / "operation.schema.json"
    meta = read_json(root, file if file.exists() else DEFAULT_META_SCHEMA)
    try:
        Draft202012Validator.check_schema(meta)
    except Exception as error:  # jsonschema.SchemaError; keep the message short
        raise fail(root, file, "", f"meta-schema is not a valid schema: {error}") from None
    return Draft202012Validator(meta, format_checker=Draft202012Validator.FORMAT_CHECKER)


def _embedded(doc: dict[str, Any]) -> Iterable[tuple[Pointer, Any]]:
    """Every schema an operation file embeds, with its pointer."""
    for index, parameter in enumerate(doc["parameters"]):
        yield ("parameters", index, "schema"), parameter["schema"]
    if "requestBody" in doc:
        yield ("requestBody", "schema"), doc["requestBody"]["schema"]
    for status, response in doc["responses"].items():
        if "schema" in response:
            yield ("responses", status, "schema"), response["schema"]


def _build_operation(doc: dict[str, Any], file: Path) -> Operation:
    headers = doc["headers"]
    parameters = tuple(
        Parameter(
            name=p["name"],
            location=p["in"],
            required=p["required"],
            schema=rewrite_refs(p["schema"], absolute),
            spec=p["spec"],
            description=p.get("description", ""),
        )
        for p in doc["parameters"]
    )
    responses = {
        int(status): Response(
            status=int(status),
            description=r.get("description") or HTTPStatus(int(status)).phrase,
            schema=rewrite_refs(r["schema"], absolute) if "schema" in r else None,
            spec=r["spec"],
            quotes=tuple(r.get("quotes", ())),
            status_reading=r.get("statusReading", ""),
            reading=r.get("reading", ""),
            sca_redirect=bool(r.get("scaRedirect", False)),
        )
        for status, r in sorted(doc["responses"].items())
    }
    body = doc.get("requestBody")
    return Operation(
        id=doc["id"],
        name=doc["name"],
        spec=doc["spec"],
        family=doc["family"],
        method=doc["method"],
        path=doc["path"],
        success_status=doc["successStatus"],
        parameters=parameters,
        required_headers=tuple(headers["required"]),
        optional_headers=tuple(headers["optional"]),
        headers_spec=headers["spec"],
        request_schema=rewrite_refs(body["schema"], absolute) if body else None,
        request_spec=body["spec"] if body else None,
        responses=MappingProxyType(responses),
        assumptions=tuple(Assumption(a["topic"], a["text"]) for a in doc["assumptions"]),
        source=f"operations/{file.name}",
        headers_quotes=tuple(headers.get("quotes", ())),
        optional=bool(doc.get("optional", False)),
        unnamed=bool(doc.get("unnamed", False)),
    )


def _check_operation(
    root: Path, file: Path, doc: dict[str, Any], headers: Mapping[str, Any]
) -> None:
    if doc["id"] != file.stem:
        raise fail(root, file, "/id", f"id {doc['id']!r} differs from the file name {file.stem!r}")
    _check_path_parameters(root, file, doc)
    _check_header_lists(root, file, doc, headers)
    if str(doc["successStatus"]) not in doc["responses"]:
        raise fail(
            root, file, "/successStatus", f"{doc['successStatus']} has no entry in responses"
        )


def _check_path_parameters(root: Path, file: Path, doc: dict[str, Any]) -> None:
    """Each placeholder of the path once and declared; each parameter declared once, a path
    parameter naming a placeholder."""
    placeholders = _PLACEHOLDER.findall(doc["path"])
    if len(set(placeholders)) != len(placeholders):
        raise fail(root, file, "/path", "a placeholder appears twice")
    declared: dict[tuple[str, str], int] = {}
    for index, parameter in enumerate(doc["parameters"]):
        key = (parameter["in"], parameter["name"])
        if key in declared:
            raise fail(
                root, file, ("parameters", index), f"{key[0]} parameter {key[1]} is declared twice"
            )
        declared[key] = index
        if key[0] == "path" and key[1] not in placeholders:
            raise fail(root, file, ("parameters", index), f"{doc['path']} has no {{{key[1]}}}")
    for name in placeholders:
        if ("path", name) not in declared:
            raise fail(
                root, file, "/parameters", f"path parameter {name} of {doc['path']} is not declared"
            )


def _check_header_lists(
    root: Path, file: Path, doc: dict[str, Any], headers: Mapping[str, Any]
) -> None:
    """A header is required or optional, not both, and defined in ``types/headers.json``."""
    both = set(doc["headers"]["required"]) & set(doc["headers"]["optional"])
    if both:
        raise fail(
            root, file, "/headers", f"required and optional at once: {', '.join(sorted(both))}"
        )
    for kind in ("required", "optional"):
        for index, name in enumerate(doc["headers"][kind]):
            if name not in headers:
                raise fail(
                    root,
                    file,
                    ("headers", kind, index),
                    f"header {name} is not in types/headers.json",
                )


def _load_operations(
    root: Path,
    headers: Mapping[str, Any],
    registry: Registry[Any],
    quotes: Mapping[str, Quote],
    check: bool = True,
) -> dict[str, Operation]:
    # The operation files against the operation meta-schema: a check of the same bytes as the
    # embedded schemas' (the digest covers both), skipped with it.
    meta = _meta_validator(root) if check else None
    folder = root / "operations"
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        raise fail(root, folder, "", "no operation files")
    operations: dict[str, Operation] = {}
    likes: dict[str, tuple[Path, str | None]] = {}
    for file in files:
        doc = read_json(root, file)
        error = None if meta is None else best_match(meta.iter_errors(doc))
        if error is not None:
            raise fail(root, file, tuple(error.absolute_path), error.message)
        _check_operation(root, file, doc, headers)
        _check_schema_quotes(root, file, (), doc, quotes)
        for at, schema in _embedded(doc):
            _check_schema(root, file, at, schema, check=check)
            _check_refs(root, file, at, rewrite_refs(schema, absolute), registry)
        if doc["id"] in operations:
            raise fail(root, file, "/id", f"id {doc['id']} is also {operations[doc['id']].source}")
        operations[doc["id"]] = _build_operation(doc, file)
        likes[doc["id"]] = (file, doc["headers"].get("sentLike"))
    for op_id, (file, like) in likes.items():
        if like is not None:
            operations[op_id] = _sent_like(root, file, operations[op_id], operations.get(like))
    _check_collisions(root, operations)
    return dict(sorted(operations.items(), key=lambda item: operation_order(item[0])))


#: The TPP headers an operation's ``headers.sentLike`` carries over (the signer adds the others,
#: and the PSU headers follow the request's PSU).
_SENT_LIKE_HEADERS = ("x-accept-fix", "TPP-Session-ID", "TPP-Redirect-URI")


def _sent_like(root: Path, file: Path, operation: Operation, like: Operation | None) -> Operation:
    """``operation`` with the headers it also sends: those of ``_SENT_LIKE_HEADERS`` that
    ``like`` (its nearest stated operation) requires and ``operation`` lists as optional."""
    if like is None:
        raise fail(root, file, "/headers/sentLike", "names no operation of the contract")
    also = tuple(
        name
        for name in _SENT_LIKE_HEADERS
        if name in like.required_headers and name in operation.optional_headers
    )
    return replace(operation, also_sent=also)


def _distinguished(first: Operation, second: Operation) -> bool:
    """True when some path position pins disjoint values in both operations."""
    names_a = _PLACEHOLDER.findall(first.path)
    names_b = _PLACEHOLDER.findall(second.path)
    params_a = {p.name: p for p in first.path_parameters}
    params_b = {p.name: p for p in second.path_parameters}
    for name_a, name_b in zip(names_a, names_b, strict=True):
        pinned_a = params_a[name_a].pinned_values
        pinned_b = params_b[name_b].pinned_values
        if pinned_a is not None and pinned_b is not None and not set(pinned_a) & set(pinned_b):
            return True
    return False


def _check_collisions(root: Path, operations: Mapping[str, Operation]) -> None:
    seen: dict[tuple[str, str], list[Operation]] = {}
    for operation in operations.values():
        key = (operation.method, route_key(operation.path))
        for other in seen.get(key, []):
            if not _distinguished(other, operation):
                raise fail(
                    root,
                    root / operation.source,
                    "/path",
                    f"{operation.method} {operation.path} is also {other.id} ({other.source}) "
                    "and no path parameter const/enum tells them apart",
                )
        seen.setdefault(key, []).append(operation)


# --------------------------------------------------------------------------- rules


def load_spec_parts(root: Path) -> dict[str, str]:
    """``spec-parts.json``: requirement-id prefix → spec part (``"ERR"`` → ``"spec 7"``).

    Either a flat object or one under ``"prefixes"``; a value is the part or an object with a
    ``spec`` field. Keys starting with ``$``, ``x-`` or ``description`` are annotations.
    """
    file = root / "spec-parts.json"
    doc = read_json(root, file)
    at: tuple[str, ...]
    if isinstance(doc, dict) and isinstance(doc.get("prefixes"), dict):
        table, at = doc["prefixes"], ("prefixes",)
    elif isinstance(doc, dict):
        table, at = doc, ()
    else:
        raise fail(root, file, "", "must be an object mapping id prefixes to spec parts")
    parts: dict[str, str] = {}
    for prefix, value in table.items():
        if prefix.startswith(("$", "x-")) or prefix in ("description", "title"):
            continue
        part = value.get("spec") if isinstance(value, dict) else value
        if not isinstance(part, str) or not _SPEC_PART.match(part):
            raise fail(root, file, (*at, prefix), f"{part!r} does not name a spec part")
        parts[prefix.rstrip("-")] = part
    if not parts:
        raise fail(root, file, "", "no prefixes")
    return parts


def prefix_of(requirement_id: str, parts: Mapping[str, str]) -> str | None:
    """The longest prefix of ``parts`` that ``requirement_id`` starts with (up to a ``-``)."""
    best = None
    for prefix in parts:
        fits = requirement_id == prefix or requirement_id.startswith(prefix + "-")
        if fits and (best is None or len(prefix) > len(best)):
            best = prefix
    return best


def _rule(root: Path, file: Path, index: int, row: Any, context: _RuleContext) -> Rule:
    at: Pointer = ("rules", index)

    def bad(field: str, message: str) -> ContractError:
        return fail(root, file, (*at, field) if field else at, message)

    _check_rule_fields(row, bad)
    if not isinstance(row["id"], str) or prefix_of(row["id"], context.parts) is None:
        raise bad("id", f"id {row['id']!r} has no prefix listed in spec-parts.json")
    if not isinstance(row["spec"], str) or not _SPEC_PART.match(row["spec"]):
        raise bad("spec", f'{row["spec"]!r} does not name a spec part ("spec 7 rule 4")')
    operations = row["operations"]
    if not isinstance(operations, list) or not operations:
        raise bad("operations", "a non-empty list of operation ids")
    for position, operation_id in enumerate(operations):
        if operation_id not in context.operations:
            raise fail(
                root, file, (*at, "operations", position), f"unknown operation {operation_id!r}"
            )
    _check_rule_steps(row, bad)
    statuses = _rule_statuses(row, bad)
    quotes = _rule_quotes(row, bad, context.quotes)
    readings = _rule_readings(row, bad)
    return Rule(
        id=row["id"],
        spec=row["spec"],
        operations=tuple(operations),
        precondition=row["precondition"],
        action=row["action"],
        expected_status=statuses,
        expected_code=row["expectedCode"],
        stated=row["stated"],
        check=row["check"],
        quotes=quotes,
        reading=row.get("reading", ""),
        readings=MappingProxyType(dict(readings)),
    )


#: ``bad(field, message)``: the error of one field of a rule row (no field: the row).
_Bad = Callable[[str, str], ContractError]


def _check_rule_fields(row: Any, bad: _Bad) -> None:
    """A rule row is an object with every field of ``_RULE_FIELDS`` and no unknown one."""
    if not isinstance(row, dict):
        raise bad("", "a rule row is an object")
    missing = [name for name in _RULE_FIELDS if name not in row]
    if missing:
        raise bad("", f"rule row lacks {', '.join(missing)}")
    extra = sorted(
        k
        for k in row
        if k not in _RULE_FIELDS and k not in _RULE_OPTIONAL and not k.startswith("x-")
    )
    if extra:
        raise bad(extra[0], f"unknown field {extra[0]!r} (expected {', '.join(_RULE_FIELDS)})")


def _check_rule_steps(row: Mapping[str, Any], bad: _Bad) -> None:
    """The action and check are named; the precondition is text or null."""
    for field in ("action", "check"):
        if not isinstance(row[field], str) or not row[field].strip():
            raise bad(field, "a non-empty string")
    if row["precondition"] is not None and not isinstance(row["precondition"], str):
        raise bad("precondition", "a string or null")


def _rule_statuses(row: Mapping[str, Any], bad: _Bad) -> tuple[int, ...]:
    """The answer due: its statuses, its code (or null) and what the spec states of it."""
    status = row["expectedStatus"]
    statuses = status if isinstance(status, list) else [status]
    if not statuses or not all(type(s) is int and 100 <= s <= 599 for s in statuses):
        raise bad("expectedStatus", "an HTTP status or a non-empty list of them")
    if row["expectedCode"] is not None and not (
        isinstance(row["expectedCode"], str)
        and re.fullmatch(r"[A-Z][A-Z0-9_]*", row["expectedCode"])
    ):
        raise bad("expectedCode", "an error code such as FORMAT_ERROR, or null")
    if row["stated"] not in CHOSEN_OF_STATED:
        raise bad("stated", f"{row['stated']!r} is not one of {', '.join(CHOSEN_OF_STATED)}")
    return tuple(statuses)


def _rule_readings(row: Mapping[str, Any], bad: _Bad) -> Mapping[str, str]:
    """``readings``: one of the row's operations → the reading it rests on there."""
    readings = row.get("readings", {})
    if not isinstance(readings, dict) or not all(
        op in row["operations"] and isinstance(text, str) and text.strip()
        for op, text in readings.items()
    ):
        raise bad("readings", "an object: one of the row's operations → the reading it rests on")
    return readings


def _rule_quotes(row: Mapping[str, Any], bad: _Bad, known: Mapping[str, Quote]) -> tuple[str, ...]:
    """A row stated by the spec names its quotes; a row resting on a reading names the reading."""
    quotes = row.get("quotes", [])
    if not isinstance(quotes, list) or not all(isinstance(label, str) for label in quotes):
        raise bad("quotes", "a list of quote labels (quotes.json)")
    for label in quotes:
        if label not in known:
            raise bad("quotes", f"quote {label!r} is not in quotes.json")
    reading = row.get("reading", "")
    if not isinstance(reading, str):
        raise bad("reading", "a string: the reading the row rests on")
    if row["stated"] == "reading" and not reading.strip():
        raise bad("reading", "a row stated as 'reading' names the reading it rests on")
    if row["stated"] != "reading" and not quotes:
        raise bad("quotes", "a row the spec states (not 'reading') quotes the spec (quotes.json)")
    return tuple(quotes)


@dataclass(frozen=True, slots=True)
class _RuleContext:
    parts: Mapping[str, str]
    operations: Mapping[str, Operation]
    quotes: Mapping[str, Quote]


def _load_rules(root: Path, context: _RuleContext) -> tuple[Rule, ...]:
    file = root / "rules.json"
    doc = read_json(root, file)
    if not isinstance(doc, dict) or not isinstance(doc.get("rules"), list):
        raise fail(root, file, "/rules", 'expected {"rules": [ ... ]}')
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(doc["rules"]):
        rule = _rule(root, file, index, row, context)
        if rule.id in seen:
            raise fail(
                root, file, ("rules", index, "id"), f"id {rule.id} repeats row {seen[rule.id]}"
            )
        seen[rule.id] = index
        rules.append(rule)
    return tuple(rules)


# --------------------------------------------------------------------------- quotes


def load_quotes(root: Path) -> dict[str, Quote]:
    """``quotes.json``: label → the spec part and the verbatim text (``{"quotes": {...}}``)."""
    file = root / "quotes.json"
    doc = read_json(root, file)
    if not isinstance(doc, dict) or not isinstance(doc.get("quotes"), dict):
        raise fail(root, file, "/quotes", 'expected {"quotes": {label: {"spec", "text"}}}')
    quotes: dict[str, Quote] = {}
    for label, entry in doc["quotes"].items():
        at = ("quotes", label)
        if not _QUOTE_LABEL.match(label):
            raise fail(root, file, at, f"{label!r} is not a quote label such as 7-rule-1")
        if not isinstance(entry, dict) or set(entry) != {"spec", "text"}:
            raise fail(root, file, at, "a quote is an object with spec and text")
        if not isinstance(entry["spec"], str) or not _QUOTE_PART.match(entry["spec"]):
            raise fail(root, file, (*at, "spec"), f"{entry['spec']!r} does not name a spec part")
        if not isinstance(entry["text"], str) or not entry["text"].strip():
            raise fail(root, file, (*at, "text"), "the quoted text is a non-empty string")
        quotes[label] = Quote(label, entry["spec"], entry["text"])
    return quotes


def _check_quote_labels(
    root: Path, file: Path, at: Pointer, labels: Any, quotes: Mapping[str, Quote]
) -> None:
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise fail(root, file, at, "a list of quote labels (quotes.json)")
    for index, label in enumerate(labels):
        if label not in quotes:
            raise fail(root, file, (*at, index), f"quote {label!r} is not in quotes.json")


def _check_schema_quotes(
    root: Path, file: Path, at: Pointer, node: Any, quotes: Mapping[str, Quote]
) -> None:
    """Every ``x-quotes`` of a schema names quotes of ``quotes.json``; every ``x-readings`` maps
    JSON Schema keywords to a reading."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            _check_schema_quotes(root, file, (*at, index), item, quotes)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "x-quotes":
            _check_quote_labels(root, file, (*at, key), value, quotes)
        elif key == "x-readings":
            if not isinstance(value, dict) or not all(
                isinstance(text, str) and text.strip() for text in value.values()
            ):
                raise fail(root, file, (*at, key), "an object: keyword → the reading it rests on")
        elif not key.startswith("x-"):
            _check_schema_quotes(root, file, (*at, key), value, quotes)


def _check_operation_quotes(
    root: Path, operations: Mapping[str, Operation], quotes: Mapping[str, Quote]
) -> None:
    for operation in operations.values():
        file = root / operation.source
        for status, response in operation.responses.items():
            at = ("responses", str(status), "quotes")
            _check_quote_labels(root, file, at, list(response.quotes), quotes)
        _check_quote_labels(
            root, file, ("headers", "quotes"), list(operation.headers_quotes), quotes
        )


# --------------------------------------------------------------------------- flows


def load_flows(root: Path, quotes: Mapping[str, Quote]) -> tuple[FlowRow, ...]:
    """``flows.json``, checked by ``flows.schema.json`` (beside it, else the suite's own), every
    quote label in ``quotes.json``. A row may name operations the contract lacks (a smaller
    contract): generation leaves such a row out."""
    file = root / "flows.json"
    doc = read_json(root, file)
    schema_file = root / "flows.schema.json"
    meta = read_json(root, schema_file if schema_file.exists() else DEFAULT_FLOWS_SCHEMA)
    error = best_match(Draft202012Validator(meta).iter_errors(doc))
    if error is not None:
        raise fail(root, file, tuple(error.absolute_path), error.message)
    rows: list[FlowRow] = []
    seen: set[tuple[str, str, str]] = set()
    for index, row in enumerate(doc["flows"]):
        at = ("flows", index)
        _check_quote_labels(root, file, (*at, "quotes"), row.get("quotes", []), quotes)
        key = (row.get("each", ""), row["operation"], row["slug"])
        if key in seen:
            raise fail(root, file, at, f"flow {row['operation']}-{row['slug']} repeats a row")
        seen.add(key)
        rows.append(
            FlowRow(
                operation=row["operation"],
                slug=row["slug"],
                name=row["name"],
                spec=row["spec"],
                level=row["level"],
                title=row["title"],
                steps=tuple(row["steps"]),
                params=tuple(sorted(row.get("params", {}).items())),
                needs_sca=row.get("needsSca", False),
                needs_control=row.get("needsControl", False),
                quotes=tuple(row.get("quotes", ())),
                reading=row.get("reading", ""),
                each=row.get("each", ""),
            )
        )
    return tuple(rows)


# --------------------------------------------------------------------------- all of it


def load(root: Path) -> LoadedContract:
    """Read and check the contract in ``root``; raises ContractError on the first problem."""
    if not root.is_dir():
        raise ContractError(f"{root}: no such contract directory")
    digest = contract_digest(root)
    check = digest not in _CHECKED_ELSEWHERE and not _checked_before(digest)
    types = _load_types(root, check)
    registry: Registry[Any] = (
        Registry()
        .with_resources(
            (doc["$id"], Resource.from_contents(doc, default_specification=DRAFT202012))
            for _file, doc in types.values()
        )
        .crawl()
    )
    for file, doc in types.values():
        _check_refs(root, file, (), doc, registry)
    headers_file, headers_doc = types["headers"]
    headers = headers_doc["$defs"]
    for name in headers:
        if not re.fullmatch(r"[A-Za-z0-9-]+", name):
            raise fail(root, headers_file, ("$defs", name), "not a header name")
    quotes = load_quotes(root)
    for file, doc in types.values():
        _check_schema_quotes(root, file, (), doc, quotes)
    operations = _load_operations(root, headers, registry, quotes, check)
    _check_operation_quotes(root, operations, quotes)
    if check:
        _record_checked(digest)
    parts = load_spec_parts(root)
    rules = _load_rules(root, _RuleContext(parts, operations, quotes))
    flows = load_flows(root, quotes)
    return LoadedContract(
        operations=MappingProxyType(operations),
        rules=rules,
        types=MappingProxyType({stem: doc for stem, (_file, doc) in types.items()}),
        headers=MappingProxyType(dict(headers)),
        registry=registry,
        minor_units=MappingProxyType(_minor_units(root, types)),
        spec_parts=MappingProxyType(parts),
        digest=digest,
        quotes=MappingProxyType(quotes),
        flows=flows,
    )
