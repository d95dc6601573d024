"""``[negative_certificates]``: certificates a TPP holds ready-made for the negative scenarios of
spec 5 item 1, with their keys, so that those scenarios run without any CA key (a TPP with a
qualified trust service provider's test certificates has none).

Spec 5 item 1 says only "The TPP sends its signing certificate"; which certificates a bank
refuses (expired, without the PSD2 role, from a CA it does not trust, revoked, a QWAC without the
role or of another organisation) is what the scenarios check, and where a certificate comes from
is the TPP's business: the profile names a file for each it holds.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from conformance.errors import CertificateError
from conformance.profile.toml_table import Table

__all__ = ["NEGATIVE_CERTIFICATE_NAMES", "NegativeCertificate", "NegativeCertificates", "read"]

#: The certificates the table may name, and what each is (docs/reference/profile.md).
NEGATIVE_CERTIFICATE_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "expired": "a signing certificate of a CA the bank trusts, past its validity",
        "no_role": "a signing certificate of a CA the bank trusts, without PSP_PI and PSP_AI",
        "other_ca": "a well-formed signing certificate of a CA the bank does not trust",
        "revoked": "a signing certificate its CA (one the bank trusts) has revoked",
        "qwac_no_role": "a TLS client certificate (QWAC) the bank accepts, without PSP_PI and "
        "PSP_AI",
        "qwac_other_organisation": "a TLS client certificate (QWAC) the bank accepts, of "
        "another organisation than the signing certificate",
    }
)


@dataclass(frozen=True)
class NegativeCertificate:
    """One certificate file, with its key in ``key`` or in the file itself (PEM with the key,
    or PKCS#12)."""

    certificate: Path
    key: Path | None = None


@dataclass(frozen=True)
class NegativeCertificates:
    """The ready-made certificates by name (:data:`NEGATIVE_CERTIFICATE_NAMES`), and the
    environment variable holding their keys' password (one for all, never in the file)."""

    certificates: Mapping[str, NegativeCertificate] = field(
        default_factory=lambda: MappingProxyType({})
    )
    password_env: str | None = None

    def get(self, name: str) -> NegativeCertificate | None:
        return self.certificates.get(name)

    def password(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The keys' password from the named variable (None: none named)."""
        if self.password_env is None:
            return None
        env = os.environ if environ is None else environ
        value = env.get(self.password_env)
        if value is None:
            raise CertificateError(
                "the password of the [negative_certificates] keys is read from the environment "
                f"variable {self.password_env}, which is not set"
            )
        return value


def _file(table: Table, key: str, source: Path) -> Path | None:
    value = table.optional_str(key)
    if value is None:
        return None
    resolved = (source.parent / Path(value).expanduser()).resolve()
    if not resolved.is_file():
        raise table.error(key, f"names {value!r}, and {resolved} does not exist")
    return resolved


def read(table: Table, source: Path) -> NegativeCertificates:
    """``[negative_certificates]``: ``<name>`` and ``<name>_key`` for each name, and
    ``password_env``."""
    found: dict[str, NegativeCertificate] = {}
    for name in NEGATIVE_CERTIFICATE_NAMES:
        certificate, key = _file(table, name, source), _file(table, f"{name}_key", source)
        if certificate is None:
            if key is not None:
                raise table.error(f"{name}_key", f"is given without {name}")
            continue
        found[name] = NegativeCertificate(certificate, key)
    password_env = table.optional_str("password_env")
    table.finish()
    return NegativeCertificates(MappingProxyType(found), password_env)
