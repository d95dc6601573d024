"""The access tokens and authorisation codes of the bank's OAuth 2.0 server the reference server
plays when a profile has ``[oauth]`` (``--profile``): what was issued, to whom, until when.

Tokens live in memory only (a restart forgets them: clients fetch new ones) and expire by the
wall clock, not the sandbox clock ``/_control/clock`` moves: a token's lifetime is the bank's
real time.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

__all__ = ["AuthorisationCode", "TokenIssuer", "TokenState"]

#: How long an authorisation code may wait for its exchange (RFC 6749 4.1.2: short-lived).
CODE_LIFETIME = 600.0


class TokenState(Enum):
    """What a presented access token is."""

    VALID = "valid"
    EXPIRED = "expired"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class AuthorisationCode:
    """A code the OAuth SCA approach's authorisation page gave: for whom and what."""

    client_id: str
    redirect_uri: str
    code_challenge: str | None
    authorisation_id: str
    expires: float


class TokenIssuer:
    """Issues and checks access tokens (``lifetime`` seconds each) and authorisation codes;
    thread-safe. :meth:`expire_all` ends every token now (``/_control/oauth/expire``)."""

    def __init__(self, lifetime: float = 3600.0, clock: Callable[[], float] = time.time) -> None:
        self.lifetime = lifetime
        self._now = clock
        self._lock = threading.Lock()
        self._tokens: dict[str, float] = {}
        self._codes: dict[str, AuthorisationCode] = {}

    def issue(self) -> str:
        """A new access token, valid for :attr:`lifetime` seconds."""
        token = secrets.token_urlsafe(32)
        with self._lock:
            now = self._now()
            self._tokens = {t: end for t, end in self._tokens.items() if end > now}
            self._tokens[token] = now + self.lifetime
        return token

    def state(self, token: str) -> TokenState:
        with self._lock:
            end = self._tokens.get(token)
            if end is None:
                return TokenState.UNKNOWN
            return TokenState.VALID if self._now() < end else TokenState.EXPIRED

    def expire_all(self) -> int:
        """End every token now (kept, so that an answer can say "expired"); how many."""
        with self._lock:
            now = self._now()
            self._tokens = dict.fromkeys(self._tokens, now)
            return len(self._tokens)

    def code(
        self, client_id: str, redirect_uri: str, challenge: str | None, authorisation_id: str
    ) -> str:
        """A new authorisation code for the PSU's approval of ``authorisation_id``."""
        value = secrets.token_urlsafe(24)
        with self._lock:
            self._codes[value] = AuthorisationCode(
                client_id, redirect_uri, challenge, authorisation_id, self._now() + CODE_LIFETIME
            )
        return value

    def redeem(self, value: str) -> AuthorisationCode | None:
        """The code's grant, once (a second use finds nothing); None when unknown or stale."""
        with self._lock:
            grant = self._codes.pop(value, None)
        if grant is None or grant.expires < self._now():
            return None
        return grant
