"""The profile a command runs with: ``--profile`` (or the bundled reference server's), then the
environment variables that stand in for the command-line flags, then the flags on top (a flag
wins over its variable, a variable over the file).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance._data import data_directory
from conformance.errors import ProfileError
from conformance.profile.load import check_base_url, load_profile
from conformance.profile.model import TargetProfile
from conformance.signing.keyfiles import KEY_PASSWORD_ENV, TLS_KEY_PASSWORD_ENV

__all__ = [
    "DEMANDING_PROFILE",
    "ENV_CERT",
    "ENV_KEY",
    "ENV_KEY_PASSWORD",
    "ENV_PROFILE",
    "ENV_TARGET",
    "ENV_TLS_CERT",
    "ENV_TLS_KEY",
    "ENV_TLS_KEY_PASSWORD",
    "ENV_TOKEN_URL",
    "PERMISSIVE_PROFILE",
    "REFERENCE_PROFILE",
    "profile_from_options",
    "with_options",
]

#: The profile of the bundled reference server (shipped with the project).
REFERENCE_PROFILE = data_directory("profiles") / "reference-server.toml"

#: The profile of the bundled reference server playing the permissive reading (``--permissive``):
#: the same server, whose payment creations answer spec 5 item 6's 401 (``[sca] start``).
PERMISSIVE_PROFILE = data_directory("profiles") / "reference-server-permissive.toml"

#: The profile of the bundled reference server playing the demanding reading (``--demanding``):
#: the same server, whose payment creations start their SCA (``[sca] start``) and whose card
#: account creation wants a status (``[setup] templates``).
DEMANDING_PROFILE = data_directory("profiles") / "reference-server-demanding.toml"

#: Environment variables that stand in for the CLI flags.
ENV_PROFILE = "CONFORMANCE_PROFILE"
ENV_TARGET = "CONFORMANCE_TARGET"
ENV_CERT = "CONFORMANCE_CERT"
ENV_KEY = "CONFORMANCE_KEY"
ENV_KEY_PASSWORD = KEY_PASSWORD_ENV
ENV_TLS_KEY_PASSWORD = TLS_KEY_PASSWORD_ENV
ENV_TLS_CERT = "CONFORMANCE_TLS_CERT"
ENV_TLS_KEY = "CONFORMANCE_TLS_KEY"
#: The token endpoint over the profile's ``[oauth] token_url`` (``conformance run --play`` points
#: it at the bundled server's).
ENV_TOKEN_URL = "CONFORMANCE_TOKEN_URL"

PathArgument = str | os.PathLike[str] | None


def profile_from_options(
    *,
    target: str | None = None,
    cert: PathArgument = None,
    key: PathArgument = None,
    profile: PathArgument = None,
    environ: Mapping[str, str] | None = None,
    tls_cert: PathArgument = None,
    tls_key: PathArgument = None,
    tls_ca: PathArgument = None,
) -> TargetProfile:
    """The profile a command runs with: ``--profile`` (or the bundled reference server's),
    then environment variables, then CLI flags on top. The key's password can come from
    ``CONFORMANCE_KEY_PASSWORD`` rather than the file (a password in a flag shows in ``ps``).

    Without ``--profile`` and ``--target`` the bundled reference server is the target (what
    ``make run`` exercises). With ``--target`` but no profile, everything is assumed supported
    and the sandbox present: the profile is where a bank says otherwise.
    """
    env = os.environ if environ is None else environ
    profile = profile if profile is not None else env.get(ENV_PROFILE) or None
    target = target if target is not None else env.get(ENV_TARGET) or None
    cert = cert if cert is not None else env.get(ENV_CERT) or None
    key = key if key is not None else env.get(ENV_KEY) or None
    tls_cert = tls_cert if tls_cert is not None else env.get(ENV_TLS_CERT) or None
    tls_key = tls_key if tls_key is not None else env.get(ENV_TLS_KEY) or None
    if key is not None and cert is None:
        raise ProfileError("--key needs --cert (the certificate the key belongs to)")
    if tls_key is not None and tls_cert is None:
        raise ProfileError("--tls-key needs --tls-cert (the certificate the key belongs to)")
    if profile is not None:
        base = load_profile(profile)
    elif target is not None:
        base = TargetProfile(name=target, base_url=check_base_url(target, "--target"))
    else:
        base = load_profile(REFERENCE_PROFILE)
    merged = with_options(
        base, target=target, cert=cert, key=key, tls_cert=tls_cert, tls_key=tls_key, tls_ca=tls_ca
    )
    password = env.get(ENV_KEY_PASSWORD)
    if password:
        merged = dataclasses.replace(merged, key_password=password)
    token_url = env.get(ENV_TOKEN_URL)
    if token_url and merged.oauth is not None:
        token_url = check_base_url(token_url, ENV_TOKEN_URL)
        merged = dataclasses.replace(
            merged, oauth=dataclasses.replace(merged.oauth, token_url=token_url)
        )
    return merged


def with_options(
    profile: TargetProfile,
    *,
    target: str | None = None,
    cert: PathArgument = None,
    key: PathArgument = None,
    tls_cert: PathArgument = None,
    tls_key: PathArgument = None,
    tls_ca: PathArgument = None,
) -> TargetProfile:
    """``profile`` with CLI values on top; paths from the command line are relative to the cwd.

    A certificate given without a key means the key is in the certificate file (or PKCS#12),
    so the profile's key is dropped rather than paired with a certificate it does not fit
    (the same for the TLS client certificate and its key).
    """
    changes: dict[str, Any] = {}
    if target is not None:
        changes["base_url"] = check_base_url(target, "--target")
    if cert is not None:
        changes["certificate"] = _existing_file(cert, "--cert")
        changes["key"] = None
    if key is not None:
        changes["key"] = _existing_file(key, "--key")
    tls: dict[str, Any] = {}
    if tls_cert is not None:
        tls["certificate"] = _existing_file(tls_cert, "--tls-cert")
        tls["key"] = None
    if tls_key is not None:
        tls["key"] = _existing_file(tls_key, "--tls-key")
    if tls_ca is not None:
        tls["ca_certificate"] = _existing_file(tls_ca, "--tls-ca")
    if tls:
        changes["tls"] = dataclasses.replace(profile.tls, **tls)
    return dataclasses.replace(profile, **changes)


def _existing_file(value: str | os.PathLike[str], what: str) -> Path:
    path = Path(value).resolve()
    if not path.is_file():
        raise ProfileError(f"{what}: the file {path} does not exist")
    return path
