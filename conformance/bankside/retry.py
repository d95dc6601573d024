"""Keeping within a target's limits: retrying a throttled answer (429 or 503 with ``Retry-After``,
RFC 9110 section 10.2.3) within a bounded budget of attempts and total wait, as a bank gateway's
rate limit asks, and pacing requests to the profile's ``rate_limit`` so that it is not asked."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["RETRYABLE_STATUSES", "Pacer", "RetryPolicy", "retry_after_seconds", "worker_share"]

#: Statuses that ask the client to come back later when they carry Retry-After.
RETRYABLE_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    """At most ``attempts`` retries of one request, waiting at most ``max_wait`` seconds in all."""

    attempts: int = 3
    max_wait: float = 30.0

    def delay(
        self, status: int, retry_after: str | None, retried: int, waited: float
    ) -> float | None:
        """How long to wait before the next attempt, or None when the answer stands: not a
        throttling status, no (readable) Retry-After, or the budget would be exceeded."""
        if status not in RETRYABLE_STATUSES or retried >= self.attempts:
            return None
        seconds = retry_after_seconds(retry_after)
        if seconds is None or waited + seconds > self.max_wait:
            return None
        return seconds


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds from now: delay-seconds or an HTTP date; None if unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - (now or datetime.now(UTC))).total_seconds())


class Pacer:
    """At most ``per_second`` requests a second from this process, evenly spaced (None: no cap).

    :meth:`wait` blocks until the next request may go and returns the seconds it waited. A run's
    ``rate_limit`` is shared between its workers (:func:`worker_share`), so the run as a whole
    stays under it without the processes talking to each other.
    """

    def __init__(
        self,
        per_second: float | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.interval = 0.0 if not per_second else 1.0 / per_second
        self._clock = clock
        self._sleep = sleep
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> float:
        if not self.interval:
            return 0.0
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self.interval
        delay = start - now
        if delay > 0:
            self._sleep(delay)
        return delay


def worker_share(rate_limit: float | None, workers: int) -> float | None:
    """One worker's part of the run's ``rate_limit`` (None: no cap)."""
    if rate_limit is None:
        return None
    return rate_limit / max(1, workers)
