"""The runners against the reference server: one scenario of each kind passes on the faithful
server; with a deliberate fault the matching scenario fails, and its message names the spec part,
what was sent and what came back; scenarios the target cannot be judged on are not applicable."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest

from conformance.bankside.request import OperationRequest, Psu, apply_mutation
from conformance.checks import ConformanceFailure, NotApplicable
from conformance.contract import Contract
from conformance.contract.requirements import answer_due
from conformance.exchange import Exchange
from conformance.operations.minimal import minimal_body
from conformance.runners import RUNNERS, run_scenario
from conformance.runners.auth import CASES as AUTH_CASES
from conformance.runners.auth import SENT_TWICE as AUTH_SENT_TWICE
from conformance.runners.auth import SIGNED_AS as AUTH_SIGNED_AS
from conformance.runners.context import RunContext
from conformance.runners.flow import FLOWS
from conformance.runners.robustness import CASES as ROBUSTNESS_CASES
from conformance.runners.rule import RULE_CHECKS
from conformance.runners.version import EFFECTS
from conformance.scenario import KINDS, Mutation, Scenario, scenario_seed
from conformance.signing import default_ca, generate_ca

ONE_OF_EACH_KIND = (
    "E12-valid-request-accepted",  # positive
    "E16-ndct-unstructured-accepted",  # positive, a payment
    "E16-creditorName-maxLength-71-rejected",  # constraint
    "E16-header-PSU-ID-missing-rejected",  # header
    "E16-auth-stale-digest-rejected",  # auth, refused
    "E16-auth-sha512-digest-accepted",  # auth, accepted
    "E1-LIM-basket-max-10-payments-rejected",  # rule
    "E2-basket-authorisation-is-started",  # flow
    "E12-accept-fix-longer-name-account-name-up-to-70",  # version
    "E16-malformed-json-rejected",  # robustness
)


def scenario(scenarios: dict[str, Scenario], scenario_id: str) -> Scenario:
    assert scenario_id in scenarios, f"the generator no longer makes {scenario_id}"
    return scenarios[scenario_id]


@pytest.mark.parametrize("scenario_id", ONE_OF_EACH_KIND)
def test_one_scenario_of_each_kind_passes_on_the_reference_server(
    scenarios: dict[str, Scenario], context: RunContext, scenario_id: str
) -> None:
    chosen = scenario(scenarios, scenario_id)
    run_scenario(chosen, context)
    assert context.exchanges, "the scenario's exchanges are kept for the report"
    assert all(exchange.url.startswith(context.profile.base_url) for exchange in context.exchanges)


def test_every_kind_is_covered_by_the_list_above(scenarios: dict[str, Scenario]) -> None:
    assert {scenarios[scenario_id].kind for scenario_id in ONE_OF_EACH_KIND} == set(KINDS)


FAULTS = (
    ("skip-digest-check", "E16-auth-stale-digest-rejected", ("spec 5 item 4", "Digest:")),
    ("no-basket-limit", "E1-LIM-basket-max-10-payments-rejected", ("spec 8", "paymentIds")),
    ("html-errors", "E16-creditorName-maxLength-71-rejected", ("text/html", "not JSON")),
    ("allow-periodic-in-basket", "E1-ERR-1-reference-mix-invalid-rejected", ("spec 7 rule 1",)),
    ("kid-error-401", "E16-ERR-2-kid-invalid-rejected", ("spec 7 rule 2", "HTTP 401")),
    ("basket-best-case", "E1-basket-with-cancelled-payment-is-worst-case", ("RJCT",)),
    ("ignore-required-header", "E16-header-PSU-ID-missing-rejected", ("spec 4.2",)),
    ("accept-foreign-debtor", "E7-ERR-5-foreign-debtor-account-rejected", ("spec 7 rule 5",)),
    (
        "sca-no-return",
        "E2-basket-sca-completed-statuses-advance",
        ("SCA redirect", "spec 5 item 6"),
    ),
)


@pytest.mark.parametrize(("fault", "scenario_id", "fragments"), FAULTS)
def test_a_fault_fails_the_matching_scenario_with_a_clear_message(
    scenarios: dict[str, Scenario],
    faulty: Callable[..., RunContext],
    fault: str,
    scenario_id: str,
    fragments: tuple[str, ...],
) -> None:
    chosen = scenario(scenarios, scenario_id)
    context = faulty(fault)
    with pytest.raises(ConformanceFailure) as failed:
        run_scenario(chosen, context)
    text = str(failed.value)
    assert f"Requirement: {chosen.rule} ({chosen.spec}, {chosen.level})" in text
    assert "Expected (our reading of " in text
    assert "The target answered: HTTP " in text
    assert ">>> " in text and "<<< HTTP " in text  # what was sent, what came back
    assert "Reproduce with:" in text and "conformance call" in text
    for fragment in fragments:
        assert fragment in text
    assert context.exchanges  # kept for the report even when failing


@pytest.mark.parametrize(
    ("fault", "scenario_id"),
    [
        ("no-daily-limit", "E8-LIM-transaction-details-daily-calls-without-ip-rejected"),
        ("no-consent-age-check", "E8-LIM-transaction-details-consent-max-90-days-rejected"),
        ("delete-pdng-allowed", "PC-ERR-6-pending-payment-not-deletable-rejected"),
        ("account-gone-404", "AL-ERR-8-consent-account-gone-empty-list-holds"),
        ("batch-advances-periodic", "E17-batch-run-leaves-periodic-unchanged"),
    ],
)
def test_faults_behind_consents_and_the_batch_are_caught(
    scenarios: dict[str, Scenario],
    faulty: Callable[..., RunContext],
    fault: str,
    scenario_id: str,
) -> None:
    chosen = scenario(scenarios, scenario_id)
    run_scenario(chosen, faulty())  # the faithful server passes
    with pytest.raises(ConformanceFailure):
        run_scenario(chosen, faulty(fault))


def test_a_transaction_booked_between_two_listings_keeps_ids_stable(
    scenarios: dict[str, Scenario],
    faulty: Callable[..., RunContext],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch run may book a payment between the two listings (spec 3): a new id is allowed,
    a changed one is not (the fault gives every listing new ids)."""
    from conformance.runners.rule import common as rule_common
    from conformance.runners.rule import requests as rule_requests

    chosen = scenario(scenarios, "E3-SB-booked-transaction-ids-stable-holds")
    judge = rule_common.send_and_judge
    context = faulty()
    listings: list[int] = []

    def book_after_first(
        scenario: Scenario, ctx: RunContext, request: OperationRequest
    ) -> Exchange:
        answer = judge(scenario, ctx, request)
        listings.append(1)
        if len(listings) == 1:
            ctx.data.add_transactions(ctx.data.account(), 7, 1)
        return answer

    monkeypatch.setattr(rule_requests, "send_and_judge", book_after_first)
    run_scenario(chosen, context)
    assert len(listings) == 2
    listings.clear()
    with pytest.raises(ConformanceFailure, match="missing: "):
        run_scenario(chosen, faulty("unstable-transaction-ids"))


