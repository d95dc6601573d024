"""The consent model ``first-access`` on the suite's side: the profile reads it and makes the
consent operations not applicable with its reason; the account scenarios obtain their consent
at a TPP session's first access (401 with ``_links.scaRedirect``, SCA, the access again) and are
judged on it, spec 8's ages too; a bank of another model fails that first access. Against the
reference server playing a first-access bank, through real HTTP."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conformance.bankside.client import TargetClient
from conformance.bankside.request import Psu
from conformance.bankside.setup_data import Consent
from conformance.checks import ConformanceFailure, NotApplicable
from conformance.contract import Contract
from conformance.errors import ConformanceError
from conformance.profile import ConsentSettings, load_profile
from conformance.runners import RunContext, run_scenario
from conformance.scenario import Scenario
from reference_server.app import Application
from reference_server.faults import FAULTS
from reference_server.model.bank_style import BankStyle
from reference_server.transport.http import RunningServer, start
from suite.conftest import build_context

FIRST_ACCESS = ConsentSettings("first-access")


@pytest.fixture
def bank(contract: Contract) -> Iterator[Callable[..., RunContext]]:
    """A fresh reference server playing a bank of consent model ``model`` and a run context
    whose profile says first-access (its shared consent not made yet)."""
    opened: list[tuple[RunningServer, TargetClient]] = []

    def make(model: str = "first-access", *faults: str) -> RunContext:
        running = start(Application(bank=BankStyle(consent_model=model), faults=faults))
        context, client = build_context(contract, running.url, consent=FIRST_ACCESS)
        opened.append((running, client))
        return context

    yield make
    for running, client in opened:
        client.close()
        running.stop()


def _calls(context: RunContext) -> list[str]:
    return [f"{e.method} {e.path.split('?')[0]} {e.status}" for e in context.exchanges]


# --- the profile ----------------------------------------------------------------------------------


def test_the_profile_reads_the_model_and_has_no_consent_endpoint(
    tmp_path: Path, contract: Contract
) -> None:
    path = tmp_path / "bank.toml"
    path.write_text(
        'name = "b"\nbase_url = "http://127.0.0.1:1"\n[consent]\nmodel = "first-access"\n',
        encoding="utf-8",
    )
    profile = load_profile(path)
    assert profile.consent.at_first_access
    for op_id in ("CC", "CS", "CA", "CG", "CD"):
        reason = profile.unsupported_reason(contract.operations[op_id])
        assert reason is not None and "first-access" in reason and "TPP session" in reason
    for op_id in ("AL", "AT", "E8"):
        assert profile.unsupported_reason(contract.operations[op_id]) is None
    path.write_text(path.read_text("utf-8").replace("first-access", "first"), encoding="utf-8")
    with pytest.raises(ConformanceError, match="first-access"):
        load_profile(path)


def test_a_session_consent_is_named_by_its_session() -> None:
    psu = Psu("3fa85f64-5717-4562-b3fc-2c963f66afa6")
    bound = Consent("session-9", psu, bound_to_session=True)
    assert bound.access_headers == {"TPP-Session-ID": "session-9"}
    created = Consent("consent-9", psu)  # on E8 too: spec 4.2 does not say how it is named
    assert created.access_headers == {"Consent-ID": "consent-9"}


# --- the scenarios --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario_id", "named"),
    [("CC-complete-request-accepted", "CC"), ("AL-CNS-terminated-consent-refused-rejected", "CD")],
)
def test_what_needs_a_consent_endpoint_is_not_applicable_naming_the_model(
    bank: Callable[..., RunContext], scenarios: dict[str, Scenario], scenario_id: str, named: str
) -> None:
    context = bank()
    with pytest.raises(NotApplicable) as raised:
        run_scenario(scenarios[scenario_id], context)
    assert f"{named} is a consent endpoint" in raised.value.reason
    assert "first-access" in raised.value.reason


def test_the_account_list_obtains_its_consent_at_the_first_access(
    bank: Callable[..., RunContext], scenarios: dict[str, Scenario]
) -> None:
    context = bank()
    run_scenario(scenarios["AL-valid-request-accepted"], context)
    calls = _calls(context)
    assert not any("/v1/consents" in call for call in calls), calls
    first = calls.index("GET /v1/accounts 401")
    assert any(call.startswith("GET /sca/") for call in calls[first:]), calls
    assert calls[-1] == "GET /v1/accounts 200"
    listed = context.exchanges[-1]
    assert listed.request_header("TPP-Session-ID") == context.exchanges[first].request_header(
        "TPP-Session-ID"
    )


@pytest.mark.parametrize(
    "scenario_id",
    [
        "E8-valid-request-accepted",
        "E8-LIM-transaction-details-daily-calls-without-ip-rejected",
        "E8-LIM-transaction-details-consent-max-90-days-rejected",
        "AL-LIM-sca-renewal-180-days-rejected",
        "AT-LIM-sca-renewal-180-days-rejected",
        "AL-ERR-8-consent-account-gone-empty-list-holds",
        "AL-consent-flow-lists-accounts",
        "E8-consent-flow-returns-transaction-details",
        "E6-engagement-without-register-not-offered",
    ],
)
def test_the_account_scenarios_are_judged_on_the_sessions_consent(
    bank: Callable[..., RunContext], scenarios: dict[str, Scenario], scenario_id: str
) -> None:
    context = bank()
    run_scenario(scenarios[scenario_id], context)  # judged and held: no NotApplicable
    calls = _calls(context)
    assert "GET /v1/accounts 401" in calls, calls  # the consent given at the first access
    assert not any("/v1/consents" in call for call in calls), calls


def test_a_bank_with_a_consent_endpoint_fails_the_first_access(
    bank: Callable[..., RunContext], scenarios: dict[str, Scenario]
) -> None:
    context = bank("detailed")  # answers 401 CONSENT_UNKNOWN, but sends the PSU nowhere
    with pytest.raises(ConformanceFailure, match="scaRedirect"):
        run_scenario(scenarios["AL-valid-request-accepted"], context)


@pytest.mark.parametrize(
    ("fault", "scenario_id"),
    [
        ("psu-ownership-unchecked", "E8-auth-other-psu-refused"),
        ("tpp-ownership-unchecked", "AL-auth-other-tpp-refused"),
        ("no-consent-age-check", "E8-LIM-transaction-details-consent-max-90-days-rejected"),
        ("no-daily-limit", "E8-LIM-transaction-details-daily-calls-without-ip-rejected"),
        ("account-gone-404", "AL-ERR-8-consent-account-gone-empty-list-holds"),
    ],
)
def test_a_consent_fault_is_caught_on_the_sessions_consent(
    bank: Callable[..., RunContext], scenarios: dict[str, Scenario], fault: str, scenario_id: str
) -> None:
    context = bank("first-access", fault)
    assert FAULTS[fault].breaks(
        scenario_id,
        scenarios[scenario_id].rule,
        scenarios[scenario_id].operation,
        first_access=True,
    )
    with pytest.raises(ConformanceFailure):  # a should fault's findings too (ShouldFindings)
        run_scenario(scenarios[scenario_id], context)


def test_the_psu_fault_names_e8_whatever_the_consent_is_bound_to(
    scenarios: dict[str, Scenario],
) -> None:
    """E8 names the consent as AL and AT do (its Consent-ID, or its TPP session), so another PSU
    reaches it through the fault in either model."""
    scenario = scenarios["E8-auth-other-psu-refused"]
    fault = FAULTS["psu-ownership-unchecked"]
    assert fault.breaks(scenario.id, scenario.rule, scenario.operation)
    assert fault.breaks(scenario.id, scenario.rule, scenario.operation, first_access=True)
