"""What a profile says about TLS: the CAs the target's certificate is checked against, and the
client certificate of mutual TLS (the QWAC), with the environment variable of its password.
``conformance.bankside.tls`` makes the client's ``SSLContext`` of it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from conformance.errors import CertificateError
from conformance.signing.keyfiles import TLS_KEY_PASSWORD_ENV

__all__ = ["CA_TRUST_MODES", "CaTrust", "TlsSettings"]

#: How ``ca_certificate`` is used: the only trust anchors, or added to the system's.
CaTrust = Literal["replace", "add"]
CA_TRUST_MODES: tuple[CaTrust, ...] = get_args(CaTrust)


@dataclass(frozen=True)
class TlsSettings:
    """What the client's TLS needs from the profile and the command line."""

    ca_certificate: Path | None = None
    ca_trust: CaTrust = "replace"
    certificate: Path | None = None
    key: Path | None = None
    #: The name of the environment variable that holds the client key's password.
    password_env: str | None = None

    def password(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The client key's password: from the environment variable the profile names
        (``tls_key_password_env``), else from ``CONFORMANCE_TLS_KEY_PASSWORD`` (None: unset)."""
        env = os.environ if environ is None else environ
        if self.password_env is None:
            return env.get(TLS_KEY_PASSWORD_ENV) or None
        value = env.get(self.password_env)
        if value is None:
            raise CertificateError(
                f"the TLS client key's password is read from the environment variable "
                f"{self.password_env}, which is not set"
            )
        return value
