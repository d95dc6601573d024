"""The session fixtures a scenario runs with: seed, bundled server, profile, client, run context."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from conformance.bankside.bundled import (
    BundledIdentity,
    ServerWatch,
    bundled_reference_server,
    write_run_identity,
)
from conformance.errors import ConformanceError
from conformance.plugin.cleanup import clean_up, cleanup_requested
from conformance.plugin.interruption import WATCHES
from conformance.plugin.options import (
    SEED,
    profile_from_config,
    revoked_identity_from_options,
    scenario_threads,
    strict_run,
    trust_anchor_from_options,
    uses_bundled_server,
)
from conformance.report.masking import configure_masking, policy_for

if TYPE_CHECKING:
    from conformance.bankside.client import TargetClient
    from conformance.profile import TargetProfile
    from conformance.runners import Runner
    from conformance.runners.context import RunContext
    from conformance.signing import CertificateAuthority, TppIdentity


@pytest.fixture(scope="session")
def conformance_seed(request: pytest.FixtureRequest) -> int:
    """The run seed (the same in every xdist worker)."""
    return request.config.stash[SEED]


@pytest.fixture(scope="session")
def conformance_bundled_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, BundledIdentity] | None]:
    """The bundled reference server of this process (None when a target was given): its URL
    and the identity it trusts exclusively (a fresh CA, so spec 5 item 1 can be judged)."""
    config = request.config
    if not uses_bundled_server(config):
        yield None
        return
    worker = getattr(config, "workerinput", {}).get("workerid", "main")
    log_path = Path(config.getoption("reports")) / f"reference-server-{worker}.log"
    watch = ServerWatch()  # gone mid-run: this process stops (conformance.plugin.interruption)
    config.stash.get(WATCHES, []).append(watch)
    try:
        identity = write_run_identity(tmp_path_factory.mktemp("identity"))
        with bundled_reference_server(
            trust=identity.trusted, log_path=log_path, crl=identity.crl, watch=watch
        ) as url:
            yield url, identity
    except ConformanceError as error:
        pytest.exit(f"conformance: {error.message}", returncode=error.exit_code)


@pytest.fixture(scope="session")
def conformance_profile(
    request: pytest.FixtureRequest,
    conformance_bundled_server: tuple[str, BundledIdentity] | None,
) -> TargetProfile:
    """The target's profile: options over the profile file; the bundled server when none given."""
    config = request.config
    try:
        profile = profile_from_config(config)
    except ConformanceError as error:
        pytest.exit(f"conformance: {error.message}", returncode=error.exit_code)
    configure_masking(policy_for(profile))
    if conformance_bundled_server is None:
        return profile
    url, identity = conformance_bundled_server
    if profile.certificate is not None:  # the user's own certificate: the server trusts any CA
        return dataclasses.replace(profile, base_url=url)
    return dataclasses.replace(
        profile, base_url=url, certificate=identity.certificate, key=identity.key
    )


@pytest.fixture(scope="session")
def conformance_trust_anchor(
    request: pytest.FixtureRequest,
    conformance_profile: TargetProfile,
    conformance_bundled_server: tuple[str, BundledIdentity] | None,
) -> CertificateAuthority | None:
    """The CA the target trusts exclusively, with its key (``RunContext.trust_anchor``)."""
    return _trust_anchor(
        request, conformance_profile, conformance_bundled_server, "trust_anchor", utf8=False
    )


@pytest.fixture(scope="session")
def conformance_utf8_trust_anchor(
    request: pytest.FixtureRequest,
    conformance_profile: TargetProfile,
    conformance_bundled_server: tuple[str, BundledIdentity] | None,
) -> CertificateAuthority | None:
    """A second CA the target trusts, named outside ASCII, with its key
    (``RunContext.utf8_trust_anchor``): the bundled server's, or ``--trust-anchor-utf8``."""
    return _trust_anchor(
        request, conformance_profile, conformance_bundled_server, "trust_anchor_utf8", utf8=True
    )


def _trust_anchor(
    request: pytest.FixtureRequest,
    profile: TargetProfile,
    bundled: tuple[str, BundledIdentity] | None,
    option: str,
    *,
    utf8: bool,
) -> CertificateAuthority | None:
    """A trust anchor from its pytest options, else the bundled run's CA (the ASCII-named one, or
    with ``utf8`` the one named outside ASCII) when the run signs with the bundled identity."""
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.signing import load_ca

    try:
        anchor = trust_anchor_from_options(request.config, option)
        if anchor is None and bundled is not None:
            _, identity = bundled
            if profile.certificate == identity.certificate:
                if utf8:
                    anchor = load_ca(identity.utf8_ca_certificate, identity.utf8_ca_key)
                else:
                    anchor = load_ca(identity.ca_certificate, identity.ca_key)
    except ConformanceError as error:
        pytest.exit(f"conformance: {error.message}", returncode=error.exit_code)
    return anchor


