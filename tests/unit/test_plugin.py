"""The pytest plugin (conformance.plugin) and the suite's test module, driven through pytester.

Most tests run a stand-in suite: a copy of ``conformance/suite/test_conformance.py`` with a
conftest that supplies five hand-made scenarios (``pytest_conformance_scenarios``), a fake run
context and a fake runner whose outcome is chosen by the scenario id. That exercises the verdict
rules, the reports and the masking without a target. The tests that need the generated
scenarios (ids, markers) only collect.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import socket
import xml.etree.ElementTree as ET
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from conformance import plugin
from conformance.bankside.preflight import PreflightDone
from conformance.contract import load_contract
from conformance.contract.identifiers import generate_national_id
from conformance.generate import generate_scenarios
from conformance.plugin.collection import SCENARIO
from conformance.plugin.ordering import longest_first, round_trips
from conformance.scenario import DEFAULT_SEED, Scenario
from conformance.suite import SUITE_DIR

pytest_plugins = ["pytester"]

SCENARIOS_FILE = SUITE_DIR / "test_conformance.py"
NATIONAL_ID = generate_national_id(random.Random(11))

CONFTEST = f'''
from types import SimpleNamespace

import pytest

from conformance.checks import ConformanceFailure
from conformance.exchange import Exchange
from conformance.contract import load_contract
from conformance.profile import TargetProfile
from conformance.checks import NotApplicable
from conformance.contract.requirements import answer_due
from conformance.scenario import Scenario

NATIONAL_ID = "{NATIONAL_ID}"


def scenario(scenario_id, operation="E12", level="must", rule=None):
    return Scenario(
        id=scenario_id,
        operation=operation,
        rule=rule or f"POS-{{operation}}",
        spec=f"spec 4.3 {{operation}}",
        level=level,
        kind="positive",
        title=f"{{scenario_id}}: a valid request is accepted",
        expect=answer_due(statuses=(200,)),
        assumptions=("A test assumption.",),
    )


SCENARIOS = (
    scenario("E12-passes-accepted"),
    scenario("E12-must-fails-accepted"),
    scenario("E12-should-fails-accepted", level="should", rule="ROB-allow-header"),
    scenario("E12-needs-clock-accepted"),
    scenario("E18-unsupported-accepted", operation="E18"),
)

EXCHANGE = Exchange(
    method="GET",
    url="http://bank.invalid/v1/sandbox/accounts/1",
    request_headers=(("X-PSU-IDENTITY", NATIONAL_ID), ("Accept", "application/json")),
    request_body=b"",
    signing_string=None,
    status=200,
    response_headers=(("Content-Type", "application/json"),),
    response_body=('{{"owner": "' + NATIONAL_ID + '"}}').encode(),
    elapsed=0.01,
    signer="standard",
    base_url="http://bank.invalid",
)


def pytest_conformance_scenarios(config):
    return SCENARIOS


@pytest.fixture(scope="session")
def conformance_context(conformance_seed):
    profile = TargetProfile(
        name="fake bank",
        base_url="http://bank.invalid",
        unsupported_operations=frozenset({{"E18"}}),
    )
    return SimpleNamespace(
        contract=load_contract(), profile=profile, exchanges=[], seed=conformance_seed
    )


@pytest.fixture(scope="session")
def conformance_runner():
    def run(scenario, ctx):
        with open("seeds.txt", "a", encoding="utf-8") as seeds:
            seeds.write(f"{{ctx.seed}}\\n")
        ctx.exchanges.append(EXCHANGE)
        if "fails" in scenario.id:
            raise ConformanceFailure(
                f"{{scenario.id}}: the owner {{NATIONAL_ID}} came back",
                spec=scenario.spec,
                sent=EXCHANGE,
                expected="no identity number in the body",
            ).for_scenario(scenario)
        if "needs-clock" in scenario.id:
            raise NotApplicable("the scenario needs the reference server's clock")

    return run
'''


@pytest.fixture(autouse=True, scope="module")
def imports_settled() -> None:
    """Import, before any in-process pytester run, what those runs would import first.

    pytester removes from ``sys.modules`` whatever an in-process run imported; a module
    imported again later is a second copy, and httpx then no longer recognises the second
    copy's httpcore exceptions (a refused connection escapes as ``httpcore.ConnectError`` in
    other tests of this worker). A refused connection imports httpcore's connect path.
    """

    with contextlib.suppress(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{closed_port()}/", timeout=2.0)


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester directory holding the stand-in suite."""
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=SCENARIOS_FILE.read_text(encoding="utf-8"))
    return pytester


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def collected_ids(result: pytest.RunResult) -> list[str]:
    return [
        match.group(1)
        for line in result.outlines
        if (match := re.search(r"::test_scenario\[(.+)\]$", line.strip()))
    ]


