"""The contract as an OpenAPI 3.1 document, generated deterministically (``conformance
export-openapi``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from conformance import SPEC_VERSION, __version__
from conformance.contract import Contract, Operation, Parameter
from conformance.contract.facts import PAYMENT_STYLE_FAMILIES
from conformance.contract.walk import Pointer, rewrite_refs
from conformance.errors import ContractError

__all__ = [
    "OPENAPI_VERSION",
    "SECURITY_SCHEMES",
    "build_openapi",
    "component_name",
    "header_parameter_name",
    "render_openapi",
]

OPENAPI_VERSION = "3.1.0"
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_COMPONENT_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_MEDIA_TYPE = "application/json"
_TYPE_FILE_KEYS_KEPT_ASIDE = frozenset({"$defs", "$id", "$schema", "x-minorUnits"})


def component_name(type_file: str, name: str) -> str:
    """The ``components/schemas`` name of a shared type: ``common.CurrencyCode``."""
    component = f"{type_file}.{name}"
    if not _COMPONENT_NAME.match(component):
        raise ContractError(f"types/{type_file}.json#/$defs/{name}: not usable as an OpenAPI name")
    return component


def _ref_rewriter(contract: Contract) -> Callable[[str, str, Pointer], str]:
    """Point an absolute ``…/types/<file>.json#/$defs/<Name>…`` reference at the component."""
    stems = {doc["$id"]: stem for stem, doc in contract.types.items()}

    def rewrite(ref: str, _base: str, _at: Pointer) -> str:
        document, _, fragment = ref.partition("#")
        parts = fragment.split("/")
        if document not in stems or len(parts) < 3 or parts[:2] != ["", "$defs"]:
            raise ContractError(
                f"$ref {ref} does not name a shared type (…/types/<file>.json#/$defs/<Name>)"
            )
        name = unquote(parts[2]).replace("~1", "/").replace("~0", "~")
        rest = "/".join(parts[3:])
        target = f"#/components/schemas/{component_name(stems[document], name)}"
        return f"{target}/{rest}" if rest else target

    return rewrite


def _path_of(operation: Operation) -> str:
    """The operation's path with ``const`` path parameters written in (see the module doc)."""
    path = operation.path
    for name, value in operation.fixed_path_values.items():
        path = path.replace("{" + name + "}", value)
    return path


def _parameter(parameter: Parameter, schema: Any) -> dict[str, Any]:
    result: dict[str, Any] = {
        "name": parameter.name,
        "in": parameter.location,
        "required": parameter.required,
        "schema": schema,
        "x-spec": parameter.spec,
    }
    if parameter.description:
        result["description"] = parameter.description
    return result


def _header(contract: Contract, name: str, required: bool) -> dict[str, Any]:
    """A header parameter (spec 4.2), kept once in ``components/parameters`` per requiredness."""
    result: dict[str, Any] = {
        "name": name,
        "in": "header",
        "required": required,
        "schema": {"$ref": f"#/components/schemas/{component_name('headers', name)}"},
    }
    description = contract.header_schema(name).get("description")
    if isinstance(description, str) and description:
        result["description"] = description
    return result


def header_parameter_name(name: str, required: bool) -> str:
    """The ``components/parameters`` name of a header: ``headers.X-Request-ID.required``."""
    return f"{component_name('headers', name)}.{'required' if required else 'optional'}"


#: Where the contract's error bodies are (types/errors.json).
_ERRORS = "https://psd2-conformance.invalid/schemas/types/errors.json#/$defs/"


def _error_schema(operation: Operation) -> dict[str, str]:
    name = "PaymentErrorResponse" if operation.family in PAYMENT_STYLE_FAMILIES else "ErrorResponse"
    return {"$ref": _ERRORS + name}


def transport_statuses(operation: Operation) -> dict[int, str]:
    """The statuses any request to ``operation`` can be refused with before its own rules apply
    (malformed request, authentication, rate limit, system error), with the spec 7 error body.
    Spec 7 shows statuses for E2 and E17 only; a tool reading the OpenAPI document (Schemathesis,
    Prism, Postman) should not call these undocumented."""
    statuses = {
        400: "Malformed request: a required header missing or malformed, an invalid parameter "
        "or body (FORMAT_ERROR, HTTP_HEADER_REQUIRED, ...)",
        401: "Authentication failed: the signature, digest or certificate (spec 5)",
        403: "The TPP certificate lacks the PSD2 role the operation needs, or the product is "
        "not offered here",
        405: "A method the path does not take (with Allow)",
        429: "Too many requests (ACCESS_EXCEEDED), with Retry-After",
        431: "Request header fields too large",
        500: "System error (SYSTEM_ERROR)",
    }
    free = {p.name for p in operation.path_parameters} - set(operation.fixed_path_values)
    if free:
        statuses[404] = "The resource the path names does not exist (RESOURCE_UNKNOWN)"
    if operation.request_schema is not None:
        statuses[411] = "A body without Content-Length (chunked)"
        statuses[413] = "A body of more than 1 MiB"
        statuses[415] = "A body that is not JSON (UNSUPPORTED_MEDIA_TYPE)"
    return dict(sorted(statuses.items()))


