"""Replay protection: the signatures of state-changing requests seen within the clock skew.

Spec 5 signs each request (its Date, X-Request-ID, Digest, ...) but states no replay rule. A
byte-identical copy of a signed request carries the same signature; within the window in which
its Date is still fresh (``date_skew``, after which ``auth.check_date_fresh`` refuses it anyway)
the server refuses a second use of a signature on the same method and request target
(``conformance.contract.request_rules.replay_key``) on a request that changes state (any method
but GET, HEAD and OPTIONS), so that a captured payment creation cannot be sent again
(assumptions.md). GETs are left alone: replaying a read changes nothing.
"""

from __future__ import annotations

import threading
import time

__all__ = ["SignatureMemory"]

#: How many signatures are kept at most (the oldest go first beyond it).
_CAPACITY = 200_000


class SignatureMemory:
    """Signatures seen, each until it expires; thread-safe."""

    def __init__(self, capacity: int = _CAPACITY) -> None:
        self._lock = threading.Lock()
        self._until: dict[str, float] = {}
        self._capacity = capacity

    def first_use(self, signature: str, keep_seconds: float) -> bool:
        """Record ``signature``; False when it was seen before and has not expired."""
        now = time.monotonic()
        with self._lock:
            until = self._until.get(signature)
            if until is not None and until > now:
                return False
            if len(self._until) >= self._capacity:
                self._forget(now)
            self._until[signature] = now + keep_seconds
            return True

    def _forget(self, now: float) -> None:
        expired = [key for key, until in self._until.items() if until <= now]
        for key in expired or list(self._until)[: self._capacity // 10]:
            del self._until[key]
