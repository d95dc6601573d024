"""The pytest plugin of the suite: options, markers, fixtures, parametrisation, verdicts.

Thin on purpose (pytest-httpserver, pytest-xdist): generation, requests and checks live in their
own modules, and this one only wires them into pytest.

- **Options** (group ``conformance``): ``--target``, ``--profile``, ``--cert``, ``--key``,
  ``--seed``, ``--conformance-strict`` (pytest already owns ``--strict``; ``conformance run
  --strict`` passes this one), ``--reports``.
- **Parametrisation**: :func:`pytest_pycollect_makeitem` gives the one test of
  ``conformance/suite/test_conformance.py`` (marked ``conformance``) one item per generated
  scenario, its scenario bound to it, with the scenario id as test id and markers for operation,
  level, kind, rule and spec part (``-m "E16 and must"``). The scenario list comes from the
  ``pytest_conformance_scenarios`` hook, whose default implementation generates it from the
  contract (a conftest may narrow it).
- **Fixtures** (session scope, so one per xdist worker): ``conformance_profile``,
  ``conformance_client``, ``conformance_context`` (the runners' ``RunContext``) and
  ``conformance_runner``. Without ``--target``/``--profile`` the bundled reference server is
  started for the session.
- **Verdicts** (DESIGN.md): ``NotApplicable`` becomes a skip reading "not applicable: ...";
  a failed ``should`` requirement is reported as "FAILED (should)" and does not fail the run
  unless ``--conformance-strict`` (it becomes an expected failure, ``wasxfail``, with the
  failure text kept); a ``ConformanceFailure`` is shown as its message (what was sent, what came
  back, what the spec says, how to reproduce) instead of a Python traceback.
- **Reports**: every item carries its scenario's facts as ``user_properties`` (JUnit
  ``<property>``s, and the channel xdist carries to the controller), the teardown report its
  final verdict; the controller collects them and writes ``compliance.json``/``compliance.md``.
- **Bad input**: a bad target, certificate or profile given on the command line is found at
  session start and ends the session with one line (``pytest.exit``), before any scenario runs.

When no scenario is collected (the project's own ``tests/``) the plugin registers its options
and the ``conformance`` marker and does nothing else: no generation, no network.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance.checks import ConformanceFailure
from conformance.errors import ConformanceError
from conformance.report.collector import ComplianceCollector
from conformance.report.compliance import profile_summary
from conformance.report.masking import scrub_identities
from conformance.report.verdicts import (
    ERROR,
    FAILED,
    FAILED_SHOULD,
    NOT_APPLICABLE,
    NOT_APPLICABLE_PREFIX,
    PASSED,
    SHOULD_PREFIX,
    SKIPPED,
    ReportedFailure,
    ScenarioFacts,
    final_verdict,
    first_line,
    verdict_properties,
)
from conformance.scenario import KINDS, LEVELS
from conformance.suite import SUITE_DIR
from conformance.target.session import (
    DEFAULT_SEED,
    BundledIdentity,
    PreflightDone,
    bundled_reference_server,
    preflight,
    run_seed,
    write_run_identity,
)

if TYPE_CHECKING:
    from conformance.runners import Runner
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario
    from conformance.signing.certificates import CertificateAuthority
    from conformance.target.client import TargetClient
    from conformance.target.profile import TargetProfile

__all__ = ["SCENARIO_MARKER", "ScenarioHooks"]

#: The marker of a test that :func:`pytest_pycollect_makeitem` makes one item per scenario of.
SCENARIO_MARKER = "conformance"
#: The ``pytest_report_teststatus`` category of a tolerated should-level failure.
SHOULD_CATEGORY = "should-failed"

_SEED = pytest.StashKey[int]()
_FACTS = pytest.StashKey[ScenarioFacts]()
_PHASES = pytest.StashKey[list[tuple[str, str]]]()
_COLLECTOR = pytest.StashKey[ComplianceCollector]()
_WORKER_SEED = "conformance_seed"
_WORKER_CONTRACT = "conformance_contract_checked"
#: Exceptions that are a verdict on the target (a failed requirement), not a crash of the suite.
_VERDICTS = (ReportedFailure, ConformanceFailure)


# --- hook specification -------------------------------------------------------------------------


class ScenarioHooks:
    """The plugin's own hook: where the scenarios come from."""

    @pytest.hookspec(firstresult=True)
    def pytest_conformance_scenarios(self, config: pytest.Config) -> Sequence[Scenario] | None:
        """The scenarios to parametrise the suite with (default: all generated from the
        contract). A conftest may return its own, e.g. to run a hand-made scenario."""


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(ScenarioHooks)


