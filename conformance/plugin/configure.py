"""Configuration and session start: seed, markers, xdist hand-over, report header, preflight."""

from __future__ import annotations

import contextlib
import functools
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from conformance.bankside.bundled import ReplayServer
from conformance.bankside.preflight import PreflightDone, preflight
from conformance.errors import ConformanceError
from conformance.exchange import replay_program
from conformance.plugin.collection import SCENARIO_MARKER, generated_scenarios, register_markers
from conformance.plugin.interruption import Interruption
from conformance.plugin.options import (
    COLLECTOR,
    SEED,
    given_on_command_line,
    is_worker,
    names_scenarios,
    profile_from_config,
    scenario_threads,
    strict_run,
    target_options,
    trust_anchor_from_options,
    uses_bundled_server,
)
from conformance.plugin.recording import (
    EventStream,
    ExchangeRecorder,
    events_file,
    exchanges_folder,
)
from conformance.report.allure_files import tidy_as_written
from conformance.report.baseline import Baseline, load_baseline
from conformance.report.collector import ComplianceCollector
from conformance.report.compliance import profile_summary
from conformance.report.masking import configure_masking, policy_for
from conformance.report.replays import VALUES_FILE, Rerun
from conformance.scenario import KINDS, LEVELS, run_seed
from conformance.suite import SUITE_DIR

if TYPE_CHECKING:
    from conformance.profile import TargetProfile


_WORKER_SEED = "conformance_seed"


_WORKER_CONTRACT = "conformance_contract_checked"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _collect_the_suite_when_aimed_at_a_target(config)
    config.addinivalue_line(
        "markers",
        f"{SCENARIO_MARKER}: the test is parametrised by the generated conformance scenarios",
    )
    config.addinivalue_line(
        "markers", "smoke: one positive and one negative scenario per operation (--smoke)"
    )
    for level in LEVELS:
        config.addinivalue_line("markers", f"{level}: scenarios of {level}-level requirements")
    for kind in KINDS:
        config.addinivalue_line("markers", f"{kind}: scenarios run by the {kind} runner")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and _WORKER_CONTRACT in workerinput:
        # on use, not at import: the plugin loads in every pytest process (start-up time)
        from conformance.contract.loader import trust_checked

        trust_checked(str(workerinput[_WORKER_CONTRACT]))
    if workerinput is not None and _WORKER_SEED in workerinput:
        seed = int(workerinput[_WORKER_SEED])
    else:
        try:
            seed = run_seed(config.getoption("seed"), bundled=uses_bundled_server(config))
        except ConformanceError as error:
            raise pytest.UsageError(error.message) from None
    config.stash[SEED] = seed
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistSeed(), "conformance-xdist-seed")
    _register_run_plugins(config)
    if workerinput is None:
        collector = ComplianceCollector(
            reports=Path(config.getoption("reports")),
            seed=seed,
            strict=strict_run(config),
            describe_target=functools.partial(_describe_target, config),
        )
        collector.replay_server = _replay_server(config)
        collector.rerun = _rerun(config)
        # the previous run's hidden values go: this run's replays name this run's
        (collector.reports / VALUES_FILE).unlink(missing_ok=True)
        # the bundled server (started here, or by `conformance run`, which hands over its
        # replay command) or a played profile: no bank to certify
        collector.certifies = not uses_bundled_server(config) and collector.replay_server is None
        collector.baseline = _baseline(config)
        config.stash[COLLECTOR] = collector
        config.pluginmanager.register(collector, "conformance-compliance")
        events = events_file(config)
        if events is not None:
            config.pluginmanager.register(EventStream(events, seed), "conformance-events")
    if config.option.markers:  # `pytest --markers`: list the scenario markers too
        register_markers(config, generated_scenarios())


def _baseline(config: pytest.Config) -> Baseline | None:
    """The known failures of ``--conformance-baseline`` (None without one)."""
    path = config.getoption("conformance_baseline", None)
    if path is None:
        return None
    try:
        return load_baseline(Path(path))
    except ConformanceError as error:
        raise pytest.UsageError(error.message) from None