# --- generation, ids, markers --------------------------------------------------------------------


def test_markers_select_operation_and_level(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        str(SCENARIOS_FILE),
        "--collect-only",
        "-q",
        "-m",
        "E16 and must",
        "--strict-markers",
        "-W",
        "error::pytest.PytestUnknownMarkWarning",
    )
    assert result.ret == 0, result.stdout.str()
    expected = {
        s.id
        for s in generate_scenarios(load_contract())
        if s.operation == "E16" and s.level == "must"
    }
    assert expected
    assert set(collected_ids(result)) == expected


def test_rule_and_spec_part_markers_select(pytester: pytest.Pytester) -> None:
    scenarios = generate_scenarios(load_contract())
    rule = next(s.rule for s in scenarios if s.rule.startswith("ERR-"))
    marker = re.sub(r"[^A-Za-z0-9]+", "_", rule).strip("_")
    result = pytester.runpytest(str(SCENARIOS_FILE), "--collect-only", "-q", "-m", marker)
    assert set(collected_ids(result)) == {s.id for s in scenarios if s.rule == rule}
    result = pytester.runpytest(str(SCENARIOS_FILE), "--collect-only", "-q", "-m", "spec_8")
    ids = set(collected_ids(result))
    assert ids and all("spec 8" in s.spec for s in scenarios if s.id in ids)


def test_a_file_of_scenario_ids_selects_them(pytester: pytest.Pytester) -> None:
    """``--conformance-scenarios FILE`` (the self-check's narrowed fault runs): the ids it lists,
    blank lines and comments skipped; an unreadable file is one clear error."""
    ids = [s.id for s in generate_scenarios(load_contract())][:3]
    listing = pytester.path / "scenarios.txt"
    listing.write_text(f"# chosen\n{ids[2]}\n\n{ids[0]}\n", encoding="utf-8")
    result = pytester.runpytest(
        str(SCENARIOS_FILE), "--collect-only", "-q", "--conformance-scenarios", str(listing)
    )
    assert sorted(collected_ids(result)) == sorted([ids[0], ids[2]])
    result = pytester.runpytest(
        str(SCENARIOS_FILE), "--collect-only", "-q", "--conformance-scenarios", "missing.txt"
    )
    assert result.ret != 0
    assert "--conformance-scenarios missing.txt" in result.stdout.str() + result.stderr.str()


def run_order() -> list[Scenario]:
    """The generated scenarios in the order a run runs them: the longest first, ties in the
    order of generation (``conformance.plugin.ordering``)."""
    return sorted(generate_scenarios(load_contract()), key=lambda s: -round_trips(s))


