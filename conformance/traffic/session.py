"""One judging session, live or recorded: the judge, the verdicts collected in order, one line
per exchange while it runs, when to stop (``--exchanges N``), and the totals at the end.

Memory: an exchange is judged whole, then kept for the reports with each body cut to its first
:data:`KEPT_BODY` bytes (the reports say what was cut: security-5.md M7). What a session keeps per
exchange is then bounded (its headers, findings and at most twice :data:`KEPT_BODY`), so a proxy
left running grows by a few kilobytes per exchange, never by a body; ``--exchanges N`` bounds it
wholly.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TextIO

from conformance.report.masking import learn_secrets, scrub
from conformance.traffic.model import BANK, TPP, JudgedExchange

if TYPE_CHECKING:
    from conformance.exchange import Exchange
    from conformance.traffic.judge import TrafficJudge

__all__ = ["KEPT_BODY", "TrafficSession", "exchange_line", "kept"]

#: The bytes of each body a session keeps for the reports once the exchange is judged.
KEPT_BODY = 64 * 1024

#: How many findings one line names before "(+N more)".
_NAMED = 2


def exchange_line(judged: JudgedExchange) -> str:
    """``   7  E16  POST /v1/payments/... → 201  3.1 ms  TPP must TPP-digest-mismatch at Digest``"""
    exchange = judged.exchange
    head = (
        f"{judged.index:5d}  {judged.operation or '-':<4} {exchange.method} {exchange.path} "
        f"→ {exchange.status}  {exchange.elapsed * 1000:.1f} ms  "
    )
    if judged.skipped:
        return scrub(head + f"not judged: {judged.skipped}")
    if not judged.findings:
        return scrub(head + "ok")
    ordered = sorted(judged.findings, key=lambda f: (f.level != "must", f.side != TPP))
    named = "; ".join(
        f"{f.side} {f.level} {f.rule}" + (f" at {f.place}" if f.place else "")
        for f in ordered[:_NAMED]
    )
    more = len(ordered) - _NAMED
    return scrub(head + named + (f" (+{more} more)" if more > 0 else ""))


def _learn(exchange: Exchange) -> None:
    """Remember the exchange's secrets by value before any line or report shows it."""
    learn_secrets(exchange.request_headers, exchange.url, exchange.request_body)
    learn_secrets(exchange.response_headers, body=exchange.response_body)


def kept(verdict: JudgedExchange, limit: int = KEPT_BODY) -> JudgedExchange:
    """The verdict as the session keeps it: each body past ``limit`` bytes cut to its first
    ``limit``, and :attr:`JudgedExchange.cut` saying so (the judgement saw the whole)."""
    exchange = verdict.exchange
    cuts = [
        f"the {side} body was {len(body):,} bytes; the reports keep its first {limit:,}"
        for side, body in (("request", exchange.request_body), ("answer", exchange.response_body))
        if len(body) > limit
    ]
    if not cuts:
        return verdict
    slim = dataclasses.replace(
        exchange,
        request_body=exchange.request_body[:limit],
        response_body=exchange.response_body[:limit],
    )
    note = "; ".join(cuts) + " (judged whole; cut to keep the session's memory bounded)"
    return dataclasses.replace(verdict, exchange=slim, cut=note)


class TrafficSession:
    """Judges what it is given and keeps the verdicts; thread-safe (the proxy's judge thread
    feeds it, the main thread reads it)."""

    def __init__(
        self,
        judge: TrafficJudge,
        *,
        out: TextIO | None = None,
        limit: int | None = None,
        quiet: bool = False,
    ) -> None:
        self.judge = judge
        self.out = out if out is not None else sys.stdout
        self.limit = limit
        self.quiet = quiet
        self.judged: list[JudgedExchange] = []
        #: One line for each exchange the judge failed on (not in :attr:`judged`).
        self.unjudged: list[str] = []
        self.started = datetime.now(UTC)
        #: Set when ``limit`` exchanges have been judged.
        self.done = threading.Event()
        self._lock = threading.Lock()

    def take(self, exchange: Exchange, at: datetime) -> JudgedExchange | None:
        """Judge one exchange and keep its verdict. An exchange the judge fails on is counted
        in :attr:`unjudged` and said, never raised: the proxy's judge thread goes on."""
        _learn(exchange)
        try:
            verdict = self.judge.judge(exchange, at=at)
        except Exception as error:  # one exchange must not end the judging
            with self._lock:
                self.unjudged.append(
                    f"{exchange.method} {exchange.url}: {type(error).__name__}: {error}"[:300]
                )
            print(
                scrub(f"NOT JUDGED {exchange.method} {exchange.url}: the judge failed on it "
                      f"({type(error).__name__})"),
                file=self.out,
                flush=True,
            )  # fmt: skip
            return None
        verdict = kept(verdict)
        with self._lock:
            self.judged.append(verdict)
            count = len(self.judged)
        if not self.quiet:
            print(exchange_line(verdict), file=self.out, flush=True)
        if self.limit is not None and count >= self.limit:
            self.done.set()
        return verdict

    def take_all(self, exchanges: Iterable[tuple[Exchange, datetime]]) -> None:
        """Judge every exchange, each one's secrets remembered first: an id a later exchange
        shows in a header is masked in an earlier one's path and line too."""
        pending = list(exchanges)
        for exchange, _at in pending:
            _learn(exchange)
        for exchange, at in pending:
            self.take(exchange, at)

    def totals(self) -> str:
        """One line: exchanges judged, findings by side and level."""
        with self._lock:
            judged = list(self.judged)
        counts = {
            (side, level): sum(
                1 for item in judged for f in item.findings if f.side == side and f.level == level
            )
            for side in (TPP, BANK)
            for level in ("must", "should")
        }
        skipped = sum(1 for item in judged if item.skipped)
        return (
            f"{len(judged)} exchanges ({skipped} not judged): TPP {counts[TPP, 'must']} must / "
            f"{counts[TPP, 'should']} should findings; bank {counts[BANK, 'must']} must / "
            f"{counts[BANK, 'should']} should findings"
        )

    def must_findings(self) -> int:
        with self._lock:
            return sum(len(item.must) for item in self.judged)