@pytest.hookimpl(trylast=True)
def pytest_conformance_scenarios(config: pytest.Config) -> Sequence[Scenario]:
    return _generated_scenarios()


@functools.cache
def _generated_scenarios() -> tuple[Scenario, ...]:
    from conformance.contract import load_contract
    from conformance.generate import generate_scenarios

    return generate_scenarios(load_contract())


# --- options ------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("conformance", "PSD2 conformance suite (spec 1.22.0)")
    group.addoption(
        "--target",
        metavar="URL",
        help="base URL of the implementation under test (overrides the profile's base_url); "
        "without --target and --profile the bundled reference server is started",
    )
    group.addoption(
        "--profile",
        metavar="FILE",
        help="target profile (TOML): supported operations and products, PSUs, SCA mode, paths",
    )
    group.addoption("--cert", metavar="CERT", help="signing certificate (PEM or PKCS#12)")
    group.addoption("--key", metavar="KEY", help="private key of --cert (when not in CERT)")
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
        "--seed",
        metavar="N",
        help=f"seed of the generated data ('random' draws one); default {DEFAULT_SEED} for "
        "the bundled server, random for a target (it keeps an earlier run's data, which the "
        "same seed would create again); printed in the header and the reports",
    )
    group.addoption(
        "--conformance-strict",
        action="store_true",
        default=False,
        help="should-level failures fail the run (without it they are reported only)",
    )
    group.addoption(
        "--reports",
        metavar="DIR",
        default="reports",
        help="directory of compliance.json and compliance.md (default: reports)",
    )


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _given_on_command_line(config: pytest.Config) -> bool:
    """Whether the user pointed the run at a target (so it should be checked before it starts)."""
    return config.getoption("target") is not None or config.getoption("profile") is not None


def _strict(config: pytest.Config) -> bool:
    return bool(config.getoption("conformance_strict"))


# --- configuration ------------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _collect_the_suite_when_aimed_at_a_target(config)
    config.addinivalue_line(
        "markers",
        f"{SCENARIO_MARKER}: the test is parametrised by the generated conformance scenarios",
    )
    for level in LEVELS:
        config.addinivalue_line("markers", f"{level}: scenarios of {level}-level requirements")
    for kind in KINDS:
        config.addinivalue_line("markers", f"{kind}: scenarios run by the {kind} runner")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and _WORKER_CONTRACT in workerinput:
        from conformance.contract.loader import trust_checked

        trust_checked(str(workerinput[_WORKER_CONTRACT]))
    if workerinput is not None and _WORKER_SEED in workerinput:
        seed = int(workerinput[_WORKER_SEED])
    else:
        try:
            seed = run_seed(config.getoption("seed"), bundled=_uses_bundled_server(config))
        except ConformanceError as error:
            raise pytest.UsageError(error.message) from None
    config.stash[_SEED] = seed
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistSeed(), "conformance-xdist-seed")
    if workerinput is None:
        collector = ComplianceCollector(
            reports=Path(config.getoption("reports")),
            seed=seed,
            strict=_strict(config),
            describe_target=functools.partial(_describe_target, config),
        )
        config.stash[_COLLECTOR] = collector
        config.pluginmanager.register(collector, "conformance-compliance")
    if config.option.markers:  # `pytest --markers`: list the scenario markers too
        _register_markers(config, _generated_scenarios())


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """The suite's directory is an initial path when ``--target`` names no tests (see below):
    conftests are read for the initial paths before ``pytest_configure``."""
    known = early_config.known_args_namespace
    aimed = getattr(known, "target", None) or getattr(known, "profile", None)
    if aimed and not getattr(known, "file_or_dir", None):
        known.file_or_dir = [str(SUITE_DIR)]


