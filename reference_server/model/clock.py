"""The server's clock: real time plus an offset that ``/_control/clock`` can move.

Everything time-dependent reads this clock and nothing else: the sandbox date rules (spec 4.3
E5/E7, spec 8), the simulated batch runs (spec 3, five a day) and consent age (spec 8). Moving the
clock forward is how a test reaches "tomorrow" or "91 days later" without waiting. The clock is in
UTC; dates are UTC dates (``pipeline.validation.now_at_bank`` gives the same moment in the bank's
zone, Europe/Oslo, for the sandbox date rules).

``Clock.now()``, ``today()``, ``advance(delta)``, ``set(moment)``, ``reset()``; the batch runs at
:data:`BATCH_RUN_TIMES`, and :func:`batch_runs_between` lists those in ``(start, end]``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta

__all__ = ["BATCH_RUN_TIMES", "Clock", "batch_runs_between", "next_batch_run"]

#: Simulated batch processing runs (spec 3: "five times a day"), UTC times of day. A choice:
#: the spec gives the count, not the times.
BATCH_RUN_TIMES: tuple[time, ...] = (
    time(6, 0),
    time(9, 0),
    time(12, 0),
    time(15, 0),
    time(18, 0),
)


class Clock:
    """Real time shifted by an adjustable offset. Thread-safe."""

    def __init__(self, source: Callable[[], datetime] | None = None) -> None:
        self._source = source or (lambda: datetime.now(UTC))
        self._offset = timedelta(0)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        with self._lock:
            return self._source() + self._offset

    def today(self) -> date:
        return self.now().date()

    @property
    def offset(self) -> timedelta:
        with self._lock:
            return self._offset

    def advance(self, delta: timedelta) -> datetime:
        """Move the clock by ``delta`` (negative moves back); returns the new time."""
        with self._lock:
            self._offset += delta
            return self._source() + self._offset

    def set(self, moment: datetime) -> datetime:
        """Jump to ``moment`` (naive values are taken as UTC); returns the new time."""
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        with self._lock:
            self._offset = moment - self._source()
            return moment

    def reset(self) -> None:
        """Back to real time."""
        with self._lock:
            self._offset = timedelta(0)


def batch_runs_between(start: datetime, end: datetime) -> list[datetime]:
    """The batch run moments in ``(start, end]``, oldest first (UTC)."""
    runs: list[datetime] = []
    if end <= start:
        return runs
    day = start.astimezone(UTC).date()
    last = end.astimezone(UTC).date()
    while day <= last:
        for moment in BATCH_RUN_TIMES:
            run = datetime.combine(day, moment, tzinfo=UTC)
            if start < run <= end:
                runs.append(run)
        day += timedelta(days=1)
    return runs


def next_batch_run(after: datetime) -> datetime:
    """The first batch run moment strictly after ``after`` (UTC): within a day, as runs are
    daily, so ``batch_runs_between(after, moment)`` is empty exactly while ``moment`` is before
    it."""
    return batch_runs_between(after, after + timedelta(days=1))[0]
