"""The conformance suite: one test, one pytest item per scenario (made by the plugin)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from conformance.checks import ConformanceFailure, NotApplicable, SetUpFailure
from conformance.errors import ConformanceError
from conformance.exchange import Exchange
from conformance.findings import ShouldFindings
from conformance.problems import ACCEPTED, Breach, breach_of_mutation, cause_id, unique_problems
from conformance.report import allure as allure_report
from conformance.report.causes import specific_first
from conformance.report.masking import scrub
from conformance.report.verdicts import (
    BLOCKED_PREFIX,
    NOT_APPLICABLE_PREFIX,
    WAIVED_PREFIX,
    Finding,
    ReportedFailure,
    cause_lines,
    graded,
    not_judged_properties,
    reproduce_line,
)
from conformance.runners import Runner
from conformance.runners.context import RunContext
from conformance.runners.pool import run_in_turn
from conformance.scenario import Scenario

pytestmark = pytest.mark.conformance


def test_scenario(
    scenario: Scenario,
    conformance_context: RunContext,
    conformance_runner: Runner,
    request: pytest.FixtureRequest,
) -> None:
    ctx = conformance_context
    operation = ctx.contract.operations.get(scenario.operation)
    allure_report.label_scenario(
        scenario, operation.name if operation is not None else "", ctx.contract
    )
    unsupported = ctx.profile.unsupported_reason(ctx.contract.operations[scenario.operation])
    if unsupported is not None:
        pytest.skip(NOT_APPLICABLE_PREFIX + unsupported)
    waived = ctx.profile.waiver_for(scenario.id)
    if waived is not None:
        pytest.skip(WAIVED_PREFIX + waived)
    ctx.exchanges.clear()
    judged: list[Exchange] = []
    try:
        run_in_turn(scenario, ctx, conformance_runner)  # or the run the worker's pool made ahead
    except NotApplicable as verdict:
        # A control the target lacks: the reports list the scenario as not judged here.
        request.node.user_properties.extend(not_judged_properties(verdict.supply))
        pytest.skip(NOT_APPLICABLE_PREFIX + verdict.reason)
    except SetUpFailure as refused:
        judged = [*refused.related, *((refused.sent,) if refused.sent is not None else ())]
        allure_report.attach_reproduction(allure_report.reproduce_commands(judged))
        pytest.skip(BLOCKED_PREFIX + scrub(refused.title))
    except ConformanceFailure as failure:
        judged = [*failure.related, *((failure.sent,) if failure.sent is not None else ())]
        hint = _query_name_hint(scenario, ctx)
        findings = _findings(failure, scenario, operation.family if operation else "", hint)
        shown = graded(findings, scenario.level, reading=scenario.reading)
        allure_report.attach_findings(shown)
        text = _reported_text(failure, judged, ctx)
        raise ReportedFailure(
            scrub(text) + cause_lines(shown),
            findings,
            always_must=failure.always_must,
            replay=reproduce_line(text),  # unmasked: its values are kept apart from the reports
        ) from None
    except ConformanceError as error:
        pytest.fail(scrub(f"conformance: {error.message}"), pytrace=False)
    finally:
        # A failure may judge an exchange made before this scenario (shared set-up data).
        earlier = [e for e in judged if not any(e is seen for seen in ctx.exchanges)]
        allure_report.attach_exchanges([*earlier, *ctx.exchanges])


def _query_name_hint(scenario: Scenario, ctx: RunContext) -> str:
    """For a scenario that breaks a query parameter whose name spec 4.3 does not state (an
    operation it only references, such as AT) and that the profile's ``[query.<op>]`` does not
    name: the words saying that the profile may be the cause (issue 42); else ""."""
    operation = ctx.contract.operations.get(scenario.operation)
    breach = breach_of_mutation(scenario.mutation)
    if operation is None or operation.numbered or breach is None or breach.target != "query":
        return ""
    if breach.place in ctx.profile.query_names.get(operation.id, {}):
        return ""
    return (
        f"; spec 4.3 does not name {operation.id}'s query parameters and the profile's "
        f"[query.{operation.id}] does not name `{breach.place}`: if the bank calls it otherwise "
        "(dateFrom for fromDate), the profile may be the cause (`conformance discover` probes "
        "the names)"
    )


def _findings(
    failure: ConformanceFailure, scenario: Scenario, family: str, hint: str = ""
) -> list[Finding]:
    """The failure's findings by tier, one per problem it found (its place and value) with the
    problem's cause: a :class:`ShouldFindings` is the should findings alone; any other failure
    is must findings, with the should findings recorded before it. ``family``: the scenario's
    operation family, which an acceptance of a body field is grouped by; ``hint`` is added to
    each should finding's detail (:func:`_query_name_hint`)."""
    if isinstance(failure, ShouldFindings):
        shoulds: Sequence[ConformanceFailure] = failure.findings
        musts: list[Finding] = []
    else:
        shoulds = failure.should_findings
        musts = _of_problems("must", failure, scenario, family, quotes=failure.quotes)
    return musts + [
        finding
        for item in shoulds
        for finding in _of_problems(
            "should", item, scenario, family, item.reading, item.quotes, hint=hint
        )
    ]


def _of_problems(
    level: str,
    failure: ConformanceFailure,
    scenario: Scenario,
    family: str,
    reading: str = "",
    quotes: Sequence[str] = (),
    *,
    hint: str = "",
) -> list[Finding]:
    rule = scenario.rule
    breach: Breach | None = failure.breach or breach_of_mutation(scenario.mutation)
    broken = breach.key(family) if breach is not None else ""
    return [
        Finding(
            level,
            scrub(_detail(problem.check, problem.detail, breach, scenario) + hint),
            failure.spec,
            reading,
            specific_first(quotes, _place(problem.check, problem.place, breach)),
            cause_id(problem, rule, broken),
            failure.promise if level == "must" else "",
        )
        for problem in unique_problems(failure.problems, rule)
    ]


def _place(check: str, place: str, breach: Breach | None) -> str:
    """Where the problem is: for an acceptance, the place the request broke."""
    return breach.place if check == ACCEPTED and breach is not None else place


def _detail(check: str, detail: str, breach: Breach | None, scenario: Scenario) -> str:
    """An acceptance names what the request broke (its cause is that break); where no field
    broke (a rule on a state: deleting a payment in PDNG), what was done in which state."""
    if check == ACCEPTED and breach is not None:
        return f"{breach.words()}: {detail}"
    if check == ACCEPTED:
        done = _state_and_operation(scenario)
        return f"{done}: {detail}" if done else detail
    return detail


def _state_and_operation(scenario: Scenario) -> str:
    """``cancel the payment (PC: DELETE ...) given a payment whose status (PS) reads PDNG``:
    a rule row's action and the first clause of its precondition ("" for another scenario)."""
    action = str(scenario.param("action", "") or "")
    state = str(scenario.param("precondition", "") or "").split(";", 1)[0].strip()
    if not action:
        return ""
    return f"{action} given {state}" if state and state != "none" else action


def _reported_text(failure: ConformanceFailure, judged: Sequence[Exchange], ctx: RunContext) -> str:
    """The failure's message (to be masked); the replay commands attached to Allure, and named
    in the message too when the check named none (it names the judged exchanges)."""
    commands = allure_report.reproduce_commands(judged or ctx.exchanges[-1:])
    allure_report.attach_reproduction(commands)
    text = str(failure)
    if commands and not judged:
        text += "\n\nReproduce the scenario's last exchange with:\n" + "\n".join(
            f"    {command}" for command in commands
        )
    return text