def _collect_the_suite_when_aimed_at_a_target(config: pytest.Config) -> None:
    """``pytest --target URL`` (no test paths named) runs the suite, not the ``testpaths``.

    Given a target or profile, a bank engineer means the conformance suite; test paths given on
    the command line are respected (``pytest --target URL my_extra_tests/``).
    """
    if not _given_on_command_line(config):
        return
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        return
    config.args[:] = [str(SUITE_DIR)]


def _describe_target(config: pytest.Config) -> tuple[str, dict[str, Any]]:
    """What the compliance matrix says the run was aimed at (the profile without secrets)."""
    try:
        profile: TargetProfile | None = _profile_from_options(config)
    except ConformanceError:
        profile = None
    summary = profile_summary(profile)
    if _uses_bundled_server(config):
        summary["base_url"] = None
        return "bundled reference server (one per process, started by the plugin)", summary
    target = profile.base_url if profile is not None else str(config.getoption("target"))
    return target, summary


class _XdistSeed:
    """Hands the controller's seed to every worker (a random one is drawn once, not per worker),
    and the digest of the contract it has checked, so that the workers do not check the same
    schemas against the meta-schema again (:func:`conformance.contract.loader.trust_checked`)."""

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[_WORKER_SEED] = node.config.stash[_SEED]
        if _names_scenarios(node.config) or _given_on_command_line(node.config):
            from conformance.contract import load_contract

            # A broken contract: the workers load it themselves and report the problem.
            with contextlib.suppress(ConformanceError):
                node.workerinput[_WORKER_CONTRACT] = load_contract().digest


