"""Issue 39's "done when": for every requirement a scenario breaks on the TPP's side, the grade its
verdict carries and the grade the traffic judge gives the same break in the same exchange are
equal. Each scenario runs against the faithful reference server in this process; its exchanges
then go through a fresh :class:`TrafficJudge`, and the judge's TPP findings of the scenario's
break (matched by the judge's rule for it) must carry the scenario's level, quotes for a must.

Both sides grade by the contract's requirement (``Contract.requirement``), so this holds by
construction where they ask the same one; the test is what keeps it so, and it catches a judge
that names another requirement for the break (a row of ``rules.json`` sharing a check) or
detects a different break (the place of a schema error)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import pytest

from conformance.checks import ConformanceFailure, NotApplicable
from conformance.contract import Contract
from conformance.contract.crossfield import CHECKS
from conformance.report.verdicts import Finding
from conformance.runners import run_scenario
from conformance.runners.context import RunContext
from conformance.scenario import Scenario
from conformance.traffic.judge import TrafficJudge
from conformance.traffic.model import TPP
from reference_server.app import Application
from reference_server.transport.http import start

from .conftest import build_context

#: The judge's rule for a broken body of ``facts.BODY_CASES`` and the other robustness cases.
ROBUSTNESS_RULES = {
    "ROB-malformed-json": "TPP-body-json",
    "ROB-invalid-utf8": "TPP-body-json",
    "ROB-empty-body": "TPP-body-missing",
    "ROB-wrong-content-type": "TPP-body-content-type",
    "ROB-oversized-body": "TPP-body-oversized",
    "ROB-unknown-path": "TPP-path",
    "ROB-wrong-method": "TPP-method",
    "ROB-allow-header": "TPP-method",
    "ROB-trace-not-allowed": "TPP-method",
}
#: The judge's rules of a schema error of the request.
SCHEMA_RULES = ("TPP-body-", "TPP-query-", "TPP-header-format")
#: Rows of ``rules.json`` without a cross-field check whose break the judge sees only as the
#: schema error at the bound's place: the schema's annotation there grades it as the row does.
AS_SCHEMA_ERRORS = (
    "LIM-basket-max-10-payments",
    "LIM-amount-19-integer-digits",
    "ERR-7-customer-type-invalid",
)
#: The kinds whose scenarios break a rule of the request (the TPP's side).
KINDS = ("header", "constraint", "robustness", "rule", "auth")
#: The judge's rules of spec 5 (``request_rules``): an auth scenario's break. A header the
#: scenario leaves out may also be one of the operation's required set (``TPP-header-required``),
#: a second requirement the same request breaks, graded by its own.
AUTH_RULES = (
    "TPP-signature-",
    "TPP-certificate-",
    "TPP-digest-",
    "TPP-date-",
    "TPP-psu-",
    "TPP-replay",
)


def _judged_as(scenario: Scenario) -> Callable[[Finding], bool] | None:
    """Which of the judge's findings are of the scenario's break (None: the judge cannot see
    it in the request, such as an unknown resource id)."""
    rule = scenario.rule
    mutation = scenario.mutation
    if scenario.kind == "header":
        name = str(mutation.pointer[0]).lower() if mutation is not None else ""
        if rule == "HDR-corporate-id":
            return lambda f: f.rule.startswith("ERR-3-")
        wanted = "TPP-header-required" if rule == "HDR-required" else "TPP-header-format"
        return lambda f: f.rule == wanted and f.place.lower() == name
    if scenario.kind == "constraint":
        assert mutation is not None
        if mutation.target == "body":  # the keyword broken (a value may break others too)
            return lambda f: f.rule == f"TPP-body-{mutation.keyword}"
        prefix = {"query": "TPP-query-", "path": "TPP-product"}
        return lambda f: f.rule.startswith(prefix[mutation.target])
    if scenario.kind == "auth":
        return lambda f: f.rule.startswith(AUTH_RULES)
    if scenario.kind == "robustness":
        judged = ROBUSTNESS_RULES.get(rule)
        return None if judged is None else lambda f: f.rule == judged
    return lambda f: f.rule == rule


def _sample(contract: Contract, scenarios: dict[str, Scenario], *, every: bool) -> list[Scenario]:
    """The TPP-side kinds' scenarios: ``every`` one, or one per rule id, level and kind of
    operation (its family, whether spec 4.1 numbers or names it)."""
    seen: set[tuple[object, ...]] = set()
    chosen = []
    for scenario in scenarios.values():
        op = contract.operations[scenario.operation]
        key = (
            (scenario.id,)
            if every
            else (scenario.rule, scenario.level, op.family, op.numbered, op.unnamed)
        )
        if scenario.kind in KINDS and key not in seen:
            seen.add(key)
            chosen.append(scenario)
    return chosen


@pytest.fixture
def own_context(contract: Contract) -> Iterator[RunContext]:
    """A reference server and context of this test's own: the scenarios it runs leave data (a
    logical duplicate of another test's payment) the session's server must not keep."""
    logging.getLogger("reference_server").setLevel(logging.CRITICAL)
    running = start(Application())
    context, client = build_context(contract, running.url)
    try:
        yield context
    finally:
        client.close()
        running.stop()


def _judge(contract: Contract, context: RunContext, scenario: Scenario) -> list[Finding] | None:
    """The judge's TPP findings over the scenario's exchanges (None: not applicable here)."""
    context.exchanges.clear()
    try:
        run_scenario(scenario, context)
    except NotApplicable:
        return None
    except ConformanceFailure:
        pass  # the faithful server passes them all; a failure is another test's business
    judge = TrafficJudge(contract)
    found: list[Finding] = []
    for exchange in list(context.exchanges):
        found += [f for f in judge.judge(exchange).findings if f.side == TPP]
    return found


def _of_the_break(contract: Contract, scenario: Scenario, found: list[Finding]) -> list[Finding]:
    """The judge's findings of the scenario's break: the judge's rule for it; for a row of
    ``rules.json``, a row sharing its cross-field check (the judge names one of them), or
    without one, the schema error its break also is (of a body member, a query parameter, a
    header)."""
    matches = _judged_as(scenario)
    assert matches is not None
    ours = [finding for finding in found if matches(finding)]
    if ours or scenario.kind != "rule":
        return ours
    check = contract.rule(scenario.rule).check
    if check in CHECKS:
        rows = {row.id for row in contract.rules if row.check == check}
        return [finding for finding in found if finding.rule in rows]
    return [finding for finding in found if finding.rule.startswith(SCHEMA_RULES)]


def _disagreement(scenario: Scenario, ours: list[Finding]) -> str:
    """How the judge's grade of the break differs from the scenario's ("" when it does not)."""
    if {finding.level for finding in ours} != {scenario.level}:
        judged = [(finding.rule, finding.level) for finding in ours]
        return f"{scenario.id}: {scenario.level} in the suite, {judged} by the judge"
    if scenario.level == "must" and not all(finding.quotes for finding in ours):
        return f"{scenario.id}: a must of the judge without the spec's quotes"
    return ""


@pytest.mark.parametrize("every", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_scenario_and_the_traffic_judge_grade_the_same_break_alike(
    contract: Contract, scenarios: dict[str, Scenario], own_context: RunContext, every: bool
) -> None:
    """One scenario per requirement and kind of operation (every scenario in the slow tier)."""
    compared: dict[str, int] = {}
    differ: list[str] = []
    for scenario in _sample(contract, scenarios, every=every):
        if _judged_as(scenario) is None:
            continue
        found = _judge(contract, own_context, scenario)
        if not found:
            continue  # nothing of the TPP's: a break the bank answers, or not applicable
        ours = _of_the_break(contract, scenario, found)
        if not ours:
            differ.append(f"{scenario.id}: the judge names {[f.rule for f in found]}")
            continue
        disagreement = _disagreement(scenario, ours)
        compared[scenario.rule] = compared.get(scenario.rule, 0) + 1
        differ += [disagreement] if disagreement else []
    assert differ == [], "\n".join(differ)
    # every requirement of the catalogue that breaks a request was compared
    for requirement in ("HDR-required", "HDR-corporate-id", *ROBUSTNESS_RULES):
        if requirement not in ("ROB-unknown-path", "ROB-allow-header", "ROB-trace-not-allowed"):
            assert compared.get(requirement), f"{requirement} was never compared"
    # rows the judge sees only as a schema error (no cross-field check): the schema grades the
    # bound as the row does (issue 39: once graded apart, a reading recorded over a stated bound)
    for requirement in AS_SCHEMA_ERRORS:
        assert compared.get(requirement), f"{requirement} was never compared"
    assert sum(1 for rule in compared if rule.startswith("SCH-")) >= 10
    assert sum(1 for rule in compared if rule.startswith("HDR-")) >= 5
    assert len([rule for rule in compared if rule in {r.id for r in contract.rules}]) >= 15


@pytest.mark.parametrize("rule", AS_SCHEMA_ERRORS)
def test_each_row_seen_as_a_schema_error_is_a_row_without_a_check_of_the_judge(
    contract: Contract, rule: str
) -> None:
    """The rows the judge sees only as schema errors exist and have no cross-field check (with
    one, the judge would name the row)."""
    assert contract.rule(rule).check not in CHECKS
