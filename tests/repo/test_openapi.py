"""The OpenAPI 3.1 export: in sync with schemas/, valid, complete, and reproducible."""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

from conformance import SPEC_VERSION, __version__
from conformance.commands import export_openapi
from conformance.contract import DEFAULT_ROOT, Contract, load_contract
from conformance.contract.openapi import build_openapi, render_openapi, transport_statuses
from conformance.errors import ConformanceError

FIXTURE = Path(__file__).parent.parent / "data" / "contract_min"
EXPORT = DEFAULT_ROOT / "openapi.json"


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


@pytest.fixture(scope="module")
def document(contract: Contract) -> dict[str, Any]:
    return build_openapi(contract)


def _operations(document: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    return {
        operation["operationId"]: (method.upper(), path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def _pointer(document: dict[str, Any], ref: str) -> Any:
    node: Any = document
    for part in ref.removeprefix("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def test_checked_in_export_is_in_sync(contract: Contract) -> None:
    assert EXPORT.is_file(), "run `conformance export-openapi`"
    assert EXPORT.read_text(encoding="utf-8") == render_openapi(contract), (
        "schemas/openapi.json is out of date: run `conformance export-openapi`"
    )


def test_export_is_a_valid_openapi_3_1_document(document: dict[str, Any]) -> None:
    assert document["openapi"] == "3.1.0"
    validate(document)


def test_the_validator_would_notice_a_broken_document(document: dict[str, Any]) -> None:
    broken = copy.deepcopy(document)
    first = next(iter(broken["paths"].values()))
    next(iter(first.values()))["responses"] = "none"
    with pytest.raises(OpenAPIValidationError):
        validate(broken)


def test_info_names_suite_and_spec_versions(document: dict[str, Any]) -> None:
    assert document["info"]["version"] == __version__
    assert document["info"]["x-spec-version"] == SPEC_VERSION == "1.22.0"


def test_every_operation_appears_once(contract: Contract, document: dict[str, Any]) -> None:
    exported = _operations(document)
    assert set(exported) == set(contract.operations)
    for operation in contract.operations.values():
        method, path, entry = exported[operation.id]
        assert method == operation.method
        expected_path = operation.path
        for name, value in operation.fixed_path_values.items():
            expected_path = expected_path.replace("{" + name + "}", value)
        assert path == expected_path
        assert entry["summary"] == operation.name
        assert entry["x-spec"] == operation.spec
        assert len(entry["x-assumptions"]) == len(operation.assumptions)
        stated = {str(status) for status in operation.responses}
        transport = {str(status) for status in transport_statuses(operation)}
        assert set(entry["responses"]) == stated | transport
        for status in transport - stated:  # each with the spec 7 error body
            schema = entry["responses"][status]["content"]["application/json"]["schema"]
            assert schema["$ref"].endswith("ErrorResponse")
        assert ("requestBody" in entry) == (operation.request_schema is not None)


def test_products_get_paths_of_their_own(document: dict[str, Any]) -> None:
    exported = _operations(document)
    assert exported["E16"][1] == "/v1/payments/norwegian-domestic-credit-transfers"
    assert exported["E18"][1] == "/v1/payments/norwegian-cross-border-credit-transfers"
    assert exported["E16"][2]["x-path-template"] == "/v1/payments/{payment-product}"


def test_every_header_is_a_header_parameter(contract: Contract, document: dict[str, Any]) -> None:
    exported = _operations(document)
    for operation in contract.operations.values():
        headers = {}
        for parameter in exported[operation.id][2]["parameters"]:
            resolved = _pointer(document, parameter["$ref"]) if "$ref" in parameter else parameter
            if resolved["in"] == "header":
                headers[resolved["name"]] = resolved["required"]
        expected = {name: True for name in operation.required_headers}
        expected |= {name: False for name in operation.optional_headers}
        assert headers == expected, operation.id


def test_every_reference_points_into_the_document(document: dict[str, Any]) -> None:
    refs = _refs(document)
    assert refs
    for ref in refs:
        assert ref.startswith("#/components/"), ref
        _pointer(document, ref)


def test_minor_units_are_kept(contract: Contract, document: dict[str, Any]) -> None:
    assert document["x-minorUnits"] == dict(contract.minor_units)
    assert document["components"]["schemas"]["common.CurrencyCode"]["enum"]


def test_render_is_deterministic(contract: Contract) -> None:
    first = render_openapi(contract)
    assert first == render_openapi(contract)
    assert first.endswith("}\n")
    assert json.loads(first) == build_openapi(contract)


def test_fixture_contract_exports_a_valid_document() -> None:
    document = build_openapi(load_contract(FIXTURE))
    validate(document)
    assert set(_operations(document)) == {"E12", "E16", "E18", "AL", "PS", "SA"}


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="conformance")
    export_openapi.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["export-openapi", *argv])
    return int(args.func(args))


def test_cli_writes_and_checks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out" / "openapi.json"
    assert _run("--schemas", str(FIXTURE), "--check", "--out", str(out)) == 1  # missing
    assert _run("--schemas", str(FIXTURE), "--out", str(out)) == 0
    assert out.read_text(encoding="utf-8") == render_openapi(load_contract(FIXTURE))
    assert _run("--schemas", str(FIXTURE), "--check", "--out", str(out)) == 0
    out.write_text(out.read_text(encoding="utf-8").replace("E16", "E61"), encoding="utf-8")
    assert _run("--schemas", str(FIXTURE), "--check", "--out", str(out)) == 1
    assert "out of date" in capsys.readouterr().err


def test_cli_names_a_file_it_cannot_write(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(ConformanceError, match=r"cannot write .*a-file/openapi.json: .*--out"):
        _run("--schemas", str(FIXTURE), "--out", str(blocker / "openapi.json"))


def test_cli_check_passes_on_the_checkout() -> None:
    assert _run("--check") == 0


def test_links_lead_from_a_creation_to_the_operations_of_what_it_created(
    document: dict[str, Any], contract: Contract
) -> None:
    """The links Schemathesis's stateful mode follows: each names an operation of the document,
    fills only path parameters that operation has, from a property of the creation's answer."""
    operations = _operations(document)
    linked: dict[str, set[str]] = {}
    for op_id, (_, _, entry) in operations.items():
        success = str(contract.operations[op_id].success_status)
        for link in entry["responses"][success].get("links", {}).values():
            target = link["operationId"]
            linked.setdefault(op_id, set()).add(target)
            _, target_path, _ = operations[target]
            for name, value in link["parameters"].items():
                assert name.startswith("path.") and "{" + name[5:] + "}" in target_path
                if value.startswith("$response.body#/"):
                    field = value.removeprefix("$response.body#/")
                    schema = contract.operations[op_id].responses[int(success)].schema
                    assert schema is not None
                    resolved = contract.resolve(schema) if "$ref" in schema else schema
                    assert field in resolved["properties"], (op_id, field)
    assert linked["E16"] == {"PS", "PC", "PA"} and linked["CC"] == {"CS", "CA", "CG", "CD"}
    assert linked["E1"] == {"E2"} and "E12" in linked["SA"]


def test_security_schemes_and_response_headers_are_documented(document: dict[str, Any]) -> None:
    schemes = document["components"]["securitySchemes"]
    assert {scheme["name"] for scheme in schemes.values()} == {
        "Signature",
        "TPP-Signature-Certificate",
    }
    assert document["security"] == [{name: [] for name in schemes}]
    for _, _, entry in _operations(document).values():
        for status, response in entry["responses"].items():
            assert "X-Request-ID" in response["headers"]
            if status == "405":
                assert response["headers"]["Allow"]["required"] is True
            if status == "429":
                assert response["headers"]["Retry-After"]["required"] is True
