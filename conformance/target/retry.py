"""Retrying a throttled answer: 429 or 503 with ``Retry-After`` (RFC 9110 section 10.2.3), within
a bounded budget of attempts and total wait, as a bank gateway's rate limit asks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["RETRYABLE_STATUSES", "RetryPolicy", "retry_after_seconds"]

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
