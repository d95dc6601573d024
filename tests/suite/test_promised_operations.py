"""The operations interface.md neither shows nor names are the bank's promise (issue 29 item
3): BR, BS, PCA and SI are judged at should unless the profile promises them
(``[operations] promised``); a promised one that fails is a must failure for that bank, and its
report names the promise, never a quote of the spec."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from conformance.bankside.client import TargetClient
from conformance.checks import PROMISE_GROUND, ConformanceFailure
from conformance.contract import Contract
from conformance.errors import ProfileError
from conformance.findings import ShouldFindings, collecting_findings
from conformance.profile import OperationPromises, load_profile
from conformance.report.verdicts import Finding, graded
from conformance.runners import run_scenario
from conformance.runners.context import RunContext
from conformance.runners.promises import judge_step
from conformance.scenario import Scenario
from reference_server.app import Application
from reference_server.transport.http import RunningServer, start
from suite.conftest import build_context

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "spec" / "interface.md"
UNNAMED = {"BR", "BS", "PCA", "SI"}
WRONG_KEY = "BR-auth-wrong-key-rejected"


def test_the_four_operations_are_the_unnamed_ones_and_the_spec_has_none_of_their_paths(
    contract: Contract,
) -> None:
    unnamed = {op_id for op_id, op in contract.operations.items() if op.unnamed}
    assert unnamed == UNNAMED
    spec = SPEC.read_text(encoding="utf-8")
    for op_id in sorted(unnamed):
        path = contract.operations[op_id].path
        assert path not in spec, op_id
        assert re.sub(r"\{[^}]*\}", "", path).rstrip("/") not in spec, op_id


def test_their_scenarios_are_should_and_the_stated_ones_keep_their_sentences(
    contract: Contract, scenarios: dict[str, Scenario]
) -> None:
    on_unnamed = [s for s in scenarios.values() if s.operation in UNNAMED]
    assert on_unnamed and all(s.level == "should" for s in on_unnamed)
    stated = [s for s in on_unnamed if s.quotes]
    assert WRONG_KEY in {s.id for s in stated}
    for chosen in stated:
        assert chosen.reading == contract.operations[chosen.operation].unnamed_reading
    # the spec's own operations are untouched: an E16 auth scenario is still must
    assert scenarios["E16-auth-wrong-key-rejected"].level == "must"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bank.toml"
    path.write_text('base_url = "https://bank.test"\n' + text, encoding="utf-8")
    return path


def test_the_profile_key_is_read_and_a_promised_optional_operation_is_offered(
    tmp_path: Path, contract: Contract
) -> None:
    profile = load_profile(_write(tmp_path, '[operations]\npromised = ["BR", "SI"]\n'))
    promises = profile.operation_promises
    assert promises.promises(contract.operations["BR"])
    assert not promises.promises(contract.operations["BS"])
    assert profile.unsupported_reason(contract.operations["SI"]) is None
    assert "operations.promised" in (
        load_profile(_write(tmp_path, "")).unsupported_reason(contract.operations["SI"]) or ""
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[operations]\npromised = ["PS"]\n', "only an operation interface.md neither shows"),
        ('[operations]\npromised = ["BX"]\n', "BX"),
        ('[operations]\nunsupported = ["BR"]\npromised = ["BR"]\n', "does not offer"),
        ('[operations]\nsupported = ["E16"]\npromised = ["BS"]\n', "does not offer"),
    ],
)
def test_a_wrong_promise_is_refused(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        load_profile(_write(tmp_path, text))


def _faulty_context(
    contract: Contract, promised: frozenset[str]
) -> tuple[RunContext, tuple[RunningServer, TargetClient]]:
    running = start(Application(faults=("accept-any-signature",)))
    context, client = build_context(
        contract, running.url, operation_promises=OperationPromises(promised)
    )
    return context, (running, client)


def _failure(contract: Contract, chosen: Scenario, promised: frozenset[str]) -> ConformanceFailure:
    context, (running, client) = _faulty_context(contract, promised)
    try:
        with pytest.raises(ConformanceFailure) as failed:
            run_scenario(chosen, context)
    finally:
        client.close()
        running.stop()
    return failed.value


def _graded(failure: ConformanceFailure, chosen: Scenario) -> tuple[Finding, ...]:
    finding = Finding("must", failure.title, failure.spec, promise=failure.promise)
    return graded([finding], chosen.level, reading=chosen.reading)


def test_a_failure_on_an_operation_not_promised_is_should(
    contract: Contract, scenarios: dict[str, Scenario]
) -> None:
    chosen = scenarios[WRONG_KEY]
    failure = _failure(contract, chosen, frozenset())
    assert failure.promise == ""
    assert [f.level for f in _graded(failure, chosen)] == ["should"]
    assert "Our reading (should): BR (Get signing basket) is an operation" in str(failure)


def test_a_failure_on_a_promised_operation_is_the_banks_must_naming_its_promise(
    contract: Contract, scenarios: dict[str, Scenario]
) -> None:
    chosen = scenarios[WRONG_KEY]
    failure = _failure(contract, chosen, frozenset({"BR"}))
    assert "[operations] promised" in failure.promise
    assert [f.level for f in _graded(failure, chosen)] == ["must"]
    text = str(failure)
    assert PROMISE_GROUND + "the bank promises BR (Get signing basket" in text
    assert "Quoted: " not in text  # the spec does not state it: never a quote


class _Context:
    """What ``judge_step`` reads of a run context: the contract's operation and the profile."""

    def __init__(self, profile_promises: frozenset[str], base: RunContext) -> None:
        self.profile = dataclasses.replace(
            base.profile, operation_promises=OperationPromises(profile_promises)
        )


def _refused() -> None:
    raise ConformanceFailure("BS answered HTTP 404", spec="spec 2.4", sent=None, expected="200")


@pytest.mark.parametrize(("promised", "promise"), [(frozenset(), False), ({"BS"}, True)])
def test_a_failed_step_on_an_unnamed_operation_ends_at_should_unless_promised(
    context: RunContext, promised: frozenset[str], promise: bool
) -> None:
    step = _Context(frozenset(promised), context)
    operation = context.contract.operations["BS"]
    with collecting_findings(), pytest.raises(ConformanceFailure) as failed:
        judge_step(step, operation, _refused)  # type: ignore[arg-type]
    assert isinstance(failed.value, ShouldFindings) is not promise
    assert bool(failed.value.promise) is promise
    # a step on the spec's own operation is judged as it always was: must
    with collecting_findings(), pytest.raises(ConformanceFailure) as plain:
        judge_step(step, context.contract.operations["PS"], _refused)  # type: ignore[arg-type]
    assert not isinstance(plain.value, ShouldFindings) and plain.value.promise == ""