def test_logical_duplicates_are_checked_for_a_future_rule_row(
    faulty: Callable[..., RunContext],
) -> None:
    """No rule row names the check yet; a row like this one makes it a scenario."""
    duplicate = Scenario(
        id="E16-logical-duplicate-rejected",
        operation="E16",
        rule="ERR-logical-duplicate",
        spec="spec 4.3 E16",
        level="should",
        kind="rule",
        title="E16: the same payment again without allowLogicalDuplicate is refused",
        expect=answer_due((400, 409), None, "response"),
        variant="ndct-unstructured",
        params=(("check", "check_logical_duplicate_refused"),),
    )
    run_scenario(duplicate, faulty())
    with pytest.raises(ConformanceFailure, match="expected HTTP 400 or 409"):
        run_scenario(duplicate, faulty("logical-duplicate-allowed"))


# --- not applicable -----------------------------------------------------------------------------


def test_an_untrusted_ca_needs_a_declared_trust_anchor(
    scenarios: dict[str, Scenario], context: RunContext
) -> None:
    with pytest.raises(NotApplicable, match="trust anchor"):
        run_scenario(scenario(scenarios, "E12-auth-certificate-other-ca-rejected"), context)


def test_with_a_trust_anchor_untrusted_and_expired_certificates_are_refused(
    scenarios: dict[str, Scenario], faulty: Callable[..., RunContext]
) -> None:
    context = faulty(trust_ca=default_ca().certificate)
    context.trust_anchor = default_ca()
    for scenario_id in (
        "E12-auth-certificate-other-ca-rejected",
        "E12-auth-expired-certificate-rejected",
        "E16-auth-missing-role-rejected",
    ):
        run_scenario(scenario(scenarios, scenario_id), context)


