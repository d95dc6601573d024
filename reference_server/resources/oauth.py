"""The bank's OAuth 2.0 token endpoint, played when the profile has ``[oauth]`` (``--profile``): at
the path of the profile's ``token_url``, unsigned (a token request is not a spec 5 request),
reachable from other hosts like the SCA pages.

- ``grant_type=client_credentials`` (RFC 6749 4.4): an access token for the profile's client,
  valid ``--oauth-lifetime`` seconds;
- ``grant_type=authorization_code`` (RFC 6749 4.1.3, with PKCE, RFC 7636): the code the OAuth SCA
  approach's authorisation page gave (``[sca] approach = "oauth"``), exchanged for a token.

The client authenticates as the profile's ``auth`` says: ``client_secret`` with HTTP Basic (or the
secret in the form, RFC 6749 2.3.1), its secret read from the server's environment;
``tls_client_auth`` with the TLS client certificate of the connection (RFC 8705, needs
``--tls-cert`` and ``--client-ca``); ``private_key_jwt`` with an RFC 7523 assertion whose ``x5c``
certificate chains to a ``--trust`` CA (any, without one) and signs it. Errors are RFC 6749 5.2's
JSON (``invalid_client`` 401, the others 400), not spec 7's: this is not an operation of the
interface. ``POST /_control/oauth/expire`` (loopback) ends every token now, to try a client's
refresh.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import RSAKey

from conformance.signing import verify_chain
from reference_server.api import Call, Response, Route, ServerState
from reference_server.model.bank_style import BankStyle, OAuthStyle

__all__ = ["ROUTES", "bank_routes", "token_endpoint"]

_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: RS256 assertions whose header may carry a certificate chain (``x5c``): joserfc's default
#: header limit (512 bytes) is below one certificate.
_ASSERTIONS = jws.JWSRegistry(algorithms=["RS256"])
_ASSERTIONS.max_header_length = 16 * 1024
_NO_STORE = (("Cache-Control", "no-store"), ("Pragma", "no-cache"))


class _Refused(Exception):
    """An RFC 6749 5.2 error answer."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status


def bank_routes(bank: BankStyle) -> tuple[Route, ...]:
    """The token endpoint at the profile's path, when the bank has an OAuth server."""
    if bank.oauth is None:
        return ()
    return (Route("POST", bank.oauth.token_path, token_endpoint, loopback_only=False),)


def token_endpoint(call: Call) -> Response:
    """POST the token request (form-encoded); 200 with the token, or an RFC 6749 error."""
    style = call.app.bank.oauth
    assert style is not None  # routed only when the bank has an OAuth server
    try:
        form = _form(call)
        client = _authenticated_client(call, style, form)
        grant = form.get("grant_type")
        if grant == "client_credentials":
            scope = _scope(style, form.get("scope"))
        elif grant == "authorization_code":
            scope = _redeem(call.app, client, form)
        else:
            raise _Refused("unsupported_grant_type", f"grant_type {grant!r} is not offered")
    except _Refused as refused:
        return _error(refused)
    document: dict[str, Any] = {
        "access_token": call.app.tokens.issue(),
        "token_type": "Bearer",
        "expires_in": int(call.app.tokens.lifetime),
    }
    if scope:
        document["scope"] = scope
    return Response.json(200, document, headers=_NO_STORE)


def _error(refused: _Refused) -> Response:
    headers: tuple[tuple[str, str], ...] = _NO_STORE
    if refused.status == 401:
        headers += (("WWW-Authenticate", 'Basic realm="token"'),)
    document = {"error": refused.error, "error_description": refused.description}
    return Response.json(refused.status, document, headers=headers)