def test_scenario_ids_are_the_test_ids(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(str(SCENARIOS_FILE), "--collect-only", "-q")
    assert collected_ids(result) == [s.id for s in run_order()]


def test_the_longest_scenarios_run_first(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(str(SCENARIOS_FILE), "--collect-only", "-q")
    by_id = {s.id: s for s in generate_scenarios(load_contract())}
    scenarios = [by_id[scenario_id] for scenario_id in collected_ids(result)]
    assert len(scenarios) == len(by_id)
    trips = [round_trips(s) for s in scenarios]
    assert trips == sorted(trips, reverse=True)
    assert scenarios[0].kind == "flow" and trips[0] >= 10  # the longest flow (10 steps)
    assert trips[-1] == 1


def test_the_order_moves_only_scenarios_of_one_test() -> None:
    scenarios = generate_scenarios(load_contract())
    long_flow = next(s for s in scenarios if s.kind == "flow" and len(s.param("steps")) >= 5)
    one = next(s for s in scenarios if round_trips(s) == 1)
    assert round_trips(long_flow) >= 5
    first, second = SimpleNamespace(name="first"), SimpleNamespace(name="second")

    def item(scenario: Scenario | None, parent: object, name: str) -> Any:
        return SimpleNamespace(
            stash={} if scenario is None else {SCENARIO: scenario}, parent=parent, name=name
        )

    items = [
        item(one, first, "a"),
        item(long_flow, first, "b"),
        item(None, first, "plain"),
        item(one, first, "c"),
        item(long_flow, first, "d"),
        item(one, second, "e"),
        item(long_flow, second, "f"),
    ]
    ordered = [each.name for each in longest_first(items)]
    assert ordered == ["b", "a", "plain", "d", "c", "f", "e"]


def test_each_item_has_its_scenario_bound_not_as_a_fixture(pytester: pytest.Pytester) -> None:
    """The items are what parametrising would make (ids, markers, keywords), without a
    ``scenario`` pseudo-fixture: every item shares one fixture closure."""
    items, _ = pytester.inline_genitems(str(SCENARIOS_FILE))
    scenarios = generate_scenarios(load_contract())
    assert [item.name for item in items] == [f"test_scenario[{s.id}]" for s in scenarios]
    functions = [item for item in items if isinstance(item, pytest.Function)]
    assert len(functions) == len(items)
    first, scenario = functions[0], scenarios[0]
    assert first.nodeid.endswith(f"test_conformance.py::test_scenario[{scenario.id}]")
    assert first.originalname == "test_scenario"
    assert "scenario" not in first.fixturenames
    assert first.obj.keywords == {"scenario": scenario}
    assert first.function.__doc__ is None  # the test function has none; Allure shows no other
    assert scenario.id in first.keywords
    assert [mark.name for mark in first.iter_markers()][-1] == "conformance"
    assert first.get_closest_marker(scenario.operation) is not None
    assert len({id(item._fixtureinfo) for item in functions}) == 1
    assert ("scenario", scenario.id) in first.user_properties


def test_a_target_without_test_paths_runs_the_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_other="def test_nothing():\n    assert True\n")
    result = pytester.runpytest("--target", "http://127.0.0.1:9", "--collect-only", "-q")
    assert result.ret == 0, result.stdout.str()
    assert collected_ids(result) == [s.id for s in run_order()]
    result = pytester.runpytest("--target", "http://127.0.0.1:9", "--collect-only", "-q", ".")
    assert "test_other.py::test_nothing" in result.stdout.str()
    assert not collected_ids(result)


def test_ids_do_not_change_between_runs(pytester: pytest.Pytester) -> None:
    first = pytester.runpytest_subprocess(str(SCENARIOS_FILE), "--collect-only", "-q")
    second = pytester.runpytest_subprocess(str(SCENARIOS_FILE), "--collect-only", "-q")
    assert collected_ids(first)
    assert collected_ids(first) == collected_ids(second)


def test_the_plugin_stays_out_of_other_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_other="def test_nothing():\n    assert True\n")
    result = pytester.runpytest()
    assert result.ret == 0
    result.assert_outcomes(passed=1)
    output = result.stdout.str()
    assert "conformance:" not in output and "seed" not in output
    assert not (pytester.path / "reports").exists()


# --- verdicts ------------------------------------------------------------------------------------