def test_the_rfc2047_signature_needs_a_trusted_ca_named_outside_ascii(
    scenarios: dict[str, Scenario], faulty: Callable[..., RunContext]
) -> None:
    """Spec 5 item 3: only a trusted issuer named outside ASCII makes the Signature non-ASCII."""
    rfc2047 = scenario(scenarios, "E12-auth-rfc2047-signature-accepted")
    ascii_only = faulty(trust_ca=default_ca().certificate)
    ascii_only.trust_anchor = default_ca()
    with pytest.raises(NotApplicable, match="--trust-anchor-utf8"):
        run_scenario(rfc2047, ascii_only)
    utf8 = generate_ca("Conformance Test CA Ærø", key=default_ca().private_key)
    context = faulty(trust_ca=[default_ca().certificate, utf8.certificate])
    context.trust_anchor, context.utf8_trust_anchor = default_ca(), utf8
    run_scenario(rfc2047, context)
    signature = dict(context.exchanges[-1].request_headers).get("Signature", "")
    assert signature.startswith("=?utf-8?"), context.exchanges[-1].request_headers


def test_a_target_without_sandbox_makes_sandbox_scenarios_not_applicable(
    scenarios: dict[str, Scenario], context_for: Callable[..., RunContext]
) -> None:
    context = context_for(sandbox=False)
    with pytest.raises(NotApplicable, match="sandbox = false"):
        run_scenario(scenario(scenarios, "E12-valid-request-accepted"), context)
    with pytest.raises(NotApplicable, match="names no private PSU"):
        run_scenario(scenario(scenarios, "E16-ndct-unstructured-accepted"), context)


def test_an_unsupported_product_is_not_applicable(
    scenarios: dict[str, Scenario], context_for: Callable[..., RunContext]
) -> None:
    context = context_for(products=frozenset({"ndct"}))
    with pytest.raises(NotApplicable, match="ncbct"):
        run_scenario(scenario(scenarios, "E18-ncbct-regulatory-accepted"), context)


def test_the_batch_and_clock_controls_need_the_reference_server_or_the_profile(
    scenarios: dict[str, Scenario], context_for: Callable[..., RunContext]
) -> None:
    """Without the reference server's controls and without prepared states, the scenario is not
    judged here and says which profile keys would let it be."""
    context = context_for(reference_server=False)
    for scenario_id, supply in (
        ("PC-ERR-6-pending-payment-not-deletable-rejected", "[prepared] pending_payment_id"),
        ("E8-LIM-transaction-details-consent-max-90-days-rejected", "[prepared] aged_consent_id"),
        ("AL-ERR-8-consent-account-gone-empty-list-holds", "closed_account_consent_id"),
        ("AT-LIM-sca-renewal-180-days-rejected", "renewal_due_consent_id"),
        ("E16-batch-run-advances-status", "[hooks] batch"),
    ):
        with pytest.raises(NotApplicable) as verdict:
            run_scenario(scenario(scenarios, scenario_id), context)
        assert supply in verdict.value.supply, scenario_id


