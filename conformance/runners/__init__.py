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
from types import MappingProxyType
from typing import TYPE_CHECKING

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

__all__ = ["RUNNERS", "RunContext", "Runner", "run_scenario"]

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
        for op_id in (scenario.operation, *scenario.param("steps", ())):
            if op_id == "PA" != scenario.operation and ctx.profile.sca.starts_at_creation:
                continue  # the payment's own creation starts its SCA: PA is not needed
            reason = ctx.unsupported_reason(op_id)
            if reason is not None:
                raise NotApplicable(reason)
        _require_release(scenario, ctx)
        with collecting_findings() as findings:
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
    except ConformanceFailure as failure:
        raise failure.for_scenario(scenario) from None
    finally:
        ctx.exchanges.extend(ctx.client.take_exchanges())
