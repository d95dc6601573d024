"""The plugin's command-line options and what a run reads from them (target, seed, strictness)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.bankside.preflight import TARGET_OPTIONS
from conformance.errors import ConformanceError
from conformance.report.collector import ComplianceCollector
from conformance.run_options import RUN, TARGET, TLS
from conformance.suite import SUITE_DIR

if TYPE_CHECKING:
    from conformance.profile import TargetProfile
    from conformance.signing import CertificateAuthority, TppIdentity


SEED = pytest.StashKey[int]()


COLLECTOR = pytest.StashKey[ComplianceCollector]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The settings a run shares with ``conformance run`` (:mod:`conformance.run_options`), then
    the plugin's own: the trust anchors, a scenario list, the server's process."""
    group = parser.getgroup("conformance", "PSD2 conformance suite (spec 1.22.0)")
    for option in (*TARGET.values(), *TLS.values()):
        group.addoption(option.flag, **option.keywords())
    group.addoption(
        "--trust-anchor",
        metavar="CA.pem",
        help="the only CA the target accepts signing certificates from; with its key, the auth "
        "scenarios mint test certificates from it and expect other CAs to be refused",
    )
    group.addoption("--trust-anchor-key", metavar="KEY", help="private key of --trust-anchor")
    group.addoption(
        "--trust-anchor-utf8",
        metavar="CA.pem",
        help="a second CA the target trusts, whose name has a character outside ASCII; with its "
        "key, the RFC 2047 scenario signs with a certificate it issues (spec 5 item 3)",
    )
    group.addoption(
        "--trust-anchor-utf8-key", metavar="KEY", help="private key of --trust-anchor-utf8"
    )
    group.addoption(
        "--revoked-cert",
        metavar="CERT",
        help="a signing certificate its CA has revoked (the target holds the CA's revocation "
        "list); the revocation scenarios sign with it (the profile's [negative_certificates] "
        "revoked goes first)",
    )
    group.addoption("--revoked-key", metavar="KEY", help="private key of --revoked-cert")
    group.addoption(
        "--tls-trust-anchor",
        metavar="CA.pem",
        help="the CA the target accepts TLS client certificates (QWACs) from; with its key, the "
        "checks of the TLS client certificate mint QWACs from it",
    )
    group.addoption(
        "--tls-trust-anchor-key", metavar="KEY", help="private key of --tls-trust-anchor"
    )
    for option in RUN.values():
        changes = {"type": int, "default": 1} if option.name == "threads" else {}
        group.addoption(option.plugin_flag, **option.keywords(**changes))
    group.addoption(
        "--conformance-scenarios",
        metavar="FILE",
        help="run only the scenarios whose ids FILE lists, one a line (a partial run; the "
        "self-check runs each fault on the scenarios that can see it this way)",
    )
    group.addoption(
        "--conformance-server-pid",
        metavar="PID",
        type=int,
        default=None,
        help="the process serving the target (conformance run gives its bundled server's): when "
        "it is gone, every process stops after its current test and the verdict is INTERRUPTED",
    )
    group.addoption(
        "--conformance-brief",
        action="store_true",
        default=False,
        help="after the causes, list the failed scenarios one line each (at most 100, then how "
        "many more); conformance run gives it with pytest's --tb=no -rN unless --verbose, so "
        "that the terminal shows no failure blocks (the reports keep every exchange)",
    )
    group.addoption(
        "--conformance-evidence",
        action="store_true",
        default=False,
        help="keep every exchange of the run, masked as the reports are, one file per scenario "
        "in <reports>/evidence/exchanges/ (conformance run --seal gives it)",
    )


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def given_on_command_line(config: pytest.Config) -> bool:
    """Whether the user pointed the run at a target (so it should be checked before it starts)."""
    return config.getoption("target") is not None or config.getoption("profile") is not None


def brief_run(config: pytest.Config) -> bool:
    """Whether the terminal lists the failed scenarios itself (``--conformance-brief``)."""
    return bool(config.getoption("conformance_brief"))


def strict_run(config: pytest.Config) -> bool:
    return bool(config.getoption("conformance_strict"))


def names_scenarios(config: pytest.Config) -> bool:
    for arg in config.args:
        path = Path(arg.split("::", 1)[0]).resolve()
        if path == SUITE_DIR or SUITE_DIR in path.parents or path in SUITE_DIR.parents:
            return True
    return False


def target_options(config: pytest.Config) -> dict[str, str | None]:
    """The options that name the target and how to reach it: ``--target``, ``--profile``,
    ``--cert``, ``--key`` and the TLS ones (``--tls-cert``, ``--tls-key``, ``--tls-ca``)."""
    return {name: config.getoption(name) for name in TARGET_OPTIONS}


def profile_from_config(config: pytest.Config) -> TargetProfile:
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.profile import profile_from_options

    options = target_options(config)
    return profile_from_options(
        target=options["target"],
        profile=options["profile"],
        cert=options["cert"],
        key=options["key"],
        tls_cert=options["tls_cert"],
        tls_key=options["tls_key"],
        tls_ca=options["tls_ca"],
    )


def trust_anchor_from_options(
    config: pytest.Config, option: str = "trust_anchor"
) -> CertificateAuthority | None:
    """The CA of ``--trust-anchor`` (or of ``--trust-anchor-utf8``) with its ``-key``."""
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.signing import load_ca

    ca, key = config.getoption(option), config.getoption(f"{option}_key")
    if ca is None and key is None:
        return None
    if ca is None or key is None:
        flag = "--" + option.replace("_", "-")
        raise ConformanceError(f"{flag} and {flag}-key go together")
    return load_ca(ca, key)


def revoked_identity_from_options(config: pytest.Config) -> TppIdentity | None:
    """The certificate of ``--revoked-cert`` with its ``--revoked-key``."""
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.signing import load_identity

    certificate, key = config.getoption("revoked_cert"), config.getoption("revoked_key")
    if certificate is None:
        if key is not None:
            raise ConformanceError("--revoked-key needs --revoked-cert")
        return None
    return load_identity(certificate, key)


def uses_bundled_server(config: pytest.Config) -> bool:
    """No target anywhere (options, CONFORMANCE_TARGET, CONFORMANCE_PROFILE): the bundled one."""
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.profile import ENV_PROFILE, ENV_TARGET

    return not (
        given_on_command_line(config) or os.environ.get(ENV_TARGET) or os.environ.get(ENV_PROFILE)
    )


def scenario_threads(config: pytest.Config) -> int:
    """Scenarios in flight in each process (``--conformance-threads``); 1 where a run ahead
    could be wrong: xdist's work stealing moves queued tests to another worker, which would run
    them a second time."""
    threads = max(1, int(config.getoption("conformance_threads") or 1))
    if getattr(config.option, "dist", "no") == "worksteal":
        return 1
    return threads
