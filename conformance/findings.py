"""The two tiers of a scenario's findings: what the spec states (must) and what the suite chose
(should).

A runner judges the stated part with ordinary checks, which raise :class:`ConformanceFailure`
and end the scenario. It judges the chosen part (the exact status and code where the spec says
only "rejected") through :func:`at_should`, which records a failure as a should finding of the
running scenario and goes on. When the scenario ends without a must failure, its should findings
are raised together as one :class:`ShouldFindings`, which the plugin reports "with should findings":
listed, but not failing the run unless ``--strict``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NoReturn

from conformance.checks import ConformanceFailure

__all__ = ["ShouldFindings", "at_should", "collecting_findings", "end_at_should", "record_should"]

_FINDINGS: ContextVar[list[ConformanceFailure] | None] = ContextVar("findings", default=None)


@contextmanager
def collecting_findings() -> Iterator[list[ConformanceFailure]]:
    """Collect the should findings of the code run inside (one scenario)."""
    findings: list[ConformanceFailure] = []
    token = _FINDINGS.set(findings)
    try:
        yield findings
    finally:
        _FINDINGS.reset(token)


def at_should(check: Callable[[], object], *, reading: str) -> None:
    """Run ``check``; a failure is a should finding (``reading``: the reading of the spec it rests
    on, shown as "our reading: ..."), not the end of the scenario. A 5xx is never softened.
    Outside :func:`collecting_findings` the failure is raised, so nothing is lost."""
    try:
        check()
    except ConformanceFailure as failure:
        findings = _FINDINGS.get()
        if failure.always_must or findings is None:
            raise
        record_should(failure, reading)


def record_should(failure: ConformanceFailure, reading: str) -> None:
    """Record ``failure`` as a should finding of the running scenario (raised outside one)."""
    findings = _FINDINGS.get()
    if findings is None:
        raise failure
    failure.reading = reading
    findings.append(failure)


def end_at_should(failure: ConformanceFailure, reading: str) -> NoReturn:
    """End the running scenario at should: ``failure`` (something the rest of the scenario
    needed, which rests on ``reading``) is recorded as a should finding and the scenario's should
    findings so far are raised (``failure`` itself outside one)."""
    findings = _FINDINGS.get()
    if findings is None or failure.always_must:
        raise failure
    record_should(failure, reading)
    raise ShouldFindings(list(findings))


class ShouldFindings(ConformanceFailure):
    """A scenario whose stated (must) part held but whose chosen (should) part did not."""

    def __init__(self, findings: list[ConformanceFailure]) -> None:
        first = findings[0]
        more = len(findings) - 1
        super().__init__(
            f"should: {first.title}" + (f" (and {more} more)" if more else ""),
            spec=first.spec,
            sent=first.sent,
            received=first.received,
            expected="\n".join(
                f"({finding.spec}) {finding.expected} [should; our reading: {finding.reading}]"
                for finding in findings
            ),
            related=tuple(
                finding.sent
                for finding in findings[1:]
                if finding.sent is not None and finding.sent is not first.sent
            ),
        )
        self.findings = tuple(findings)
        self.reading = "; ".join(dict.fromkeys(finding.reading for finding in findings))