#: Response headers the interface sends where HTTP says so, documented on those statuses
#: (status → header name → its description and spec part).
_RESPONSE_HEADERS: dict[int, dict[str, tuple[str, str]]] = {
    405: {"Allow": ("the methods the path takes (RFC 9110 15.5.6)", "spec 7; RFC 9110")},
    429: {
        "Retry-After": (
            "when to try again: seconds or an HTTP date (RFC 9110 10.2.3)",
            "spec 7 (ACCESS_EXCEEDED); RFC 9110",
        )
    },
}
#: The header every answer carries: the request's X-Request-ID (spec 4.2 names it on every
#: request; its echo is the reference server's choice, so it is not required).
_X_REQUEST_ID = {
    "description": "the X-Request-ID of the request (spec 4.2); not required of a target",
    "required": False,
    "schema": {"type": "string"},
    "x-spec": "spec 4.2",
}

#: How one operation's answer leads to the next (OpenAPI links, for stateful tools such as
#: Schemathesis): creation → the operations that take the created id (parameter → the runtime
#: expression or the constant it comes from). ``{product}``: the creation's payment product.
_LINKS: dict[str, dict[str, dict[str, str]]] = {
    "E16": {op: {"payment-product": "{product}", "payment-id": "$response.body#/paymentId"}
            for op in ("PS", "PC", "PA")},
    "E18": {op: {"payment-product": "{product}", "payment-id": "$response.body#/paymentId"}
            for op in ("PS", "PC", "PA")},
    "E1": {"E2": {"basketId": "$response.body#/basketId"}},
    "CC": {op: {"consentId": "$response.body#/consentId"} for op in ("CS", "CA", "CG", "CD")},
    "SA": {op: {"mockAccountId": "$response.body#/id"} for op in ("E12", "E3", "E7", "E15")},
    "SAG": {op: {"mockAgreementId": "$response.body#/id"} for op in ("E14", "E6")},
}  # fmt: skip


def _response_headers(status: int) -> dict[str, Any]:
    """The headers of an answer with ``status``: X-Request-ID, and Allow or Retry-After."""
    headers: dict[str, Any] = {"X-Request-ID": dict(_X_REQUEST_ID)}
    for name, (description, spec) in _RESPONSE_HEADERS.get(status, {}).items():
        headers[name] = {
            "description": description,
            "required": True,
            "schema": {"type": "string"},
            "x-spec": spec,
        }
    return headers


def _links(contract: Contract, operation: Operation) -> dict[str, Any]:
    """The links of ``operation``'s success answer (``_LINKS``), for the operations the contract
    has; a path parameter the creation pins (its product) is passed as that constant."""
    links: dict[str, Any] = {}
    for target, parameters in _LINKS.get(operation.id, {}).items():
        if target not in contract.operations:
            continue
        product = operation.fixed_path_values.get("payment-product", "")
        links[f"{target}: {contract.operations[target].name}"] = {
            "operationId": target,
            "parameters": {
                f"path.{name}": value.replace("{product}", product)
                for name, value in parameters.items()
            },
        }
    return links


#: The security of every operation (spec 5): a Signature over the request and the certificate
#: whose key made it. OpenAPI has no scheme for HTTP message signatures; these name the headers
#: and say how they are made, for tools that read them (a Schemathesis auth hook signs).
SECURITY_SCHEMES: dict[str, Any] = {
    "httpSignature": {
        "type": "apiKey",
        "in": "header",
        "name": "Signature",
        "description": (
            "spec 5: draft-cavage-http-signatures-10 as spec 5 profiles it: "
            'keyId="SN=<certificate serial, hex>,CA=<issuer DN>", algorithm="rsa-sha256", '
            "headers date, digest (SHA-256 or SHA-512 of the body, when there is one), "
            "x-request-id, psu-id, psu-corporate-id and tpp-redirect-uri, each when present"
        ),
    },
    "tppSignatureCertificate": {
        "type": "apiKey",
        "in": "header",
        "name": "TPP-Signature-Certificate",
        "description": (
            "spec 5: the TPP's QSealC (base64 DER) whose key made Signature, with the PSD2 "
            "roles of ETSI TS 119 495"
        ),
    },
}


def _has_error_bodies(rewrite: Callable[..., str]) -> bool:
    """Whether the contract has the spec 7 error bodies (a trimmed test contract may not)."""
    try:
        rewrite(_ERRORS + "ErrorResponse", "", ())
        rewrite(_ERRORS + "PaymentErrorResponse", "", ())
    except ContractError:
        return False
    return True


