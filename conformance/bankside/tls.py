"""The client side of TLS: which server certificates the run trusts and which client certificate
it shows (the QWAC of mutual TLS, apart from the QSealC that signs, spec 5).

The client certificate is PEM (certificate, then the key in the same file or in ``key``) or
PKCS#12 (``.p12``/``.pfx``); the password comes from the environment variable the profile names,
never from the file. ``ssl`` loads a chain only from a file, so a PKCS#12 bundle is written as PEM
to a private temporary file that is removed once loaded.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from conformance.errors import CertificateError
from conformance.profile.tls_settings import TlsSettings
from conformance.signing.keyfiles import TLS_KEY_PASSWORD_ENV

if TYPE_CHECKING:
    from conformance.signing import TppIdentity

__all__ = ["client_context", "client_context_as"]

_PKCS12_SUFFIXES = (".p12", ".pfx")


def client_context(
    settings: TlsSettings, environ: Mapping[str, str] | None = None
) -> ssl.SSLContext | bool:
    """An ``SSLContext`` for the settings, or True (the system's defaults) when nothing is set.

    With ``ca_trust = "replace"`` the CA bundle is the only trust anchor (a test environment's
    private CA); with ``"add"`` it joins the system's store (a gateway with a public certificate
    in front of a private one, or a proxy that re-signs)."""
    if settings.ca_certificate is None and settings.certificate is None:
        return True
    ca_file = settings.ca_certificate
    try:
        if ca_file is not None and settings.ca_trust == "replace":
            context = ssl.create_default_context(cafile=str(ca_file))
        else:
            context = ssl.create_default_context()
            if ca_file is not None:
                context.load_verify_locations(cafile=str(ca_file))
    except (ssl.SSLError, OSError) as error:
        raise CertificateError(
            f"the CA bundle {ca_file} cannot be used ({_reason(error)})"
        ) from None
    if settings.certificate is not None:
        _load_client_certificate(context, settings, settings.password(environ))
    return context


def client_context_as(settings: TlsSettings, identity: TppIdentity) -> ssl.SSLContext:
    """The context of ``settings`` (its CA trust), showing ``identity`` as the TLS client
    certificate instead of the profile's: another QWAC, for the checks a bank makes of it."""
    base = client_context(replace(settings, certificate=None, key=None, password_env=None))
    context = ssl.create_default_context() if base is True else base
    assert isinstance(context, ssl.SSLContext)
    pem = identity.private_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ) + identity.certificate.public_bytes(serialization.Encoding.PEM)
    _load_pem_chain(context, pem, "the minted TLS client certificate")
    return context


def _load_pem_chain(context: ssl.SSLContext, pem: bytes, what: str) -> None:
    """Load a key and certificate chain held in memory: ``ssl`` reads them only from a file, so
    they go to a private temporary file (mode 0600) that is removed once loaded."""
    descriptor, name = tempfile.mkstemp(suffix=".pem")
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(pem)
        context.load_cert_chain(name)
    except ssl.SSLError as error:
        raise CertificateError(f"{what} cannot be used ({_reason(error)})") from None
    finally:
        os.unlink(name)


def _load_client_certificate(
    context: ssl.SSLContext, settings: TlsSettings, password: str | None
) -> None:
    certificate = settings.certificate
    assert certificate is not None
    if not certificate.is_file():
        raise CertificateError(f"the TLS client certificate file {certificate} does not exist")
    if certificate.suffix.lower() in _PKCS12_SUFFIXES:
        if settings.key is not None:
            raise CertificateError(
                f"{certificate} is a PKCS#12 file, which holds its own key; give no tls_key"
            )
        _load_pkcs12(context, certificate, password, _password_variable(settings))
        return
    if settings.key is not None and not settings.key.is_file():
        raise CertificateError(f"the TLS client key file {settings.key} does not exist")
    try:
        context.load_cert_chain(
            str(certificate), None if settings.key is None else str(settings.key), password
        )
    except (ssl.SSLError, OSError) as error:
        key = certificate if settings.key is None else settings.key
        raise CertificateError(
            f"the TLS client certificate {certificate} and key {key} cannot be used "
            f"({_reason(error)}): a PEM certificate with its key, and an encrypted key's "
            f"password in the environment variable {_password_variable(settings)}"
        ) from None


def _password_variable(settings: TlsSettings) -> str:
    """The environment variable the TLS key's password is read from."""
    return settings.password_env or TLS_KEY_PASSWORD_ENV


def _load_pkcs12(context: ssl.SSLContext, path: Path, password: str | None, variable: str) -> None:
    try:
        bundle = pkcs12.load_pkcs12(
            path.read_bytes(), None if password is None else password.encode()
        )
    except (ValueError, TypeError, UnsupportedAlgorithm):
        reason = (
            f"it needs a password (give it in the environment variable {variable})"
            if password is None
            else f"the password in {variable} is wrong"
        )
        raise CertificateError(
            f"the TLS client certificate {path} cannot be opened: {reason}, or it is not PKCS#12"
        ) from None
    if bundle.cert is None or bundle.key is None:
        raise CertificateError(f"the PKCS#12 file {path} does not hold a certificate with its key")
    pem = bundle.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    pem += bundle.cert.certificate.public_bytes(serialization.Encoding.PEM)
    for extra in bundle.additional_certs:
        pem += extra.certificate.public_bytes(serialization.Encoding.PEM)
    _load_pem_chain(context, pem, f"the TLS client certificate {path}")


def _reason(error: BaseException) -> str:
    if isinstance(error, ssl.SSLError):
        return str(error.reason or error)
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error)
