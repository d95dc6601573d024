"""HTTPS for the reference server, with the standard library's ``ssl``: the server's certificate
and key, and, for mutual TLS, the CAs a client certificate must chain to (a bank's gateway asks
for the TPP's QWAC in the handshake and refuses one it cannot chain, or one that has expired).
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from pathlib import Path

__all__ = ["server_context"]


def server_context(
    certificate: Path, key: Path | None = None, client_cas: Sequence[Path] = ()
) -> ssl.SSLContext:
    """A server-side TLS context (TLS 1.2 or later); with ``client_cas`` a client certificate is
    required and checked against them. A file that cannot be used is a ``ValueError`` naming it."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(str(certificate), None if key is None else str(key))
    except (ssl.SSLError, OSError) as error:
        raise ValueError(
            f"cannot use the TLS certificate {certificate} with its key: {_reason(error)}"
        ) from None
    for ca in client_cas:
        try:
            context.load_verify_locations(cafile=str(ca))
        except (ssl.SSLError, OSError) as error:
            raise ValueError(f"cannot use the client CA file {ca}: {_reason(error)}") from None
    if client_cas:
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def _reason(error: BaseException) -> str:
    if isinstance(error, ssl.SSLError):
        return str(error.reason or error)
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error)
