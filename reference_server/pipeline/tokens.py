"""The bearer token of a bank that wants one on every request (``--profile`` with ``[oauth]``):
checked before the signature, as a bank's API gateway checks it.

Spec 5 item 8 leaves the flow open ("Access token or OAuth flow: not shown."); the answers follow
RFC 6750 3.1 with the spec 7 error body (assumptions.md): no token, or one the server never issued
→ 401 ``TOKEN_INVALID``; an expired one → 401 ``TOKEN_EXPIRED``; each with
``WWW-Authenticate: Bearer`` naming the error, so that a client knows to fetch a fresh token.
"""

from __future__ import annotations

from reference_server.api import ApiError, Request, ServerState
from reference_server.model.tokens import TokenState

__all__ = ["check_bearer"]

_SCHEME = "bearer "


def check_bearer(app: ServerState, request: Request) -> None:
    """A valid access token of this server in ``Authorization: Bearer``; raises ApiError."""
    if app.bank.oauth is None:
        return
    value = (request.headers.get("Authorization") or "").strip()
    if not value.lower().startswith(_SCHEME):
        raise ApiError(
            401,
            "TOKEN_INVALID",
            "an access token is required: Authorization: Bearer <token> from the token endpoint",
            path="Authorization",
            headers=(("WWW-Authenticate", 'Bearer realm="psd2"'),),
        )
    state = app.tokens.state(value[len(_SCHEME) :].strip())
    if state is TokenState.VALID:
        return
    expired = state is TokenState.EXPIRED
    description = "the access token expired" if expired else "the access token is not known"
    raise ApiError(
        401,
        "TOKEN_EXPIRED" if expired else "TOKEN_INVALID",
        f"{description}: fetch a fresh one from the token endpoint",
        path="Authorization",
        headers=(
            (
                "WWW-Authenticate",
                f'Bearer realm="psd2", error="invalid_token", error_description="{description}"',
            ),
        ),
    )