def _register_run_plugins(config: pytest.Config) -> None:
    """In a run of the suite, what stops it early (:class:`Interruption`); with
    ``--conformance-threads`` above 1, the scenarios run ahead (``Prefetcher``)."""
    if given_on_command_line(config) or names_scenarios(config):
        config.pluginmanager.register(Interruption(config), "conformance-interruption")
    threads = scenario_threads(config)
    if threads > 1:
        # on use, not at import: the plugin loads in every pytest process (start-up time)
        from conformance.plugin.prefetch import Prefetcher

        config.pluginmanager.register(Prefetcher(threads), "conformance-prefetch")
    evidence, events = exchanges_folder(config), events_file(config)
    if evidence is not None or events is not None:  # --seal, --traffic: exchanges kept, masked
        config.pluginmanager.register(ExchangeRecorder(evidence, events), "conformance-recording")


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
    if not given_on_command_line(config):
        return
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        return
    config.args[:] = [str(SUITE_DIR)]


def _replay_server(config: pytest.Config) -> str | None:
    """The ``conformance serve`` command that starts a server like the bundled run's (handed
    over by ``conformance run``), for the replay commands of its reports; None otherwise."""
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, ReplayServer):
            return plugin.command()
    return None


def _rerun(config: pytest.Config) -> Rerun:
    """How the run was started (handed over by ``conformance run``), or the ``conformance run``
    of this pytest run's target, profile and identity."""
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, Rerun):
            return plugin
    words = ["run", "--reports", str(Rerun.folder(Path(config.getoption("reports"))))]
    for name in ("target", "profile", "cert", "key"):
        value = config.getoption(name, None)
        if value:
            words += [f"--{name}", str(value)]
    return Rerun(f"{replay_program()} {shlex.join(words)}")


def _describe_target(config: pytest.Config) -> tuple[str, dict[str, Any]]:
    """What the compliance matrix says the run was aimed at (the profile without secrets)."""
    try:
        profile: TargetProfile | None = profile_from_config(config)
    except ConformanceError:
        profile = None
    if profile is not None:
        configure_masking(policy_for(profile))
    summary = profile_summary(profile)
    if uses_bundled_server(config):
        summary["base_url"] = None
        return "bundled reference server (one per process, started by the plugin)", summary
    target = profile.base_url if profile is not None else str(config.getoption("target"))
    return target, summary


class _XdistSeed:
    """Hands the controller's seed to every worker (a random one is drawn once, not per worker),
    and the digest of the contract it has checked, so that the workers do not check the same
    schemas against the meta-schema again (:func:`conformance.contract.loader.trust_checked`)."""

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[_WORKER_SEED] = node.config.stash[SEED]
        if names_scenarios(node.config) or given_on_command_line(node.config):
            # on use, not at import: the plugin loads in every pytest process (start-up time)
            from conformance.contract import load_contract

            # A broken contract: the workers load it themselves and report the problem.
            with contextlib.suppress(ConformanceError):
                node.workerinput[_WORKER_CONTRACT] = load_contract().digest


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    if is_worker(config):  # xdist shows the controller's header only; no profile to read here
        return None
    if not (given_on_command_line(config) or names_scenarios(config)):
        return None
    if uses_bundled_server(config):
        target = "the bundled reference server (started per process)"
    else:
        try:
            target = profile_from_config(config).base_url
        except ConformanceError:
            target = str(config.getoption("target"))  # the session start says what is wrong
    strict = (
        "should-level failures fail the run"
        if strict_run(config)
        else ("should-level failures are reported, not counted")
    )
    # The seed is printed once, at the end beside the reports (pytest_terminal_summary).
    return [f"conformance: target: {target}; {strict}"]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Check a target given on the command line before anything runs (one line if it is bad).
    Allure's results are tidied as they are written, in every process (allure-pytest made its
    writer in its ``pytest_configure``)."""
    config = session.config
    _tidy_allure_results(config)
    if is_worker(config) or not given_on_command_line(config) or config.option.collectonly:
        return
    try:
        if not _preflight_done(config):
            preflight(profile_from_config(config))
        trust_anchor_from_options(config)
        trust_anchor_from_options(config, "trust_anchor_utf8")
    except ConformanceError as error:
        pytest.exit(f"conformance: {error.message}", returncode=error.exit_code)


def _tidy_allure_results(config: pytest.Config) -> None:
    import allure_commons

    writers = [
        plugin
        for plugin in allure_commons.plugin_manager.get_plugins()
        if type(plugin).__name__ == "AllureFileLogger"
    ]
    tidying = bool(writers) and all([tidy_as_written(writer) for writer in writers])
    collector = config.stash.get(COLLECTOR, None)
    if collector is not None:
        collector.results_tidied = tidying


def _preflight_done(config: pytest.Config) -> bool:
    """``conformance run`` has just preflighted the target these options name."""
    options = target_options(config)
    return any(
        isinstance(plugin, PreflightDone) and plugin.covers(options)
        for plugin in config.pluginmanager.get_plugins()
    )
