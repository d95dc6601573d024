"""Consent flows (spec 8, spec 4.3 E6, E8): the consented accounts and transactions, transaction
details, the REGISTER and VIEW roles an engagement needs to be offered for consent, and the
consent's lifecycle (NextGenPSD2, our reading): read back with the access of the bank's consent
model (``[consent] model``), deleted by the TPP (terminatedByTpp).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from conformance.bankside.request import OperationRequest, redirect_headers
from conformance.bankside.sca import require_sca_link, sca_link
from conformance.bankside.setup_data import FIRST_ACCESS_STATUS, Consent
from conformance.checks import (
    check_equal,
    check_response_schema,
    check_status,
)
from conformance.findings import at_should
from conformance.generate import factories
from conformance.operations import accounts
from conformance.operations.accounts import consented_transactions_request
from conformance.runners.flow.steps import (
    complete_sca,
    documented_success,
    fail,
    response_document,
    send_step,
    start_authorisation,
)
from conformance.runners.flow.transactions import (
    create_account_transactions,
    dated_account_transactions,
)
from conformance.runners.judging import judge_expectation
from conformance.runners.response_headers import judge_response_headers

if TYPE_CHECKING:
    from conformance.bankside.request import Psu
    from conformance.bankside.setup_data import Engagement
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario


def _engaged_consent(
    scenario: Scenario, ctx: RunContext, seed: int, *, transactions: int = 0
) -> tuple[Engagement, Consent]:
    """A fresh corporate engagement (REGISTER and VIEW) and the member's consent on its account."""
    engagement = ctx.data.new_engagement(seed)
    if transactions:
        create_account_transactions(
            scenario,
            ctx,
            engagement.account,
            dated_account_transactions(ctx, engagement.account, seed),
        )
    member_account = replace(engagement.account, owner=engagement.member)
    return engagement, ctx.data.new_consent(seed, member_account)


def list_consented_accounts(scenario: Scenario, ctx: RunContext, consent: Consent) -> Exchange:
    return send_step(scenario, ctx, accounts.account_list_request(ctx, consent))


