"""One home per operation (``conformance.operations``): every operation of the contract
has all of its parts in the module of its family, so an operation without a base request builder
or an example fails here instead of making its scenarios "not applicable" in a run."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from conformance.contract import Contract, load_contract
from conformance.contract.crossfield import CheckContext, checks_for
from conformance.generate.auth import REPLAYED_CREATIONS
from conformance.operations import FAMILY_MODULES, OPERATIONS, parts_of, sandbox
from conformance.operations.parts import NO_BODY, ExampleInputs
from conformance.profile.templates import setup_operations

CONTRACT = load_contract()
OP_IDS = sorted(CONTRACT.operations)


def test_every_operation_of_the_contract_has_a_home() -> None:
    assert set(OPERATIONS) == set(CONTRACT.operations)


def test_a_missing_home_is_an_error_not_a_skip() -> None:
    with pytest.raises(KeyError, match="E99 has no home"):
        parts_of("E99")


@pytest.mark.parametrize("op_id", OP_IDS)
def test_each_operation_lives_in_the_module_of_its_family(op_id: str) -> None:
    homes = [module for module in FAMILY_MODULES if op_id in module.OPERATIONS]
    assert len(homes) == 1
    assert CONTRACT.operations[op_id].family in homes[0].FAMILIES


@pytest.mark.parametrize("op_id", OP_IDS)
def test_each_operation_has_a_builder_and_its_example(op_id: str) -> None:
    parts = OPERATIONS[op_id]
    assert callable(parts.builder)
    operation = CONTRACT.operations[op_id]
    if operation.request_schema is None:
        assert parts.example is NO_BODY, f"{op_id} takes no body: its example must say NO_BODY"
    else:
        assert parts.takes_body and callable(parts.example)


@pytest.mark.parametrize(
    "op_id", [op for op in OP_IDS if CONTRACT.operations[op].request_schema is not None]
)
def test_each_example_body_is_valid(op_id: str) -> None:
    """The example a fresh export writes passes the schema and the cross-field rules."""
    today = datetime.now(UTC).date()
    body = OPERATIONS[op_id].example(ExampleInputs(today=today))
    schema = CONTRACT.operations[op_id].request_schema
    assert schema is not None, op_id
    assert [e.message for e in CONTRACT.validator(schema).iter_errors(body)] == []
    context = CheckContext.at(datetime.now(UTC), CONTRACT.minor_units)
    assert [v for check in checks_for(op_id) for v in check(body, context)] == []


def test_examples_are_seeded() -> None:
    inputs = ExampleInputs(today=date(2026, 11, 25))
    for parts in OPERATIONS.values():
        if parts.takes_body:
            assert parts.example(inputs) == parts.example(inputs)


@pytest.mark.parametrize("op_id", REPLAYED_CREATIONS)
def test_each_replayed_creation_names_its_created_id(op_id: str) -> None:
    """The replay scenario compares this member of the two answers: it must be in the success
    answer's schema."""
    name = OPERATIONS[op_id].created_id
    assert name is not None
    operation = CONTRACT.operations[op_id]
    schema = operation.responses[operation.success_status].schema
    assert schema is not None
    assert name in _properties(CONTRACT, schema)


def test_the_set_up_operations_are_the_sandbox_writes() -> None:
    """What ``[setup] templates`` may name is read from the contract; each is a sandbox creation
    or change with its home in the sandbox module."""
    chosen = setup_operations(CONTRACT.operations)
    assert chosen == {"SCU", "SA", "SCA", "SAG", "SDF", "E5", "E6", "E7", "E15"}
    assert chosen <= set(sandbox.OPERATIONS)


def _properties(contract: Contract, schema: object) -> set[str]:
    resolved = contract.resolve(schema)  # type: ignore[arg-type]
    names = set(resolved.get("properties", {}))
    for key in ("allOf", "oneOf", "anyOf"):
        for part in resolved.get(key, ()):
            names |= _properties(contract, part)
    return names
