"""Replay in judged traffic (issue 39, review 5 §2.2): the judge keys a replay as the reference
server does (``request_rules.replay_key``: method, request target and signature value), so a
request the server accepts by design is no finding, and a true replay is a TPP finding at should
that the bank owes a refusal for."""

from __future__ import annotations

import json

import pytest

from conformance.contract import Contract, Operation, load_contract
from conformance.contract.request_rules import REPLAY_RULE
from conformance.exchange import Exchange
from conformance.traffic.answer_checks import judge_answer
from conformance.traffic.model import BANK, TPP
from conformance.traffic.state import TrafficState

#: Two bodiless POSTs with these signed headers carry the same signature on any path.
SIGNATURE = 'keyId="SN=1,CA=x",algorithm="rsa-sha256",headers="date x-request-id",signature="AAAA"'
HEADERS = (
    ("Date", "Sat, 28 Nov 2026 10:00:00 GMT"),
    ("X-Request-ID", "r1"),
    ("Signature", SIGNATURE),
)


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


#: The reference server's answer to a replay: 401 with the spec 7 error body.
REFUSED = json.dumps(
    {"status": 401, "code": "SIGNATURE_INVALID", "message": "this signature was already used"}
).encode()


def exchange(method: str, path: str, status: int = 201) -> Exchange:
    """A bodiless request with :data:`HEADERS`, answered ``status`` (a refusal with its body)."""
    answer = REFUSED if status >= 400 else b""
    headers = (("Content-Type", "application/json"),) if answer else ()
    return Exchange(
        method, f"http://bank.test{path}", HEADERS, b"", None, status, headers, answer, 0.01
    )


def replays(state: TrafficState, sent: Exchange, operation: Operation) -> list[str]:
    """The state's findings on ``sent`` (their rules), then the state moved on past it."""
    found = state.request_violations(sent, operation, None)
    state.observe(sent, operation, {}, None)
    return [violation.finding.rule for violation in found]


def test_the_same_signature_on_another_path_is_no_replay(contract: Contract) -> None:
    """The review's appendix: E2 then CA, the same signed headers; the reference server accepts
    the second by design (tests/server/test_auth.py), and so does the judge now."""
    state = TrafficState(contract)
    first, second = contract.operations["E2"], contract.operations["CA"]
    assert replays(state, exchange("POST", first.path), first) == []
    assert replays(state, exchange("POST", second.path), second) == []


def test_the_same_request_again_is_a_replay_at_should(contract: Contract) -> None:
    state = TrafficState(contract)
    operation = contract.operations["CA"]
    assert replays(state, exchange("POST", operation.path), operation) == []
    again = state.request_violations(exchange("POST", operation.path), operation, None)
    assert [violation.finding.rule for violation in again] == [REPLAY_RULE]
    finding, refusal = again[0].finding, again[0].due
    assert (finding.side, finding.level, finding.place) == (TPP, "should", "Signature")
    assert finding.reading.startswith("spec 5 signs each request") and not finding.quotes
    assert refusal == contract.requirement("AUTH-replay").expected  # what the server reads
    assert 401 in refusal.statuses and 409 in refusal.statuses


def test_a_bank_that_carries_out_a_replay_owes_the_refusal(contract: Contract) -> None:
    state = TrafficState(contract)
    operation = contract.operations["CA"]
    replays(state, exchange("POST", operation.path), operation)
    for status, owed in ((401, []), (201, [(BANK, "BANK-refusal", "should")])):
        sent = exchange("POST", operation.path, status)
        violations = state.request_violations(sent, operation, None)
        answer = judge_answer(sent, operation, contract, violations)
        refusals = [f for f in answer if f.rule.startswith("BANK-refusal")]
        assert [(f.side, f.rule, f.level) for f in refusals] == owed, status


def test_a_refused_request_is_not_remembered_and_a_read_is_never_a_replay(
    contract: Contract,
) -> None:
    state = TrafficState(contract)
    operation = contract.operations["CA"]
    assert replays(state, exchange("POST", operation.path, 401), operation) == []
    assert replays(state, exchange("POST", operation.path), operation) == []
    read = contract.operations["E4"]
    assert replays(state, exchange(read.method, read.path, 200), read) == []
    assert replays(state, exchange(read.method, read.path, 200), read) == []
