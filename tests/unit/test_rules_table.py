"""The error-rule table (``schemas/rules.json``) against spec 7, spec 8 and spec 2.7.

The loader already refuses a malformed row; these tests read the raw file as well, so that a
row the loader would silently normalise (a duplicate id, a spec reference to a part the spec does
not have) is still caught, and they prove that the table covers every rule the spec states.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from conformance.contract import DEFAULT_ROOT, Contract, Rule, load_contract
from conformance.contract.loader import prefix_of

#: The parts of the spec (its headings): a reference must name one of them.
SPEC_PARTS = frozenset(
    {"1", "2", "3", "4", "5", "6", "7", "8", "9"}
    | {f"2.{n}" for n in range(1, 10)}
    | {f"4.{n}" for n in range(1, 4)}
)
_REFERENCE = re.compile(r"^spec ([1-9](?:\.[1-9])?)(?![.0-9])")
#: Cross-field rules of the payment bodies: spec 2.7 (and the amount rule of spec 2.1, the KID
#: check digit of spec 7 rule 2), as ``conformance.contract.crossfield`` implements them.
CROSS_FIELD_RULES = {
    "XF-kid-check-digit": {"E16"},
    "XF-remittance-exclusive": {"E16"},
    "XF-debtor-account-one-of": {"E16"},
    "XF-ncbct-creditor-agent": {"E18"},
    "XF-ncbct-regulatory-reporting": {"E18"},
    "XF-amount-minor-units": {"E16", "E17", "E18"},
    "XF-months-unique": {"E17"},
}
#: One row per line of the spec 8 table (and its sandbox date rule): id → operations it covers.
LIMIT_RULES = {
    "LIM-basket-max-10-payments": {"E1"},
    "LIM-transaction-details-daily-calls-without-ip": {"E8"},
    "LIM-transaction-details-consent-max-90-days": {"E8"},
    "LIM-sca-renewal-180-days": {"AL", "AT", "E8"},
    "LIM-history-without-sca-90-days": {"AT"},
    "LIM-default-page-size-200": {"AT"},
    "LIM-pagination-links-page-size-200": {"AT"},
    "LIM-limit-at-least-1": {"E3", "E4"},
    "LIM-remittance-unstructured-max-140": {"E16", "E17", "E18"},
    "LIM-remittance-unstructured-non-empty": {"E16", "E17", "E18"},
    "LIM-creditor-name-max-70": {"E16", "E17", "E18"},
    "LIM-ultimate-debtor-max-70": {"E16", "E17"},
    "LIM-bban-max-30": {"E16", "E17", "E18"},
    "LIM-iban-max-34": {"E17", "E18"},
    "LIM-end-to-end-id-max-35": {"E8"},
    "LIM-tpp-message-text-max-512": {"E16", "E17", "E18"},
    "LIM-psu-message-max-512": {"E16", "E17", "E18"},
    "LIM-bank-transaction-code-length-request": {"E7"},
    "LIM-bank-transaction-code-length-response": {"E8"},
    "LIM-regulatory-reporting-nok-100000": {"E18"},
    "LIM-account-name-longer-name-70": {"AL"},
}


@pytest.fixture(scope="module")
def contract() -> Contract:
    return load_contract()


@pytest.fixture(scope="module")
def raw_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(
        (DEFAULT_ROOT / "rules.json").read_text(encoding="utf-8")
    )["rules"]
    return rows


def references(spec: str) -> list[str]:
    """The parts a spec field names: ``"spec 8, spec 4.3 E1"`` → ``["8", "4.3"]``."""
    parts = []
    for piece in spec.split(","):
        found = _REFERENCE.match(piece.strip())
        assert found, f"{piece.strip()!r} is not a spec reference"
        parts.append(found.group(1))
    return parts


def spec_part(contract: Contract, requirement_id: str) -> str:
    """The spec part of a requirement id, by its prefix listed in ``spec-parts.json``."""
    prefix = prefix_of(requirement_id, contract.spec_parts)
    assert prefix is not None, f"{requirement_id!r} has no prefix listed in spec-parts.json"
    return contract.spec_parts[prefix]


def rows_for(contract: Contract, spec: str) -> list[Rule]:
    return [rule for rule in contract.rules if spec in [p.strip() for p in rule.spec.split(",")]]


def test_raw_ids_are_unique(raw_rows: list[dict[str, Any]]) -> None:
    ids = [row["id"] for row in raw_rows]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_loader_keeps_every_row(contract: Contract, raw_rows: list[dict[str, Any]]) -> None:
    assert [rule.id for rule in contract.rules] == [row["id"] for row in raw_rows]


def test_every_row_is_well_formed(contract: Contract) -> None:
    problems = []
    for rule in contract.rules:
        if rule.level not in ("must", "should"):
            problems.append(f"{rule.id}: level {rule.level}")
        if not rule.operations or not set(rule.operations) <= set(contract.operations):
            problems.append(f"{rule.id}: operations {rule.operations}")
        if not rule.expected_status or not all(100 <= s <= 599 for s in rule.expected_status):
            problems.append(f"{rule.id}: status {rule.expected_status}")
        if not (rule.action.strip() and re.fullmatch(r"[a-z_][a-z0-9_]*", rule.check)):
            problems.append(f"{rule.id}: action/check {rule.check!r}")
        if rule.expected_code is not None and not re.fullmatch(
            r"[A-Z][A-Z0-9_]+", rule.expected_code
        ):
            problems.append(f"{rule.id}: code {rule.expected_code!r}")
    assert problems == []


def test_every_row_names_an_existing_spec_part(contract: Contract) -> None:
    for rule in contract.rules:
        assert set(references(rule.spec)) <= SPEC_PARTS, rule.spec


def test_every_row_id_has_a_listed_prefix(contract: Contract) -> None:
    for rule in contract.rules:
        part = spec_part(contract, rule.id)
        assert set(references(part)) <= SPEC_PARTS, (rule.id, part)


@pytest.mark.parametrize("number", range(1, 9), ids=lambda n: f"spec-7-rule-{n}")
def test_every_spec_7_rule_has_a_row(contract: Contract, number: int) -> None:
    rows = rows_for(contract, f"spec 7 rule {number}")
    assert rows, f"no row of rules.json names spec 7 rule {number}"
    assert any(rule.id.startswith(f"ERR-{number}-") for rule in rows)


def test_spec_7_rows_with_a_code_use_the_codes_the_spec_gives(contract: Contract) -> None:
    # Spec 7 rule 1 names REFERENCE_MIX_INVALID; rule 2 the KID errors (400, not 401).
    assert {r.expected_code for r in rows_for(contract, "spec 7 rule 1")} == {
        "REFERENCE_MIX_INVALID"
    }
    assert all(r.expected_status == (400,) for r in rows_for(contract, "spec 7 rule 2"))
    assert all(r.expected_status == (200,) for r in rows_for(contract, "spec 7 rule 8"))


@pytest.mark.parametrize("rule_id", sorted(CROSS_FIELD_RULES))
def test_cross_field_rule_exists(contract: Contract, rule_id: str) -> None:
    rule = contract.rule(rule_id)
    assert set(CROSS_FIELD_RULES[rule_id]) <= set(rule.operations)
    assert spec_part(contract, rule_id) == "spec 2.7"


def test_every_cross_field_rule_named_by_a_type_exists(contract: Contract) -> None:
    named: set[str] = set()

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            named.update(node.get("x-crossFieldRules", ()))
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(dict(contract.types))
    missing = sorted(rule_id for rule_id in named if rule_id not in {r.id for r in contract.rules})
    assert missing == []


@pytest.mark.parametrize("rule_id", sorted(LIMIT_RULES))
def test_spec_8_limit_has_a_row(contract: Contract, rule_id: str) -> None:
    rule = contract.rule(rule_id)
    assert "8" in references(rule.spec), rule.spec
    assert set(LIMIT_RULES[rule_id]) <= set(rule.operations)


def test_spec_8_sandbox_date_rule_has_rows(contract: Contract) -> None:
    rows = [r for r in contract.rules if r.id.startswith("SB-dates-") and "8" in references(r.spec)]
    assert {"E5", "E7"} <= {op for rule in rows for op in rule.operations}
