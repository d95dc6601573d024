"""The request rules of ``conformance/contract/request_rules.py``, each tested on its own: the one
kernel the reference server answers by (``reference_server/pipeline/auth.py``) and the traffic
judge grades by (``conformance/traffic/``), so a rule's verdict is held here once, without either
side around it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from conformance.contract import Contract, load_contract
from conformance.contract.catalogue import broken
from conformance.contract.facts import AUTH_REJECTION_STATUSES, ROLE_OF_FAMILY
from conformance.contract.request_rules import (
    CORPORATE_RULE,
    REPLAY_RULE,
    ROLE_READING,
    SAFE_METHODS,
    Headers,
    RequestView,
    date_timestamp,
    header_misfits,
    lists,
    missing_headers,
    missing_role,
    present,
    psu_violations,
    replay_key,
    replayed,
    signature_verification,
    signature_violation,
    stale_date,
)
from conformance.contract.violation import Violation
from conformance.signing import Verification, VerificationFailure

DATE = "Sat, 28 Nov 2026 10:00:00 GMT"
SIGNATURE = 'keyId="SN=1,CA=x",algorithm="rsa-sha256",headers="date",signature="AAAA"'


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def view(*headers: tuple[str, str], method: str = "POST", target: str = "/v1/x") -> RequestView:
    return RequestView(method, target, Headers(headers))


# -- the request as the rules read it -----------------------------------------------------------


def test_headers_are_case_insensitive_and_the_first_value_wins() -> None:
    headers = Headers((("X-Request-ID", "a"), ("x-request-id", "b"), ("Date", DATE)))
    assert headers["X-REQUEST-ID"] == headers.get("x-request-id") == "a"
    assert list(headers) == ["X-Request-ID", "Date"] and len(headers) == 2
    assert "date" in headers and "Digest" not in headers and headers.get("Digest") is None


def test_an_empty_header_is_absent_unless_empty_values_are_read_as_sent(
    contract: Contract,
) -> None:
    headers = Headers((("PSU-ID", " "),))
    assert not present(headers, "PSU-ID") and present(headers, "PSU-ID", empty_ok=True)
    assert lists(contract.operations["E16"], "psu-corporate-id")
    assert not lists(contract.operations["E10"], "X-PSU-IDENTITY")


# -- spec 4.2: required headers -------------------------------------------------------------------


def test_each_missing_required_header_is_one_violation_in_order(contract: Contract) -> None:
    operation = contract.operations["E2"]
    found = missing_headers(view(("X-Request-ID", "")), operation, ("X-Request-ID", "PSU-ID"))
    assert [(v.path, v.code, v.rule, v.requirement, v.status) for v in found] == [
        ("X-Request-ID", "HTTP_HEADER_REQUIRED", "TPP-header-required", "HDR-required", 400),
        ("PSU-ID", "HTTP_HEADER_REQUIRED", "TPP-header-required", "HDR-required", 400),
    ]
    assert all(v.spec == operation.headers_spec for v in found)
    assert (
        missing_headers(view(("X-Request-ID", "")), operation, ("X-Request-ID",), empty_ok=True)
        == []
    )


def test_x_psu_identity_stands_in_for_psu_id_where_the_operation_lists_it(
    contract: Contract,
) -> None:
    sent = view(("X-PSU-IDENTITY", "01010112345"))
    assert missing_headers(sent, contract.operations["E16"], ("PSU-ID",)) == []
    assert [v.path for v in missing_headers(sent, contract.operations["E2"], ("PSU-ID",))] == [
        "PSU-ID"
    ]


# -- spec 5: signature, certificate role, Date, replay --------------------------------------------


def test_an_unsigned_request_fails_verification_and_its_violation_is_a_must_of_spec_5() -> None:
    verification = signature_verification(view(("Date", DATE)), now=datetime.now(UTC))
    assert not verification.ok and verification.failure is VerificationFailure.MISSING_HEADER
    violation = signature_violation(verification)
    assert violation is not None
    assert violation.path == verification.header == "TPP-Signature-Certificate"
    assert (violation.spec, bool(violation.quotes)) == ("spec 5", True)
    assert violation.requirement == "AUTH-no-certificate" and not violation.reading
    assert violation.status in AUTH_REJECTION_STATUSES
    assert signature_violation(Verification(ok=True)) is None


def test_a_certificate_without_the_familys_role_is_refused_on_our_reading(
    contract: Contract,
) -> None:
    operation = contract.operations["E16"]
    needed = ROLE_OF_FAMILY[operation.family]
    assert missing_role(operation, None) is None  # a certificate without roles is not judged
    assert missing_role(operation, frozenset({needed})) is None
    violation = missing_role(operation, frozenset({"PSP_XX"}))
    assert violation is not None
    assert (violation.code, violation.requirement, violation.status, violation.reading) == (
        "FORBIDDEN",
        "AUTH-missing-role",
        403,
        ROLE_READING,
    )


def test_a_date_outside_the_skew_is_stale_and_one_that_does_not_parse_is_left_alone() -> None:
    sent = date_timestamp(DATE)
    assert sent is not None and date_timestamp("yesterday") is None
    fresh = view(("Date", DATE))
    assert stale_date(fresh, now=sent + 300, skew=300, clock="the clock") is None
    violation = stale_date(fresh, now=sent + 301, skew=300, clock="the clock")
    assert violation is not None and violation.rule == "TPP-date-stale"
    assert "the clock" in violation.text and violation.reading and not violation.quotes
    assert stale_date(view(("Date", "yesterday")), now=sent, skew=0, clock="x") is None


def test_the_replay_key_is_method_target_and_signature_value() -> None:
    """As the reference server has always keyed it: spec 5's signing string need not cover the
    target, so the same signature on another target or method is another request."""
    signed = ("Signature", SIGNATURE)
    assert replay_key(view(signed)) == "POST /v1/x AAAA"
    assert replay_key(view(signed, target="/v1/x?y=1")) == "POST /v1/x?y=1 AAAA"
    assert replay_key(view(signed, method="DELETE")) == "DELETE /v1/x AAAA"
    assert replay_key(view(("Signature", "no value here"))) is None
    assert replay_key(view()) is None
    for method in SAFE_METHODS:
        assert replay_key(view(signed, method=method)) is None


def test_a_replay_is_a_key_seen_before_graded_should_with_the_servers_answer_first() -> None:
    seen: set[str] = set()
    sent = view(("Signature", SIGNATURE))
    assert replayed(sent, seen=seen.__contains__) is None
    seen.add("POST /v1/x AAAA")
    assert replayed(view(("Signature", SIGNATURE), target="/v1/y"), seen=seen.__contains__) is None
    violation = replayed(sent, seen=seen.__contains__)
    assert violation is not None
    assert (violation.rule, violation.path, violation.code) == (
        REPLAY_RULE,
        "Signature",
        "SIGNATURE_INVALID",
    )
    assert (violation.requirement, violation.status) == ("AUTH-replay", 401)
    assert violation.reading and not violation.quotes  # should: spec 5 states no replay rule
    assert "already used" in violation.text  # the words the reference server answers with


# -- spec 4.2 header formats, spec 5 item 5 and spec 7 rule 3: the PSU ----------------------------


def test_a_header_that_misfits_its_schema_is_a_format_error(contract: Contract) -> None:
    """A value its schema refuses names the schema's reading; one whose RFC 2047 encoding does
    not decode is refused on our reading; a skipped or tolerated header is not reported."""
    operation = contract.operations["E16"]
    sent = view(("PSU-IP-Address", "not an address"), ("PSU-User-Agent", "=?utf-8?q?=FF?="))
    found = list(header_misfits(sent, operation, contract))
    assert [(v.path, v.code, v.rule, v.requirement, v.status) for v in found] == [
        ("PSU-IP-Address", "FORMAT_ERROR", "TPP-header-format", "HDR-format", 400),
        ("PSU-User-Agent", "FORMAT_ERROR", "TPP-header-format", "HDR-format", 400),
    ]
    assert all(v.reading for v in found)
    skipped = header_misfits(sent, operation, contract, skip=frozenset({"psu-ip-address"}))
    assert [v.path for v in skipped] == ["PSU-User-Agent"]
    assert list(header_misfits(sent, operation, contract, tolerated=lambda _: True)) == []
    assert list(header_misfits(view(("PSU-IP-Address", "192.0.2.1")), operation, contract)) == []


def test_the_psu_identity_and_a_corporate_psu_without_its_id(contract: Contract) -> None:
    operation = contract.operations["E16"]
    found = psu_violations(view(("X-PSU-IDENTITY", "12345678901")), operation)
    assert [(v.rule, v.quotes) for v in found] == [("TPP-psu-identity", ("5-5",))]
    corporate = psu_violations(view(("PSU-Context", "corporate")), operation)
    assert [(v.rule, v.path, v.quotes) for v in corporate] == [
        (CORPORATE_RULE, "PSU-Corporate-ID", ("7-rule-3",))
    ]
    assert psu_violations(view(), operation, corporate_customer=True)[0].rule == CORPORATE_RULE
    named = view(("PSU-Context", "CORPORATE"), ("PSU-Corporate-ID", ""))
    assert psu_violations(named, operation, empty_ok=True) == []


# -- the answer due: each violation names a requirement, and the server's status is due ------------


def _every_violation(contract: Contract) -> list[tuple[Violation, str]]:
    """One violation of each kind the rules report, with the operation it is judged on."""
    sent = date_timestamp(DATE)
    assert sent is not None
    found: list[tuple[Violation, str]] = []
    for failure in VerificationFailure:
        headers = ("Signature", "Digest", "TPP-Signature-Certificate", None)
        for header in headers if failure is VerificationFailure.MISSING_HEADER else (None,):
            broken = signature_violation(Verification(False, failure, "why", header))
            assert broken is not None
            found.append((broken, "E16"))
    for operation in contract.operations.values():
        required = operation.required_headers
        found += [(v, operation.id) for v in missing_headers(view(), operation, required)]
        corporate = view(("PSU-Context", "CORPORATE"), ("X-PSU-IDENTITY", "1"))
        found += [(v, operation.id) for v in psu_violations(corporate, operation)]
        misfit = view(*((name, "\u0000") for name in operation.optional_headers))
        found += [(v, operation.id) for v in header_misfits(misfit, operation, contract)]
        role = missing_role(operation, frozenset({"PSP_XX"}))
        found += [(role, operation.id)] if role is not None else []
    stale = stale_date(view(("Date", DATE)), now=sent + 3600, skew=300, clock="the clock")
    early = stale_date(view(("Date", DATE)), now=sent - 3600, skew=300, clock="the clock")
    again = replayed(view(("Signature", SIGNATURE)), seen=lambda key: True)
    found += [(v, "CA") for v in (stale, early, again) if v is not None]
    return found


def test_each_violation_names_a_requirement_whose_due_holds_the_servers_status(
    contract: Contract,
) -> None:
    """The reference server answers a violation with its ``status`` where the requirement it
    breaks makes that status due (``reference_server/pipeline/due.py``): every kind of
    violation names a requirement the catalogue has on its operation, and the status the server
    chose for it is among those due, so the server's answer is the due one."""
    found = _every_violation(contract)
    kinds = {(v.rule, v.requirement) for v, _ in found}
    assert len(kinds) >= 14, kinds
    for violation, operation in found:
        requirement = broken(contract, violation, contract.operations[operation])
        due = requirement.expected
        assert not due.statuses or violation.status in due.statuses, (violation, due)
        assert due.code is None or due.code == violation.code, (violation, due)
