"""Schemathesis hooks (``SCHEMATHESIS_HOOKS=schemathesis_signing``): every request Schemathesis
sends is signed as spec 5 asks, with the suite's own signer (``conformance.signing``) and its
generated test identity, so that the reference server judges the request and not its missing
signature. Used by ``scripts/schemathesis_stateful.py``; needs the project installed beside
Schemathesis."""

from __future__ import annotations

from typing import Any

import httpx
import requests
import schemathesis

from conformance.signing import SignatureAuth, default_identity

#: What the signer makes afresh; a value Schemathesis generated for one of them is dropped.
_SIGNED = ("Date", "Digest", "Signature", "TPP-Signature-Certificate")


class SpecFiveSigner(requests.auth.AuthBase):
    """A ``requests`` auth that signs the prepared request with :class:`SignatureAuth`."""

    def __init__(self) -> None:
        self._signer = SignatureAuth(default_identity().signing_credentials())

    def __call__(self, prepared: requests.PreparedRequest) -> requests.PreparedRequest:
        made = {name.lower() for name in _SIGNED}
        headers = {k: v for k, v in prepared.headers.items() if k.lower() not in made}
        body = prepared.body or b""
        content = body.encode("utf-8") if isinstance(body, str) else bytes(body)
        request = httpx.Request(
            str(prepared.method), str(prepared.url), headers=headers, content=content
        )
        self._signer.sign_request(request)
        for name in _SIGNED:
            prepared.headers.pop(name, None)
            if name in request.headers:
                prepared.headers[name] = request.headers[name]
        return prepared


_SIGNER = SpecFiveSigner()


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    kwargs["auth"] = _SIGNER