def test_not_applicable_is_reported_as_skipped_with_its_reason(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-k", "needs-clock or unsupported", "--junitxml=junit.xml")
    assert result.ret == 0
    output = result.stdout.str()
    # counted in the reports' words, each reason listed once with its count
    assert re.search(r" 2 not applicable in [0-9.]+s", output), output[-600:]
    assert "NOT APPLICABLE 1 scenario(s): the scenario needs the reference server's clock" in output
    assert "NOT APPLICABLE 1 scenario(s): E18 is in the profile's operations.unsupported" in output
    root = ET.parse(suite.path / "junit.xml").getroot()  # JUnit: skipped, with the reason
    assert {element.get("name"): element for element in root.iter("testsuite")}["pytest"].get(
        "skipped"
    ) == "2"


def test_an_unsupported_operation_is_never_run(suite: pytest.Pytester) -> None:
    suite.runpytest("-k", "unsupported")
    assert not (suite.path / "seeds.txt").exists()


def test_a_should_failure_is_reported_but_does_not_fail_the_run(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-k", "passes or should", "--junitxml=junit.xml")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=1)
    assert re.search(r" 1 with should findings in ", result.stdout.str())
    output = result.stdout.str()
    # Grouped by cause: one entry, naming the scenario it covers.
    assert "should findings: 1 cause in 1 scenario" in output
    assert re.search(r"CAUSE 1 \(cause-[0-9a-f]{8}, should\): E12-should-fails-accepted", output)
    assert "1 scenario: E12-should-fails-accepted" in output
    # JUnit: the scenario passed (its must tier held), and the "should" suite fails it; both
    # test cases name the cause.
    root = ET.parse(suite.path / "junit.xml").getroot()
    suites = {element.get("name"): element for element in root.iter("testsuite")}
    assert suites["pytest"].get("failures") == "0"
    assert suites["pytest"].get("skipped") == "0"
    should = suites["should"]
    assert should.get("failures") == "1"
    (case,) = should.iter("testcase")
    assert case.get("name", "").endswith("[E12-should-fails-accepted]")
    assert case.find("failure") is not None
    (own,) = (c for c in suites["pytest"].iter("testcase") if "should-fails" in c.get("name", ""))
    for testcase in (case, own):
        names = {prop.get("name"): prop.get("value", "") for prop in testcase.iter("property")}
        assert re.fullmatch(r"cause-[0-9a-f]{8}", names["cause"]), names
        assert names["cause_summary"].startswith("should: E12-should-fails-accepted"), names


def test_strict_makes_a_should_failure_fail_the_run(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-k", "passes or should", "--conformance-strict")
    assert result.ret == 1
    result.assert_outcomes(passed=1, failed=1)


def test_a_must_failure_shows_the_message_not_a_traceback(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-k", "must-fails")
    assert result.ret == 1
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "Requirement: POS-E12 (spec 4.3 E12, must)" in output
    assert "Reproduce with:" in output and "conformance call GET /v1/sandbox/accounts/1" in output
    assert "Traceback" not in output and "def test_scenario" not in output
    assert NATIONAL_ID not in output
    assert "*********" + NATIONAL_ID[-2:] in output


def test_the_seed_is_printed_and_chosen(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-k", "passes")
    assert f"seed {DEFAULT_SEED} (reproduce with --seed {DEFAULT_SEED})" in result.stdout.str()
    result = suite.runpytest("-k", "passes", "--seed", "7")
    assert "seed 7 (reproduce with --seed 7)" in result.stdout.str()


def test_a_bad_seed_is_a_usage_error(suite: pytest.Pytester) -> None:
    result = suite.runpytest("--seed", "abc")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--seed must be a whole number or 'random'" in result.stderr.str()


def test_every_xdist_worker_gets_the_same_seed(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-n", "2", "--seed", "random", "-p", "no:randomly")
    match = re.search(r"seed (\d+) \(reproduce", result.stdout.str())
    assert match, result.stdout.str()
    seeds = (suite.path / "seeds.txt").read_text(encoding="utf-8").split()
    assert len(seeds) == 4  # every scenario but the unsupported E18 one reaches the runner
    assert set(seeds) == {match.group(1)}
    document = json.loads((suite.path / "reports" / "compliance.json").read_text("utf-8"))
    assert str(document["run"]["seed"]) == match.group(1)
    assert len(document["scenarios"]) == 5


def test_the_report_says_whether_the_run_was_complete(suite: pytest.Pytester) -> None:
    suite.runpytest()
    complete = json.loads((suite.path / "reports" / "compliance.json").read_text("utf-8"))
    assert complete["run"]["complete"] is True and complete["run"]["selection"] == {}
    suite.runpytest("-k", "passes", "-m", "must")
    partial = json.loads((suite.path / "reports" / "compliance.json").read_text("utf-8"))
    assert partial["run"]["complete"] is False
    assert partial["run"]["selection"] == {"-k": "passes", "-m": "must"}
    markdown = (suite.path / "reports" / "compliance.md").read_text("utf-8")
    assert "a selection (a partial run): -k passes, -m must" in markdown


def test_workers_are_told_the_digest_of_the_contract_the_controller_checked(
    pytester: pytest.Pytester,
) -> None:
    config = pytester.parseconfigure("--target", "http://127.0.0.1:9", "--seed", "11")
    handout = config.pluginmanager.get_plugin("conformance-xdist-seed")
    assert handout is not None
    node = SimpleNamespace(config=config, workerinput={})
    handout.pytest_configure_node(node)
    assert node.workerinput["conformance_contract_checked"] == load_contract().digest
    assert node.workerinput["conformance_seed"] == 11


def test_a_target_gets_a_random_seed_unless_one_is_given(pytester: pytest.Pytester) -> None:
    """A target keeps what the last run created; the same seed would create it again."""
    drawn = {
        pytester.parseconfigure("--target", "http://127.0.0.1:9").stash[plugin.SEED]
        for _ in range(4)
    }
    assert len(drawn) > 1 and DEFAULT_SEED not in drawn
    given = pytester.parseconfigure("--target", "http://127.0.0.1:9", "--seed", "5")
    assert given.stash[plugin.SEED] == 5
    assert pytester.parseconfigure().stash[plugin.SEED] == DEFAULT_SEED  # the bundled server


# --- reports -------------------------------------------------------------------------------------


def test_the_reports_carry_verdicts_labels_and_no_secret(suite: pytest.Pytester) -> None:
    result = suite.runpytest(
        "--reports", "out", "--junitxml", "out/junit.xml", "--alluredir", "out/allure"
    )
    assert result.ret == 1  # the must-level failure
    out = suite.path / "out"
    document = json.loads((out / "compliance.json").read_text(encoding="utf-8"))
    verdicts = {s["id"]: s["verdict"] for s in document["scenarios"]}
    assert verdicts == {
        "E12-passes-accepted": "passed",
        "E12-must-fails-accepted": "failed",
        "E12-should-fails-accepted": "failed (should)",
        "E12-needs-clock-accepted": "not applicable",
        "E18-unsupported-accepted": "not applicable",
    }
    for key in ("spec_version", "suite_version", "run", "target", "profile", "totals", "matrix"):
        assert key in document
    assert document["run"]["seed"] == DEFAULT_SEED
    assert document["run"]["started"] <= document["run"]["finished"]
    texts = {a["text"] for a in document["assumptions"]}
    assert "A test assumption." in texts
    assert any(a["topic"] == "product" for a in document["assumptions"])  # E18's contract one
    assert (out / "compliance.md").is_file()

    junit = (out / "junit.xml").read_text(encoding="utf-8")
    assert '<property name="operation" value="E12"' in junit
    assert '<property name="verdict" value="failed (should)"' in junit

    allure_files = list((out / "allure").iterdir())
    results = [
        json.loads(path.read_text(encoding="utf-8"))
        for path in allure_files
        if path.name.endswith("-result.json")
    ]
    failed = next(r for r in results if "must-fails" in r["name"])
    labels = {(label["name"], label["value"]) for label in failed["labels"]}
    assert {
        ("epic", "4.3 E12 " + load_contract().operations["E12"].name),  # the spec part's title
        ("feature", "E12 " + load_contract().operations["E12"].name),
        ("story", "POS-E12"),
        ("severity", "critical"),
    } <= labels
    attachment_names = [a["name"] for a in failed["attachments"]]
    assert "reproduce" in attachment_names
    assert "01 GET /v1/sandbox/accounts/1 → 200" in attachment_names
    # named after the scenario, without the Python test's module and function
    assert failed["fullName"] in verdicts
    assert not {name for name, _ in labels} & {"package", "testMethod", "suite", "parentSuite"}
    should = next(r for r in results if "should-fails" in r["name"])
    assert ("severity", "normal") in {(lb["name"], lb["value"]) for lb in should["labels"]}
    # One history per scenario, though no item is parametrised (the scenario id is the Allure
    # parameter), and no result container per item: the scenario is not a fixture.
    assert len({r["historyId"] for r in results}) == len(results) == 5
    assert {p["value"] for r in results for p in r["parameters"]} == {
        repr(scenario_id) for scenario_id in verdicts
    }
    containers = [
        json.loads(path.read_text(encoding="utf-8"))
        for path in allure_files
        if path.name.endswith("-container.json")
    ]
    fixtures = [fixture["name"] for c in containers for fixture in c.get("befores", [])]
    assert "scenario" not in fixtures
    assert len(fixtures) == len(set(fixtures))  # session fixtures, one container each

    for path in [out / "compliance.json", out / "compliance.md", out / "junit.xml", *allure_files]:
        assert NATIONAL_ID not in path.read_text(encoding="utf-8", errors="replace"), path


# --- bad input -----------------------------------------------------------------------------------


def test_an_unreachable_target_is_one_line_and_a_non_zero_exit(suite: pytest.Pytester) -> None:
    port = closed_port()
    result = suite.runpytest("--target", f"http://127.0.0.1:{port}")
    assert result.ret == 3
    output = result.stdout.str() + result.stderr.str()
    assert f"conformance: the target at http://127.0.0.1:{port}/" in output
    assert "Traceback" not in output
    assert not (suite.path / "seeds.txt").exists()


def test_a_target_conformance_run_has_preflighted_is_not_probed_again(
    suite: pytest.Pytester,
) -> None:
    """``conformance run`` hands its in-process pytest run a ``PreflightDone`` for the options
    it checked; the plugin then skips its own probes (here an unreachable target would stop the
    session), but only for exactly those options."""
    target = f"http://127.0.0.1:{closed_port()}"
    done = PreflightDone.naming(target=target, profile=None, cert=None, key=None)
    result = suite.runpytest("--target", target, "-k", "nothing-selected", plugins=[done])
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    other = PreflightDone.naming(target="http://127.0.0.1:9", profile=None, cert=None, key=None)
    result = suite.runpytest("--target", target, "-k", "nothing-selected", plugins=[other])
    assert result.ret == 3
    assert f"conformance: the target at {target}/" in result.stdout.str() + result.stderr.str()


def test_a_bad_profile_is_one_line_and_a_non_zero_exit(suite: pytest.Pytester) -> None:
    profile = suite.path / "bank.toml"
    profile.write_text('base_url = "http://127.0.0.1:9"\nsandbx = false\n', encoding="utf-8")
    result = suite.runpytest("--profile", str(profile))
    assert result.ret == 2
    output = result.stdout.str() + result.stderr.str()
    assert "conformance: profile" in output and "unknown key 'sandbx'" in output
    assert "Traceback" not in output


def test_a_missing_certificate_is_one_line_and_a_non_zero_exit(suite: pytest.Pytester) -> None:
    result = suite.runpytest(
        "--target", "http://127.0.0.1:9", "--cert", str(suite.path / "missing.pem")
    )
    assert result.ret == 2
    output = result.stdout.str() + result.stderr.str()
    assert "missing.pem" in output and "Traceback" not in output


def test_the_options_are_documented(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    output = result.stdout.str()
    assert "PSD2 conformance suite" in output
    for option in ("--target=URL", "--profile=FILE", "--seed=N", "--conformance-strict"):
        assert option in output


def test_the_marker_list_names_the_scenario_markers(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    output = result.stdout.str()
    assert "@pytest.mark.E16:" in output and "@pytest.mark.must:" in output
