"""The contract loader: the fixture contract of tests/data/contract_min, then the real schemas/.

The fixture tests prove each check of the loader fires (a broken file is a ContractError naming the
file and the JSON pointer) and that routing tells E16 from E18 by product (spec 4.1). The tests on
the real contract prove the data covers what CONTRACT_API.md and spec 4 promise.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from conformance.contract import (
    DEFAULT_ROOT,
    TYPES_BASE,
    Contract,
    load_contract,
    loader,
    operation_order,
)
from conformance.contract.loader import contract_digest, prefix_of
from conformance.contract.model import Operation, Parameter
from conformance.contract.router import Router
from conformance.errors import ContractError

FIXTURE = Path(__file__).parent.parent / "data" / "contract_min"
NDCT = "norwegian-domestic-credit-transfers"
NCBCT = "norwegian-cross-border-credit-transfers"


@pytest.fixture(scope="module")
def fixture_contract() -> Contract:
    return load_contract(FIXTURE)


@pytest.fixture(scope="module")
def real() -> Contract:
    return load_contract(DEFAULT_ROOT)


# ----------------------------------------------------------------------------- fixture: loading


def test_fixture_contract_loads_with_its_operations(fixture_contract: Contract) -> None:
    assert list(fixture_contract.operations) == ["E12", "E16", "E18", "AL", "PS", "SA"]
    e16 = fixture_contract.operations["E16"]
    assert (e16.method, e16.path, e16.family, e16.success_status) == (
        "POST",
        "/v1/payments/{payment-product}",
        "payments",
        201,
    )
    assert e16.spec == "spec 4.3 E16"
    assert e16.source == "operations/E16.json"
    assert [p.name for p in e16.path_parameters] == ["payment-product"]
    assert [p.name for p in e16.query_parameters] == ["allowLogicalDuplicate"]
    assert e16.fixed_path_values == {"payment-product": NDCT}
    assert e16.required_headers[:3] == ("X-Request-ID", "TPP-Signature-Certificate", "Signature")
    assert e16.optional_headers == ("Accept",)
    assert sorted(e16.responses) == [201, 400]
    assert e16.responses[400].description == "Bad Request"  # none in the file: the reason phrase
    assert fixture_contract.operations["E18"].assumptions[0].topic == "product"
    assert fixture_contract.minor_units == {"EUR": 2, "JPY": 0, "NOK": 2}


def test_fixture_values_are_read_only(fixture_contract: Contract) -> None:
    with pytest.raises(TypeError):
        fixture_contract.operations["X"] = fixture_contract.operations["E16"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        fixture_contract.operations["E16"].path = "/v1/other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        fixture_contract.operations["E16"].responses[500] = None  # type: ignore[index]


def test_relative_refs_of_type_files_are_made_absolute(fixture_contract: Contract) -> None:
    amount = fixture_contract.types["payments"]["$defs"]["Amount"]
    assert (
        amount["properties"]["currency"]["$ref"] == TYPES_BASE + "common.json#/$defs/CurrencyCode"
    )
    links = fixture_contract.types["common"]["$defs"]["Links"]
    assert links["additionalProperties"]["$ref"] == TYPES_BASE + "common.json#/$defs/Link"


def test_load_contract_is_cached_per_root(fixture_contract: Contract) -> None:
    assert load_contract(FIXTURE) is fixture_contract
    assert load_contract(FIXTURE / ".." / "contract_min") is fixture_contract


def test_environment_variable_names_the_default_root(
    fixture_contract: Contract, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONFORMANCE_SCHEMAS", str(FIXTURE))
    assert load_contract() is fixture_contract


def test_missing_directory_is_a_contract_error(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="no such contract directory"):
        load_contract(tmp_path / "nowhere")


# ------------------------------------------------------------------------ fixture: broken files


def _edit(name: str, change: Callable[[Any], Any]) -> Callable[[Path], None]:
    """A breakage: load ``name`` as JSON, apply ``change`` (in place or returning a new value)."""

    def apply(root: Path) -> None:
        file = root / name
        doc = json.loads(file.read_text())
        result = change(doc)
        file.write_text(json.dumps(doc if result is None else result))

    return apply


def _write(name: str, text: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        (root / name).write_text(text)

    return apply


def _remove(name: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        (root / name).unlink()

    return apply


def _copy_operation(source: str, target: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        shutil.copy(root / "operations" / source, root / "operations" / target)

    return apply


def _set(*path_then_value: Any) -> Callable[[Any], None]:
    """``_set("a", 0, "b", value)`` sets ``doc["a"][0]["b"] = value``."""
    *path, value = path_then_value

    def change(doc: Any) -> None:
        for key in path[:-1]:
            doc = doc[key]
        doc[path[-1]] = value

    return change


def _delete(*path: Any) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        for key in path[:-1]:
            doc = doc[key]
        del doc[path[-1]]

    return change


BROKEN = [
    pytest.param(
        _write("operations/E12.json", "{"),
        "operations/E12.json#",
        "not valid JSON",
        id="unparsable-json",
    ),
    pytest.param(
        _write("rules.json", '{"rules": [], "rules": []}'),
        "rules.json#",
        "duplicate key",
        id="duplicate-json-key",
    ),
    pytest.param(
        _edit("operations/E12.json", _delete("method")),
        "operations/E12.json#",
        "'method' is a required property",
        id="operation-without-method",
    ),
    pytest.param(
        _edit("operations/E12.json", _set("family", "cards")),
        "operations/E12.json#/family",
        "cards",
        id="operation-unknown-family",
    ),
    pytest.param(
        _edit("operations/E12.json", _set("path", "/v2/x")),
        "operations/E12.json#/path",
        "does not match",
        id="operation-path-outside-v1",
    ),
    pytest.param(
        _edit("operations/E12.json", _set("parameters", 0, "required", False)),
        "operations/E12.json#/parameters/0/required",
        "True was expected",
        id="optional-path-parameter",
    ),
    pytest.param(
        _edit("operations/E12.json", _set("assumptions", 0, "topic", "whim")),
        "operations/E12.json#/assumptions/0/topic",
        "whim",
        id="assumption-unknown-topic",
    ),
    pytest.param(
        _edit("operations/E12.json", _set("parameters", 0, "schema", {"type": "strin"})),
        "operations/E12.json#/parameters/0/schema/type",
        "not a valid schema",
        id="parameter-schema-invalid",
    ),
    pytest.param(
        _edit(
            "operations/E16.json",
            _set("requestBody", "schema", "$ref", TYPES_BASE + "payments.json#/$defs/Nope"),
        ),
        "operations/E16.json#/requestBody/schema/$ref",
        "does not resolve",
        id="body-ref-unresolvable",
    ),
    pytest.param(
        _edit(
            "operations/E12.json",
            _set(
                "responses", "200", "schema", "items", "$ref", TYPES_BASE + "nope.json#/$defs/Links"
            ),
        ),
        "operations/E12.json#/responses/200/schema/items/$ref",
        "does not resolve",
        id="response-ref-to-unknown-file",
    ),
    pytest.param(
        _edit("types/common.json", _set("$defs", "Date", {"type": 5})),
        "types/common.json#/$defs/Date/type",
        "not a valid schema",
        id="type-def-invalid",
    ),
    pytest.param(
        _edit("types/common.json", _set("$defs", "Date", {"pattern": "(["})),
        "types/common.json#/$defs/Date/pattern",
        "not a valid schema",
        id="type-def-bad-regex",
    ),
    pytest.param(
        _edit(
            "types/payments.json",
            _set(
                "$defs",
                "PaymentRequest",
                "properties",
                "creditorName",
                {"$ref": "common.json#/$defs/No"},
            ),
        ),
        "types/payments.json#/$defs/PaymentRequest/properties/creditorName/$ref",
        "does not resolve",
        id="type-ref-unresolvable",
    ),
    pytest.param(
        _edit("types/common.json", _set("$defs", "Links", "x-variant", {"$ref": "#/$defs/No"})),
        "types/common.json#/$defs/Links/x-variant/$ref",
        "does not resolve",
        id="extension-ref-unresolvable",
    ),
    pytest.param(
        _edit("types/payments.json", _set("$id", "https://x.invalid/other.json")),
        "types/payments.json#/$id",
        "ending in /types/payments.json",
        id="type-id-wrong",
    ),
    pytest.param(
        _remove("types/headers.json"), "types/headers.json#", "missing", id="headers-file-missing"
    ),
    pytest.param(
        _edit("operations/E12.json", lambda d: d["headers"]["required"].append("X-Nope")),
        "operations/E12.json#/headers/required/3",
        "X-Nope",
        id="header-not-defined",
    ),
    pytest.param(
        _edit("operations/E12.json", lambda d: d["headers"]["optional"].append("Signature")),
        "operations/E12.json#/headers",
        "required and optional at once",
        id="header-required-and-optional",
    ),
    pytest.param(
        _edit("operations/E12.json", _set("parameters", 0, "name", "accountId")),
        "operations/E12.json#/parameters/0",
        "has no {accountId}",
        id="path-parameter-not-in-template",
    ),
    pytest.param(
        _edit("operations/E12.json", _set("parameters", [])),
        "operations/E12.json#/parameters",
        "mockAccountId",
        id="placeholder-undeclared",
    ),
    pytest.param(
        _edit("operations/E12.json", _set("successStatus", 201)),
        "operations/E12.json#/successStatus",
        "no entry in responses",
        id="success-status-undocumented",
    ),
    pytest.param(
        _edit("operations/E12.json", _set("id", "E13")),
        "operations/E12.json#/id",
        "differs from the file name",
        id="id-differs-from-file-name",
    ),
    pytest.param(
        _copy_operation("E12.json", "E99.json"),
        "operations/E99.json#/id",
        "differs from the file name",
        id="duplicate-operation-id",
    ),
    pytest.param(
        _edit("operations/E18.json", _set("parameters", 0, "schema", {"type": "string"})),
        "operations/E18.json#/path",
        "no path parameter const/enum tells them apart",
        id="same-template-without-const",
    ),
    pytest.param(
        _edit("operations/E18.json", _set("parameters", 0, "schema", {"enum": [NCBCT, NDCT]})),
        "operations/E18.json#/path",
        "also E16",
        id="same-template-overlapping-values",
    ),
    pytest.param(
        _edit("rules.json", _delete("rules", 0, "quotes")),
        "rules.json#/rules/0/quotes",
        "quotes the spec",
        id="rule-stated-without-quotes",
    ),
    pytest.param(
        _edit("rules.json", _set("rules", 0, "quotes", ["7-rule-99"])),
        "rules.json#/rules/0/quotes",
        "quote '7-rule-99' is not in quotes.json",
        id="rule-quote-unknown",
    ),
    pytest.param(
        _edit("rules.json", _set("rules", 0, "stated", "reading")),
        "rules.json#/rules/0/reading",
        "names the reading it rests on",
        id="rule-reading-without-reading",
    ),
    pytest.param(
        _edit("quotes.json", _set("quotes", "7-rule-6", "spec", "part seven")),
        "quotes.json#/quotes/7-rule-6/spec",
        "does not name a spec part",
        id="quote-spec-not-a-part",
    ),
    pytest.param(
        _remove("quotes.json"),
        "quotes.json#",
        "file is missing",
        id="quotes-missing",
    ),
    pytest.param(
        _edit("flows.json", _delete("flows", 0, "quotes")),
        "flows.json#/flows/0",
        "'quotes' is a required property",
        id="must-flow-without-quotes",
    ),
    pytest.param(
        _edit("flows.json", _set("flows", 0, "quotes", ["nowhere-1"])),
        "flows.json#/flows/0/quotes/0",
        "is not in quotes.json",
        id="flow-quote-unknown",
    ),
    pytest.param(
        _edit("types/common.json", _set("$defs", "Date", "x-quotes", ["nowhere-1"])),
        "types/common.json#/$defs/Date/x-quotes/0",
        "is not in quotes.json",
        id="schema-quote-unknown",
    ),
    pytest.param(
        _edit("rules.json", _set("rules", 0, "stated", "maybe")),
        "rules.json#/rules/0/stated",
        "is not one of status-and-code, status, refusal, outcome, reading",
        id="rule-stated-unknown",
    ),
    pytest.param(
        _edit("rules.json", _set("rules", 1, "operations", ["E16", "E99"])),
        "rules.json#/rules/1/operations/1",
        "unknown operation 'E99'",
        id="rule-operation-unknown",
    ),
    pytest.param(
        _edit("rules.json", _delete("rules", 0, "check")),
        "rules.json#/rules/0",
        "lacks check",
        id="rule-field-missing",
    ),
    pytest.param(
        _edit("rules.json", _set("rules", 0, "severity", "high")),
        "rules.json#/rules/0/severity",
        "unknown field",
        id="rule-field-unknown",
    ),
    pytest.param(
        _edit("rules.json", _set("rules", 0, "id", "FOO-1")),
        "rules.json#/rules/0/id",
        "no prefix listed in spec-parts.json",
        id="rule-id-prefix-unknown",
    ),
    pytest.param(
        _edit("rules.json", _set("rules", 0, "spec", "section 7")),
        "rules.json#/rules/0/spec",
        "does not name a spec part",
        id="rule-spec-not-a-part",
    ),
    pytest.param(
        _edit("rules.json", _set("rules", 1, "id", "ERR-6-PDNG-DELETE")),
        "rules.json#/rules/1/id",
        "repeats row 0",
        id="rule-id-duplicate",
    ),
    pytest.param(
        _edit("rules.json", _set("rules", 0, "expectedStatus", "400")),
        "rules.json#/rules/0/expectedStatus",
        "HTTP status",
        id="rule-status-not-integer",
    ),
    pytest.param(
        _edit("rules.json", _set("rules", 0, "expectedCode", "bad code")),
        "rules.json#/rules/0/expectedCode",
        "error code",
        id="rule-code-malformed",
    ),
    pytest.param(_remove("rules.json"), "rules.json#", "missing", id="rules-file-missing"),
    pytest.param(
        _edit("spec-parts.json", _set("prefixes", "ERR", "chapter 7")),
        "spec-parts.json#/prefixes/ERR",
        "does not name a spec part",
        id="spec-part-malformed",
    ),
    pytest.param(
        _edit("types/common.json", _set("x-minorUnits", "NOK", -1)),
        "types/common.json#/x-minorUnits/NOK",
        "units 0..4",
        id="minor-units-negative",
    ),
]


@pytest.mark.parametrize(("breakage", "where", "message"), BROKEN)
def test_broken_contract_is_a_contract_error_naming_file_and_pointer(
    tmp_path: Path, breakage: Callable[[Path], None], where: str, message: str
) -> None:
    root = tmp_path / "schemas"
    shutil.copytree(FIXTURE, root)
    breakage(root)
    with pytest.raises(ContractError) as caught:
        load_contract(root)
    text = caught.value.message
    assert text.startswith(where), text
    assert message in text, text


def test_a_contract_may_carry_its_own_meta_schema(tmp_path: Path) -> None:
    root = tmp_path / "schemas"
    shutil.copytree(FIXTURE, root)
    (root / "operation.schema.json").write_text(json.dumps({"required": ["nonsense"]}))
    with pytest.raises(ContractError, match="'nonsense' is a required property"):
        load_contract(root)


# ----------------------------------------------------------------------------- fixture: routing


@pytest.mark.parametrize(
    ("method", "path", "operation_id", "values"),
    [
        pytest.param(
            "POST", f"/v1/payments/{NDCT}", "E16", {"payment-product": NDCT}, id="E16-by-product"
        ),
        pytest.param(
            "POST", f"/v1/payments/{NCBCT}", "E18", {"payment-product": NCBCT}, id="E18-by-product"
        ),
        pytest.param(
            "post", f"/v1/payments/{NDCT}", "E16", {"payment-product": NDCT}, id="method-case"
        ),
        pytest.param(
            "GET",
            f"/v1/payments/{NCBCT}/p%201/status",
            "PS",
            {"payment-product": NCBCT, "paymentId": "p 1"},
            id="enum-product-and-decoding",
        ),
        pytest.param("GET", "/v1/accounts", "AL", {}, id="static-get"),
        pytest.param("GET", "/v1/accounts?withBalance=true", "AL", {}, id="query-ignored"),
        pytest.param("POST", "/v1/accounts", "SA", {}, id="static-post"),
        pytest.param(
            "GET", "/v1/sandbox/accounts/acc-1", "E12", {"mockAccountId": "acc-1"}, id="template"
        ),
    ],
)
def test_match_finds_the_operation(
    fixture_contract: Contract, method: str, path: str, operation_id: str, values: dict[str, str]
) -> None:
    found = fixture_contract.match(method, path)
    assert found is not None
    assert found[0].id == operation_id
    assert found[1] == values


@pytest.mark.parametrize(
    ("method", "path", "allowed", "templates"),
    [
        pytest.param(
            "POST",
            "/v1/payments/instant-sepa",
            ("POST",),
            ("E16", "E18"),
            id="unknown-product-is-a-known-path",
        ),
        pytest.param(
            "GET",
            "/v1/payments/instant-sepa/p1/status",
            ("GET",),
            ("PS",),
            id="product-outside-enum",
        ),
        pytest.param(
            "DELETE", "/v1/accounts", ("GET", "POST"), ("AL", "SA"), id="method-not-allowed"
        ),
        pytest.param(
            "GET", f"/v1/payments/{NDCT}", ("POST",), ("E16", "E18"), id="wrong-method-on-template"
        ),
        pytest.param("GET", "/v1/sandbox/accounts/", (), (), id="empty-segment"),
        pytest.param("GET", "/v1/sandbox/accounts/a/b", (), (), id="too-many-segments"),
        pytest.param("GET", "/v1/accounts/", (), (), id="trailing-slash"),
        pytest.param("GET", "/v2/accounts", (), (), id="unknown-path"),
    ],
)
def test_no_match_still_tells_known_paths(
    fixture_contract: Contract,
    method: str,
    path: str,
    allowed: tuple[str, ...],
    templates: tuple[str, ...],
) -> None:
    assert fixture_contract.match(method, path) is None
    assert fixture_contract.allowed_methods(path) == allowed
    assert tuple(op.id for op in fixture_contract.templates_for(path)) == templates


def _operation(operation_id: str, path: str, pinned: str | None) -> Operation:
    schema = {"const": pinned} if pinned else {"type": "string"}
    return Operation(
        id=operation_id,
        name=operation_id,
        spec="spec 4.1",
        family="payments",
        method="POST",
        path=path,
        success_status=201,
        parameters=(Parameter("product", "path", True, schema, "spec 4.1"),),
        required_headers=(),
        optional_headers=(),
        headers_spec="spec 4.2",
        request_schema=None,
        request_spec=None,
        responses={},
        assumptions=(),
    )


def test_router_falls_back_to_an_operation_that_pins_nothing() -> None:
    router = Router(
        [_operation("A", "/v1/p/{product}", "a"), _operation("F", "/v1/p/{product}", None)]
    )
    assert router.match("POST", "/v1/p/a")[0].id == "A"  # type: ignore[index]
    assert router.match("POST", "/v1/p/zzz")[0].id == "F"  # type: ignore[index]


def test_router_prefers_literal_segments() -> None:
    router = Router(
        [_operation("T", "/v1/p/{product}", None), _operation("S", "/v1/p/static", None)]
    )
    assert router.match("POST", "/v1/p/static")[0].id == "S"  # type: ignore[index]
    assert router.match("POST", "/v1/p/other")[0].id == "T"  # type: ignore[index]


# ----------------------------------------------------------------------------- fixture: helpers


def test_render_path_fills_constants_and_encodes(fixture_contract: Contract) -> None:
    e16 = fixture_contract.operations["E16"]
    assert e16.render_path() == f"/v1/payments/{NDCT}"
    assert e16.render_path(**{"payment-product": "unknown"}) == "/v1/payments/unknown"
    ps = fixture_contract.operations["PS"]
    assert ps.render_path(**{"payment-product": NDCT}, paymentId="a b/c") == (
        f"/v1/payments/{NDCT}/a%20b%2Fc/status"
    )


def test_render_path_refuses_missing_and_unknown_values(fixture_contract: Contract) -> None:
    e12 = fixture_contract.operations["E12"]
    with pytest.raises(ValueError, match="needs a value for mockAccountId"):
        e12.render_path()
    with pytest.raises(ValueError, match="no path parameter accountId"):
        e12.render_path(mockAccountId="a", accountId="b")


def test_header_schema_is_case_insensitive(fixture_contract: Contract) -> None:
    schema = fixture_contract.header_schema("X-Request-ID")
    assert schema == {"type": "string", "format": "uuid"}
    assert fixture_contract.header_schema("x-request-id") is schema
    assert fixture_contract.header_schema("X-REQUEST-ID") is schema
    with pytest.raises(KeyError, match="X-Nope"):
        fixture_contract.header_schema("X-Nope")


def test_validator_is_cached_and_checks_formats_and_refs(fixture_contract: Contract) -> None:
    body = fixture_contract.operations["E16"].request_schema
    assert body is not None
    validator = fixture_contract.validator(body)
    # Draft 2020-12 (jsonschema's validator with a set-based enum: conformance.contract.validators)
    assert validator.META_SCHEMA == Draft202012Validator.META_SCHEMA
    assert fixture_contract.validator(body) is validator
    assert fixture_contract.validator(json.loads(json.dumps(body))) is validator  # equal content
    good: dict[str, Any] = {
        "instructedAmount": {"amount": "1.00", "currency": "NOK"},
        "creditorName": "Kari",
    }
    assert validator.is_valid(good)
    assert not validator.is_valid({**good, "requestedExecutionDate": "2026-02-30"})
    assert not validator.is_valid({**good, "instructedAmount": {"amount": "1", "currency": "XXX"}})


def test_resolve_follows_a_top_level_reference(fixture_contract: Contract) -> None:
    body = fixture_contract.operations["E16"].request_schema
    assert body is not None
    resolved = fixture_contract.resolve(body)
    assert set(resolved["properties"]) == {
        "instructedAmount",
        "creditorName",
        "requestedExecutionDate",
    }
    ref = TYPES_BASE + "payments.json#/$defs/PaymentRequest"
    layered = fixture_contract.resolve(
        {"allOf": [{"$ref": ref}], "required": ["requestedExecutionDate"], "description": "x"}
    )
    assert layered["required"] == ["instructedAmount", "creditorName", "requestedExecutionDate"]
    assert layered["description"] == "x"
    plain = {"type": "string"}
    assert fixture_contract.resolve(plain) is plain


def test_rules_and_spec_parts(fixture_contract: Contract) -> None:
    rule = fixture_contract.rule("LIM-CREDITOR-NAME-70")
    assert rule.expected_status == (400,)
    assert rule.operations == ("E16", "E18")
    assert fixture_contract.rule("ERR-6-PDNG-DELETE").expected_status == (400, 409)
    parts = fixture_contract.spec_parts
    assert parts[prefix_of("ERR-6-PDNG-DELETE", parts) or ""] == "spec 7"
    assert parts[prefix_of("XF", parts) or ""] == "spec 2.7"
    with pytest.raises(KeyError):
        fixture_contract.rule("ERR-99")
    assert prefix_of("ERRX-1", parts) is None


# ----------------------------------------------------------------------------- the real contract

#: CONTRACT_API.md "Operation paths".
API_OPERATIONS = {
    "E1": ("POST", "/v1/signing-baskets"),
    "E2": ("POST", "/v1/signing-baskets/{basketId}/authorisations"),
    "E3": ("GET", "/v1/sandbox/accounts/{mockAccountId}/transactions"),
    "E4": ("GET", "/v1/sandbox/card-accounts/{mockCardAccountId}/transactions"),
    "E5": ("POST", "/v1/sandbox/card-accounts/{mockCardAccountId}/transactions"),
    "E6": ("POST", "/v1/sandbox/agreements/{mockAgreementId}/engagements"),
    "E7": ("POST", "/v1/sandbox/accounts/{mockAccountId}/transactions"),
    "E8": ("GET", "/v1/accounts/{id}/transactions/{transactionId}"),
    "E9": ("GET", "/v1/sandbox/customers"),
    "E10": ("GET", "/v1/sandbox/card-accounts/{mockCardAccountId}"),
    "E11": ("GET", "/v1/sandbox/accounts/{mockAccountId}/transactions/{mockTransactionId}"),
    "E12": ("GET", "/v1/sandbox/accounts/{mockAccountId}"),
    "E13": ("GET", "/v1/sandbox/agreements/{mockAgreementId}/engagements/{mockEngagementId}"),
    "E14": ("GET", "/v1/sandbox/agreements/{mockAgreementId}"),
    "E15": ("PUT", "/v1/sandbox/accounts/{mockAccountId}/balances"),
    "E16": ("POST", "/v1/payments/{payment-product}"),
    "E17": ("POST", "/v1/periodic-payments/{payment-product}"),
    "E18": ("POST", "/v1/payments/{payment-product}"),
    "PS": ("GET", "/v1/payments/{payment-product}/{payment-id}/status"),
    "PC": ("DELETE", "/v1/payments/{payment-product}/{payment-id}"),
    "PA": ("POST", "/v1/payments/{payment-product}/{payment-id}/authorisations"),
    "AL": ("GET", "/v1/accounts"),
    "AT": ("GET", "/v1/accounts/{id}/transactions"),
    "CC": ("POST", "/v1/consents"),
    "CS": ("GET", "/v1/consents/{consentId}/status"),
    "CA": ("POST", "/v1/consents/{consentId}/authorisations"),
    "CG": ("GET", "/v1/consents/{consentId}"),
    "CD": ("DELETE", "/v1/consents/{consentId}"),
    "SA": ("POST", "/v1/sandbox/accounts"),
    "SCA": ("POST", "/v1/sandbox/card-accounts"),
    "SCU": ("POST", "/v1/sandbox/customers"),
    "SAG": ("POST", "/v1/sandbox/agreements"),
    "SDF": ("POST", "/v1/sandbox/data-fill"),
    "BR": ("GET", "/v1/signing-baskets/{basketId}"),
    "BS": ("GET", "/v1/signing-baskets/{basketId}/status"),
    "PCA": ("POST", "/v1/payments/{payment-product}/{payment-id}/cancellation-authorisations"),
    "SI": ("POST", "/v1/sandbox/initialize"),
}
REFERENCED = ("PS", "PC", "PA", "AL", "AT", "CC", "CS", "CA", "SA", "SCA", "SCU", "SAG", "SDF")
#: Operations the spec neither shows nor names, which the platform's banks document (issue 23).
PLATFORM = ("BR", "BS", "PCA", "SI")
#: Spec 4.1 shows no method and path for these (the referenced ones whose path spec 4.1 names
#: are PS, AT, SA, SCA, SCU and SAG).
PATH_NOT_SHOWN = (
    "E1",
    "E2",
    "E3",
    "E4",
    "E8",
    "E9",
    "E10",
    "E11",
    "E12",
    "E13",
    "E14",
    "E15",
    "E17",
    "PC",
    "PA",
    "AL",
    "CC",
    "CS",
    "CA",
    "SDF",
    *PLATFORM,
)
#: Spec 4.2 header table (and the content-negotiation headers of its first paragraph).
SPEC_HEADERS = (
    "Accept",
    "Accept-Charset",
    "Accept-Encoding",
    "Accept-Language",
    "Host",
    "Content-Type",
    "X-Request-ID",
    "x-accept-fix",
    "TPP-Session-ID",
    "TPP-Redirect-URI",
    "TPP-Redirect-Preferred",
    "TPP-Brand-Logging-Information",
    "Digest",
    "TPP-Signature-Certificate",
    "Signature",
    "PSU-ID",
    "X-PSU-IDENTITY",
    "PSU-Corporate-ID",
    "PSU-Context",
    "PSU-IP-Address",
    "PSU-IP-Port",
    "PSU-User-Agent",
    "PSU-Accept",
    "PSU-Accept-Charset",
    "PSU-Accept-Encoding",
    "PSU-Accept-Language",
    "PSU-HTTP-Method",
    "PSU-Device-ID",
    "PSU-Geo-Location",
)


def test_real_contract_loads(real: Contract) -> None:
    assert real.root == DEFAULT_ROOT
    assert real.operations and real.rules


@pytest.mark.parametrize("operation_id", list(API_OPERATIONS))
def test_real_contract_has_the_agreed_operation(real: Contract, operation_id: str) -> None:
    operation = real.operations.get(operation_id)
    assert operation is not None, f"schemas/operations/{operation_id}.json is missing"
    assert (operation.method, operation.path) == API_OPERATIONS[operation_id]


def test_real_contract_has_no_operation_beyond_the_agreed_ones(real: Contract) -> None:
    assert set(real.operations) <= set(API_OPERATIONS)


def test_the_numbered_operations_are_the_eighteen_of_spec_4_1(real: Contract) -> None:
    """``Operation.numbered``, the must/should switch of every requirement on an operation: E1 …
    E18 in their order, and none of the operations the spec only names or implies."""
    numbered = [op.id for op in real.operations.values() if op.numbered]
    assert numbered == [f"E{number}" for number in range(1, 19)]
    assert not any(op.numbered for op in real.operations.values() if op.id in REFERENCED)
    assert [operation_order(op) for op in ("PS", "E10", "E2")] == [
        (1, 0, "PS"),
        (0, 10, ""),
        (0, 2, ""),
    ]


@pytest.mark.parametrize("operation_id", list(API_OPERATIONS))
def test_every_operation_names_its_spec_reference(real: Contract, operation_id: str) -> None:
    operation = real.operations[operation_id]
    if operation_id.startswith("E"):
        assert re.search(rf"\bspec 4\.3 {operation_id}\b", operation.spec), operation.spec
    assert re.match(r"spec [1-9]", operation.spec)
    assert all(p.spec for p in operation.parameters)
    assert all(r.spec for r in operation.responses.values())


@pytest.mark.parametrize("operation_id", PATH_NOT_SHOWN)
def test_a_path_not_shown_is_an_assumption(real: Contract, operation_id: str) -> None:
    topics = {a.topic for a in real.operations[operation_id].assumptions}
    assert "path" in topics, f"{operation_id}: spec 4.1 shows no path; say so as an assumption"


@pytest.mark.parametrize("operation_id", REFERENCED)
def test_a_referenced_operation_states_its_assumptions(real: Contract, operation_id: str) -> None:
    # Spec 4.1: "Their request and response shapes: not shown."
    assert real.operations[operation_id].assumptions


@pytest.mark.parametrize(
    ("operation_id", "topic"),
    [
        pytest.param("E18", "product", id="E18-product-identifier-not-shown"),
        pytest.param("E2", "required-headers", id="E2-required-headers-not-shown"),
        pytest.param("E17", "required-headers", id="E17-required-markers-not-shown"),
        pytest.param("E2", "parameter", id="E2-basket-parameter-name-not-shown"),
    ],
)
def test_other_not_shown_choices_are_assumptions(
    real: Contract, operation_id: str, topic: str
) -> None:
    assert topic in {a.topic for a in real.operations[operation_id].assumptions}


def test_real_products_tell_E16_from_E18(real: Contract) -> None:
    for operation_id, product in (("E16", NDCT), ("E18", NCBCT)):
        found = real.match("POST", f"/v1/payments/{product}")
        assert found is not None and found[0].id == operation_id
    assert real.match("POST", "/v1/payments/instant-sepa") is None
    assert real.allowed_methods("/v1/payments/instant-sepa") == ("POST",)
    status = real.match("GET", f"/v1/payments/{NCBCT}/p1/status")
    assert status is not None and status[0].id == "PS"


@pytest.mark.parametrize("operation_id", list(API_OPERATIONS))
def test_every_real_operation_routes_to_itself(real: Contract, operation_id: str) -> None:
    operation = real.operations[operation_id]
    values = {p.name: f"x-{p.name}" for p in operation.path_parameters if p.pinned_values is None}
    values.update(
        {p.name: p.pinned_values[0] for p in operation.path_parameters if p.pinned_values}
    )
    found = real.match(operation.method, operation.render_path(**values))
    assert found is not None and found[0].id == operation_id


@pytest.mark.parametrize("header", SPEC_HEADERS)
def test_real_headers_define_every_spec_header(real: Contract, header: str) -> None:
    assert header in real.header_names


def test_minor_units_cover_every_currency_code(real: Contract) -> None:
    codes = set(real.lookup(TYPES_BASE + "common.json#/$defs/CurrencyCode")["enum"])
    assert set(real.minor_units) == codes
    assert (real.minor_units["NOK"], real.minor_units["JPY"], real.minor_units["KWD"]) == (2, 0, 3)


# ------------------------------------------------------------- fixture: checks another process did


def test_the_digest_covers_every_file_and_changes_with_one_byte(tmp_path: Path) -> None:
    root = tmp_path / "schemas"
    shutil.copytree(FIXTURE, root)
    before = contract_digest(root)
    assert before == contract_digest(root)
    assert load_contract(root).digest == before
    file = root / "types" / "common.json"
    file.write_text(file.read_text() + " ")
    assert contract_digest(root) != before


def test_a_trusted_digest_skips_only_the_meta_schema_check_of_that_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An xdist worker trusts the controller's check of the same bytes; a contract whose bytes
    differ from what was checked is checked in full, and the other checks always run."""
    monkeypatch.setattr(loader, "_CHECKED_ELSEWHERE", set())
    root = tmp_path / "schemas"
    shutil.copytree(FIXTURE, root)
    _edit("types/common.json", _set("$defs", "Date", {"type": 5}))(root)
    with pytest.raises(ContractError, match="not a valid schema"):
        loader.load(root)
    loader.trust_checked("0" * 64)  # another contract's digest: no effect
    with pytest.raises(ContractError, match="not a valid schema"):
        loader.load(root)
    loader.trust_checked(contract_digest(root))
    assert loader.load(root).digest == contract_digest(root)
    _edit("operations/E16.json", _set("requestBody", "schema", "$ref", "#/nope"))(root)
    with pytest.raises(ContractError, match="not a valid schema"):  # new bytes: checked in full
        loader.load(root)
    loader.trust_checked(contract_digest(root))
    with pytest.raises(ContractError, match="does not resolve"):  # the other checks still run
        loader.load(root)


def test_a_contract_checked_once_is_not_checked_again_by_a_later_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The meta-schema check's pass is recorded by digest in the user's cache directory; a later
    load of the same bytes skips it, a changed contract is checked in full."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(loader.ENV_NO_CHECK_RECORD, raising=False)
    monkeypatch.setattr(loader, "_CHECKED_ELSEWHERE", set())
    root = tmp_path / "schemas"
    shutil.copytree(FIXTURE, root)
    record = loader.checked_record(contract_digest(root))
    assert record is not None and not record.exists()
    loader.load(root)
    assert record.is_file()

    class Refusing:
        def iter_errors(self, schema: object) -> list[object]:
            raise AssertionError("checked again")

    monkeypatch.setattr(loader, "_META_CHECK", Refusing())
    assert loader.load(root).digest == contract_digest(root)  # the record: not checked again
    _edit("types/common.json", _set("$defs", "Date", {"type": "string", "maxLength": 9}))(root)
    with pytest.raises(AssertionError, match="checked again"):  # new bytes: checked
        loader.load(root)
    monkeypatch.setenv(loader.ENV_NO_CHECK_RECORD, "1")  # switched off: neither read nor kept
    assert loader.checked_record(contract_digest(root)) is None
