"""The checks judge crafted exchanges: each passes on a conforming answer, fails on a broken one,
and its failure speaks to a bank engineer (what was sent, what came back, the spec part)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.checks import (
    ConformanceFailure,
    ReadingFailure,
    accept_fixes,
    check_all,
    check_client_error,
    check_equal,
    check_error_body,
    check_error_code,
    check_error_status,
    check_headers,
    check_json_body,
    check_json_content_type,
    check_max_length,
    check_not_server_error,
    check_response_schema,
    check_sca_redirect,
    check_status,
    check_tpp_message_path,
)
from conformance.contract import Contract, load_contract
from conformance.contract.fixes import schema_for_fixes
from conformance.contract.requirements import answer_due
from conformance.exchange import Exchange
from conformance.runners.positive import check_fee_indicator
from conformance.scenario import Scenario

PAYMENT = {
    "instructedAmount": {"amount": "100.00", "currency": "NOK"},
    "creditorName": "Kari Nordmann",
}


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def exchange(
    status: int,
    body: Any = None,
    *,
    raw: bytes | None = None,
    method: str = "POST",
    path: str = "/v1/payments/norwegian-domestic-credit-transfers",
    request_headers: tuple[tuple[str, str], ...] = (),
    response_headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),),
) -> Exchange:
    content = raw if raw is not None else b"" if body is None else json.dumps(body).encode()
    return Exchange(
        method=method,
        url=f"http://bank.test{path}",
        request_headers=(("X-Request-ID", "r-1"), *request_headers),
        request_body=json.dumps(PAYMENT).encode() if method == "POST" else b"",
        signing_string=None,
        status=status,
        response_headers=response_headers,
        response_body=content,
        elapsed=0.01,
        signer="standard",
        base_url="http://bank.test",
    )


def error_body(status: int, code: str, **extra: Any) -> dict[str, Any]:
    return {"id": "e-1", "system": "bank", "status": status, "code": code, **extra}


# --- status ---------------------------------------------------------------------------------------


def test_check_status_passes_on_an_accepted_status_and_names_both_when_not() -> None:
    check_status(exchange(201, {}), (201,))
    with pytest.raises(ConformanceFailure) as failed:
        check_status(exchange(500, {"code": "SYSTEM_ERROR"}), (400, 415), spec="spec 7")
    text = str(failed.value)
    assert "answered HTTP 500 (a server error), expected HTTP 400 or 415" in text
    assert "Expected (our reading of spec 7)" in text
    assert ">>> POST http://bank.test/v1/payments/norwegian-domestic-credit-transfers" in text
    assert "<<< HTTP 500" in text
    assert "conformance call POST" in text  # the reproduce command


def test_check_not_server_error_and_check_client_error() -> None:
    check_not_server_error(exchange(404, {}))
    check_client_error(exchange(400, {}))
    with pytest.raises(ConformanceFailure, match="server error"):
        check_not_server_error(exchange(503, {}))
    with pytest.raises(ConformanceFailure, match="was accepted"):
        check_client_error(exchange(201, {}))


# --- bodies ---------------------------------------------------------------------------------------


def test_check_json_body_returns_the_document_and_refuses_html() -> None:
    assert check_json_body(exchange(200, {"a": 1})) == {"a": 1}
    html = exchange(
        400, raw=b"<html>oops</html>", response_headers=(("Content-Type", "text/html"),)
    )
    with pytest.raises(ConformanceFailure, match="text/html, not JSON") as failed:
        check_json_body(html)
    # the cause's title reads as a sentence (not "the body is a body in text/html")
    assert [problem.detail for problem in failed.value.problems] == [
        "the body is text/html, not JSON"
    ]


def test_check_error_body_accepts_the_spec_7_body(contract: Contract) -> None:
    check_error_body(exchange(400, error_body(400, "FORMAT_ERROR")), contract, payments=False)
    with_messages = error_body(
        400,
        "FORMAT_ERROR",
        tppMessages=[{"category": "ERROR", "code": "FORMAT_ERROR", "path": "creditorName"}],
    )
    check_error_body(exchange(400, with_messages), contract, payments=True)


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"message": "no code"}, "'code' is a required property"),
        ({**error_body(400, "FORMAT_ERROR"), "status": "400"}, "'400' is not of type 'integer'"),
        (error_body(404, "RESOURCE_UNKNOWN"), "says status 404 but the answer is HTTP 400"),
    ],
)
def test_check_error_body_fails_with_the_json_path(
    contract: Contract, body: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(ConformanceFailure) as failed:
        check_error_body(exchange(400, body), contract, payments=False)
    assert fragment in str(failed.value)
    assert "spec 7" in str(failed.value)


def test_payment_error_body_tpp_message_codes_come_from_spec_7(contract: Contract) -> None:
    body = error_body(
        415, "UNSUPPORTED_MEDIA_TYPE", tppMessages=[{"category": "ERROR", "code": "WHATEVER"}]
    )
    with pytest.raises(ConformanceFailure) as failed:
        check_error_body(exchange(415, body), contract, payments=True)
    assert "$.tppMessages[0].code" in str(failed.value)


def test_check_error_status_ignores_a_body_without_status() -> None:
    check_error_status(exchange(401, {"_links": {"scaRedirect": {"href": "/sca/1"}}}))
    with pytest.raises(ConformanceFailure):
        check_error_status(exchange(401, {"status": 400}))


def test_check_error_code_looks_in_code_and_in_tpp_messages() -> None:
    check_error_code(exchange(400, error_body(400, "KID_INVALID")), "KID_INVALID")
    tpp = error_body(400, "BAD_REQUEST", tppMessages=[{"category": "ERROR", "code": "KID_INVALID"}])
    check_error_code(exchange(400, tpp), "KID_INVALID")
    with pytest.raises(
        ConformanceFailure, match="carries BAD_REQUEST, KID_INVALID, not KID_MISSING"
    ):
        check_error_code(exchange(400, tpp), "KID_MISSING")


def test_check_response_schema_lists_every_error_with_its_path(contract: Contract) -> None:
    operation = contract.operations["E16"]
    good = {"paymentId": "p-1", "transactionStatus": "RCVD"}
    check_response_schema(exchange(201, good), operation, contract)
    bad = {"paymentId": "", "transactionStatus": "DONE", "psuMessage": "x" * 513}
    with pytest.raises(ConformanceFailure) as failed:
        check_response_schema(exchange(201, bad), operation, contract)
    text = str(failed.value)
    # the empty paymentId breaks only our reading (x-readings): the stated places are listed
    assert "breaks its schema in 2 places" in text
    assert "at $.transactionStatus" in text and "at $.psuMessage" in text
    assert "spec 2.6" in text and "Quoted: spec 4.3 E16" in text
    with pytest.raises(ReadingFailure) as read:
        check_response_schema(exchange(201, {**good, "paymentId": ""}), operation, contract)
    assert "opaque identifier" in read.value.reading


def test_check_response_schema_refuses_an_undocumented_status(contract: Contract) -> None:
    with pytest.raises(ConformanceFailure, match="does not document"):
        check_response_schema(exchange(418, {}), contract.operations["E16"], contract)


def test_a_documented_status_without_a_body_schema_passes(contract: Contract) -> None:
    check_response_schema(exchange(204, raw=b""), contract.operations["PC"], contract)


def test_x_accept_fix_variants_apply_to_the_response_schema(contract: Contract) -> None:
    operation = contract.operations["AL"]
    long_name = {"accounts": [{"resourceId": "a-1", "name": "N" * 70}]}
    plain = exchange(200, long_name, method="GET", path="/v1/accounts")
    with pytest.raises(ConformanceFailure, match="is too long"):
        check_response_schema(plain, operation, contract)
    fixed = exchange(
        200,
        long_name,
        method="GET",
        path="/v1/accounts",
        request_headers=(("x-accept-fix", "amount-as-string, Longer-Name"),),
    )
    assert accept_fixes(fixed) == frozenset({"amount-as-string", "longer-name"})
    check_response_schema(fixed, operation, contract)
    schema = operation.responses[200].schema
    assert schema is not None
    assert schema_for_fixes(schema, frozenset()) is schema
    assert schema_for_fixes(schema, frozenset({"longer-name"})) is schema_for_fixes(
        schema, frozenset({"longer-name"})
    )


def test_check_tpp_message_path() -> None:
    body = error_body(
        400,
        "FORMAT_ERROR",
        tppMessages=[{"category": "ERROR", "code": "FORMAT_ERROR", "path": "creditorAccount/bban"}],
    )
    check_tpp_message_path(exchange(400, body), "bban")
    with pytest.raises(ConformanceFailure, match="no tppMessages entry names creditorName"):
        check_tpp_message_path(exchange(400, body), "creditorName")


# --- headers, links, values ----------------------------------------------------------------


def test_check_headers_lists_every_missing_header() -> None:
    answer = exchange(405, {}, response_headers=(("Allow", "GET"),))
    check_headers(answer, ["Allow"])
    with pytest.raises(ConformanceFailure, match="lacks the headers Location, ETag"):
        check_headers(answer, ["Allow", "Location", "ETag"])


def test_check_sca_redirect_returns_the_link() -> None:
    body = {"_links": {"scaRedirect": {"href": "/sca/1", "verbs": ["GET"]}}}
    assert check_sca_redirect(exchange(401, body)) == "/sca/1"
    with pytest.raises(ConformanceFailure, match=r"no _links\.scaRedirect"):
        check_sca_redirect(exchange(201, {"scaStatus": "STARTED"}))


def test_check_max_length_walks_arrays() -> None:
    document = {"tppMessages": [{"text": "ok"}, {"text": "x" * 513}]}
    check_max_length(exchange(400, document), document, "tppMessages/*/text", 513, spec="spec 8")
    with pytest.raises(ConformanceFailure) as failed:
        check_max_length(
            exchange(400, document), document, "tppMessages/*/text", 512, spec="spec 8"
        )
    assert "`tppMessages[1].text` has 513 characters, more than 512" in str(failed.value)


def test_check_equal_shows_both_values() -> None:
    check_equal(exchange(200, {}), "the name", "Kari", "Kari", spec="spec 2.9")
    with pytest.raises(ConformanceFailure, match='answered "Ola", expected "Kari"'):
        check_equal(exchange(200, {}), "the name", "Kari", "Ola", spec="spec 2.9")


def test_check_all_reports_every_failure_under_the_first_title() -> None:
    answer = exchange(400, {"code": "X"})
    with pytest.raises(ConformanceFailure) as failed:
        check_all(
            lambda: check_status(answer, (400,)),
            lambda: check_error_code(answer, "FORMAT_ERROR"),
            lambda: check_headers(answer, ["Allow"]),
        )
    text = str(failed.value)
    assert text.startswith("the error answer carries X, not FORMAT_ERROR (and 1 more problem)")
    assert "lacks the header Allow" in text
    check_all(lambda: check_status(answer, (400,)))


def test_a_failure_reported_under_a_scenario_names_the_requirement() -> None:
    scenario = Scenario(
        id="E16-creditorName-maxLength-71-rejected",
        operation="E16",
        rule="SCH-maxLength",
        spec="spec 2.7",
        level="must",
        kind="constraint",
        title="E16: creditorName of 71 characters is rejected with 400 FORMAT_ERROR",
        expect=answer_due((400,), "FORMAT_ERROR"),
    )
    failure = ConformanceFailure(
        "accepted", spec="spec 2.7", sent=exchange(201, {}), expected="HTTP 400"
    ).for_scenario(scenario)
    text = str(failure)
    assert "Requirement: SCH-maxLength (spec 2.7, must): E16: creditorName" in text
    assert failure.for_scenario(scenario) is failure


def test_a_body_that_is_not_utf8_still_gets_a_reproduce_line() -> None:
    sent = Exchange(
        method="POST",
        url="http://bank.test/v1/sandbox/customers",
        request_headers=(("X-Request-ID", "r"),),
        request_body=b'{"a":"\xff"}',
        signing_string=None,
        status=400,
        response_headers=(),
        response_body=b"{}",
        elapsed=0.0,
        signer="",
        base_url="http://bank.test",
    )
    text = str(ConformanceFailure("t", spec="spec 7", sent=sent, expected="400"))
    assert "--data body.bin" in text


# --- payment answer consistency (runners.positive) ---------------------------------------------


@pytest.mark.parametrize(
    ("document", "fails"),
    [
        ({"transactionFeeIndicator": False, "transactionFees": {"amount": "25.00"}}, True),
        ({"transactionFeeIndicator": True, "transactionFees": {"amount": "25.00"}}, False),
        ({"transactionFeeIndicator": False, "transactionFees": {"amount": "0.00"}}, False),
        ({"transactionFeeIndicator": False}, False),
        ({"transactionFees": {"amount": "25.00"}}, False),
    ],
)
def test_a_fee_shown_needs_the_fee_indicator(document: dict[str, Any], fails: bool) -> None:
    if fails:
        with pytest.raises(ConformanceFailure, match="transactionFeeIndicator false"):
            check_fee_indicator(exchange(201, document))
    else:
        check_fee_indicator(exchange(201, document))


def test_a_json_body_needs_a_json_content_type() -> None:
    check_json_content_type(exchange(200, {}))
    check_json_content_type(exchange(204, None, response_headers=()))
    with pytest.raises(ConformanceFailure, match="Content-Type"):
        check_json_content_type(exchange(200, {}, response_headers=()))
