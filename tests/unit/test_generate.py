"""Scenario generation: counts, coverage, determinism, id hygiene, traceability and markers."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from conformance.contract import Contract, load_contract
from conformance.contract.loader import prefix_of
from conformance.errors import ContractError
from conformance.generate import (
    all_marker_names,
    build_scenarios,
    generate_scenarios,
    marker_name,
    scenario_markers,
)
from conformance.generate._common import Context
from conformance.generate.variants import EXTRA_VARIANTS, variants
from conformance.scenario import KINDS, LEVELS, Scenario

FIXTURE = Path(__file__).parent.parent / "data" / "contract_min"
SPEC_OPERATIONS = tuple(f"E{n}" for n in range(1, 19))
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MARKER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


@pytest.fixture(scope="module")
def scenarios(contract: Contract) -> tuple[Scenario, ...]:
    return generate_scenarios(contract)


@pytest.fixture(scope="module")
def by_id(scenarios: tuple[Scenario, ...]) -> dict[str, Scenario]:
    return {s.id: s for s in scenarios}


# ------------------------------------------------------------------------------- counts, coverage


def test_at_least_1500_scenarios(scenarios: tuple[Scenario, ...]) -> None:
    assert len(scenarios) >= 1500


def test_every_spec_operation_has_positive_and_negative_scenarios(
    scenarios: tuple[Scenario, ...],
) -> None:
    positive = Counter(s.operation for s in scenarios if not s.expect.rejects)
    negative = Counter(s.operation for s in scenarios if s.expect.rejects)
    for op in SPEC_OPERATIONS:
        assert positive[op] >= 1, f"{op} has no positive scenario"
        assert negative[op] >= 1, f"{op} has no negative scenario"


def test_every_operation_has_a_positive_scenario(
    contract: Contract, scenarios: tuple[Scenario, ...]
) -> None:
    positives = {s.operation for s in scenarios if s.kind == "positive"}
    assert positives == set(contract.operations)


def test_every_family_contributes(scenarios: tuple[Scenario, ...]) -> None:
    assert set(Counter(s.kind for s in scenarios)) == set(KINDS)


def test_every_rule_row_has_a_scenario_per_operation(
    contract: Contract, scenarios: tuple[Scenario, ...]
) -> None:
    generated = {(s.rule, s.operation) for s in scenarios if s.kind == "rule"}
    for rule in contract.rules:
        for op in rule.operations:
            assert (rule.id, op) in generated, f"{rule.id} on {op}"


def test_rule_scenarios_take_their_verdict_from_the_row(
    contract: Contract, scenarios: tuple[Scenario, ...]
) -> None:
    for scenario in (s for s in scenarios if s.kind == "rule"):
        rule = contract.rule(scenario.rule)
        assert scenario.spec == rule.spec and scenario.level == rule.level_on(scenario.operation)
        assert scenario.quotes == (rule.quotes if scenario.level == "must" else ())
        assert scenario.reading == (
            rule.reading_on(scenario.operation) if scenario.level == "should" else ""
        )
        assert scenario.expect.statuses == rule.expected_status
        assert scenario.expect.code == rule.expected_code
        assert scenario.param("check") == rule.check


def test_examples_of_the_issue_exist(by_id: dict[str, Scenario]) -> None:
    for expected in (
        "E16-creditorName-maxLength-71-rejected",
        "E16-creditorAddress.country-enum-ZZ-rejected",
        "E7-0.amount-maximum-2147483648-rejected",
        "E16-instructedAmount.amount-required-rejected",
        "E16-header-PSU-ID-missing-rejected",
        "E16-purposeCode-SALA-accepted",
        "E16-ndct-kid-mod11-accepted",
        "E18-ncbct-regulatory-accepted",
        "E17-periodic-monthly-variable-accepted",
        "E4-query.bookingStatus-pending-accepted",
        "E16-auth-stale-digest-rejected",
        "E16-deprecated-remittanceInformationStructured-accepted",
        "E12-without-v1-prefix-not-found",
    ):
        assert expected in by_id, expected


def test_payment_constraints_expect_format_error(scenarios: tuple[Scenario, ...]) -> None:
    payments = [s for s in scenarios if s.kind == "constraint" and s.operation == "E16"]
    body = [s for s in payments if s.mutation is not None and s.mutation.target == "body"]
    assert body and all(s.expect.code == "FORMAT_ERROR" for s in body)
    assert all(s.expect.statuses == (400,) and s.rule.startswith("SCH-") for s in body)


def test_signature_headers_are_left_to_the_auth_family(scenarios: tuple[Scenario, ...]) -> None:
    ids = {s.id for s in scenarios}
    assert "E16-header-Signature-missing-rejected" not in ids
    assert "E16-header-Digest-missing-rejected" not in ids
    assert {"E16-auth-no-signature-rejected", "E16-auth-no-digest-rejected"} <= ids
    assert "E12-auth-no-digest-rejected" not in ids  # no body


def test_variants_are_ones_the_factories_know(
    contract: Contract, scenarios: tuple[Scenario, ...]
) -> None:
    context = Context(contract)
    for scenario in scenarios:
        known = {*variants(contract.operations[scenario.operation], context), *EXTRA_VARIANTS}
        assert scenario.variant in known, f"{scenario.id}: unknown variant {scenario.variant!r}"


# ------------------------------------------------------------------------------- determinism, ids


def test_generation_is_pure_and_sorted(contract: Contract, scenarios: tuple[Scenario, ...]) -> None:
    again = build_scenarios(contract)
    assert again == scenarios and again is not scenarios
    assert [s.id for s in scenarios] == sorted(s.id for s in scenarios)
    assert generate_scenarios(contract) is scenarios  # cached per contract


def test_ids_are_unique_even_ignoring_case(scenarios: tuple[Scenario, ...]) -> None:
    folded = Counter(s.id.lower() for s in scenarios)
    assert [i for i, n in folded.items() if n > 1] == []


def test_ids_are_safe_pytest_ids_ending_in_the_outcome(scenarios: tuple[Scenario, ...]) -> None:
    for scenario in scenarios:
        assert SAFE_ID.match(scenario.id) and scenario.id.isascii(), scenario.id
        assert scenario.id.startswith(scenario.operation + "-"), scenario.id
        if scenario.kind in ("constraint", "header") and scenario.expect.rejects:
            assert scenario.id.endswith("-rejected"), scenario.id
        if scenario.kind == "positive":
            assert scenario.id.endswith("-accepted"), scenario.id


def test_scenarios_are_hashable_values(scenarios: tuple[Scenario, ...]) -> None:
    assert len({hash(s) for s in scenarios}) == len(scenarios)


# ------------------------------------------------------------------------------- traceability


def test_every_scenario_names_operation_rule_spec_and_level(
    contract: Contract, scenarios: tuple[Scenario, ...]
) -> None:
    for scenario in scenarios:
        assert scenario.operation in contract.operations
        assert scenario.level in LEVELS and scenario.kind in KINDS
        assert scenario.spec.startswith("spec "), scenario.id
        # the rule id's prefix is a listed requirement prefix
        assert prefix_of(scenario.rule, contract.spec_parts) is not None, scenario.id
        assert scenario.title.startswith(scenario.operation + " ")


def test_should_constraints_say_what_they_rest_on(scenarios: tuple[Scenario, ...]) -> None:
    """A payment constraint is only lowered to `should` by an assumption it carries."""
    constraints = [
        s
        for s in scenarios
        if s.kind == "constraint" and s.operation == "E17" and s.mutation is not None
    ]
    body = [s for s in constraints if s.mutation is not None and s.mutation.target == "body"]
    assert {s.level for s in body} == {"must", "should"}
    for scenario in body:
        assert (scenario.level == "should") == bool(scenario.assumptions), scenario.id


# ------------------------------------------------------------------------------- markers


def test_markers_name_operation_level_kind_rule_and_spec(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["E16-creditorName-maxLength-71-rejected"]
    assert scenario_markers(scenario) == ("E16", "must", "constraint", "SCH_maxLength", "spec_8")
    rule = by_id["PC-ERR-6-pending-payment-not-deletable-rejected"]
    assert scenario_markers(rule)[-2:] == ("spec_7_rule_6", "spec_3")


def test_all_marker_names_are_identifiers(scenarios: tuple[Scenario, ...]) -> None:
    names = all_marker_names(scenarios)
    assert names == tuple(sorted(set(names)))
    assert all(MARKER.match(name) for name in names)
    assert {"E1", "E18", "must", "should", "spec_7_rule_1", "SCH_required"} <= set(names)


def test_marker_name_of_compound_texts() -> None:
    assert marker_name("ERR-7-psu-id-malformed") == "ERR_7_psu_id_malformed"
    assert marker_name("spec 4.3 E16") == "spec_4_3_E16"
    with pytest.raises(ValueError):
        marker_name("--")


# ------------------------------------------------------------------------------- driven by data


def _copy_fixture(tmp_path: Path) -> Path:
    root = tmp_path / "schemas"
    shutil.copytree(FIXTURE, root)
    return root


def test_a_new_schema_constraint_becomes_a_scenario(tmp_path: Path) -> None:
    root = _copy_fixture(tmp_path)
    before = {s.id for s in build_scenarios(load_contract(root))}
    path = root / "types" / "payments.json"
    document = json.loads(path.read_text())
    document["$defs"]["PaymentRequest"]["properties"]["ultimateDebtor"] = {
        "type": "string",
        "maxLength": 70,
    }
    path.write_text(json.dumps(document))
    (tmp_path / "again").mkdir()
    moved = tmp_path / "again" / "schemas"
    shutil.copytree(root, moved)  # another directory: load_contract caches per directory
    after = {s.id for s in build_scenarios(load_contract(moved))}
    assert after - before == {
        "E16-ultimateDebtor-maxLength-71-rejected",
        "E16-ultimateDebtor-type-integer-rejected",
        "E18-ultimateDebtor-maxLength-71-rejected",
        "E18-ultimateDebtor-type-integer-rejected",
    }


def test_a_new_rule_row_becomes_a_scenario(tmp_path: Path) -> None:
    root = _copy_fixture(tmp_path)
    path = root / "rules.json"
    table = json.loads(path.read_text())
    table["rules"].append(
        {
            "id": "LIM-basket-size",
            "spec": "spec 8",
            "operations": ["E16"],
            "precondition": None,
            "action": "send eleven things",
            "expectedStatus": 400,
            "expectedCode": None,
            "stated": "refusal",
            "check": "check_limit",
            "quotes": ["8-basket"],
        }
    )
    path.write_text(json.dumps(table))
    by_id = {s.id: s for s in build_scenarios(load_contract(root))}
    new = by_id["E16-LIM-basket-size-rejected"]
    assert new.kind == "rule" and new.level == "must" and new.param("check") == "check_limit"
    assert new.quotes == ("8-basket",)
    # "refusal": the spec states the refusal, the status is the suite's choice
    assert not new.expect.status_stated and not new.expect.code_stated


def test_the_fixture_contract_generates_without_the_full_interface() -> None:
    scenarios = build_scenarios(load_contract(FIXTURE))
    assert scenarios and len({s.id for s in scenarios}) == len(scenarios)
    # flows need operations the fixture lacks: only the ones it can run are generated
    assert all(s.operation in {"AL", "E12", "E16", "E18", "PS", "SA"} for s in scenarios)


def test_duplicate_ids_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.generate as generate

    contract = load_contract(FIXTURE)
    positive = dict(generate.FAMILIES)["positive"]
    monkeypatch.setattr(generate, "FAMILIES", (("positive", positive), ("again", positive)))
    with pytest.raises(ContractError, match="generated twice"):
        generate.build_scenarios(contract)


def test_a_batch_run_leaving_periodic_payments_alone_is_must_with_its_sentence(
    by_id: dict[str, Scenario],
) -> None:
    """Spec 3 states it ("The sandbox advances payments (except periodic ones) ..."): a stated
    outcome is must, quoted (issue 29 item 10)."""
    chosen = by_id["E17-batch-run-leaves-periodic-unchanged"]
    assert (chosen.level, chosen.quotes, chosen.reading) == ("must", ("3-batch",), "")