def _operation(
    operation: Operation,
    rewrite: Callable[..., str],
    headers: dict[str, tuple[str, bool]],
    *,
    errors: bool = True,
    links: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The operation object; the header parameters it uses are added to ``headers``."""

    def schema(value: Any) -> Any:
        return rewrite_refs(value, rewrite)

    fixed = operation.fixed_path_values
    parameters = [
        _parameter(p, schema(p.schema))
        for p in operation.parameters
        if not (p.location == "path" and p.name in fixed)
    ]
    for names, required in (
        (operation.required_headers, True),
        (operation.optional_headers, False),
    ):
        for name in names:
            key = header_parameter_name(name, required)
            headers[key] = (name, required)
            parameters.append({"$ref": f"#/components/parameters/{key}"})
    responses: dict[str, Any] = {}
    for status, response in operation.responses.items():
        entry: dict[str, Any] = {"description": response.description, "x-spec": response.spec}
        if response.schema is not None:
            entry["content"] = {_MEDIA_TYPE: {"schema": schema(response.schema)}}
        entry["headers"] = _response_headers(status)
        responses[str(status)] = entry
    for status, description in (transport_statuses(operation) if errors else {}).items():
        responses.setdefault(
            str(status),
            {
                "description": description,
                "x-spec": "spec 7 (error body); spec 5, spec 4.2",
                "x-origin": "every operation's request handling (not stated per operation)",
                "content": {_MEDIA_TYPE: {"schema": schema(_error_schema(operation))}},
                "headers": _response_headers(status),
            },
        )
    if links:
        responses[str(operation.success_status)]["links"] = links
    result: dict[str, Any] = {
        "operationId": operation.id,
        "summary": operation.name,
        "tags": [operation.family],
        "x-spec": operation.spec,
        "x-family": operation.family,
        "x-success-status": operation.success_status,
        "x-assumptions": [{"topic": a.topic, "text": a.text} for a in operation.assumptions],
        "x-headers-spec": operation.headers_spec,
        "parameters": parameters,
        "responses": responses,
    }
    if fixed:
        result["x-path-template"] = operation.path
        result["x-fixed-path-parameters"] = dict(fixed)
    if operation.request_schema is not None:
        result["requestBody"] = {
            "required": True,
            "content": {_MEDIA_TYPE: {"schema": schema(operation.request_schema)}},
            "x-spec": operation.request_spec,
        }
    return result


def _components(
    contract: Contract, rewrite: Callable[..., str], headers: dict[str, tuple[str, bool]]
) -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    type_files: dict[str, Any] = {}
    for stem, doc in contract.types.items():
        for name, definition in doc["$defs"].items():
            schemas[component_name(stem, name)] = rewrite_refs(definition, rewrite)
        aside = {k: v for k, v in doc.items() if k not in _TYPE_FILE_KEYS_KEPT_ASIDE}
        type_files[stem] = {"x-id": doc["$id"], **aside}
    parameters = {
        key: _header(contract, name, required) for key, (name, required) in headers.items()
    }
    return {
        "schemas": schemas,
        "parameters": parameters,
        "securitySchemes": SECURITY_SCHEMES,
        "x-typeFiles": type_files,
    }


def build_openapi(contract: Contract) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``contract`` (a plain dict, ready for ``json.dumps``)."""
    rewrite = _ref_rewriter(contract)
    paths: dict[str, dict[str, Any]] = {}
    headers: dict[str, tuple[str, bool]] = {}
    for operation in contract.operations.values():
        item = paths.setdefault(_path_of(operation), {})
        method = operation.method.lower()
        if method in item:
            raise ContractError(
                f"{operation.source}: {operation.method} {_path_of(operation)} is also "
                f"{item[method]['operationId']}; OpenAPI allows one operation per method and path"
            )
        item[method] = _operation(
            operation,
            rewrite,
            headers,
            errors=_has_error_bodies(rewrite),
            links=_links(contract, operation),
        )
    families = sorted({operation.family for operation in contract.operations.values()})
    document: dict[str, Any] = {
        "openapi": OPENAPI_VERSION,
        "jsonSchemaDialect": JSON_SCHEMA_DIALECT,
        "info": {
            "title": "PSD2-style open-banking interface (conformance contract)",
            "version": __version__,
            "x-spec-version": SPEC_VERSION,
            "description": (
                "Generated by `conformance export-openapi` from schemas/ of the conformance "
                f"suite; do not edit. Spec release {SPEC_VERSION}. Choices the spec leaves "
                "open are listed per operation in x-assumptions."
            ),
        },
        "tags": [{"name": family} for family in families],
        "security": [{name: [] for name in SECURITY_SCHEMES}],
        "paths": paths,
        "components": _components(contract, rewrite, headers),
    }
    if contract.minor_units:
        document["x-minorUnits"] = dict(contract.minor_units)
    return document


def render_openapi(contract: Contract) -> str:
    """``build_openapi`` serialised the one reproducible way ``schemas/openapi.json`` is written."""
    return json.dumps(build_openapi(contract), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
