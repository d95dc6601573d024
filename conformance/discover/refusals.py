"""Learning from a refusal (issue 42): a 4xx that names a header the request did not carry is
answered by sending the header and asking again (:func:`header_taught`, :func:`header_value`),
so that a bank's refusal of a missing header never decides a key; a refusal of the TPP itself
(its certificate, its signature, its token) is told apart from an answer about the request
(:func:`tpp_refused`), so that probes nobody answered are not read as the bank's choices."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from conformance.bankside.preflight import identity_code

if TYPE_CHECKING:
    from conformance.bankside.request import OperationRequest, Psu
    from conformance.contract import Contract
    from conformance.exchange import Exchange
    from conformance.profile import TargetProfile

__all__ = ["SIGNATURE_HEADERS", "header_taught", "header_value", "names_header", "tpp_refused"]

#: Spec 5's signature headers: the signer adds them; a refusal naming one is not learned from.
SIGNATURE_HEADERS = frozenset({"signature", "tpp-signature-certificate", "digest"})
#: Token refusals, beside spec 5's certificate and signature ones (:func:`tpp_refused`).
_TOKEN_CODES = frozenset({"TOKEN_INVALID", "TOKEN_EXPIRED", "TOKEN_UNKNOWN", "ROLE_INVALID"})


def _document(exchange: Exchange) -> dict[str, Any]:
    try:
        document = json.loads(exchange.response_body or b"null")
    except ValueError:
        return {}
    return document if isinstance(document, dict) else {}


def names_header(exchange: Exchange, header: str) -> bool:
    """Whether a refusal (400, 401, 403: not a 404 for an unknown id) names ``header`` as what
    is wrong with the request: its ``tppMessages`` path, or its message."""
    if exchange.status not in (400, 401, 403):
        return False
    document = _document(exchange)
    wanted = header.lower()
    for item in document.get("tppMessages") or ():
        if isinstance(item, Mapping) and str(item.get("path", "")).lower() == wanted:
            return True
    message = document.get("message")
    return isinstance(message, str) and wanted in message.lower()


def header_taught(exchange: Exchange, built: OperationRequest) -> str | None:
    """The header of the operation's lists (required or optional) that a 400, 401 or 403 names
    and that ``built`` does not carry (a header removed on purpose is carried as None: never
    taught back); None when the refusal names none."""
    operation = built.operation
    carried = {name.lower() for name, _ in built.headers}
    for name in (*operation.required_headers, *operation.optional_headers):
        lowered = name.lower()
        if lowered in SIGNATURE_HEADERS or lowered in carried:
            continue
        if names_header(exchange, name):
            return name
    return None


def header_value(
    name: str, contract: Contract, profile: TargetProfile, psu: Psu | None
) -> str | None:
    """A valid value of header ``name`` for the prober's request: the profile's (x-accept-fix,
    TPP-Redirect-URI, PSU-IP-Address), the PSU's, a fresh UUID where the contract's schema says
    one, else its first ``enum`` value or example; None when nothing valid is known."""
    lowered = name.lower()
    fixed = {
        "x-accept-fix": profile.x_accept_fix,
        "tpp-redirect-uri": profile.redirect_uri,
        "tpp-session-id": str(uuid.uuid4()),
        "psu-ip-address": profile.psu_ip_address or (psu.ip_address if psu else None),
        "psu-id": psu.psu_id if psu else None,
        "psu-user-agent": profile.psu_user_agent or "conformance-discover",
        "psu-ip-port": "443",
        "psu-http-method": "GET",
    }
    if lowered in fixed:
        return fixed[lowered]
    schema = contract.header_schema(name)
    if schema.get("format") == "uuid":
        return str(uuid.uuid4())
    for word in ("enum", "examples"):
        values = schema.get(word)
        if isinstance(values, list) and values:
            return str(values[0])
    return None


def tpp_refused(exchange: Exchange | None) -> str | None:
    """The code of a 401 or 403 refusing the TPP itself (its certificate, signature or token),
    or None: such an answer says nothing of the operation asked."""
    if exchange is None:
        return None
    code = identity_code(exchange)
    if code is not None:
        return code
    if exchange.status not in (401, 403):
        return None
    document = _document(exchange)
    codes = [document.get("code")]
    codes.extend(
        item.get("code") for item in document.get("tppMessages") or () if isinstance(item, dict)
    )
    return next((str(code) for code in codes if code in _TOKEN_CODES), None)
