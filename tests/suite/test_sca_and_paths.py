"""How SCA goes at a bank and where its paths are, through real HTTP: the profile says it
(``[sca] start``/``approach``, ``[paths]`` with methods and periodic templates, ``rate_limit``),
the suite follows it, and the reference server plays that bank."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.bankside.client import TargetClient
from conformance.bankside.sca import DecoupledSca, ScaOutcome, sca_step_for
from conformance.bankside.setup_data import DataFactory
from conformance.checks import ConformanceFailure, NotApplicable, SetUpFailure
from conformance.contract import Contract
from conformance.profile import ScaSettings, SecondIdentity, TargetProfile, load_profile
from conformance.runners import RunContext, run_scenario
from conformance.scenario import Scenario
from conformance.signing import default_ca, generate_tpp_identity, write_identity
from reference_server.app import Application, Throttle
from reference_server.model import sandbox_data
from reference_server.model.bank_style import BankStyle, contract_route, style_of
from reference_server.model.payment_data import CONSENTS
from reference_server.transport.http import RunningServer, start
from suite.conftest import RUN_SEED

DECOUPLED = ScaSettings(approach="decoupled", poll_interval=0.01, poll_timeout=5.0)
AT_CREATION = ScaSettings(start="creation")


@pytest.fixture
def bank() -> Iterator[Callable[..., RunContext]]:
    """A reference server playing ``style`` and a run context whose profile has ``changes``
    (its SCA step the one the profile asks for)."""
    opened: list[tuple[RunningServer, TargetClient]] = []

    def make(style: BankStyle, contract: Contract, **changes: Any) -> RunContext:
        running = start(Application(bank=style))
        profile = replace(
            TargetProfile(name="bank", base_url=running.url, reference_server=True), **changes
        )
        client = TargetClient(running.url, verify=False, timeout=10.0)
        opened.append((running, client))
        sca = sca_step_for(profile, client)
        data = DataFactory(contract, profile, client, run_seed=RUN_SEED, sca=sca)
        return RunContext(
            contract=contract, profile=profile, client=client, seed=RUN_SEED, data=data, sca=sca
        )

    yield make
    for running, client in opened:
        client.close()
        running.stop()


def _paths(context: RunContext) -> list[str]:
    return [f"{exchange.method} {exchange.path}" for exchange in context.exchanges]


# --- decoupled SCA --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "scenario_id",
    ["E16-sca-completed-status-advances", "E17-sca-cancelled-payment-rejected"],
)
def test_decoupled_sca_is_decided_in_the_app_and_polled_to_its_end(
    bank: Callable[..., RunContext],
    contract: Contract,
    scenarios: dict[str, Scenario],
    scenario_id: str,
) -> None:
    context = bank(BankStyle(sca_decoupled=True), contract, sca=DECOUPLED)
    run_scenario(scenarios[scenario_id], context)
    started = next(e for e in context.exchanges if e.path.endswith("/authorisations"))
    assert "scaRedirect" not in started.response_body.decode()  # the bank sends nobody anywhere
    sent = _paths(context)
    decided = next(i for i, line in enumerate(sent) if line.startswith("POST /sca/"))
    assert any(line.startswith("GET /sca/") and "/status" in line for line in sent[decided:])


def test_decoupled_sca_checks_the_redirect_spec_5_states(
    bank: Callable[..., RunContext], contract: Contract, scenarios: dict[str, Scenario]
) -> None:
    """Spec 5 item 6 states SCA by redirect: a decoupled bank fails the redirect check itself
    (a bank team waives it with its reason), while its other scenarios pass."""
    context = bank(BankStyle(sca_decoupled=True), contract, sca=DECOUPLED)
    with pytest.raises(ConformanceFailure, match=r"no _links\.scaRedirect"):
        run_scenario(scenarios["E2-basket-authorisation-is-started"], context)


class _NobodyDecides:
    def complete(
        self, link: str, *, customer_number: str | None, approve: bool = True
    ) -> ScaOutcome:
        return ScaOutcome(approved=approve)


def test_a_decoupled_authorisation_nobody_decides_blocks_the_scenario(
    bank: Callable[..., RunContext], contract: Contract
) -> None:
    settings = replace(DECOUPLED, poll_timeout=0.2, poll_interval=0.05)
    context = bank(BankStyle(sca_decoupled=True), contract, sca=settings)
    waited: list[float] = []
    context.data.sca = DecoupledSca(
        _NobodyDecides(), context.client, settings, sleep=lambda s: waited.append(s)
    )
    with pytest.raises(SetUpFailure, match=r"still STARTED after 0.2 s \(\[sca\] poll_timeout\)"):
        context.data.payment(RUN_SEED, "E16", authorise=True)
    assert waited and all(seconds == 0.05 for seconds in waited)


def test_decoupled_polling_ends_with_the_status_the_bank_reports(contract: Contract) -> None:
    class Answers:
        def __init__(self, statuses: list[str]) -> None:
            self.statuses = statuses
            self.reads = 0

        def request(self, method: str, url: str, **_: Any) -> Any:
            self.reads += 1
            status = self.statuses.pop(0)
            return _Answer({"scaStatus": status})

    client = Answers(["STARTED", "SCA_METHOD_SELECTED", "FAILED"])
    step = DecoupledSca(_NobodyDecides(), client, DECOUPLED, sleep=lambda _: None)  # type: ignore[arg-type]
    outcome = step.complete("https://bank/authorisations/1", customer_number=None)
    assert client.reads == 3
    assert outcome.approved is False  # the PSU declined in the app


class _Answer:
    status = 200

    def __init__(self, document: dict[str, str]) -> None:
        self.response_body = json.dumps(document).encode()
        self.document = document

    def response_header(self, name: str) -> str | None:
        return "application/json" if name.lower() == "content-type" else None


# --- SCA started at payment creation ----------------------------------------------------------


def test_sca_started_at_creation_follows_the_creations_link_and_never_calls_pa(
    bank: Callable[..., RunContext], contract: Contract, scenarios: dict[str, Scenario]
) -> None:
    context = bank(
        BankStyle(sca_at_creation=True),
        contract,
        sca=AT_CREATION,
        unsupported_operations=frozenset({"PA"}),
    )
    run_scenario(scenarios["E16-sca-completed-status-advances"], context)
    run_scenario(scenarios["E18-sca-cancelled-payment-rejected"], context)
    assert not any(line.endswith("/authorisations") for line in _paths(context))


def test_sca_at_creation_without_a_link_blocks_with_the_reason(
    bank: Callable[..., RunContext], contract: Contract
) -> None:
    context = bank(BankStyle(), contract, sca=AT_CREATION)  # the server starts no SCA there
    with pytest.raises(SetUpFailure, match="has no SCA link"):
        context.data.payment(RUN_SEED, "E16", authorise=True)


# --- the bank's paths and methods -------------------------------------------------------------

PATHS_PROFILE = """
name = "paths"
base_url = "http://127.0.0.1:1"
reference_server = true