def test_bulk_payments_are_not_applicable(
    scenarios: dict[str, Scenario], context: RunContext
) -> None:
    with pytest.raises(NotApplicable, match="bulk"):
        run_scenario(scenario(scenarios, "E1-ERR-1-reference-mix-invalid-bulk-rejected"), context)


# --- the dispatch -------------------------------------------------------------------------------


def test_runners_cover_every_kind_and_cannot_be_changed() -> None:
    assert set(RUNNERS) == set(KINDS)
    assert isinstance(RUNNERS, MappingProxyType)
    with pytest.raises(TypeError):
        RUNNERS["positive"] = RUNNERS["flow"]  # type: ignore[index]


def test_an_unknown_kind_is_a_programming_error(context: RunContext) -> None:
    broken = replace(
        Scenario(
            id="x",
            operation="E12",
            rule="POS-E12",
            spec="spec 4.3",
            level="must",
            kind="positive",
            title="t",
            expect=None,  # type: ignore[arg-type]
        ),
    )
    object.__setattr__(broken, "kind", "nonsense")
    with pytest.raises(ValueError, match="unknown kind"):
        run_scenario(broken, context)


def test_every_name_the_generator_uses_has_an_implementation(
    contract: Contract, scenarios: dict[str, Scenario]
) -> None:
    assert {rule.check for rule in contract.rules} <= set(RULE_CHECKS)
    used = {
        "flow": {s.param("flow") for s in scenarios.values() if s.kind == "flow"},
        "auth": {s.param("case") for s in scenarios.values() if s.kind == "auth"},
        "robustness": {s.param("case") for s in scenarios.values() if s.kind == "robustness"},
        "version": {s.param("effect") for s in scenarios.values() if s.kind == "version"} - {None},
    }
    assert used["flow"] <= set(FLOWS)
    assert used["auth"] <= set(AUTH_CASES) | set(AUTH_SENT_TWICE) | set(AUTH_SIGNED_AS)
    assert used["robustness"] <= set(ROBUSTNESS_CASES)
    assert used["version"] <= set(EFFECTS)


def test_scenario_seeds_are_stable_and_distinct() -> None:
    assert scenario_seed(7, "E16-a") == scenario_seed(7, "E16-a")
    assert scenario_seed(7, "E16-a") != scenario_seed(8, "E16-a")
    assert scenario_seed(7, "E16-a") != scenario_seed(7, "E16-b")
    assert 0 <= scenario_seed(7, "E16-a") < 2**32


# --- requests -----------------------------------------------------------------------------------


def test_a_payment_request_carries_the_spec_4_2_headers(context: RunContext) -> None:
    psu = Psu(psu_id="6f2c0a4e-0b8e-4b36-9d7a-1c0f6ad1f001", customer_number="50000001")
    request = OperationRequest.build(context, "E16", psu=psu, body={"creditorName": "Kari"})
    headers = {name.lower(): value for name, value in request.headers}
    for name in ("x-accept-fix", "tpp-session-id", "tpp-redirect-uri", "psu-id", "psu-ip-address"):
        assert headers.get(name), name
    assert "psu-context" not in headers  # a private PSU asks for no single-SCA initiation
    corporate = request.as_psu(replace(psu, corporate=True, corporate_id="agreement-1"))
    changed = {name.lower(): value for name, value in corporate.headers}
    assert changed["psu-context"] == "CORPORATE"
    assert changed["psu-corporate-id"] == "agreement-1"
    assert (
        request.target_path(context.profile) == "/v1/payments/norwegian-domestic-credit-transfers"
    )


