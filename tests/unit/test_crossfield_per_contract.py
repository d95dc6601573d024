"""``crossfield.checks_for`` per contract: each contract's own rule table, remembered per
(contract, operation), and the default contract when none is given."""

from __future__ import annotations

from pathlib import Path

from conformance.contract import crossfield, load_contract

FIXTURE = Path(__file__).parent.parent / "data" / "contract_min"


def test_each_contract_gets_the_checks_of_its_own_rule_table() -> None:
    real, fixture = load_contract(), load_contract(FIXTURE)
    assert crossfield.checks_for("E16", real)
    assert crossfield.check_amount_fraction_digits in crossfield.checks_for("E16", real)
    assert crossfield.checks_for("E16", fixture) == ()  # its rule rows name no cross-field check
    assert crossfield.checks_for("E16") == crossfield.checks_for("E16", real)
    assert crossfield.checks_for("E12", real) == ()


def test_answers_are_the_same_object_on_the_second_call() -> None:
    real = load_contract()
    assert crossfield.checks_for("E17", real) is crossfield.checks_for("E17", real)