[paths]
PS = { periodic = "/v1/periodic-payments/{payment-product}/{payment-id}/status" }
PA = { periodic = "/v1/periodic-payments/{payment-product}/{payment-id}/authorisations" }
E15 = { method = "POST", path = "/v1/sandbox/accounts/{mockAccountId}/balance-changes" }
"""


def test_periodic_service_paths_and_the_banks_method(
    bank: Callable[..., RunContext],
    contract: Contract,
    scenarios: dict[str, Scenario],
    tmp_path: Path,
) -> None:
    file = tmp_path / "paths.toml"
    file.write_text(PATHS_PROFILE, encoding="utf-8")
    profile = load_profile(file)
    context = bank(
        style_of(profile),
        contract,
        paths=profile.paths,
        methods=profile.methods,
        periodic_paths=profile.periodic_paths,
    )
    run_scenario(scenarios["E17-sca-completed-status-advances"], context)
    run_scenario(scenarios["E16-sca-completed-status-advances"], context)
    run_scenario(scenarios["E15-0.balanceType-closingBooked-accepted"], context)
    sent = [line.split("/v1/")[-1] for line in _paths(context)]
    periodic = [line for line in sent if line.startswith("periodic-payments/")]
    assert any(line.endswith("/status") for line in periodic)
    assert any(line.endswith("/authorisations") for line in periodic)
    assert any(line.startswith("payments/") and line.endswith("/status") for line in sent)
    assert any(line.endswith("/balance-changes") for line in sent)
    e15 = next(e for e in context.exchanges if e.path.endswith("/balance-changes"))
    assert e15.method == "POST"
    with pytest.raises(NotApplicable, match="the bank's own method"):
        run_scenario(scenarios["E15-method-PATCH-not-allowed"], context)


def test_a_request_in_the_banks_form_is_routed_as_the_contracts(tmp_path: Path) -> None:
    file = tmp_path / "paths.toml"
    file.write_text(PATHS_PROFILE, encoding="utf-8")
    style = style_of(load_profile(file))
    assert contract_route(style, "GET", "/v1/periodic-payments/p/42/status") == (
        "GET",
        "/v1/payments/p/42/status",
    )
    assert contract_route(style, "POST", "/v1/sandbox/accounts/a1/balance-changes") == (
        "PUT",
        "/v1/sandbox/accounts/a1/balances",
    )
    # another method on the bank's path, and the contract's own paths, are left as they are
    assert contract_route(style, "GET", "/v1/sandbox/accounts/a1/balance-changes")[0] == "GET"
    assert contract_route(style, "GET", "/v1/payments/p/42/status") == (
        "GET",
        "/v1/payments/p/42/status",
    )


# --- the bank's rate limit --------------------------------------------------------------------


def test_the_server_plays_the_profiles_rate_limit() -> None:
    throttle = Throttle(rate=5.0)
    admitted = [not throttle.due() for _ in range(8)]
    assert admitted[:5] == [True] * 5
    assert admitted[5:] == [False] * 3  # beyond a second's worth at once: 429 with Retry-After
    assert Throttle().due() is False  # no limit by default


# --- a production-like bank's existing data ---------------------------------------------------

EXISTING_PROFILE = """
name = "existing"
base_url = "http://127.0.0.1:1"
sandbox = false

