"""The example requests (``schemas/examples``, ``conformance export-examples``): one for every
operation, a body valid against its schema and cross-field rules where it takes one (the headers
and path alone where it takes none), and sent as they are by ``conformance call --example`` to
the reference server, which accepts them."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from conformance.commands import call
from conformance.commands.export_examples import (
    example_directory,
    example_operations,
    example_request,
)
from conformance.contract import load_contract
from conformance.contract.crossfield import CheckContext, checks_for
from conformance.errors import ConformanceError
from conformance.signing import generate_ca, generate_tpp_identity, write_identity
from reference_server.app import Application
from reference_server.transport.http import RunningServer, start

CONTRACT = load_contract()
OPERATIONS = example_operations(CONTRACT)


def _stored(op_id: str) -> dict[str, object]:
    document: dict[str, object] = json.loads(
        (example_directory() / f"{op_id}.json").read_text(encoding="utf-8")
    )
    return document


def test_every_operation_has_an_example() -> None:
    stored = {path.stem for path in example_directory().glob("*.json")}
    assert stored == set(OPERATIONS) == set(CONTRACT.operations)
    assert {"E16", "E17", "E18", "E1", "CC", "SCU", "PA", "PS", "PC", "AL"} <= stored
    for op_id in stored:  # null exactly where the operation takes no body
        assert (_stored(op_id)["body"] is None) == (
            CONTRACT.operations[op_id].request_schema is None
        )


@pytest.mark.parametrize("op_id", OPERATIONS)
def test_each_example_is_valid_against_its_schema_and_rules(op_id: str) -> None:
    example = _stored(op_id)
    operation = CONTRACT.operations[op_id]
    assert (example["operation"], example["method"]) == (op_id, operation.method)
    body = call.fresh_dates(example["body"], datetime.now(UTC).date())
    schema = operation.request_schema
    if schema is not None:
        assert [e.message for e in CONTRACT.validator(schema).iter_errors(body)] == []
        context = CheckContext.at(datetime.now(UTC), CONTRACT.minor_units)
        assert [v for check in checks_for(op_id) for v in check(body, context)] == []
    required = {name.lower() for name in operation.required_headers}
    signer = {"digest", "signature", "tpp-signature-certificate", "x-request-id"}
    assert required - signer <= {name.lower() for name in example["headers"]}  # type: ignore[attr-defined]


def test_an_export_writes_the_same_shape(tmp_path: Path) -> None:
    today = date(2026, 11, 25)
    fresh = example_request(CONTRACT, "E16", today)
    assert set(fresh) == set(_stored("E16"))
    assert fresh == example_request(CONTRACT, "E16", today)  # seeded: the same every time


def test_dates_that_passed_move_whole_years_ahead() -> None:
    body = {"startDate": "2026-01-31", "endDate": "2027-01-31", "dayOfExecution": "31"}
    moved = call.fresh_dates(body, date(2026, 6, 1))
    assert moved == {"startDate": "2027-01-31", "endDate": "2028-01-31", "dayOfExecution": "31"}
    assert call.fresh_dates(body, date(2025, 1, 1)) is body  # still ahead: unchanged


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    running = start(Application(contract=CONTRACT))
    yield running
    running.stop()


def _call(*argv: str) -> str:
    parser = argparse.ArgumentParser()
    call.add_arguments(parser)
    out = io.StringIO()
    assert call.run(parser.parse_args(list(argv)), stdout=out, stderr=io.StringIO()) == 0
    return out.getvalue()


@pytest.mark.parametrize("op_id", ["E16", "E17", "E18", "SCU", "SAG", "CC"])
def test_call_example_is_accepted_by_the_reference_server(
    server: RunningServer, op_id: str
) -> None:
    shown = _call("--example", op_id, "--target", server.url)
    assert "<<< HTTP 201" in shown, shown[-1500:]


def test_call_example_needs_real_ids_where_the_path_names_a_resource(
    server: RunningServer,
) -> None:
    with pytest.raises(ConformanceError, match=r"give the path with real ids.*<mockAccountId>"):
        _call("--example", "E7", "--target", server.url)
    with pytest.raises(
        ConformanceError, match=r"no such example \(there are: AL, AT, .*CA, CC, CD, CG, CS, E1"
    ):
        _call("--example", "E99", "--target", server.url)
    with pytest.raises(ConformanceError, match="give METHOD and PATH"):
        _call("--target", server.url)
    # a path given with the example: its method, headers and body, to that resource
    shown = _call("--example", "E7", "/v1/sandbox/accounts/no-such-account/transactions",
                  "--target", server.url)  # fmt: skip
    assert ">>> POST" in shown and "<<< HTTP 404" in shown


def test_an_example_without_a_body_sends_its_headers_to_the_path_given(
    server: RunningServer,
) -> None:
    """PA (payment authorisation) has no body: its example is the required header set, so the
    answer is about the payment (404: it does not exist), not HTTP_HEADER_REQUIRED."""
    path = "/v1/payments/norwegian-domestic-credit-transfers/no-such/authorisations"
    shown = _call("--example", "PA", path, "--target", server.url)
    assert ">>> POST" in shown and "<<< HTTP 404" in shown, shown[-1500:]
    assert "HTTP_HEADER_REQUIRED" not in shown
    assert "PSU-IP-Address: " in shown and "TPP-Session-ID: " in shown
    listed = _call("--example", "E9", "--target", server.url)  # a read without path parameters
    assert ">>> GET" in listed and "<<< HTTP 200" in listed, listed[-1500:]


def test_the_readmes_recipe_composes_call_signs_with_the_identity_the_server_trusts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``conformance certs --out ids``, ``serve --trust ids/ca.pem``: ``call --example E16``
    with ``--cert ids/tpp.pem --key ids/tpp.key`` is accepted; without them the generated
    identity is refused with a note that says which files to give (its CA has its own name)."""
    ca = generate_ca()
    written = write_identity(generate_tpp_identity(ca), tmp_path / "ids", ca=ca)
    running = start(Application(contract=CONTRACT, trust_ca=ca.certificate))
    try:
        identity = ["--cert", str(written["certificate"]), "--key", str(written["key"])]
        trusted = _call("--example", "E16", "--target", running.url, *identity)
        assert "<<< HTTP 201" in trusted, trusted[-1500:]
        parser = argparse.ArgumentParser()
        call.add_arguments(parser)
        out, err = io.StringIO(), io.StringIO()
        args = parser.parse_args(["--example", "E16", "--target", running.url])
        assert call.run(args, stdout=out, stderr=err) == 0
    finally:
        running.stop()
    assert "<<< HTTP 401" in out.getvalue() and "Conformance Generated Test CA" in out.getvalue()
    assert "give --cert and --key of an identity it trusts (ids/tpp.pem" in err.getvalue()
