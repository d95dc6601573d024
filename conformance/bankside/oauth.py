"""The run's access tokens (``[oauth]`` in the profile): fetched from the bank's token endpoint with
the OAuth 2.0 client-credentials grant before the first request, fetched again when one is about to
expire or an answer says it has, and put on every request as ``Authorization: Bearer`` by the
client (spec 5 item 8 leaves the flow open: "Access token or OAuth flow: not shown.").

The OAuth client is Authlib's (``authlib.integrations.httpx_client.OAuth2Client``): the grant, the
client authentication of each ``auth`` (HTTP Basic for ``client_secret``, an RFC 7523 assertion for
``private_key_jwt``, the QWAC in the TLS handshake for ``tls_client_auth``, RFC 8705), the token's
expiry. This module holds one token per worker behind a lock, so the threads of a worker share it
and only one fetches at a time.
"""

from __future__ import annotations

import base64
import threading
from typing import TYPE_CHECKING, Any

import httpx
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.httpx_client import OAuth2Client
from authlib.oauth2.rfc6749 import OAuth2Token
from authlib.oauth2.rfc7523 import PrivateKeyJWT
from cryptography.hazmat.primitives import serialization

from conformance.errors import ConformanceError, TargetError

if TYPE_CHECKING:
    import ssl

    from conformance.profile import OAuthSettings
    from conformance.signing import TppIdentity

__all__ = ["TOKEN_EXPIRED_CODES", "TokenSource", "says_token_expired"]

#: The error codes of an answer refusing the access token (Berlin Group's TOKEN_*; spec 7 lists
#: none), besides RFC 6750's ``WWW-Authenticate: Bearer error="invalid_token"``.
TOKEN_EXPIRED_CODES = frozenset({"TOKEN_EXPIRED", "TOKEN_INVALID", "TOKEN_UNKNOWN"})


def says_token_expired(status: int, www_authenticate: str | None, code: object) -> bool:
    """Whether an answer refuses the access token as expired or unknown (RFC 6750 3.1: 401 with
    ``error="invalid_token"``; or a 401 whose spec 7 ``code`` is one of
    :data:`TOKEN_EXPIRED_CODES`): the request is worth sending again with a fresh token."""
    if status != 401:
        return False
    if www_authenticate and "invalid_token" in www_authenticate.lower():
        return True
    return isinstance(code, str) and code.upper() in TOKEN_EXPIRED_CODES


class TokenSource:
    """One access token at a time from the profile's token endpoint, shared by a worker's threads.

    :meth:`token` gives the current one, fetching a fresh one first when there is none or it
    expires within ``refresh_margin`` seconds; :meth:`refresh` replaces a token an answer refused
    (once per token, however many threads saw it refused). :attr:`fetched` counts the grants.
    ``verify`` is the TLS context of the run (with the QWAC for ``tls_client_auth``);
    ``identity`` signs the ``private_key_jwt`` assertion (its certificate rides in ``x5c``).
    """

    def __init__(
        self,
        settings: OAuthSettings,
        base_url: str,
        *,
        verify: ssl.SSLContext | bool = True,
        identity: TppIdentity | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        proxy: str | None = None,
    ) -> None:
        self.settings = settings
        self.url = settings.token_endpoint(base_url)
        self.fetched = 0
        self._lock = threading.Lock()
        self._token: OAuth2Token | None = None
        secret: Any = settings.client_secret()
        method = {"client_secret": "client_secret_basic", "tls_client_auth": "none"}.get(
            settings.auth, settings.auth
        )
        if settings.auth == "tls_client_auth" and verify is True:
            raise ConformanceError(
                '[oauth] auth = "tls_client_auth" shows the TLS client certificate to the token '
                "endpoint: give it (tls_certificate, --tls-cert)"
            )
        if settings.auth == "private_key_jwt":
            if identity is None:
                raise ConformanceError('[oauth] auth = "private_key_jwt" needs a signing key')
            secret = identity.private_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        self._client = OAuth2Client(
            client_id=settings.client_id,
            client_secret=secret,
            token_endpoint_auth_method=method,
            scope=settings.scope,
            token_endpoint=self.url,
            grant_type="client_credentials",
            leeway=int(settings.refresh_margin),
            verify=verify,
            timeout=timeout,
            transport=transport,
            proxy=proxy,
        )
        if settings.auth == "private_key_jwt":
            assert identity is not None
            der = identity.certificate.public_bytes(serialization.Encoding.DER)
            self._client.register_client_auth_method(
                PrivateKeyJWT(self.url, headers={"x5c": [base64.b64encode(der).decode("ascii")]})
            )

    def token(self) -> str:
        """A valid access token, fetched when there is none or it is about to expire."""
        with self._lock:
            current = self._token
            if current is None or current.is_expired(leeway=self.settings.refresh_margin):
                current = self._fetch()
            return str(current["access_token"])

    def refresh(self, refused: str) -> str:
        """A fresh token after an answer refused ``refused``; when another thread already
        replaced it, that one."""
        with self._lock:
            current = self._token
            if current is None or current["access_token"] == refused:
                current = self._fetch()
            return str(current["access_token"])

    def authorisation_url(
        self, endpoint: str, redirect_uri: str, *, state: str, code_verifier: str
    ) -> str:
        """The OAuth SCA approach's authorisation request (RFC 6749 4.1.1) to ``endpoint``,
        for the profile's client, with PKCE (RFC 7636, S256) over ``code_verifier``."""
        with self._lock:
            url, _ = self._client.create_authorization_url(
                endpoint,
                state=state,
                code_verifier=code_verifier,
                redirect_uri=redirect_uri,
                code_challenge_method="S256",
            )
        return str(url)

    def exchange_code(
        self, endpoint: str, authorisation_response: str, redirect_uri: str, code_verifier: str
    ) -> None:
        """The code of ``authorisation_response`` (the redirect back) exchanged at ``endpoint``
        (RFC 6749 4.1.3), the client authenticated as for its own tokens; the token is the
        PSU's for that authorisation and not used further here. A refusal is a TargetError."""
        with self._lock:
            try:
                self._client.fetch_token(
                    endpoint,
                    authorization_response=authorisation_response,
                    redirect_uri=redirect_uri,
                    code_verifier=code_verifier,
                    grant_type="authorization_code",
                )
            except OAuthError as error:
                raise TargetError(
                    f"the token endpoint {endpoint} refused the authorisation code: "
                    f"{error.error}" + (f" ({error.description})" if error.description else "")
                ) from None
            except (httpx.HTTPError, ValueError) as error:
                raise TargetError(
                    f"the token endpoint {endpoint} gave no token for the code ({error})"
                ) from None

    def _fetch(self) -> OAuth2Token:
        try:
            token = self._client.fetch_token(self.url, grant_type="client_credentials")
        except OAuthError as error:
            raise TargetError(
                f"the token endpoint {self.url} refused the client credentials: {error.error}"
                + (f" ({error.description})" if error.description else "")
            ) from None
        except httpx.HTTPError as error:
            raise TargetError(
                f"the token endpoint {self.url} cannot be reached ({error})"
            ) from None
        except ValueError as error:  # not JSON, or no access_token in it
            raise TargetError(
                f"the token endpoint {self.url} gave no usable token ({error})"
            ) from None
        if not isinstance(token, dict) or not token.get("access_token"):
            raise TargetError(f"the token endpoint {self.url} answered without an access_token")
        self._token = token if isinstance(token, OAuth2Token) else OAuth2Token(token)
        self.fetched += 1
        return self._token

    def close(self) -> None:
        self._client.close()
