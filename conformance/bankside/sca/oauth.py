"""The OAuth SCA approach (``[sca] approach = "oauth"``): the answer's ``_links.scaOAuth`` names the
bank's OAuth 2.0 authorisation server (its metadata, RFC 8414); the PSU authorises there through
another step (the reference page, a person, the profile's command), is sent back to the
TPP-Redirect-URI with a code, and the TPP exchanges the code for a token (RFC 6749 4.1, with PKCE).

Berlin Group's OAuth SCA approach, not spec 5 item 6 (which states SCA by redirect): a profile
that chooses it waives the scenarios that check the ``scaRedirect`` link itself, as with
decoupled SCA. The client's authentication at the token endpoint is ``[oauth]``'s.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urljoin, urlsplit

from conformance.bankside.sca.base import ScaError, ScaOutcome, ScaRedirectBroken, ScaStep
from conformance.checks import json_document
from conformance.errors import TargetError

if TYPE_CHECKING:
    from conformance.bankside.client import TargetClient

__all__ = ["OAuthSca"]


class OAuthSca:
    """Authorisation code flow at the server ``scaOAuth`` describes; ``authorise`` stands for
    the PSU at its authorisation endpoint and must say where the PSU was sent back (the
    reference page and the command do; a person at the terminal does not)."""

    def __init__(self, authorise: ScaStep, client: TargetClient, redirect_uri: str) -> None:
        self.authorise = authorise
        self.client = client
        self.redirect_uri = redirect_uri

    def complete(
        self, link: str, *, customer_number: str | None, approve: bool = True
    ) -> ScaOutcome:
        tokens = self.client.tokens
        if tokens is None:  # the profile loader insists on [oauth] with this approach
            raise ScaError('[sca] approach = "oauth" needs [oauth] (the client and its auth)')
        authorisation_endpoint, token_endpoint = self._metadata(link)
        state, verifier = secrets.token_urlsafe(16), secrets.token_urlsafe(48)
        url = tokens.authorisation_url(
            authorisation_endpoint, self.redirect_uri, state=state, code_verifier=verifier
        )
        outcome = self.authorise.complete(url, customer_number=customer_number, approve=approve)
        back = outcome.redirect_url
        if back is None:
            raise ScaError(
                "the OAuth SCA approach needs the redirect back (its code): complete SCA with "
                '[sca] mode = "reference" or "command"'
            )
        query = {name: values[0] for name, values in parse_qs(urlsplit(back).query).items()}
        if query.get("state") != state:
            raise ScaRedirectBroken(f"the redirect back {back} does not carry the request's state")
        if "error" in query or "code" not in query:
            if approve:
                raise ScaRedirectBroken(
                    f"the approved authorisation came back without a code: {back}"
                )
            return ScaOutcome(approved=False, redirect_url=back)
        try:
            tokens.exchange_code(token_endpoint, back, self.redirect_uri, verifier)
        except TargetError as error:
            raise ScaRedirectBroken(error.message) from None
        return ScaOutcome(approved=approve, redirect_url=back)

    def _metadata(self, link: str) -> tuple[str, str]:
        """The authorisation and token endpoints of the metadata at ``link``, resolved against
        its URL (a path is taken on its host)."""
        answer = self.client.request("GET", link, headers={"Accept": "application/json"}, auth=None)
        document = json_document(answer) if answer.status == 200 else None
        if not isinstance(document, Mapping):
            raise ScaRedirectBroken(
                f"the scaOAuth link {link} answered HTTP {answer.status} without metadata"
            )
        found = [document.get(name) for name in ("authorization_endpoint", "token_endpoint")]
        if not all(isinstance(value, str) and value for value in found):
            raise ScaRedirectBroken(
                f"the metadata at {link} names no authorization_endpoint or token_endpoint"
            )
        return urljoin(answer.url, str(found[0])), urljoin(answer.url, str(found[1]))
