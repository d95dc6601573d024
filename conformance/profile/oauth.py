"""``[oauth]``: where the run gets the access token a bank wants on every request
(``Authorization: Bearer``), and how the TPP authenticates to the bank's token endpoint.

Spec 5 item 8 leaves it open ("Access token or OAuth flow: not shown."); several Nordic banks ask
for an OAuth 2.0 client-credentials token (RFC 6749 4.4) beside the signature of spec 5. A secret
never stands in the file: ``client_secret_env`` names the environment variable that holds it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args
from urllib.parse import urljoin, urlsplit

from conformance.errors import ProfileError
from conformance.profile.toml_table import Table

__all__ = ["OAUTH_AUTH_METHODS", "OAuthAuth", "OAuthSettings", "read"]

#: How the TPP authenticates to the token endpoint: its QWAC in the TLS handshake (RFC 8705
#: tls_client_auth), a JWT signed with its signing key (RFC 7523 private_key_jwt), or a client
#: secret (RFC 6749 2.3.1, HTTP Basic).
OAuthAuth = Literal["tls_client_auth", "private_key_jwt", "client_secret"]
OAUTH_AUTH_METHODS: tuple[OAuthAuth, ...] = get_args(OAuthAuth)
#: Seconds before a token's expiry at which the run fetches a fresh one.
DEFAULT_REFRESH_MARGIN = 30.0


@dataclass(frozen=True)
class OAuthSettings:
    """``[oauth]``: the token endpoint (``token_url``: a URL, or a path on the base URL's host),
    the client id, the scope asked for, how the client authenticates (``auth``), the variable of
    its secret (``client_secret_env``, with ``auth = "client_secret"``), and how long before a
    token's end a fresh one is fetched (``refresh_margin``, seconds)."""

    token_url: str
    client_id: str
    auth: OAuthAuth
    scope: str | None = None
    client_secret_env: str | None = None
    refresh_margin: float = DEFAULT_REFRESH_MARGIN

    def token_endpoint(self, base_url: str) -> str:
        """The token endpoint's URL: ``token_url``, a path taken on the host of ``base_url``."""
        if urlsplit(self.token_url).scheme:
            return self.token_url
        return urljoin(base_url, self.token_url)

    def client_secret(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The client secret from its environment variable (None unless ``client_secret``)."""
        if self.client_secret_env is None:
            return None
        env = os.environ if environ is None else environ
        value = env.get(self.client_secret_env)
        if not value:
            raise ProfileError(
                f"[oauth] client_secret_env names {self.client_secret_env}, which is not set: "
                "the token endpoint's client secret is read from it"
            )
        return value


def read(table: Table) -> OAuthSettings | None:
    """``[oauth]``, None when the profile has no such table."""
    if not table.names():
        table.finish()
        return None
    token_url = table.optional_str("token_url")
    client_id = table.optional_str("client_id")
    auth_text = table.get("auth", str, None)
    for key, value in (("token_url", token_url), ("client_id", client_id), ("auth", auth_text)):
        if value is None:
            raise table.error(key, "is required in [oauth]")
    assert token_url is not None and client_id is not None
    auth = next((method for method in OAUTH_AUTH_METHODS if method == auth_text), None)
    if auth is None:
        raise table.error(
            "auth", f"must be one of {', '.join(OAUTH_AUTH_METHODS)}, not {auth_text!r}"
        )
    parts = urlsplit(token_url)
    if parts.scheme not in ("", "http", "https") or (parts.scheme and not parts.netloc):
        raise table.error("token_url", f"must be an http(s) URL or a path, not {token_url!r}")
    if not parts.scheme and not token_url.startswith("/"):
        raise table.error("token_url", f"a path must start with '/', not {token_url!r}")
    secret_env = table.optional_str("client_secret_env")
    if auth == "client_secret" and secret_env is None:
        raise table.error("client_secret_env", 'is required with auth = "client_secret"')
    if auth != "client_secret" and secret_env is not None:
        raise table.error("client_secret_env", 'is only used with auth = "client_secret"')
    margin = table.get("refresh_margin", float, DEFAULT_REFRESH_MARGIN)
    if margin < 0:
        raise table.error("refresh_margin", f"must be 0 or more seconds, not {margin}")
    settings = OAuthSettings(
        token_url=token_url,
        client_id=client_id,
        auth=auth,
        scope=table.optional_str("scope"),
        client_secret_env=secret_env,
        refresh_margin=float(margin),
    )
    table.finish()
    return settings