@pytest.fixture(scope="session")
def conformance_client(conformance_profile: TargetProfile) -> Iterator[TargetClient]:
    """One signed client per worker (keep-alive connections, every exchange recorded)."""
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.bankside.client import TargetClient

    try:
        client = TargetClient.from_profile(conformance_profile)
    except ConformanceError as error:
        pytest.exit(f"conformance: {error.message}", returncode=error.exit_code)
    with client:
        yield client


@pytest.fixture(scope="session")
def conformance_context(request: pytest.FixtureRequest) -> Iterator[RunContext]:
    """What the runners need, built once per worker (client, data factory, SCA step), with the
    pool that runs upcoming scenarios ahead when ``--conformance-threads`` is above 1.

    Built from ``conformance_profile``, ``conformance_client``, ``conformance_seed``,
    ``conformance_trust_anchor`` and ``conformance_utf8_trust_anchor``, asked for here through
    ``request.getfixturevalue`` rather than as arguments: the fixtures are the same (a conftest
    may still override any of them), but they stay out of every scenario item's static fixture
    closure. pytest resolves that closure for each of the ~1,900 items and allure-pytest links
    each item to every fixture in it (a list scan per fixture and item), so the closure is kept
    to what the test names.
    """
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.bankside.sca import sca_step_for
    from conformance.bankside.setup_data import DataFactory
    from conformance.contract import load_contract
    from conformance.runners.context import RunContext
    from conformance.runners.pool import ScenarioPool

    profile: TargetProfile = request.getfixturevalue("conformance_profile")
    client: TargetClient = request.getfixturevalue("conformance_client")
    seed: int = request.getfixturevalue("conformance_seed")
    trust_anchor: CertificateAuthority | None = request.getfixturevalue("conformance_trust_anchor")
    utf8_trust_anchor: CertificateAuthority | None = request.getfixturevalue(
        "conformance_utf8_trust_anchor"
    )
    revoked, tls_anchor = _certificate_options(request, profile)
    contract = load_contract()
    sca = sca_step_for(profile, client)
    data = DataFactory(
        contract,
        profile,
        client,
        run_seed=_shared_data_seed(request.config, seed),
        sca=sca,
    )
    threads = scenario_threads(request.config)
    pool = ScenarioPool(threads) if threads > 1 else None
    context = RunContext(
        contract=contract,
        profile=profile,
        client=client,
        seed=seed,
        data=data,
        sca=sca,
        strict=strict_run(request.config),
        trust_anchor=trust_anchor,
        utf8_trust_anchor=utf8_trust_anchor,
        revoked_identity=revoked,
        tls_trust_anchor=tls_anchor,
        pool=pool,
    )
    try:
        yield context
    finally:
        if pool is not None:
            pool.close()
        if cleanup_requested(request.config):  # after the worker's last scenario, server still up
            clean_up(request.config, context)


def _certificate_options(
    request: pytest.FixtureRequest, profile: TargetProfile
) -> tuple[TppIdentity | None, CertificateAuthority | None]:
    """The revoked certificate (``--revoked-cert``, else the bundled server's when the run signs
    with its identity) and the CA of the TLS client certificates (``--tls-trust-anchor``)."""
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.signing import load_identity

    try:
        revoked = revoked_identity_from_options(request.config)
        bundled = request.getfixturevalue("conformance_bundled_server")
        if revoked is None and bundled is not None:
            _, identity = bundled
            if profile.certificate == identity.certificate:
                revoked = load_identity(identity.revoked_certificate, identity.revoked_key)
        tls_anchor = trust_anchor_from_options(request.config, "tls_trust_anchor")
    except ConformanceError as error:
        pytest.exit(f"conformance: {error.message}", returncode=error.exit_code)
    return revoked, tls_anchor


def _shared_data_seed(config: pytest.Config, seed: int) -> int:
    """The seed of a worker's shared set-up data (the data factory's ``run_seed``).

    Shared data is made once per worker; xdist workers talk to the same target, so each needs
    its own (the same account number created twice is refused). One process uses the run seed
    itself; worker ``gwN`` a seed derived from the run seed and its name, as reproducible.
    Scenario data is unaffected: it is seeded from the run seed and the scenario id.
    """
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.scenario import scenario_seed

    worker = getattr(config, "workerinput", {}).get("workerid")
    return seed if worker is None else scenario_seed(seed, f"worker:{worker}")


@pytest.fixture(scope="session")
def conformance_runner() -> Runner:
    """The function that runs one scenario (``conformance.runners.run_scenario``)."""
    # on use, not at import: the plugin loads in every pytest process (start-up time)
    from conformance.runners import run_scenario

    return run_scenario