def _form(call: Call) -> Mapping[str, str]:
    content_type = (call.request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise _Refused("invalid_request", "send the token request form-encoded (RFC 6749 4.4.2)")
    try:
        parsed = parse_qs(call.request.body.decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError:
        raise _Refused("invalid_request", "the form is not UTF-8") from None
    return {name: values[0] for name, values in parsed.items()}


def _authenticated_client(call: Call, style: OAuthStyle, form: Mapping[str, str]) -> str:
    """The client id, once the client proved it is the profile's (``invalid_client`` else)."""
    if style.auth == "client_secret":
        client_id, secret = _basic(call) or (form.get("client_id"), form.get("client_secret"))
        if client_id != style.client_id or not _same(secret, style.client_secret):
            raise _Refused("invalid_client", "unknown client or wrong secret", 401)
    elif style.auth == "tls_client_auth":
        if call.request.client_certificate is None:
            raise _Refused(
                "invalid_client", "tls_client_auth: no TLS client certificate was shown", 401
            )
        if form.get("client_id") != style.client_id:
            raise _Refused("invalid_client", "unknown client_id", 401)
    else:
        _check_assertion(call.app, style, form)
    return style.client_id


def _basic(call: Call) -> tuple[str, str] | None:
    value = call.request.headers.get("Authorization") or ""
    if not value.lower().startswith("basic "):
        return None
    try:
        decoded = base64.b64decode(value[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise _Refused("invalid_client", "the Basic credentials are not base64", 401) from None
    client_id, _, secret = decoded.partition(":")
    return unquote(client_id), unquote(secret)


def _same(given: str | None, wanted: str | None) -> bool:
    return given is not None and wanted is not None and hmac.compare_digest(given, wanted)


def _check_assertion(app: ServerState, style: OAuthStyle, form: Mapping[str, str]) -> None:
    """RFC 7523 client authentication: a JWT from the client, signed by the key of the
    certificate in its ``x5c`` header, which chains to a trusted CA."""
    assertion = form.get("client_assertion")
    if form.get("client_assertion_type") != _ASSERTION_TYPE or not assertion:
        raise _Refused("invalid_client", "private_key_jwt: no client_assertion", 401)
    try:
        header = jws.extract_compact(assertion.encode("ascii"), registry=_ASSERTIONS).protected
        chain = header.get("x5c")
        if not isinstance(chain, list) or not chain:
            raise _Refused("invalid_client", "the client_assertion names no x5c certificate", 401)
        certificate = x509.load_der_x509_certificate(base64.b64decode(chain[0]))
        problems = [verify_chain(certificate, ca) for ca in app.trust_cas]
        if app.trust_cas and all(problems):
            raise _Refused("invalid_client", f"the assertion's certificate: {problems[0]}", 401)
        public = certificate.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        key = RSAKey.import_key(public)
        claims = jwt.decode(assertion, key, algorithms=["RS256"], registry=_ASSERTIONS).claims
    except (JoseError, ValueError, binascii.Error) as error:
        raise _Refused(
            "invalid_client", f"the client_assertion does not verify ({error})", 401
        ) from None
    audience = claims.get("aud")
    audiences = audience if isinstance(audience, list) else [audience]
    if (
        claims.get("iss") != style.client_id
        or claims.get("sub") != style.client_id
        or not any(isinstance(a, str) and urlsplit(a).path == style.token_path for a in audiences)
        or not isinstance(claims.get("exp"), int | float)
        or claims["exp"] < time.time()
    ):
        raise _Refused(
            "invalid_client",
            "the client_assertion's iss, sub, aud (this token endpoint) or exp do not fit",
            401,
        )


def _scope(style: OAuthStyle, asked: str | None) -> str:
    words = frozenset((asked or "").split())
    if style.scope and not words <= style.scope:
        raise _Refused("invalid_scope", f"scope {asked!r} is not {' '.join(sorted(style.scope))}")
    return " ".join(sorted(words or style.scope))


def _redeem(app: ServerState, client_id: str, form: Mapping[str, str]) -> str:
    """The authorisation code of the OAuth SCA approach, once, with its PKCE verifier."""
    grant = app.tokens.redeem(form.get("code") or "")
    if grant is None or grant.client_id != client_id:
        raise _Refused("invalid_grant", "the code is unknown, used or stale")
    if form.get("redirect_uri") != grant.redirect_uri:
        raise _Refused("invalid_grant", "redirect_uri is not the one of the authorisation")
    if grant.code_challenge is not None:
        verifier = form.get("code_verifier") or ""
        digest = hashlib.sha256(verifier.encode("ascii", "replace")).digest()
        challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        if not hmac.compare_digest(challenge, grant.code_challenge):
            raise _Refused("invalid_grant", "the code_verifier does not match (PKCE)")
    return f"authorisation:{grant.authorisation_id}"


def expire_tokens(call: Call) -> Response:
    """``POST /_control/oauth/expire``: every access token ends now."""
    return Response.json(200, {"expired": call.app.tokens.expire_all()})


ROUTES = (Route("POST", "/_control/oauth/expire", expire_tokens),)
