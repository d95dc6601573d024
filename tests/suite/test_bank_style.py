"""A bank's choices where the spec leaves them open, through real HTTP: the profile says them,
the suite follows them, and the reference server plays that bank (``--profile``): the gateway's
static headers, the KID reference type, the PSU header values."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest

from conformance.bankside.client import TargetClient
from conformance.bankside.sca import ReferenceSca
from conformance.bankside.setup_data import DataFactory
from conformance.checks import ConformanceFailure, NotApplicable
from conformance.contract import Contract
from conformance.operations import base_request
from conformance.profile import TargetProfile, load_profile
from conformance.runners import RunContext, run_scenario
from conformance.scenario import Scenario
from reference_server.app import Application
from reference_server.model.bank_style import BankStyle, style_of
from reference_server.transport.http import RunningServer, start
from suite.conftest import RUN_SEED

GATEWAY = MappingProxyType({"X-IBM-Client-Id": "demo-client-id"})
SCOR = BankStyle(gateway_headers=GATEWAY, kid_reference_types=frozenset({"SCOR"}))


@pytest.fixture
def bank() -> Iterator[Callable[..., tuple[RunContext, RunningServer]]]:
    """A reference server playing ``style`` and a run context whose profile has ``changes``."""
    opened: list[tuple[RunningServer, TargetClient]] = []

    def make(style: BankStyle, contract: Contract, **changes: Any) -> tuple[RunContext, Any]:
        running = start(Application(bank=style))
        profile = replace(
            TargetProfile(name="bank", base_url=running.url, reference_server=True), **changes
        )
        client = TargetClient(
            running.url, verify=False, timeout=10.0, static_headers=profile.static_headers()
        )
        opened.append((running, client))
        sca = ReferenceSca(client, profile.redirect_uri)
        data = DataFactory(contract, profile, client, run_seed=RUN_SEED, sca=sca)
        context = RunContext(
            contract=contract, profile=profile, client=client, seed=RUN_SEED, data=data, sca=sca
        )
        return context, running

    yield make
    for running, client in opened:
        client.close()
        running.stop()


def test_the_gateways_headers_are_sent_and_required(
    bank: Callable[..., tuple[RunContext, RunningServer]],
    contract: Contract,
    scenarios: dict[str, Scenario],
) -> None:
    chosen = scenarios["E12-valid-request-accepted"]
    context, _ = bank(SCOR, contract, headers=GATEWAY, kid_reference_type="SCOR")
    run_scenario(chosen, context)
    sent = context.exchanges[-1]
    assert sent.request_header("X-IBM-Client-Id") == "demo-client-id"
    assert "X-IBM-Client-Id" not in sent.reproduce_command()  # the replay's profile sends it
    without, _ = bank(SCOR, contract, kid_reference_type="SCOR")
    with pytest.raises(ConformanceFailure, match="HTTP 401") as refused:
        run_scenario(chosen, without)
    assert "the gateway requires X-IBM-Client-Id" in str(refused.value)
    wrong, _ = bank(
        SCOR,
        contract,
        headers=MappingProxyType({"X-IBM-Client-Id": "other"}),
        kid_reference_type="SCOR",
    )
    with pytest.raises(ConformanceFailure, match="HTTP 401"):
        run_scenario(chosen, wrong)


@pytest.mark.parametrize(
    "scenario_id",
    [
        "E16-ERR-2-kid-invalid-rejected",
        "E16-ndct-kid-mod11-accepted",
        "E16-XF-kid-check-digit-rejected",
    ],
)
def test_kids_go_with_the_banks_reference_type(
    bank: Callable[..., tuple[RunContext, RunningServer]],
    contract: Contract,
    scenarios: dict[str, Scenario],
    scenario_id: str,
) -> None:
    context, _ = bank(SCOR, contract, headers=GATEWAY, kid_reference_type="SCOR")
    run_scenario(scenarios[scenario_id], context)
    sent = next(
        e for e in reversed(context.exchanges) if b"remittanceInformation" in e.request_body
    )
    item = json.loads(sent.request_body)["remittanceInformationStructuredArray"][0]
    assert item["referenceType"] == "SCOR"


def test_a_kid_of_another_type_is_not_a_kid_to_that_bank(
    bank: Callable[..., tuple[RunContext, RunningServer]],
    contract: Contract,
    scenarios: dict[str, Scenario],
) -> None:
    """The key matters: with the default "KID" type a SCOR bank never checks the reference, so
    an invalid KID is accepted and the spec 7 rule 2 scenario fails."""
    context, _ = bank(SCOR, contract, headers=GATEWAY)
    with pytest.raises(ConformanceFailure):
        run_scenario(scenarios["E16-ERR-2-kid-invalid-rejected"], context)


def test_the_psu_headers_carry_the_profiles_values(
    bank: Callable[..., tuple[RunContext, RunningServer]],
    contract: Contract,
    scenarios: dict[str, Scenario],
) -> None:
    context, _ = bank(
        BankStyle(),
        contract,
        psu_ip_address="192.0.2.10",
        psu_user_agent="ExampleBank-TPP-Test/1.0",
    )
    run_scenario(scenarios["E16-ndct-unstructured-accepted"], context)
    created = next(e for e in context.exchanges if e.method == "POST" and "/payments/" in e.url)
    assert created.request_header("PSU-IP-Address") == "192.0.2.10"
    assert created.request_header("PSU-User-Agent") == "ExampleBank-TPP-Test/1.0"


def test_the_server_reads_the_bank_from_the_same_profile(tmp_path: Any) -> None:
    path = tmp_path / "bank.toml"
    path.write_text(
        'base_url = "https://bank.example"\nkid_reference_type = "scor"\n'
        '[headers]\n"X-IBM-Client-Id" = "env:BANK_ID"\n"X-Channel" = "TPP"\n',
        encoding="utf-8",
    )
    style = style_of(load_profile(path), {"BANK_ID": "k-1"})
    assert dict(style.gateway_headers) == {"X-IBM-Client-Id": "k-1", "X-Channel": "TPP"}
    assert style.kid_reference_types == {"SCOR"}
    assert style_of(load_profile(path), {"BANK_ID": "k-1"}) == style
    assert BankStyle().kid_reference_types == {"KID", "OCR"}


def test_the_banks_query_names_are_used_where_the_spec_leaves_them_open(
    bank: Callable[..., tuple[RunContext, RunningServer]],
    contract: Contract,
    scenarios: dict[str, Scenario],
) -> None:
    names = MappingProxyType({"AT": MappingProxyType({"fromDate": "dateFrom"})})
    style = BankStyle(query_names=names)
    chosen = scenarios["AT-query.fromDate-format-2026-02-30-rejected"]
    context, _ = bank(style, contract, query_names=names)
    run_scenario(chosen, context)
    assert "dateFrom=2026-02-30" in context.exchanges[-1].url
    plain, _ = bank(style, contract)  # the contract's name: the bank ignores it, answers 200
    with pytest.raises(ConformanceFailure):
        run_scenario(chosen, plain)


def test_the_banks_required_headers_where_the_spec_does_not_show_them(
    bank: Callable[..., tuple[RunContext, RunningServer]],
    contract: Contract,
    scenarios: dict[str, Scenario],
) -> None:
    pa = contract.operations["PA"]
    kept = tuple(n for n in pa.required_headers if n not in ("PSU-IP-Address", "x-accept-fix"))
    chosen = MappingProxyType({"PA": kept})
    context, _ = bank(BankStyle(required_headers=chosen), contract, required_headers=chosen)
    with pytest.raises(NotApplicable, match="does not require PSU-IP-Address"):
        run_scenario(scenarios["PA-header-PSU-IP-Address-missing-rejected"], context)
    run_scenario(scenarios["PA-header-PSU-ID-missing-rejected"], context)  # still required
    # the server playing that bank lets an authorisation start without the header
    request = base_request(context, "PA", "", 11).with_header("PSU-IP-Address", None)
    assert request.send(context).status == 201
    faithful, _ = bank(BankStyle(), contract)
    request = base_request(faithful, "PA", "", 12).with_header("PSU-IP-Address", None)
    assert request.send(faithful).status == 400


def test_the_banks_ncbct_product_identifier(
    bank: Callable[..., tuple[RunContext, RunningServer]],
    contract: Contract,
    scenarios: dict[str, Scenario],
) -> None:
    """Spec 4.1 leaves NCBCT's identifier open: the suite sends the bank's, the bank answers in
    it (links included), and the contract's identifier is no product there."""
    ids = MappingProxyType({"norwegian-cross-border-credit-transfers": "international-transfers"})
    context, _ = bank(BankStyle(product_ids=ids), contract, product_ids=ids)
    run_scenario(scenarios["E18-ncbct-below-threshold-accepted"], context)
    created = next(e for e in context.exchanges if e.method == "POST" and "/payments/" in e.url)
    assert "/v1/payments/international-transfers" in created.url
    assert b"norwegian-cross-border-credit-transfers" not in created.response_body
    status = context.client.get(
        context.profile.render_path(
            contract.operations["PS"],
            **{
                "payment-product": "norwegian-cross-border-credit-transfers",
                "payment-id": created.json()["paymentId"],
            },
        )
    )
    assert status.status == 200 and "/international-transfers/" in status.url
    contract_path = created.url.split("/v1/", 1)[1].replace(
        "international-transfers", "norwegian-cross-border-credit-transfers"
    )
    refused = context.client.post("/v1/" + contract_path, json={})
    assert refused.status in (400, 403, 404)


@pytest.mark.parametrize(
    "scenario_id",
    [
        "E2-header-PSU-Corporate-ID-corporate-missing-rejected",  # spec 7 rule 3, not the set
        "PA-header-PSU-IP-Address-missing-rejected",  # no [required_headers] for PA here
    ],
)
def test_header_scenarios_are_judged_where_the_profile_names_no_set(
    bank: Callable[..., tuple[RunContext, RunningServer]],
    contract: Contract,
    scenarios: dict[str, Scenario],
    scenario_id: str,
) -> None:
    pa = contract.operations["PA"]
    chosen = MappingProxyType({"E2": contract.operations["E2"].required_headers})
    context, _ = bank(BankStyle(), contract, required_headers=chosen)
    run_scenario(scenarios[scenario_id], context)  # judged and passed, never not applicable
    assert pa.required_headers  # the set the PA scenario is judged by: the contract's
