"""Scenarios in flight within a worker (``--conformance-threads``, ``conformance.runners.pool``):
the runs made ahead overlap their waits, each item still reports its own outcome and its own
exchanges, and what the threads share (the client's record, the set-up cache, the seeded
generators) stays per scenario."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from conformance.bankside.client import TargetClient
from conformance.bankside.setup_data.base import SetUpBase
from conformance.generate import factories
from conformance.suite import SUITE_DIR

pytest_plugins = ["pytester"]

SCENARIOS_FILE = SUITE_DIR / "test_conformance.py"

CONFTEST = """
import sys
import threading
import time

import httpx
import pytest

from conformance.bankside.client import TargetClient
from conformance.checks import ConformanceFailure
from conformance.contract import load_contract
from conformance.plugin.options import scenario_threads
from conformance.profile import TargetProfile
from conformance.runners.context import RunContext
from conformance.runners.pool import ScenarioPool
from conformance.contract.requirements import answer_due
from conformance.scenario import Scenario

IN_FLIGHT = {"now": 0, "most": 0}
LOCK = threading.Lock()


def scenario(number):
    outcome = "fails" if number % 5 == 0 else "passes"
    return Scenario(
        id=f"E12-{number:02d}-{outcome}",
        operation="E12",
        rule="POS-E12",
        spec="spec 4.3 E12",
        level="must",
        kind="positive",
        title=f"scenario {number}",
        expect=answer_due(statuses=(200,)),
    )


def pytest_conformance_scenarios(config):
    return tuple(scenario(number) for number in range(1, 13))


def answer(request):
    with LOCK:
        IN_FLIGHT["now"] += 1
        IN_FLIGHT["most"] = max(IN_FLIGHT["most"], IN_FLIGHT["now"])
    time.sleep(0.05)
    with LOCK:
        IN_FLIGHT["now"] -= 1
    return httpx.Response(200, json={"path": request.url.path})


@pytest.fixture(scope="session")
def conformance_context(request, conformance_seed):
    threads = scenario_threads(request.config)
    client = TargetClient(
        "http://bank.invalid", sign=False, transport=httpx.MockTransport(answer)
    )
    context = RunContext(
        contract=load_contract(),
        profile=TargetProfile(name="fake bank", base_url="http://bank.invalid"),
        client=client,
        seed=conformance_seed,
        data=None,
        sca=None,
        pool=ScenarioPool(threads) if threads > 1 else None,
    )
    yield context
    if context.pool is not None:
        context.pool.close()
    with open("in_flight.txt", "w", encoding="utf-8") as out:
        out.write(str(IN_FLIGHT["most"]))


@pytest.fixture(scope="session")
def conformance_runner():
    def run(scenario, ctx):
        ctx.client.take_exchanges()
        ctx.client.get(f"/v1/{scenario.id}")
        ctx.client.get(f"/v1/{scenario.id}/again")
        ctx.exchanges.extend(ctx.client.take_exchanges())
        if "fails" in scenario.id:
            raise ConformanceFailure(
                f"{scenario.id} failed", spec=scenario.spec, expected="nothing"
            ).for_scenario(scenario)

    return run


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_makereport(item, call):
    if call.when != "call":
        return
    ctx = item.funcargs["conformance_context"]
    scenario_id = item.name.split("[", 1)[1].rstrip("]")
    paths = [exchange.url.split("/v1/", 1)[1] for exchange in ctx.exchanges]
    with open("exchanges.txt", "a", encoding="utf-8") as out:
        out.write(f"{scenario_id} {' '.join(paths)}\\n")
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=SCENARIOS_FILE.read_text(encoding="utf-8"))
    return pytester


def _run(suite: pytest.Pytester, threads: int) -> tuple[dict[str, str], list[str], int]:
    exchanges = suite.path / "exchanges.txt"
    exchanges.unlink(missing_ok=True)
    result = suite.runpytest(
        "-p", "no:cacheprovider", "-rA", "-q", "--conformance-threads", str(threads)
    )
    outcomes = {
        line.split("::test_scenario[", 1)[1].split("]", 1)[0]: line.split()[0]
        for line in result.outlines
        if line.startswith(("PASSED", "FAILED")) and "test_scenario[" in line
    }
    lines = exchanges.read_text(encoding="utf-8").splitlines()
    return outcomes, lines, int((suite.path / "in_flight.txt").read_text())


def test_runs_made_ahead_overlap_and_each_item_reports_its_own(suite: pytest.Pytester) -> None:
    alone, alone_lines, alone_most = _run(suite, 1)
    ahead, ahead_lines, ahead_most = _run(suite, 4)
    assert alone_most == 1  # one scenario at a time
    assert ahead_most >= 2  # several requests in flight
    # the same verdict for every scenario, reported in the same order
    assert ahead == alone
    assert len(ahead) == 12 and list(ahead.values()).count("FAILED") == 2
    assert [line.split()[0] for line in ahead_lines] == [line.split()[0] for line in alone_lines]
    # each item's exchanges are its scenario's, both of them, in their order
    for line in ahead_lines:
        scenario_id, *paths = line.split()
        assert paths == [scenario_id, f"{scenario_id}/again"]


def test_a_scenario_record_holds_only_its_own_exchanges() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        time.sleep(0.01)
        return httpx.Response(200, json={})

    client = TargetClient("http://bank.invalid", sign=False, transport=httpx.MockTransport(answer))
    start = threading.Barrier(4)

    def scenario(number: int) -> list[str]:
        with client.recording():
            start.wait()
            for step in range(5):
                client.get(f"/v1/{number}/{step}")
            return [exchange.url for exchange in client.take_exchanges()]

    with ThreadPoolExecutor(4) as pool:
        records = list(pool.map(scenario, range(4)))
    for number, urls in enumerate(records):
        assert urls == [f"http://bank.invalid/v1/{number}/{step}" for step in range(5)]
    assert client.exchanges == ()  # nothing reached the shared record


def test_shared_set_up_is_made_once_whatever_the_threads() -> None:
    base = SetUpBase(
        SimpleNamespace(),  # type: ignore[arg-type]
        SimpleNamespace(),  # type: ignore[arg-type]
        SimpleNamespace(),  # type: ignore[arg-type]
        run_seed=1,
    )
    made: list[int] = []

    def make() -> str:
        made.append(1)
        time.sleep(0.05)
        return "customer"

    with ThreadPoolExecutor(8) as pool:
        values = list(pool.map(lambda _: base.shared("customer", make), range(16)))
    assert values == ["customer"] * 16
    assert made == [1]


def test_seeded_data_does_not_depend_on_threads() -> None:
    def bodies(seed: int) -> list[Any]:
        return [factories.sandbox_customer_create(seed + step, "PRIVATE") for step in range(20)]

    alone = [bodies(seed) for seed in range(0, 400, 50)]
    # threads switched as often as the interpreter can: a generator shared between them would
    # hand one scenario values drawn for another's seed
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(8) as pool:
            side_by_side = list(pool.map(bodies, range(0, 400, 50)))
    finally:
        sys.setswitchinterval(previous)
    assert side_by_side == alone
