"""Answer times per operation (``conformance.report.timings``, ``conformance.plugin.timings``):
each exchange counted under the operation it called, as the target routes it, summarised as p50
and p95 in compliance.json, .md and .html."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from conformance.contract import load_contract
from conformance.exchange import Exchange
from conformance.plugin.timings import exchange_timings, operation_of
from conformance.profile import TargetProfile
from conformance.report.compliance import RunInfo, build_document
from conformance.report.compliance_render import render_html, render_markdown
from conformance.report.timings import answer_times, percentile, read_timings, timings_properties
from conformance.report.verdicts import PASSED, ScenarioFacts, ScenarioVerdict

CONTRACT = load_contract()
BASE = "http://bank.example/api"
STARTED = datetime(2026, 1, 29, 8, 0, tzinfo=UTC)


def run_info() -> RunInfo:
    return RunInfo(started=STARTED, finished=STARTED, seed=1, strict=False, target=BASE)


def facts(scenario_id: str, operation: str) -> ScenarioFacts:
    return ScenarioFacts(scenario_id, operation, "POS", "spec 4.3", "must", "positive", "t")


def exchange(method: str, path: str, seconds: float = 0.002) -> Exchange:
    return Exchange(
        method=method, url=BASE + path, request_headers=(), request_body=b"",
        signing_string=None, status=200, response_headers=(), response_body=b"{}",
        elapsed=seconds, base_url=BASE,
    )  # fmt: skip


def test_percentiles_are_nearest_rank() -> None:
    samples = [float(n) for n in range(1, 101)]
    assert percentile(samples, 0.5) == 50.0 and percentile(samples, 0.95) == 95.0
    assert percentile([7.0], 0.95) == 7.0
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_each_exchange_counts_for_the_operation_it_called() -> None:
    profile = TargetProfile(name="bank", base_url=BASE)
    assert operation_of(exchange("GET", "/v1/sandbox/customers"), CONTRACT, profile) == "E9"
    ndct = "/v1/payments/norwegian-domestic-credit-transfers"
    assert operation_of(exchange("POST", ndct), CONTRACT, profile) == "E16"
    ncbct = "/v1/payments/" + CONTRACT.operations["E18"].fixed_path_values["payment-product"]
    assert operation_of(exchange("POST", ncbct), CONTRACT, profile) == "E18"
    assert operation_of(exchange("GET", "/v1/no-such-thing"), CONTRACT, profile) is None
    moved = dataclasses.replace(profile, paths={"E9": "/v1/customers"})
    assert operation_of(exchange("GET", "/v1/customers?x=1"), CONTRACT, moved) == "E9"


def test_the_document_gives_p50_and_p95_per_operation() -> None:
    profile = TargetProfile(name="bank", base_url=BASE)
    context = SimpleNamespace(
        contract=CONTRACT,
        profile=profile,
        exchanges=[exchange("GET", "/v1/sandbox/customers", ms / 1000) for ms in range(1, 21)],
    )
    timed = exchange_timings(context)
    assert read_timings(timings_properties(timed)) == tuple(timed)
    assert answer_times(timed)["E9"] == {"answers": 20, "p50_ms": 10.0, "p95_ms": 19.0}
    verdict = ScenarioVerdict(facts("E9-a", operation="E9"), PASSED, timings=tuple(timed))
    document = build_document([verdict], run_info(), CONTRACT)
    (entry,) = document["operations"]
    assert entry["answer_times"] == {"answers": 20, "p50_ms": 10.0, "p95_ms": 19.0}
    shown = "p50 10.0 ms, p95 19.0 ms (20 answers)"
    assert shown in render_markdown(document) and shown in render_html(document)
