"""Runners: one per scenario kind, each turning a :class:`~conformance.scenario.Scenario` into
requests to the target and a verdict (ARCHITECTURE.md, "One scenario").

The plugin calls :func:`run_scenario` once per test item with a :class:`RunContext` built once
per worker (one client, one data factory, one SCA step). A runner either returns (the target
conforms), raises :class:`NotApplicable` (the target declares the operation or product
unsupported, or the scenario needs a control the target lacks: the report says "not
applicable", never "passed"), or raises :class:`~conformance.checks.ConformanceFailure` (what
was sent, what came back, what the spec says, under the scenario's requirement).

Every exchange of a scenario, set-up included, ends up in ``RunContext.exchanges`` for the
report, whatever the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from types import MappingProxyType
from typing import TYPE_CHECKING

from conformance.bankside.trace import tagged
from conformance.checks import ConformanceFailure, NotApplicable
from conformance.contract.releases import changes_after
from conformance.findings import ShouldFindings, collecting_findings
from conformance.runners import (
    auth,
    constraint,
    flow,
    header,
    positive,
    robustness,
    rule,
    version,
)
from conformance.runners.context import RunContext, Runner
from conformance.runners.promises import keep_promise

if TYPE_CHECKING:
    from conformance.scenario import Scenario

__all__ = ["RUNNERS", "RunContext", "Runner", "refused_alone", "run_scenario"]

#: The scenario kind → runner table (one runner per kind of ``conformance.scenario.KINDS``).
RUNNERS: Mapping[str, Runner] = MappingProxyType(
    {
        "positive": positive.run,
        "constraint": constraint.run,
        "header": header.run,
        "auth": auth.run,
        "rule": rule.run,
        "flow": flow.run,
        "version": version.run,
        "robustness": robustness.run,
    }
)


def _require_release(scenario: Scenario, ctx: RunContext) -> None:
    """NotApplicable when the scenario judges a change spec 9 dates after the profile's
    ``release`` (``schemas/releases.json``), naming that release."""
    release = ctx.profile.lifecycle.release
    steps = (scenario.operation, *scenario.param("steps", ()))
    later = changes_after(ctx.contract, release, scenario.id, scenario.rule, steps)
    if later:
        first = later[0]
        said = " ".join(quote.text for quote in ctx.contract.quoted(first.quotes[:1]))
        raise NotApplicable(
            f"the scenario judges {first.change}, which release {first.release} added "
            f'(spec 9: "{said}"), and the profile says the bank runs release {release}'
        )


def _require_explicit_start(scenario: Scenario, ctx: RunContext) -> None:
    """NotApplicable for a scenario whose PA is to start a payment's SCA at a bank that starts
    it at the payment's creation (``[sca] start``): spec 4.1 only implies PA, and such a bank may
    answer an explicit start of an authorisation already started as "already started". The
    flows that start a payment's SCA take the creation's link themselves instead."""
    settings = ctx.profile.sca
    if (
        scenario.operation == "PA"
        and scenario.kind != "flow"
        and settings.starts_at_creation
        and any(200 <= status < 300 for status in scenario.expect.statuses)
    ):
        raise NotApplicable(
            f"the profile says a payment's SCA starts at its creation ([sca] start = "
            f'"{settings.start}"), so PA would start an authorisation already started, which '
            "the bank may answer as such (spec 4.1 only implies PA); the creation's SCA is "
            "judged by the payment scenarios"
        )


def _step_not_needed(op_id: str, ctx: RunContext) -> bool:
    """Whether a flow's step ``op_id`` is left out at this bank: PA where the payment's own
    creation starts its SCA (``[sca] start``), a consent operation where the consent is given at
    the first account access (``[consent] model = "first-access"``)."""
    if op_id == "PA" and ctx.profile.sca.starts_at_creation:
        return True
    family = ctx.contract.operations[op_id].family
    return family == "consents" and ctx.profile.consent.at_first_access


def run_scenario(scenario: Scenario, ctx: RunContext) -> None:
    """Run one scenario against the target; raise NotApplicable or ConformanceFailure.

    An operation the profile does not support (the scenario's own, or one of the steps a flow
    names in ``params["steps"]``) makes it NotApplicable with the profile's reason, and so does
    a change spec 9 dates after the profile's ``release`` (``schemas/releases.json``).
    A failure is reported under the scenario's requirement (rule id, spec part, level), as the
    bank's broken promise where it is one (``runners.promises``). Every
    exchange made meanwhile (set-up included) is appended to ``ctx.exchanges``.
    """
    try:
        runner = RUNNERS[scenario.kind]
    except KeyError:
        raise ValueError(f"scenario {scenario.id} has an unknown kind {scenario.kind!r}") from None
    ctx.client.take_exchanges()
    try:
        with tagged(scenario.id):  # the self-check's recording run (bankside/trace.py)
            _run_tagged(scenario, ctx, runner)
    except ConformanceFailure as failure:
        raise failure.for_scenario(scenario) from None
    finally:
        ctx.exchanges.extend(ctx.client.take_exchanges())


def _run_tagged(scenario: Scenario, ctx: RunContext, runner: Runner) -> None:
    for op_id in (scenario.operation, *scenario.param("steps", ())):
        if op_id != scenario.operation and _step_not_needed(op_id, ctx):
            continue
        reason = ctx.unsupported_reason(op_id)
        if reason is not None:
            raise NotApplicable(reason)
    _require_release(scenario, ctx)
    _require_explicit_start(scenario, ctx)
    sharing = (
        ctx.data.refused_alone(scenario.operation) if refused_alone(scenario) else nullcontext()
    )
    with sharing, collecting_findings() as findings:
        try:
            runner(scenario, ctx)
        except ShouldFindings:
            raise  # a step ended the scenario at should (runners.promises)
        except ConformanceFailure as failure:
            keep_promise(failure, scenario, ctx)
            failure.should_findings = tuple(findings)
            for finding in findings:
                failure.add_note(f"Also (should): {finding.title}")
            raise
        if findings:
            raise ShouldFindings(findings)


#: The kinds whose runner sends the scenario's request once, broken in one way, and judges that
#: answer alone (a refused auth case too: ``auth.CASES``, not a replay, ``auth.SENT_TWICE``).
_SENT_ONCE = frozenset({"constraint", "header", "robustness", "auth"})


def refused_alone(scenario: Scenario) -> bool:
    """Whether ``scenario`` sends one request that every acceptable answer refuses, so that it
    changes nothing at a bank that conforms: the data it would make for itself (a customer, an
    account, an agreement) is then shared with the worker's other such scenarios of its
    operation until one is not refused (``SetUpBase.refused_alone``). A positive scenario, a
    flow, a rule and a replay keep data of their own (issue 29)."""
    if scenario.kind not in _SENT_ONCE or not scenario.expect.rejects:
        return False
    return scenario.kind != "auth" or str(scenario.param("case", "")) not in auth.SENT_TWICE
