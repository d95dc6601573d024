"""What a refused set-up request says, and what would let its scenarios be judged.

A blocked scenario is as untrue as a false must unless its report says why and what unblocks it.
The set-up's refusals name the answer that blocked them (status, spec 7 code, the header or field
the bank's error names) and the profile key or ``conformance discover`` step that would let the
scenarios be judged. The text is the same for every scenario the refusal blocks (no ids from the
answer), so the reports group them as one cause.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from conformance.checks import error_codes, json_document

if TYPE_CHECKING:
    from conformance.exchange import Exchange

__all__ = ["refusal_summary", "refused_title", "unblock_hint"]

#: Codes of spec 7 that say the request's certificate or signature was refused (and the codes
#: banks commonly use for it).
_IDENTITY_CODES = frozenset(
    {
        "CERTIFICATE_INVALID",
        "CERTIFICATE_EXPIRED",
        "CERTIFICATE_MISSING",
        "CERTIFICATE_BLOCKED",
        "CERTIFICATE_REVOKED",
        "SIGNATURE_INVALID",
        "SIGNATURE_MISSING",
        "ROLE_INVALID",
        "TOKEN_INVALID",
        "TOKEN_EXPIRED",
        "TOKEN_UNKNOWN",
    }
)

#: A header name as banks write it in an error message.
_HEADER = re.compile(r"\b((?:x-|tpp-|psu-)[A-Za-z0-9-]+|Consent-ID|Digest|Date)\b", re.IGNORECASE)


def _named(document: Any) -> str:
    """The field or header the error names: its ``tppMessages[].path`` or ``path``."""
    if not isinstance(document, Mapping):
        return ""
    messages = document.get("tppMessages")
    if isinstance(messages, list):
        for message in messages:
            path = message.get("path") if isinstance(message, Mapping) else None
            if isinstance(path, str) and path:
                return path
    path = document.get("path")
    return path if isinstance(path, str) else ""


def _message(document: Any) -> str:
    if not isinstance(document, Mapping):
        return ""
    for key in ("message", "detail", "title"):
        value = document.get(key)
        if isinstance(value, str) and value.strip():
            return value
    messages = document.get("tppMessages")
    if isinstance(messages, list) and messages and isinstance(messages[0], Mapping):
        text = messages[0].get("text")
        if isinstance(text, str):
            return text
    return ""


def _headers_named(document: Any) -> list[str]:
    """The header names the error's message or path names (``x-accept-fix``, ...)."""
    text = f"{_named(document)} {_message(document)}"
    return list(dict.fromkeys(match.group(1) for match in _HEADER.finditer(text)))


def refusal_summary(exchange: Exchange) -> str:
    """``HTTP 400 HTTP_HEADER_REQUIRED, naming x-accept-fix``: the status, the first spec 7
    code and what the answer names (a header, a field), without the ids a message may hold."""
    document = json_document(exchange)
    codes = error_codes(document)
    summary = f"HTTP {exchange.status}"
    if codes:
        summary += f" {codes[0]}"
    headers = _headers_named(document)
    named = ", ".join(headers) if headers else _named(document)
    if named:
        summary += f", naming {named}"
    return summary


def unblock_hint(op_id: str, exchange: Exchange, *, sandbox_creation: bool) -> str:
    """The profile key or ``discover`` step that would let the blocked scenarios be judged
    ("" when the answer suggests none)."""
    document = json_document(exchange)
    codes = set(error_codes(document))
    status = exchange.status
    if "HTTP_HEADER_REQUIRED" in codes or (status == 400 and _headers_named(document)):
        return (
            f"if the bank requires more headers on {op_id} than the contract, name its set in "
            f"the profile's [required_headers] {op_id} (conformance discover drafts it from "
            "this refusal); a gateway's own header goes in [headers]"
        )
    if codes & _IDENTITY_CODES or (status in (401, 403) and not codes):
        return (
            "the bank refused the run's identity: give the certificate and key it trusts "
            "(certificate, key; tls_certificate for mutual TLS) and, for a gateway, [headers] "
            "or [oauth]"
        )
    if status == 400 and sandbox_creation:
        return (
            f"give the bank's form of the {op_id} body in the profile's [setup] templates "
            f"({op_id}.json: its fields, null to leave one of ours out); conformance discover "
            "drafts it from a refusal that names a field"
        )
    if status in (404, 405):
        return (
            f"if the bank offers {op_id} elsewhere, give its path in [paths] {op_id}; if not at "
            "all, list it in [operations] unsupported"
        )
    if status == 429:
        return "the bank throttled the run: raise retry_attempts and retry_max_wait, or -n 1"
    return ""


def refused_title(what: str, op_id: str, exchange: Exchange, *, sandbox_creation: bool) -> str:
    """The title of a set-up refusal: ``Set-up failed: <what> (<op>) was answered <summary>``,
    and what would unblock it, when the answer suggests something."""
    title = f"Set-up failed: {what} ({op_id}) was answered {refusal_summary(exchange)}"
    hint = unblock_hint(op_id, exchange, sandbox_creation=sandbox_creation)
    return f"{title}; to unblock: {hint}" if hint else title