[psu.private]
psu_id = "0f6b1f0e-5a0c-4a43-9a66-2a54f1d9b001"
customer_number = "31000001"

[production]
consent_id = "consent-existing"
account_ids = ["acc-1", "acc-2"]
transaction_ids = ["tx-1"]

[payments]
debtor_bban = "12345678903"
creditor_bban = "86011117947"
"""


def test_a_production_like_bank_holds_the_profiles_data_and_payments_use_it(
    bank: Callable[..., RunContext],
    contract: Contract,
    scenarios: dict[str, Scenario],
    tmp_path: Path,
) -> None:
    file = tmp_path / "existing.toml"
    file.write_text(EXISTING_PROFILE, encoding="utf-8")
    profile = load_profile(file)
    context = bank(
        style_of(profile),
        contract,
        sandbox=False,
        psu_private=profile.psu_private,
        production=profile.production,
        payment_accounts=profile.payment_accounts,
    )
    run_scenario(scenarios["E16-sca-completed-status-advances"], context)
    created = next(e for e in context.exchanges if e.method == "POST" and e.path.endswith("fers"))
    body = json.loads(created.request_body)
    assert body["debtorAccount"]["bban"] == "12345678903"
    assert body["creditorAccount"]["bban"] == "86011117947"
    assert not any("/sandbox/" in e.path for e in context.exchanges)  # nothing created there
    consent = context.data.consent()  # the profile's, already valid at the bank
    assert consent.consent_id == "consent-existing"
    read = context.client.request(
        "GET",
        "/v1/accounts/acc-1/transactions/tx-1",
        headers={
            "Consent-ID": "consent-existing",
            "X-Request-ID": "3f1e7a44-1c0e-4d7a-9a4e-0c2b6f5d9e01",
            "x-accept-fix": "amount-as-string",
            "TPP-Session-ID": "s",
            "TPP-Redirect-URI": "https://tpp.invalid/cb",
            "PSU-IP-Address": "198.51.100.24",
        },
    )
    assert read.status == 200, read.response_body


def test_the_existing_data_survives_a_reset(tmp_path: Path) -> None:
    file = tmp_path / "existing.toml"
    file.write_text(EXISTING_PROFILE, encoding="utf-8")
    application = Application(bank=style_of(load_profile(file)))
    application.reset()
    assert application.store.get(sandbox_data.ACCOUNTS, "acc-2") is not None
    assert application.store.get(CONSENTS, "consent-existing") is not None
    assert Application().store.get(CONSENTS, "consent-existing") is None  # only when played


# --- set-up templates -------------------------------------------------------------------------


def test_the_sandbox_creations_take_the_banks_template(
    bank: Callable[..., RunContext], contract: Contract, tmp_path: Path
) -> None:
    folder = tmp_path / "setup"
    folder.mkdir()
    (folder / "SA.json").write_text('{"product": "Brukskonto Pluss", "creditLine": 5000}')
    (folder / "E7.json").write_text('{"purposeCode": "SALA"}')
    file = tmp_path / "templates.toml"
    file.write_text('base_url = "http://h"\n[setup]\ntemplates = "setup"\n', encoding="utf-8")
    templates = load_profile(file).setup_templates
    context = bank(BankStyle(), contract, setup_templates=templates)
    account = context.data.new_account(RUN_SEED, transactions=1)
    assert account.document["product"] == "Brukskonto Pluss"
    assert account.document["creditLine"] == 5000
    sent = next(e for e in context.client.exchanges if e.path.endswith("/transactions"))
    item = json.loads(sent.request_body)[0]
    assert item["purposeCode"] == "SALA"
    assert item["bookingDate"]  # the suite's own values stay where the template names none


# --- a second PSU -----------------------------------------------------------------------------


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "existing"])
def test_a_second_psu_is_another_customer_the_bank_knows(
    bank: Callable[..., RunContext], contract: Contract, tmp_path: Path, sandbox: bool
) -> None:
    file = tmp_path / "existing.toml"
    second = '\n[psu.second]\npsu_id = "0f6b1f0e-5a0c-4a43-9a66-2a54f1d9b002"\n'
    file.write_text(EXISTING_PROFILE + second + 'customer_number = "31000002"\n')
    profile = load_profile(file)
    changes: dict[str, Any] = {} if sandbox else {
        "sandbox": False,
        "psu_private": profile.psu_private,
        "psu_second": profile.psu_second,
        "production": profile.production,
        "payment_accounts": profile.payment_accounts,
    }  # fmt: skip
    context = bank(style_of(profile) if not sandbox else BankStyle(), contract, **changes)
    first, other = context.data.customer("PRIVATE"), context.data.second_customer()
    assert other.customer_id != first.customer_id
    assert other.customer_number != first.customer_number
    # the bank knows the second PSU: its own payment passes SCA with its customerNumber
    payment = context.data.payment(RUN_SEED, "E16", psu=other.psu, authorise=True)
    status = context.data.payment_status(payment)
    assert json.loads(status.response_body)["transactionStatus"] == "ACTC"


def test_single_sca_initiation_through_psu_context(
    bank: Callable[..., RunContext], contract: Contract, scenarios: dict[str, Scenario]
) -> None:
    """``[sca] start = "psu-context"``: the suite asks for single-SCA initiation on creation
    (spec 4.2 PSU-Context) and follows the creation's link; the bundled server does that."""
    context = bank(
        BankStyle(),
        contract,
        sca=ScaSettings(start="psu-context"),
        unsupported_operations=frozenset({"PA"}),
    )
    run_scenario(scenarios["E16-sca-completed-status-advances"], context)
    created = next(e for e in context.exchanges if e.method == "POST" and e.path.endswith("fers"))
    assert created.request_header("PSU-Context") == "PRIVATE"
    assert not any(line.endswith("/authorisations") for line in _paths(context))


# --- a second TPP named by the profile -------------------------------------------------------


def test_the_profiles_second_tpp_signs_the_ownership_scenarios(
    bank: Callable[..., RunContext],
    contract: Contract,
    scenarios: dict[str, Scenario],
    tmp_path: Path,
) -> None:
    second = generate_tpp_identity(default_ca(), organisation_id="PSDNO-FSA-555555555")
    files = write_identity(second, tmp_path, stem="second")
    identity = SecondIdentity(certificate=files["certificate"], key=files["key"])
    context = bank(BankStyle(), contract, second_identity=identity)
    run_scenario(scenarios["PS-auth-other-tpp-refused"], context)
    sent = context.exchanges[-1]
    assert sent.path.endswith("/status") and sent.status == 404
    certificate = sent.request_header("TPP-Signature-Certificate") or ""
    assert certificate == second.signing_credentials().certificate_b64
