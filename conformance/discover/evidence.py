"""A decision about one profile key and the exchanges that decided it (:class:`Decision`), and
the one line an exchange is shown as (:func:`describe`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from conformance.contract import bounded_json

if TYPE_CHECKING:
    from conformance.exchange import Exchange

__all__ = ["Decision", "Key", "decided", "describe", "undecided"]

#: A profile key as the path of TOML names to it: ``("sca", "start")``, ``("base_url",)``.
Key = tuple[str, ...]

#: How much of an answer's message a comment quotes.
_QUOTED = 120


@dataclass(frozen=True)
class Decision:
    """One profile key: the value discovery decided, or ``None`` when it could not decide (then
    ``why`` says why, and ``default`` is what the suite takes without the key); ``evidence`` is
    the lines of the exchanges that decided it (or that left it open)."""

    key: Key
    value: Any
    evidence: tuple[str, ...]
    default: Any = None
    why: str = ""

    @property
    def is_decided(self) -> bool:
        return self.value is not None

    @property
    def name(self) -> str:
        """The key as the profile's documentation writes it: ``[sca] start``, ``base_url``."""
        if len(self.key) == 1:
            return self.key[0]
        return f"[{'.'.join(self.key[:-1])}] {self.key[-1]}"


def decided(key: Key, value: Any, *exchanges: Exchange | str, default: Any = None) -> Decision:
    """A decided key, with the exchanges (or a line of text) that decided it."""
    return Decision(key, value, _lines(exchanges), default=default)


def undecided(key: Key, default: Any, why: str, *exchanges: Exchange | str) -> Decision:
    """A key left open: the suite's default stands, for the reason ``why``."""
    return Decision(key, None, _lines(exchanges), default=default, why=why)


def _lines(items: Sequence[Exchange | str]) -> tuple[str, ...]:
    return tuple(item if isinstance(item, str) else describe(item) for item in items)


def describe(exchange: Exchange) -> str:
    """``POST /v1/payments/x → 401 HTTP_HEADER_REQUIRED "the gateway requires X-Key"``: the
    request line, the status, and the decisive part of the answer (its code and message, the
    links it carries), in one line."""
    parts = urlsplit(exchange.url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return f"{exchange.method} {path} → {exchange.status}{_answer_summary(exchange)}"


def _answer_summary(exchange: Exchange) -> str:
    try:
        document = bounded_json.loads(exchange.response_body or b"null")
    except ValueError:
        kind = exchange.response_header("content-type") or "no content type"
        return f" (not JSON: {kind})" if exchange.response_body else ""
    if not isinstance(document, dict):
        return ""
    said: list[str] = []
    code = document.get("code")
    if isinstance(code, str):
        said.append(code)
    message = document.get("message")
    if isinstance(message, str) and message:
        said.append(json.dumps(message[:_QUOTED], ensure_ascii=False))
    links = document.get("_links")
    if isinstance(links, dict) and links:
        said.append("_links: " + ", ".join(sorted(str(name) for name in links)))
    return " " + " ".join(said) if said else ""