def test_mutations_change_one_thing_and_leave_the_base_alone(context: RunContext) -> None:
    body = {"creditorAccount": {"bban": "1234"}, "paymentIds": ["a", "b"], "months": [1]}
    request = OperationRequest.build(context, "E16", psu=Psu(psu_id="p"), body=body)

    def mutated(**fields: Any) -> OperationRequest:
        return apply_mutation(request, Mutation(keyword="k", **fields), fresh_items=["c", "d"])

    assert (
        mutated(target="body", pointer=("creditorAccount", "bban"), action="remove").body[
            "creditorAccount"
        ]
        == {}
    )
    assert mutated(target="body", pointer=("a", "b"), action="set", value=1).body["a"] == {"b": 1}
    assert mutated(target="body", pointer=("paymentIds",), action="resize", value=4).body[
        "paymentIds"
    ] == ["a", "b", "c", "d"]
    assert mutated(target="body", pointer=("months",), action="duplicate").body["months"] == [1, 1]
    assert (
        mutated(target="header", pointer=("PSU-ID",), action="set", value="x").header("PSU-ID")
        == "x"
    )
    assert mutated(target="header", pointer=("PSU-ID",), action="remove").header("PSU-ID") is None
    assert dict(mutated(target="query", pointer=("limit",), action="set", value=0).query) == {
        "limit": "0"
    }
    assert (
        mutated(target="path", pointer=("payment-product",), action="set", value="x").target_path(
            context.profile
        )
        == "/v1/payments/x"
    )
    assert request.body == body  # the base is untouched


def test_a_value_set_alone_is_in_no_other_item(context: RunContext) -> None:
    """``set-alone`` keeps only the item it set, so a swept enum never repeats in a sibling
    (two balances of one balanceType: issue 29 item 2)."""
    balances = [{"balanceType": "closingBooked", "n": 1}, {"balanceType": "expected", "n": 2}]
    top = OperationRequest.build(context, "E15", path_values={"mockAccountId": "a"}, body=balances)
    nested = OperationRequest.build(context, "SA", body={"x": 1, "balances": balances})

    def alone(request: OperationRequest, pointer: tuple[str | int, ...]) -> object:
        mutation = Mutation(
            target="body", pointer=pointer, action="set-alone", value="expected", keyword="enum"
        )
        return apply_mutation(request, mutation).body

    assert alone(top, (0, "balanceType")) == [{"balanceType": "expected", "n": 1}]
    assert alone(nested, ("balances", 0, "balanceType")) == {
        "x": 1,
        "balances": [{"balanceType": "expected", "n": 1}],
    }
    assert top.body == balances and nested.body["balances"] == balances  # bases untouched


def test_every_enum_swept_in_an_array_item_is_set_alone(scenarios: dict[str, Scenario]) -> None:
    swept = {
        s.id: s.mutation
        for s in scenarios.values()
        if s.kind == "positive"
        and s.mutation is not None
        and s.mutation.keyword == "enum"
        and s.mutation.target == "body"
    }
    through = {i for i, m in swept.items() if any(isinstance(p, int) for p in m.pointer)}
    assert through >= {
        "E15-0.balanceType-expected-accepted",
        "SA-balances.0.balanceType-expected-accepted",
    }
    for scenario_id, mutation in swept.items():
        assert mutation.action == ("set-alone" if scenario_id in through else "set"), scenario_id


def test_a_minimal_body_keeps_required_members_only(contract: Contract) -> None:
    schema = contract.operations["SCU"].request_schema
    assert schema is not None
    body = {"customerType": "PRIVATE", "customerName": "Kari", "customerNumber": "70000001"}
    assert minimal_body(contract, schema, body) == {
        "customerType": "PRIVATE",
        "customerName": "Kari",
    }


# --- set-up data --------------------------------------------------------------------------------


def test_shared_set_up_is_made_once_per_worker(context: RunContext) -> None:
    first = context.data.account()
    context.client.take_exchanges()
    assert context.data.account() is first
    assert not context.client.take_exchanges()


def test_a_failed_shared_set_up_is_remembered(context: RunContext) -> None:
    calls: list[int] = []

    def make() -> None:
        calls.append(1)
        raise NotApplicable("no such thing")

    for _ in range(2):
        with pytest.raises(NotApplicable, match="no such thing"):
            context.data.shared("test:failing", make)
    assert calls == [1]
