""":class:`TrafficJudge`: one exchange in, its verdict out (routed, the request judged, the answer
judged against the request and against the state of the traffic so far). The proxy, ``conformance
judge`` and the tests all judge through it, so live and recorded traffic get the same verdict.
"""

from __future__ import annotations

import dataclasses
import threading
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from conformance.report.verdicts import Finding
from conformance.traffic.answer_checks import judge_answer
from conformance.traffic.model import JudgedExchange
from conformance.traffic.request_checks import judge_request, route, split_target
from conformance.traffic.settings import TrafficSettings
from conformance.traffic.state import TrafficState

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.exchange import Exchange

__all__ = ["BANK_ZONE", "TrafficJudge"]

#: The bank's time zone, for the sandbox date rules (a bank in Norway, as the reference server).
BANK_ZONE = ZoneInfo("Europe/Oslo")


class TrafficJudge:
    """Judges exchanges in the order they ended; safe to call from several threads (one at a
    time inside)."""

    def __init__(self, contract: Contract, settings: TrafficSettings | None = None) -> None:
        self.contract = contract
        self.settings = settings or TrafficSettings()
        self.state = TrafficState(contract)
        self._count = 0
        self._lock = threading.Lock()

    def judge(self, exchange: Exchange, *, at: datetime | None = None) -> JudgedExchange:
        """The verdict on ``exchange``, sent at ``at`` (default: now)."""
        moment = at or datetime.now(UTC)
        with self._lock:
            self._count += 1
            return self._judge(self._count, exchange, moment)

    def _judge(self, index: int, exchange: Exchange, at: datetime) -> JudgedExchange:
        path, _ = split_target(exchange)
        routed = route(self.contract, self.settings, exchange.method, path)
        if routed.operation is None:
            # Outside the contract the state still learns (SCA pages, the reference server's
            # controls) and may judge (its basket view, the one read of a basket's status).
            seen = self.state.observe(exchange, None, {}, None)
            if routed.outside:
                if seen:
                    return JudgedExchange(index, exchange, None, tuple(seen))
                return JudgedExchange(index, exchange, None, skipped=routed.outside)
            assert routed.violation is not None
            unrouted = [routed.violation.finding]
            unrouted += judge_answer(exchange, None, self.contract, [routed.violation])
            return JudgedExchange(index, exchange, None, tuple(unrouted))
        operation = routed.operation
        # The sandbox date rules read "now" at the bank; the reference server's clock may have
        # been moved (``/_control/clock``): the later of the two moments decides, so that a date
        # valid at either is never blamed.
        offset = max(self.state.clock_offset, 0.0)
        bank_now = (at + timedelta(seconds=offset)).astimezone(BANK_ZONE)
        request = judge_request(
            exchange, operation, self.contract, self.settings, at=at, bank_now=bank_now
        )
        violations = request.violations
        violations += self.state.request_violations(exchange, operation, request.body)
        verification = request.verification
        if verification is not None and verification.signing_string and not exchange.signing_string:
            exchange = dataclasses.replace(exchange, signing_string=verification.signing_string)
        findings: list[Finding] = [violation.finding for violation in violations]
        findings += judge_answer(
            exchange, operation, self.contract, violations, self.settings.sca_at_creation
        )
        findings += self.state.observe(exchange, operation, routed.values, request.body)
        return JudgedExchange(index, exchange, operation.id, tuple(findings))