def consent_accounts(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """After a consent (CC, CA, SCA) the account list shows the consented account."""
    engagement, consent = _engaged_consent(scenario, ctx, seed)
    listed = list_consented_accounts(scenario, ctx, consent)
    ibans = [item.get("iban") for item in response_document(listed).get("accounts") or []]
    if engagement.account.iban not in ibans:
        raise fail(
            f"the account list does not show the consented account {engagement.account.iban}",
            scenario.spec,
            listed,
            "an account engaged with REGISTER and VIEW, consented by its PSU, is listed",
        )


def consent_transactions(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """After a consent the account's transactions (AT) are listed."""
    _, consent = _engaged_consent(scenario, ctx, seed, transactions=3)
    request = consented_transactions_request(ctx, consent)
    listed = send_step(scenario, ctx, request)
    booked = (response_document(listed).get("transactions") or {}).get("booked") or []
    check_equal(listed, "booked transactions listed", 3, len(booked), spec=scenario.spec)


def consent_transaction_details(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """After a consent, E8 returns the details of a transaction taken from AT's list."""
    _, consent = _engaged_consent(scenario, ctx, seed, transactions=3)
    if consent.account_id is None or consent.transaction_id is None:
        raise fail(
            "the consented account lists no booked transaction with a transactionId",
            scenario.spec,
            ctx.client.exchanges[-1] if ctx.client.exchanges else None,
            "booked transactions carry stable transaction ids (spec 9, 1.18.0)",
        )
    details = send_step(scenario, ctx, accounts.transaction_details_request(ctx, consent))
    at_should(
        lambda: check_equal(
            details,
            "transactionsDetails.transactionId",
            consent.transaction_id,
            (response_document(details).get("transactionsDetails") or {}).get("transactionId"),
            spec=scenario.spec,
        ),
        reading="E8 repeats the transactionId it was asked for in transactionsDetails; spec "
        "2.8 makes every field optional",
    )


def consent_needs_register_and_view(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An account engaged without REGISTER is not offered for consent (spec 4.3 E6): the consent
    is refused, or the account list leaves it out."""
    engagement = ctx.data.new_engagement(seed, roles=("VIEW",))
    member = engagement.member.psu
    if ctx.profile.consent.at_first_access:
        consent = _first_access_consent(scenario, ctx, member)
    else:
        consent = _created_consent(scenario, ctx, seed, engagement)
    if consent is None:
        return
    listed = accounts.account_list_request(ctx, consent)
    exchange = listed.send(ctx)
    judge_response_headers(exchange, listed.operation, ctx)
    if exchange.status >= 400:
        check_status(exchange, (401, 403), spec=scenario.spec)
        return
    ibans = [item.get("iban") for item in response_document(exchange).get("accounts") or []]
    if engagement.account.iban in ibans:
        raise fail(
            "an account engaged with VIEW only (no REGISTER) was offered for consent",
            scenario.spec,
            exchange,
            "an engagement needs both REGISTER and VIEW to be offered for consent",
        )


def _first_access_consent(scenario: Scenario, ctx: RunContext, member: Psu) -> Consent | None:
    """The member's consent given at a fresh TPP session's first account access (``[consent]
    model = "first-access"``): 401 with the SCA link, then the member's SCA; None when the first
    access is refused otherwise (a 4xx: nothing to consent to)."""
    consent = Consent(str(uuid.uuid4()), member, bound_to_session=True)
    first = accounts.account_list_request(ctx, consent)
    for name, value in redirect_headers(ctx.profile).items():
        first = first.with_header(name, value)
    exchange = first.send(ctx)
    judge_response_headers(exchange, first.operation, ctx)
    if exchange.status != FIRST_ACCESS_STATUS and 400 <= exchange.status < 500:
        check_response_schema(exchange, first.operation, ctx.contract)
        return None
    check_status(exchange, (FIRST_ACCESS_STATUS,), spec="spec 5 item 6")
    complete_sca(ctx, require_sca_link(exchange, ctx.profile.sca), member, approve=True)
    return consent


def _created_consent(
    scenario: Scenario, ctx: RunContext, seed: int, engagement: Engagement
) -> Consent | None:
    """The member's consent created (CC) and authorised; None when the creation is refused."""
    member = engagement.member.psu
    request = OperationRequest.build(
        ctx,
        "CC",
        psu=member,
        body=factories.consent_request(
            seed, [engagement.account.iban], model=ctx.profile.consent.model
        ),
    )
    created = request.send(ctx)
    judge_response_headers(created, request.operation, ctx)
    if 400 <= created.status < 500:
        check_response_schema(created, request.operation, ctx.contract)
        return None
    judge_expectation(
        created, documented_success(ctx, "CC"), request.operation, ctx.contract, spec=scenario.spec
    )
    consent_id = str(response_document(created).get("consentId"))
    link = sca_link(response_document(created), ctx.profile.sca)
    if link is None:
        started = accounts.consent_authorisation_request(ctx, member, consent_id)
        _, link = start_authorisation(scenario, ctx, started)
    complete_sca(ctx, str(link), member, approve=True)
    return Consent(consent_id, member)


#: The consent statuses of the lifecycle flows (NextGenPSD2).
VALID = "valid"
TERMINATED = "terminatedByTpp"


def consent_terminated(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A consent the PSU authorised and the TPP then deleted (CD) reads terminatedByTpp (CS)."""
    consent = ctx.data.new_consent(seed, ctx.data.account())
    send_step(scenario, ctx, accounts.consent_delete_request(ctx, consent.psu, consent.consent_id))
    status = send_step(
        scenario,
        ctx,
        OperationRequest.build(
            ctx, "CS", psu=consent.psu, path_values={"consentId": consent.consent_id}
        ),
    )
    check_equal(
        status,
        "consentStatus after the deletion",
        TERMINATED,
        response_document(status).get("consentStatus"),
        spec=scenario.spec,
    )


def _listed_references(access: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    lists = (access.get(name) for name in ("accounts", "balances", "transactions"))
    return [item for items in lists if isinstance(items, list) for item in items if item]


def consent_read(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A consent the PSU authorised reads valid (CG), with its recurringIndicator as asked and
    the access of the bank's consent model: the account asked for (detailed), the accounts the
    PSU chose at SCA (bank-offered: at least one), allPsd2 allAccounts (global)."""
    account = ctx.data.account()
    consent = ctx.data.new_consent(seed, account)
    read = send_step(
        scenario, ctx, accounts.consent_read_request(ctx, consent.psu, consent.consent_id)
    )
    document = response_document(read)
    check_equal(read, "consentStatus", VALID, document.get("consentStatus"), spec=scenario.spec)
    check_equal(
        read, "recurringIndicator", True, document.get("recurringIndicator"), spec=scenario.spec
    )
    access = document.get("access")
    access = access if isinstance(access, Mapping) else {}
    model = ctx.profile.consent.model
    if model == "global":
        allpsd2 = access.get("allPsd2")
        check_equal(read, "access.allPsd2", "allAccounts", allpsd2, spec=scenario.spec)
        return
    listed = _listed_references(access)
    if model == "bank-offered":
        if not listed:
            raise fail(
                "the authorised bank-offered consent lists no account in its access",
                scenario.spec,
                read,
                "once the PSU chose the accounts at SCA, the consent's access lists them",
            )
        return
    named = {item.get("iban") for item in listed} | {item.get("bban") for item in listed}
    if account.iban not in named and account.bban not in named:
        raise fail(
            f"the consent's access does not name the account it was asked for ({account.iban})",
            scenario.spec,
            read,
            "a detailed consent reads back with the accounts it named",
        )
