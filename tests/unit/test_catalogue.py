"""The contract's requirements (``conformance.contract.catalogue``): one value per requirement,
built once, looked up by id, operation and place; a must quotes the spec, a should names its
reading; the grade follows what the contract carries."""

from __future__ import annotations

import pytest

from conformance.contract import Contract, load_contract
from conformance.contract.catalogue import (
    EXPIRED_CERTIFICATE,
    HEADER_FORMAT,
    HEADER_REQUIRED,
    NO_DIGEST,
    REQUEST_SCHEMA,
    SCA_LINK_AT_CREATION,
    UNKNOWN_ID,
    body_case_id,
    creates_payment,
    sca_link_at_creation,
)
from conformance.contract.facts import BODY_CASES
from conformance.contract.requirements import on_unnamed


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


def test_the_requirements_are_built_once(contract: Contract) -> None:
    assert contract.requirements is contract.requirements


def test_every_row_of_rules_json_is_a_requirement_on_each_operation_it_lists(
    contract: Contract,
) -> None:
    for rule in contract.rules:
        for operation in rule.operations:
            requirement = contract.requirement(rule.id, operation)
            assert (requirement.id, requirement.operation, requirement.spec) == (
                rule.id,
                operation,
                rule.spec,
            )
            assert requirement.expected.statuses == rule.expected_status


def test_a_must_quotes_the_spec_and_a_should_names_its_reading(contract: Contract) -> None:
    for key, requirement in contract.requirements.items():
        if requirement.level == "must":
            # a header's or a schema's must takes its place's quotes (``Requirement.at``)
            assert requirement.quotes or key[0] in (HEADER_FORMAT, REQUEST_SCHEMA), key
            assert not requirement.reading, key
        else:
            assert requirement.level == "should" and requirement.reading, key


def test_a_lookup_falls_back_from_the_place_to_the_operation_to_every_operation(
    contract: Contract,
) -> None:
    sandbox_psu_id = contract.requirement(HEADER_FORMAT, "SA", "psu-id")
    assert sandbox_psu_id.place == "PSU-ID" and sandbox_psu_id.quotes == ("7-rule-7",)
    other = contract.requirement(HEADER_FORMAT, "SA", "No-Such-Header")
    assert other.place == "" and other.operation == "SA"
    assert contract.requirement(EXPIRED_CERTIFICATE, "E16").operation == ""
    with pytest.raises(KeyError, match="HDR-nothing"):
        contract.requirement("HDR-nothing", "E16")


def test_the_grade_follows_the_operations_place_in_the_spec(contract: Contract) -> None:
    # E16's header row is shown (spec 4.2); AL is only named (spec 4.1)
    assert contract.requirement(HEADER_REQUIRED, "E16").level == "must"
    assert contract.requirement(HEADER_REQUIRED, "AL").level == "should"
    assert contract.requirement(REQUEST_SCHEMA, "E16").level == "must"
    assert contract.requirement(REQUEST_SCHEMA, "CC").level == "should"
    # spec 7 shows E2's 404 with its code; elsewhere an unknown id is our reading
    assert contract.requirement(UNKNOWN_ID, "E2").expected.code == "RESOURCE_UNKNOWN"
    assert contract.requirement(UNKNOWN_ID, "E3").level == "should"


def test_a_body_case_on_an_operation_interface_md_does_not_name_is_should(
    contract: Contract,
) -> None:
    unnamed = [op for op in contract.operations.values() if op.unnamed and op.request_schema]
    named = contract.operations["E16"]
    for case in BODY_CASES:
        on_named = contract.requirement(body_case_id(case.name), named.id)
        assert on_named.level == ("must" if case.quotes else "should")
        for op in unnamed:
            on_unnamed = contract.requirement(body_case_id(case.name), op.id)
            assert on_unnamed.level == "should" and on_unnamed.quotes == case.quotes


def test_a_missing_digest_is_must_only_where_spec_4_2_requires_digest(contract: Contract) -> None:
    for op in contract.operations.values():
        if op.request_schema is None:
            continue
        required = any(name.lower() == "digest" for name in op.required_headers)
        level = contract.requirement(NO_DIGEST, op.id).level
        assert level == ("must" if required and not op.unnamed else "should"), op.id


def test_the_sca_link_at_creation_is_must_only_with_a_redirect(contract: Contract) -> None:
    creations = sorted(op.id for op in contract.operations.values() if creates_payment(op))
    assert creations == ["E16", "E17", "E18"]
    for operation in creations:
        assert contract.requirement(SCA_LINK_AT_CREATION, operation).quotes == ("5-6",)
        assert sca_link_at_creation(contract, operation, "redirect").level == "must"
        decoupled = sca_link_at_creation(contract, operation, "decoupled")
        assert decoupled.level == "should" and '"decoupled"' in decoupled.reading


def test_a_scenario_carries_the_requirement_it_is_graded_by(contract: Contract) -> None:
    """Every scenario names the requirement it is graded by, one the contract has on the
    scenario's operation (or on every operation), at the scenario's level where the
    requirement's grade is the scenario's whole grade (not a place's reading on top of it: a
    constraint, a header, a deprecated member, a variant whose value is a reading), on an
    operation the spec neither shows nor names a should (``on_unnamed``)."""
    from conformance.generate import generate_scenarios
    from conformance.generate.variants import VARIANT_READINGS

    ids = {key[0] for key in contract.requirements}
    whole = ("rule", "flow", "positive", "auth", "robustness")
    for scenario in generate_scenarios(contract):
        assert scenario.requirement in ids, scenario.id
        if scenario.kind == "positive" and scenario.variant in VARIANT_READINGS:
            assert scenario.level == "should", scenario.id  # the variant's value is a reading
        elif scenario.kind in whole:
            requirement = contract.requirement(scenario.requirement, scenario.operation)
            operation = contract.operations[scenario.operation]
            assert on_unnamed(requirement.grade, operation).level == scenario.level, scenario.id