def _register_markers(config: pytest.Config, scenarios: Sequence[Scenario]) -> None:
    """Every marker the scenarios use, so that none is unknown (``--strict-markers`` works)."""
    from conformance.generate import all_marker_names

    known = {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
    for name in all_marker_names(scenarios):
        if name not in known:
            config.addinivalue_line("markers", f"{name}: conformance scenarios ({name})")


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    if _is_worker(config):  # xdist shows the controller's header only; no profile to read here
        return None
    if not (_given_on_command_line(config) or _names_scenarios(config)):
        return None
    seed = config.stash[_SEED]
    if _uses_bundled_server(config):
        target = "the bundled reference server (started per process)"
    else:
        try:
            target = _profile_from_options(config).base_url
        except ConformanceError:
            target = str(config.getoption("target"))  # the session start says what is wrong
    strict = (
        "should-level failures fail the run"
        if _strict(config)
        else ("should-level failures are reported, not counted")
    )
    return [f"conformance: seed {seed} (reproduce with --seed {seed}); target: {target}; {strict}"]


def _names_scenarios(config: pytest.Config) -> bool:
    for arg in config.args:
        path = Path(arg.split("::", 1)[0]).resolve()
        if path == SUITE_DIR or SUITE_DIR in path.parents or path in SUITE_DIR.parents:
            return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Check a target given on the command line before anything runs (one line if it is bad)."""
    config = session.config
    if _is_worker(config) or not _given_on_command_line(config) or config.option.collectonly:
        return
    try:
        if not _preflight_done(config):
            preflight(_profile_from_options(config))
        _trust_anchor_from_options(config)
        _trust_anchor_from_options(config, "trust_anchor_utf8")
    except ConformanceError as error:
        pytest.exit(f"conformance: {error.message}", returncode=error.exit_code)


def _target_options(config: pytest.Config) -> dict[str, str | None]:
    """The options that name the target: ``--target``, ``--profile``, ``--cert``, ``--key``."""
    return {name: config.getoption(name) for name in ("target", "profile", "cert", "key")}


def _preflight_done(config: pytest.Config) -> bool:
    """``conformance run`` has just preflighted the target these options name."""
    options = _target_options(config)
    return any(
        isinstance(plugin, PreflightDone) and plugin.covers(**options)
        for plugin in config.pluginmanager.get_plugins()
    )


def _profile_from_options(config: pytest.Config) -> TargetProfile:
    from conformance.target.profile import profile_from_options

    return profile_from_options(**_target_options(config))


def _trust_anchor_from_options(
    config: pytest.Config, option: str = "trust_anchor"
) -> CertificateAuthority | None:
    """The CA of ``--trust-anchor`` (or of ``--trust-anchor-utf8``) with its ``-key``."""
    from conformance.signing.certificates import load_ca

    ca, key = config.getoption(option), config.getoption(f"{option}_key")
    if ca is None and key is None:
        return None
    if ca is None or key is None:
        flag = "--" + option.replace("_", "-")
        raise ConformanceError(f"{flag} and {flag}-key go together")
    return load_ca(ca, key)


def _uses_bundled_server(config: pytest.Config) -> bool:
    """No target anywhere (options, CONFORMANCE_TARGET, CONFORMANCE_PROFILE): the bundled one."""
    from conformance.target.profile import ENV_PROFILE, ENV_TARGET

    return not (
        _given_on_command_line(config) or os.environ.get(ENV_TARGET) or os.environ.get(ENV_PROFILE)
    )


# --- parametrisation ----------------------------------------------------------------------------


class _BoundScenario(functools.partial):  # type: ignore[type-arg]
    # A scenario test with its scenario bound: the callable of one scenario item. Deliberately
    # without a docstring (a class docstring is every instance's ``__doc__``), like the test
    # function: allure-pytest takes ``item.function.__doc__`` as the description of a scenario
    # that fails before it labels itself, and ``partial``'s own would show there otherwise.
    __doc__ = None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> list[pytest.Function] | None:
    """One item per scenario for a test marked ``conformance`` that takes ``scenario``.

    The same items ``metafunc.parametrize`` would make (node id ``test_scenario[<id>]``, the
    scenario's markers after the function's, the id as a keyword), built directly: each item
    gets its scenario bound to the function (:class:`_BoundScenario`) instead of through a
    ``scenario`` pseudo-fixture. Parametrising would give every item a function-scoped fixture of
    its own, which allure-pytest writes as one more result container file per item (1,929 of
    them) and pytest sets up and tears down per item; the scenario is no fixture, so nothing is
    lost. The fixture closure is computed once and shared, as parametrisation shares it.
    """
    if not inspect.isfunction(obj) or not collector.istestfunction(obj, name):
        return None
    if "scenario" not in inspect.signature(obj).parameters:
        return None
    own_marks = getattr(obj, "pytestmark", [])
    if collector.get_closest_marker(SCENARIO_MARKER) is None and not any(
        mark.name == SCENARIO_MARKER for mark in own_marks
    ):
        return None
    from conformance.generate import scenario_markers

    config = collector.config
    scenarios = tuple(config.hook.pytest_conformance_scenarios(config=config))
    _register_markers(config, scenarios)
    marks: dict[str, pytest.MarkDecorator] = {}
    items: list[pytest.Function] = []
    fixtureinfo = None
    for scenario in scenarios:
        call = _BoundScenario(obj, scenario=scenario)
        if own_marks:
            call.pytestmark = own_marks  # type: ignore[attr-defined]
        item = pytest.Function.from_parent(
            collector,
            name=f"{name}[{scenario.id}]",
            callobj=call,
            keywords={scenario.id: True},
            fixtureinfo=fixtureinfo,
        )
        # Given to the constructor, ``originalname`` would become the node id (pytest builds
        # ``name[params]`` from a callspec only); set afterwards, it is what parametrisation
        # sets: the function's name, which allure-pytest's ``fullName`` is made of.
        item.originalname = name
        fixtureinfo = item._fixtureinfo
        for marker in scenario_markers(scenario):
            mark = marks.get(marker)
            if mark is None:
                mark = marks[marker] = getattr(pytest.mark, marker)
            item.add_marker(mark)
        facts = ScenarioFacts.of(scenario)
        item.stash[_FACTS] = facts
        item.user_properties.extend(facts.properties())
        items.append(item)
    return items


# --- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def conformance_seed(request: pytest.FixtureRequest) -> int:
    """The run seed (the same in every xdist worker)."""
    return request.config.stash[_SEED]


@pytest.fixture(scope="session")
def conformance_bundled_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, BundledIdentity] | None]:
    """The bundled reference server of this process (None when a target was given): its URL
    and the identity it trusts exclusively (a fresh CA, so spec 5 item 1 can be judged)."""
    config = request.config
    if not _uses_bundled_server(config):
        yield None
        return
    worker = getattr(config, "workerinput", {}).get("workerid", "main")
    log_path = Path(config.getoption("reports")) / f"reference-server-{worker}.log"
    try:
        identity = write_run_identity(tmp_path_factory.mktemp("identity"))
        with bundled_reference_server(trust=identity.trusted, log_path=log_path) as url:
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
        profile = _profile_from_options(config)
    except ConformanceError as error:
        pytest.exit(f"conformance: {error.message}", returncode=error.exit_code)
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
    from conformance.signing.certificates import load_ca

    try:
        anchor = _trust_anchor_from_options(request.config, option)
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
    from conformance.target.client import TargetClient

    try:
        client = TargetClient.from_profile(conformance_profile)
    except ConformanceError as error:
        pytest.exit(f"conformance: {error.message}", returncode=error.exit_code)
    with client:
        yield client


@pytest.fixture(scope="session")
def conformance_context(request: pytest.FixtureRequest) -> RunContext:
    """What the runners need, built once per worker (client, data factory, SCA step).

    Built from ``conformance_profile``, ``conformance_client``, ``conformance_seed``,
    ``conformance_trust_anchor`` and ``conformance_utf8_trust_anchor``, asked for here through
    ``request.getfixturevalue`` rather than as arguments: the fixtures are the same (a conftest
    may still override any of them), but they stay out of every scenario item's static fixture
    closure. pytest resolves that closure for each of the ~1,900 items and allure-pytest links
    each item to every fixture in it (a list scan per fixture and item), so the closure is kept
    to what the test names.
    """
    from conformance.contract import load_contract
    from conformance.runners.context import RunContext
    from conformance.target.sca import sca_step_for
    from conformance.target.setup_data import DataFactory

    profile: TargetProfile = request.getfixturevalue("conformance_profile")
    client: TargetClient = request.getfixturevalue("conformance_client")
    seed: int = request.getfixturevalue("conformance_seed")
    trust_anchor: CertificateAuthority | None = request.getfixturevalue("conformance_trust_anchor")
    utf8_trust_anchor: CertificateAuthority | None = request.getfixturevalue(
        "conformance_utf8_trust_anchor"
    )
    contract = load_contract()
    sca = sca_step_for(profile, client)
    data = DataFactory(
        contract,
        profile,
        client,
        run_seed=_shared_data_seed(request.config, seed),
        sca=sca,
    )
    return RunContext(
        contract=contract,
        profile=profile,
        client=client,
        seed=seed,
        data=data,
        sca=sca,
        strict=_strict(request.config),
        trust_anchor=trust_anchor,
        utf8_trust_anchor=utf8_trust_anchor,
    )


def _shared_data_seed(config: pytest.Config, seed: int) -> int:
    """The seed of a worker's shared set-up data (the data factory's ``run_seed``).

    Shared data is made once per worker; xdist workers talk to the same target, so each needs
    its own (the same account number created twice is refused). One process uses the run seed
    itself; worker ``gwN`` a seed derived from the run seed and its name, as reproducible.
    Scenario data is unaffected: it is seeded from the run seed and the scenario id.
    """
    from conformance.scenario import scenario_seed

    worker = getattr(config, "workerinput", {}).get("workerid")
    return seed if worker is None else scenario_seed(seed, f"worker:{worker}")


@pytest.fixture(scope="session")
def conformance_runner() -> Runner:
    """The function that runs one scenario (``conformance.runners.run_scenario``)."""
    from conformance.runners import run_scenario

    return run_scenario


# --- verdicts -----------------------------------------------------------------------------------


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return text.removeprefix("Skipped: ")


def _failure_text(failure: BaseException) -> str:
    """The failure message a bank engineer reads, with the notes the test added (reproduce)."""
    parts = [str(failure), *getattr(failure, "__notes__", ())]
    return scrub_identities("\n\n".join(part for part in parts if part))


def _phase_verdict(
    item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport, facts: ScenarioFacts
) -> tuple[str, str]:
    if report.passed:
        return PASSED, ""
    if report.skipped:
        reason = _skip_reason(report)
        if reason.startswith(NOT_APPLICABLE_PREFIX):
            return NOT_APPLICABLE, reason.removeprefix(NOT_APPLICABLE_PREFIX)
        return SKIPPED, reason
    excinfo = call.excinfo
    if report.when == "call" and excinfo is not None and excinfo.errisinstance(_VERDICTS):
        text = _failure_text(excinfo.value)
        report.longrepr = text  # the message is the report; the traceback is the suite's business
        reason = first_line(text)
        if facts.level == "should" and not _strict(item.config):
            report.outcome = "skipped"
            report.wasxfail = SHOULD_PREFIX + reason  # type: ignore[attr-defined]
            return FAILED_SHOULD, reason
        return FAILED, reason
    reason = (
        first_line(excinfo.exconly()) if excinfo is not None else first_line(report.longreprtext)
    )
    return ERROR, reason


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Turn a phase's outcome into a verdict; the teardown report carries the final one.

    ``trylast``: the innermost wrapper, so allure-pytest and the JUnit writer see the report
    after a should-level failure became an expected failure.
    """
    report: pytest.TestReport = yield
    facts = item.stash.get(_FACTS, None)
    if facts is None:
        return report
    phases = item.stash.setdefault(_PHASES, [])
    phases.append(_phase_verdict(item, call, report, facts))
    if report.when == "teardown":
        report.user_properties = [
            *report.user_properties,
            *verdict_properties(*final_verdict(phases)),
        ]
    else:
        # Only the teardown report is read for the facts (JUnit's <property>s, the compliance
        # collector); under xdist every report crosses to the controller, so the other two
        # travel without them.
        report.user_properties = []
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    if report.when == "call" and str(getattr(report, "wasxfail", "")).startswith(SHOULD_PREFIX):
        return SHOULD_CATEGORY, "f", ("FAILED (should)", {"yellow": True})
    return None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    collector = config.stash.get(_COLLECTOR, None)
    if collector is None or not collector.verdicts:
        return
    should = terminalreporter.stats.get(SHOULD_CATEGORY, [])
    if should:
        terminalreporter.section("should-level failures", sep="-", yellow=True)
        for report in should:
            reason = str(report.wasxfail).removeprefix(SHOULD_PREFIX)
            terminalreporter.line(f"FAILED (should) {report.nodeid} - {reason}")
        if not _strict(config):
            terminalreporter.line(
                "(reported, not counted: --conformance-strict, or conformance run --strict, "
                "makes them fail the run)"
            )
    seed = config.stash[_SEED]
    terminalreporter.write_sep("-", "conformance", bold=True)
    terminalreporter.line(f"seed {seed} (reproduce with --seed {seed})")
    if collector.written:
        json_path, md_path = collector.written
        terminalreporter.line(f"compliance matrix: {md_path} and {json_path}")
