"""Flow scenarios (spec 3, spec 2.4, spec 2.9 / 4.3 round trips, spec 8 consents, spec 9).

Several requests each; ``params["flow"]`` names the flow (:data:`FLOWS`). Every step's answer is
judged against its operation's documented success and schema, so a flow fails on the first
step the target gets wrong, and says which. Flows that complete an SCA redirect use the run's
SCA step (``ctx.sca``); flows that need the sandbox's simulated batch run (spec 3: "five times a
day") use the reference server's ``/_control/batch`` and are not applicable elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conformance.checks import (
    ConformanceFailure,
    NotApplicable,
    check_equal,
    check_json_body,
    check_response_schema,
    check_sca_redirect,
    check_status,
    json_document,
)
from conformance.generate import factories
from conformance.runners.verdict import judge_expectation
from conformance.scenario import BODY_SCHEMA_RESPONSE, Expectation, scenario_seed
from conformance.target.request import OperationRequest

if TYPE_CHECKING:
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario
    from conformance.target.request import Psu
    from conformance.target.setup_data import Account, CardAccount, Payment

__all__ = ["FLOWS", "run"]

Flow = Callable[["Scenario", "RunContext", int], None]

#: Payment statuses of spec 2.6 / spec 3, and those that mean "not (yet) accepted".
PAYMENT_STATUSES = frozenset(
    {"ACCP", "ACSC", "ACSP", "ACTC", "ACWC", "ACWP", "RCVD", "PDNG", "RJCT", "CANC", "PART"}
)
_NOT_ACCEPTED = frozenset({"RCVD", "RJCT", "CANC"})
_REJECTED = frozenset({"RJCT", "CANC"})
#: How many batch runs a flow waits at most for a payment to be booked (ACTC → ACSP → ACSC).
_MAX_BATCH_RUNS = 4


def run(scenario: Scenario, ctx: RunContext) -> None:
    name = str(scenario.param("flow", ""))
    try:
        flow = FLOWS[name]
    except KeyError:
        raise ValueError(f"flow scenario {scenario.id} names an unknown flow {name!r}") from None
    if scenario.param("needs_control"):
        _require_batch(ctx)
    flow(scenario, ctx, scenario_seed(ctx.seed, scenario.id))


# --- steps --------------------------------------------------------------------------------------


def _success(ctx: RunContext, op_id: str) -> Expectation:
    operation = ctx.contract.operations[op_id]
    statuses = tuple(sorted(s for s in operation.responses if 200 <= s < 300))
    return Expectation(statuses or (operation.success_status,), None, BODY_SCHEMA_RESPONSE)


def _step(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> Exchange:
    """Send one step and require its documented success (spec of the flow)."""
    exchange = request.send(ctx)
    op = request.operation
    judge_expectation(exchange, _success(ctx, op.id), op, ctx.contract, spec=scenario.spec)
    return exchange


def _document(exchange: Exchange) -> Any:
    return check_json_body(exchange)


def _payment_request(ctx: RunContext, op_id: str, payment: Payment) -> OperationRequest:
    return OperationRequest.build(
        ctx,
        op_id,
        psu=payment.psu,
        path_values={"payment-product": payment.product, "payment-id": payment.payment_id},
    )


def _status(scenario: Scenario, ctx: RunContext, payment: Payment) -> tuple[str, Exchange]:
    """PS: the payment's transactionStatus (and the exchange it was read in)."""
    exchange = _step(scenario, ctx, _payment_request(ctx, "PS", payment))
    return str(_document(exchange).get("transactionStatus")), exchange


def _start_authorisation(
    scenario: Scenario, ctx: RunContext, request: OperationRequest
) -> tuple[Exchange, str]:
    """Start an authorisation (E2, PA): 201 with the SCA status record, or 401 with
    ``_links.scaRedirect`` (spec 4.3 E2); the scaRedirect link."""
    exchange = request.send(ctx)
    op = request.operation
    judge_expectation(
        exchange,
        Expectation((201, 401), None, BODY_SCHEMA_RESPONSE),
        op,
        ctx.contract,
        spec=scenario.spec,
    )
    return exchange, check_sca_redirect(exchange, spec="spec 5 item 6")


def _sca(ctx: RunContext, link: str, psu: Psu, *, approve: bool) -> None:
    ctx.sca.complete(link, customer_number=psu.customer_number, approve=approve)


def _authorise(scenario: Scenario, ctx: RunContext, payment: Payment, *, approve: bool) -> Exchange:
    """PA, then the PSU approves or cancels at the redirect; the PA exchange."""
    exchange, link = _start_authorisation(scenario, ctx, _payment_request(ctx, "PA", payment))
    _sca(ctx, link, payment.psu, approve=approve)
    return exchange


def _sca_status(ctx: RunContext, started: Exchange) -> str | None:
    """The authorisation's scaStatus read from the record's ``self`` link, when readable."""
    links = (json_document(started) or {}).get("_links") or {}
    href = (links.get("self") or links.get("scaStatus") or {}).get("href")
    if not href:
        return None
    answer = ctx.client.request("GET", str(href))
    document = json_document(answer)
    if answer.status != 200 or not isinstance(document, Mapping):
        return None
    status = document.get("scaStatus")
    return str(status) if status is not None else None


def _require_batch(ctx: RunContext) -> None:
    if not ctx.profile.reference_server:
        raise NotApplicable(
            "the flow needs to trigger the sandbox's simulated batch run (spec 3), which only "
            "the reference server's /_control/batch offers (reference_server = false)"
        )


def _batch(ctx: RunContext) -> None:
    ctx.data.control("POST", "/_control/batch", {}, what="run the simulated batch processing")


def _fail(
    title: str, spec: str, exchange: Exchange | None, expected: str, *related: Exchange
) -> ConformanceFailure:
    return ConformanceFailure(title, spec=spec, sent=exchange, expected=expected, related=related)


def _expect_status(
    scenario: Scenario,
    exchange: Exchange,
    found: str,
    wanted: Iterable[str],
    what: str,
    *related: Exchange,
) -> None:
    allowed = sorted(set(wanted))
    if found not in allowed:
        raise _fail(
            f"{what}: the payment reads {found}, expected {' or '.join(allowed)}",
            scenario.spec,
            exchange,
            f"{what}, the payment status is {' or '.join(allowed)}",
            *related,
        )


# --- payments (spec 3) --------------------------------------------------------------------------


def _product(scenario: Scenario) -> str:
    return scenario.operation if scenario.operation in ("E16", "E17", "E18") else "E16"


def _new_payment(scenario: Scenario, ctx: RunContext, seed: int, **options: Any) -> Payment:
    return ctx.data.payment(seed, _product(scenario), **options)


def payment_status_after_creation(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A new payment's status (PS) is one of the spec 3 payment statuses."""
    payment = _new_payment(scenario, ctx, seed)
    status, exchange = _status(scenario, ctx, payment)
    _expect_status(scenario, exchange, status, PAYMENT_STATUSES, "after creation")


def payment_sca_completed(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """After SCA is completed the payment has moved on from RCVD (and is not rejected)."""
    payment = _new_payment(scenario, ctx, seed)
    _authorise(scenario, ctx, payment, approve=True)
    status, exchange = _status(scenario, ctx, payment)
    _expect_status(
        scenario, exchange, status, PAYMENT_STATUSES - _NOT_ACCEPTED, "after a completed SCA"
    )


def payment_sca_cancelled(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """After the PSU cancels SCA, the authorisation is FAILED and the payment RJCT."""
    payment = _new_payment(scenario, ctx, seed)
    started = _authorise(scenario, ctx, payment, approve=False)
    status, exchange = _status(scenario, ctx, payment)
    _expect_status(scenario, exchange, status, {"RJCT"}, "after a cancelled SCA", started)
    sca_status = _sca_status(ctx, started)
    if sca_status is not None and sca_status != "FAILED":
        raise _fail(
            f"after a cancelled SCA the authorisation reads {sca_status}",
            scenario.spec,
            started,
            "a cancelled authorisation is FAILED",
        )


def batch_run_advances(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An authorised payment is moved on by a simulated batch run (spec 3)."""
    payment = _new_payment(scenario, ctx, seed)
    _authorise(scenario, ctx, payment, approve=True)
    before, first = _status(scenario, ctx, payment)
    _batch(ctx)
    after, exchange = _status(scenario, ctx, payment)
    if after == before or after in _REJECTED:
        raise _fail(
            f"a batch run left the authorised payment at {after} (it was {before})",
            scenario.spec,
            exchange,
            "the sandbox advances payments through its simulated batch run (spec 3)",
            first,
        )


def batch_run_skips_periodic(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A simulated batch run does not advance a periodic payment (spec 3)."""
    payment = ctx.data.payment(seed, "E17", authorise=True)
    before, first = _status(scenario, ctx, payment)
    _batch(ctx)
    after, exchange = _status(scenario, ctx, payment)
    _expect_status(scenario, exchange, after, {before}, "after a batch run", first)


def payment_cancelled(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A new payment cancelled with PC reads CANC (spec 3)."""
    payment = ctx.data.payment(seed, "E16")
    cancelled = _step(scenario, ctx, _payment_request(ctx, "PC", payment))
    status, exchange = _status(scenario, ctx, payment)
    _expect_status(scenario, exchange, status, {"CANC"}, "after cancellation", cancelled)


def payment_authorisation_started(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """PA answers like E2: scaStatus STARTED with a scaRedirect link (spec 4.3 E2)."""
    payment = ctx.data.payment(seed, "E16")
    _authorisation_started(scenario, ctx, _payment_request(ctx, "PA", payment))


def _authorisation_started(scenario: Scenario, ctx: RunContext, request: OperationRequest) -> None:
    exchange = _step(scenario, ctx, request)
    check_sca_redirect(exchange, spec=scenario.spec)
    check_equal(
        exchange,
        "scaStatus of the started authorisation",
        "STARTED",
        _document(exchange).get("scaStatus"),
        spec="spec 3",
    )


# --- baskets (spec 2.4, spec 3) -----------------------------------------------------------------


def _worst_case(statuses: Sequence[str]) -> str:
    """The basket status for its payments' statuses: RJCT if any is rejected or cancelled, RCVD
    if none is accepted, ACTC if all are, PATC otherwise (spec 2.4 "worst case")."""
    if any(status in _REJECTED for status in statuses):
        return "RJCT"
    accepted = [status not in _NOT_ACCEPTED for status in statuses]
    if all(accepted):
        return "ACTC"
    return "PATC" if any(accepted) else "RCVD"


def _basket_request(ctx: RunContext, payments: Sequence[Payment]) -> OperationRequest:
    return OperationRequest.build(
        ctx,
        "E1",
        psu=payments[0].psu,
        body=factories.signing_basket(payment.payment_id for payment in payments),
    )


def basket_worst_case(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The basket's status is the worst case of its payments' (spec 2.4): new payments; one
    whose SCA was cancelled (RJCT); one cancelled with PC (CANC)."""
    after = str(scenario.param("after", "creation"))
    first = ctx.data.payment(seed, "E16")
    second = ctx.data.payment(seed + 1, "E16")
    if after == "payment-rejected":
        _authorise(scenario, ctx, first, approve=False)
    elif after == "payment-cancelled":
        _step(scenario, ctx, _payment_request(ctx, "PC", first))
    statuses = [_status(scenario, ctx, payment)[0] for payment in (first, second)]
    created = _basket_request(ctx, [first, second]).send(ctx)
    if after != "creation" and 400 <= created.status < 500:
        _basket_after_change(scenario, ctx, seed, after, created)
        return
    judge_expectation(
        created,
        _success(ctx, "E1"),
        ctx.contract.operations["E1"],
        ctx.contract,
        spec=scenario.spec,
    )
    check_equal(
        created,
        f"basket transactionStatus for payments in {', '.join(statuses)}",
        _worst_case(statuses),
        _document(created).get("transactionStatus"),
        spec="spec 2.4",
    )


def _basket_after_change(
    scenario: Scenario, ctx: RunContext, seed: int, after: str, refused: Exchange
) -> None:
    """The target refuses a rejected or cancelled payment in a new basket; the basket is then
    built first and the payment changed inside it, and its status read through the reference
    server's basket view (the contract has no basket read)."""
    if not ctx.profile.reference_server:
        raise NotApplicable(
            f"the target refuses a basket holding a {after.split('-')[1]} payment "
            f"(HTTP {refused.status}), and the contract has no basket read to watch the status "
            "change afterwards"
        )
    payments = [ctx.data.payment(seed + 2, "E16"), ctx.data.payment(seed + 3, "E16")]
    created = _step(scenario, ctx, _basket_request(ctx, payments))
    basket_id = str(_document(created).get("basketId"))
    if after == "payment-cancelled":
        _step(scenario, ctx, _payment_request(ctx, "PC", payments[0]))
    else:
        request = OperationRequest.build(
            ctx, "E2", psu=payments[0].psu, path_values={"basketId": basket_id}
        )
        _, link = _start_authorisation(scenario, ctx, request)
        _sca(ctx, link, payments[0].psu, approve=False)
    statuses = [_status(scenario, ctx, payment)[0] for payment in payments]
    view = ctx.data.control("GET", f"/_control/signing-baskets/{basket_id}", what="read a basket")
    read = ctx.client.exchanges[-1] if ctx.client.exchanges else None
    check_equal(
        read or created,
        f"basket transactionStatus for payments in {', '.join(statuses)}",
        _worst_case(statuses),
        (view or {}).get("transactionStatus"),
        spec="spec 2.4",
        related=(refused,),
    )


def basket_authorisation_started(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Starting the basket authorisation answers scaStatus STARTED and a scaRedirect (spec 3)."""
    basket = ctx.data.basket(seed, [ctx.data.payment(seed, "E16")])
    request = OperationRequest.build(
        ctx, "E2", psu=basket.psu, path_values={"basketId": basket.basket_id}
    )
    _authorisation_started(scenario, ctx, request)


def _basket_sca(scenario: Scenario, ctx: RunContext, seed: int, *, approve: bool) -> None:
    payments = [ctx.data.payment(seed, "E16"), ctx.data.payment(seed + 1, "E18")]
    basket = ctx.data.basket(seed, payments)
    request = OperationRequest.build(
        ctx, "E2", psu=basket.psu, path_values={"basketId": basket.basket_id}
    )
    started, link = _start_authorisation(scenario, ctx, request)
    _sca(ctx, link, basket.psu, approve=approve)
    wanted = PAYMENT_STATUSES - _NOT_ACCEPTED if approve else {"RJCT"}
    what = "after the basket's SCA was " + ("completed" if approve else "cancelled")
    for payment in payments:
        status, exchange = _status(scenario, ctx, payment)
        _expect_status(scenario, exchange, status, wanted, what, started)
    sca_status = _sca_status(ctx, started)
    expected = "FINALISED" if approve else "FAILED"
    if sca_status is not None and sca_status != expected:
        raise _fail(
            f"{what}, the authorisation reads {sca_status}",
            scenario.spec,
            started,
            f"the authorisation is {expected}",
        )


def basket_sca_completed(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    _basket_sca(scenario, ctx, seed, approve=True)


def basket_sca_cancelled(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    _basket_sca(scenario, ctx, seed, approve=False)


# --- sandbox round trips (spec 2.9, spec 4.3) ------------------------------------------------


def _same_fields(
    exchange: Exchange,
    sent: Mapping[str, Any],
    read: Mapping[str, Any],
    fields: Iterable[str],
    what: str,
    spec: str,
    *related: Exchange,
) -> None:
    """Every one of ``fields`` reads back as it was sent (all differences listed)."""
    differences = {
        name: (sent.get(name), read.get(name))
        for name in fields
        if name in sent and sent.get(name) != read.get(name)
    }
    if differences:
        listed = "; ".join(
            f"{name}: sent {a!r}, read {b!r}" for name, (a, b) in differences.items()
        )
        raise _fail(
            f"{what} does not read back as created: {listed}",
            spec,
            exchange,
            f"{what} created through the sandbox reads back with the same data",
            *related,
        )


def roundtrip_customer(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A customer created with SCU is listed by E9 with the same data."""
    body = factories.sandbox_customer_create(seed, "CORPORATE")
    created = _step(scenario, ctx, OperationRequest.build(ctx, "SCU", body=body))
    customer_id = _document(created).get("customerId")
    listed = _step(scenario, ctx, OperationRequest.build(ctx, "E9"))
    found = next(
        (item for item in _document(listed) if item.get("customerId") == customer_id), None
    )
    if found is None:
        raise _fail(
            f"E9 does not list the customer {customer_id} just created",
            scenario.spec,
            listed,
            "E9 lists the customers created with POST /v1/sandbox/customers",
            created,
        )
    expected = {**body, "customerNumber": _document(created).get("customerNumber")}
    _same_fields(
        listed,
        expected,
        found,
        ("customerType", "customerName", "customerNumber"),
        "the customer",
        scenario.spec,
        created,
    )


_ACCOUNT_FIELDS = (
    "customerNumber",
    "accountName",
    "bban",
    "iban",
    "currency",
    "product",
    "cashAccountType",
    "creditLine",
)


def roundtrip_account(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An account created with SA reads back from E12 with the same data."""
    owner = ctx.data.customer("PRIVATE")
    body = factories.sandbox_account_create(seed, owner.customer_number or "")
    created = _step(scenario, ctx, OperationRequest.build(ctx, "SA", body=body))
    account_id = str(_document(created).get("id"))
    read = _step(
        scenario, ctx, OperationRequest.build(ctx, "E12", path_values={"mockAccountId": account_id})
    )
    document = _document(read)
    account = document[0] if isinstance(document, list) and document else document
    _same_fields(read, body, account, _ACCOUNT_FIELDS, "the account", scenario.spec, created)
    _same_balances(read, body.get("balances") or [], account.get("balances") or [], scenario)


def _same_balances(
    exchange: Exchange, sent: Sequence[Any], read: Sequence[Any], scenario: Scenario
) -> None:
    by_type = {item.get("balanceType"): item for item in read if isinstance(item, Mapping)}
    for item in sent:
        check_equal(
            exchange,
            f"the {item['balanceType']} balance",
            item,
            by_type.get(item["balanceType"]),
            spec=scenario.spec,
        )


def roundtrip_card_account(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A card account created with SCA reads back from E10 with the same data."""
    owner = ctx.data.customer("PRIVATE")
    body = factories.sandbox_card_account_create(seed, owner.customer_number or "")
    created = _step(scenario, ctx, OperationRequest.build(ctx, "SCA", body=body))
    resource = _document(created).get("cardAccount") or {}
    read = _step(
        scenario,
        ctx,
        OperationRequest.build(
            ctx, "E10", path_values={"mockCardAccountId": str(resource.get("resourceId"))}
        ),
    )
    fields = ("maskedPan", "currency", "creditLimit", "name", "product", "accountNumber", "expiry")
    read_back = _document(read).get("cardAccount") or {}
    _same_fields(read, body, read_back, fields, "the card account", scenario.spec, created)


def roundtrip_agreement(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A private or corporate agreement created with SAG reads back from E14 (spec 4.3 E14)."""
    corporate = scenario.param("agreement") == "corporate"
    owner = ctx.data.corporate_customer().customer_id if corporate else None
    body = factories.sandbox_agreement_create(seed, owner)
    created = _step(scenario, ctx, OperationRequest.build(ctx, "SAG", body=body))
    agreement_id = str(_document(created).get("id"))
    read = _step(
        scenario,
        ctx,
        OperationRequest.build(ctx, "E14", path_values={"mockAgreementId": agreement_id}),
    )
    _same_fields(
        read,
        {**body, "id": agreement_id},
        _document(read),
        ("id", "name", "owner"),
        "the agreement",
        scenario.spec,
        created,
    )


def roundtrip_engagement(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An engagement created with E6 reads back from E13 with the same data."""
    shared = ctx.data.engagement()
    body = factories.sandbox_engagement(seed, shared.member.customer_id, shared.account.iban)
    created = _step(
        scenario,
        ctx,
        OperationRequest.build(
            ctx, "E6", path_values={"mockAgreementId": shared.agreement_id}, body=body
        ),
    )
    engagement_id = _document(created).get("id")
    if engagement_id is None:
        raise NotApplicable("E6 answers without the engagement id that E13 needs")
    read = _step(
        scenario,
        ctx,
        OperationRequest.build(
            ctx,
            "E13",
            path_values={
                "mockAgreementId": shared.agreement_id,
                "mockEngagementId": str(engagement_id),
            },
        ),
    )
    document = _document(read)
    fields = ("customer", "roles", "registerLimit", "approvalLimit")
    _same_fields(read, body, document, fields, "the engagement", scenario.spec, created)
    check_equal(
        read,
        "the engagement's account iban",
        body["account"]["iban"],
        (document.get("account") or {}).get("iban"),
        spec=scenario.spec,
    )


def _transactions(
    ctx: RunContext, account: Account, seed: int, dates: Sequence[int] = (30, 20, 10)
) -> list[dict[str, Any]]:
    """E7 items on ``account`` booked (and valued) the given numbers of days ago."""
    today = ctx.data.today()
    items = factories.sandbox_account_transactions(
        seed,
        {"iban": account.iban, "bban": account.bban, "currency": account.currency},
        len(dates),
        today=today,
    )
    for item, days in zip(items, dates, strict=True):
        item["bookingDate"] = item["valueDate"] = (today - timedelta(days=days)).isoformat()
    return items


def _e7(scenario: Scenario, ctx: RunContext, account: Account, items: list[Any]) -> Exchange:
    request = OperationRequest.build(
        ctx, "E7", path_values={"mockAccountId": account.id}, body=items
    )
    return _step(scenario, ctx, request)


def _e3(scenario: Scenario, ctx: RunContext, account: Account, **query: Any) -> Exchange:
    request = OperationRequest.build(
        ctx, "E3", path_values={"mockAccountId": account.id}, query=query
    )
    return _step(scenario, ctx, request)


def _remittances(document: Any) -> list[str]:
    items = document if isinstance(document, list) else []
    return [str(item.get("remittanceInformationUnstructured")) for item in items]


def roundtrip_account_transaction(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A transaction created with E7 reads back from E11 with the same data."""
    account = ctx.data.new_account(seed)
    items = _transactions(ctx, account, seed, (15,))
    created = _e7(scenario, ctx, account, items)
    listed = _e3(scenario, ctx, account)
    found = [item for item in _document(listed) if isinstance(item, Mapping)]
    if not found:
        raise _fail(
            "E3 lists no transaction after E7 created one",
            scenario.spec,
            listed,
            "E3 lists the transactions created with E7",
            created,
        )
    read = _step(
        scenario,
        ctx,
        OperationRequest.build(
            ctx,
            "E11",
            path_values={"mockAccountId": account.id, "mockTransactionId": str(found[0]["id"])},
        ),
    )
    fields = [name for name in items[0] if name != "creditorId"]
    _same_fields(read, items[0], _document(read), fields, "the transaction", scenario.spec, created)


def list_account_transactions(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Every transaction created with E7 is listed by E3."""
    account = ctx.data.new_account(seed)
    items = _transactions(ctx, account, seed)
    created = _e7(scenario, ctx, account, items)
    listed = _e3(scenario, ctx, account)
    missing = sorted(
        {item["remittanceInformationUnstructured"] for item in items}
        - set(_remittances(_document(listed)))
    )
    if missing:
        raise _fail(
            f"E3 does not list {len(missing)} of the {len(items)} transactions created with E7",
            scenario.spec,
            listed,
            "E3 lists the account's transactions, including those created with E7",
            created,
        )


def filter_dates(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """fromDate and toDate restrict the list to that range of booking dates (E3, E4)."""
    today = ctx.data.today()
    window = {
        "fromDate": (today - timedelta(days=25)).isoformat(),
        "toDate": (today - timedelta(days=15)).isoformat(),
    }
    if scenario.operation == "E4":
        card = _card_with_dates(scenario, ctx, seed)
        listed = _e4(scenario, ctx, card, bookingStatus="booked", **window)
        dates = [item.get("bookingDate") for item in _booked(listed)]
    else:
        account = ctx.data.new_account(seed)
        _e7(scenario, ctx, account, _transactions(ctx, account, seed))
        listed = _e3(scenario, ctx, account, **window)
        dates = [item.get("bookingDate") for item in _document(listed)]
    expected = [(today - timedelta(days=20)).isoformat()]
    check_equal(
        listed,
        f"booking dates listed between {window['fromDate']} and {window['toDate']}",
        expected,
        sorted(str(day) for day in dates),
        spec=scenario.spec,
    )


def filter_pagination(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """offset skips and limit caps the list: three transactions read as 2 + 1 (E3, E4)."""
    if scenario.operation == "E4":
        card = _card_with_dates(scenario, ctx, seed)

        def page(**query: Any) -> tuple[Exchange, list[Any]]:
            exchange = _e4(scenario, ctx, card, bookingStatus="booked", **query)
            return exchange, [item.get("cardTransactionId") for item in _booked(exchange)]

    else:
        account = ctx.data.new_account(seed)
        _e7(scenario, ctx, account, _transactions(ctx, account, seed))

        def page(**query: Any) -> tuple[Exchange, list[Any]]:
            exchange = _e3(scenario, ctx, account, **query)
            return exchange, [item.get("id") for item in _document(exchange)]

    whole, everything = page()
    first, head = page(offset=0, limit=2)
    second, tail = page(offset=2, limit=2)
    check_equal(first, "the number listed with limit=2", 2, len(head), spec=scenario.spec)
    check_equal(second, "the number listed with offset=2 of 3", 1, len(tail), spec=scenario.spec)
    check_equal(
        second,
        "the two pages together",
        sorted(map(str, everything)),
        sorted(map(str, head + tail)),
        spec=scenario.spec,
        related=(whole, first),
    )


def _card_with_dates(scenario: Scenario, ctx: RunContext, seed: int) -> CardAccount:
    card = ctx.data.new_card_account(seed)
    items = ctx.data.card_transactions_body(card, seed, booked=3)
    today = ctx.data.today()
    for item, days in zip(items, (30, 20, 10), strict=True):
        item["bookingDate"] = item["transactionDate"] = (today - timedelta(days=days)).isoformat()
    _e5(scenario, ctx, card, items)
    return card


def _e5(scenario: Scenario, ctx: RunContext, card: CardAccount, items: list[Any]) -> Exchange:
    request = OperationRequest.build(
        ctx, "E5", path_values={"mockCardAccountId": card.id}, body=items
    )
    return _step(scenario, ctx, request)


def _e4(scenario: Scenario, ctx: RunContext, card: CardAccount, **query: Any) -> Exchange:
    request = OperationRequest.build(
        ctx, "E4", path_values={"mockCardAccountId": card.id}, query=query
    )
    return _step(scenario, ctx, request)


def _booked(exchange: Exchange) -> list[Mapping[str, Any]]:
    transactions = _document(exchange).get("cardTransactions") or {}
    return [item for item in transactions.get("booked") or [] if isinstance(item, Mapping)]


def _pending(exchange: Exchange) -> list[str]:
    transactions = _document(exchange).get("cardTransactions") or {}
    return [str(item) for item in transactions.get("pending") or []]


def _card_with_both(scenario: Scenario, ctx: RunContext, seed: int) -> tuple[CardAccount, list]:
    card = ctx.data.new_card_account(seed)
    items = ctx.data.card_transactions_body(card, seed, booked=2, pending=1)
    _e5(scenario, ctx, card, items)
    return card, items


def list_card_transactions(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Card transactions created with E5, and only those, are listed by E4."""
    card, items = _card_with_both(scenario, ctx, seed)
    listed = _e4(scenario, ctx, card, bookingStatus="both")
    read = {str(item.get("cardTransactionId")) for item in _booked(listed)} | set(_pending(listed))
    check_equal(
        listed,
        "the card transactions listed (booked and pending)",
        sorted(item["cardTransactionId"] for item in items),
        sorted(read),
        spec=scenario.spec,
    )


def filter_booking_status(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """bookingStatus=booked, pending or both lists the matching part of E5's transactions."""
    wanted = str(scenario.param("booking_status", "both"))
    card, items = _card_with_both(scenario, ctx, seed)
    listed = _e4(scenario, ctx, card, bookingStatus=wanted)
    booked_ids = sorted(i["cardTransactionId"] for i in items if i["invoiced"] == "true")
    pending_ids = sorted(i["cardTransactionId"] for i in items if i["invoiced"] != "true")
    expected_booked = booked_ids if wanted in ("booked", "both") else []
    expected_pending = pending_ids if wanted in ("pending", "both") else []
    check_equal(
        listed,
        f"booked transactions listed with bookingStatus={wanted}",
        expected_booked,
        sorted(str(item.get("cardTransactionId")) for item in _booked(listed)),
        spec=scenario.spec,
    )
    check_equal(
        listed,
        f"pending transactions listed with bookingStatus={wanted}",
        expected_pending,
        sorted(_pending(listed)),
        spec=scenario.spec,
    )


def roundtrip_balances(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Balances changed with E15 read back from E12."""
    account = ctx.data.new_account(seed)
    body = factories.balance_update(seed, account.currency)
    _step(
        scenario,
        ctx,
        OperationRequest.build(ctx, "E15", path_values={"mockAccountId": account.id}, body=body),
    )
    read = _step(
        scenario, ctx, OperationRequest.build(ctx, "E12", path_values={"mockAccountId": account.id})
    )
    document = _document(read)
    shown = document[0] if isinstance(document, list) and document else document
    _same_balances(read, body, (shown or {}).get("balances") or [], scenario)


def payment_in_transactions(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A sandbox payment from the account, once booked by the batch, appears in E3 (spec 4.3
    E3: "including those from sandbox payments")."""
    account = ctx.data.new_account(seed)
    body = ctx.data.payment_body("E16", seed, debtor=account)
    payment = ctx.data.payment(seed, "E16", body=body, authorise=True)
    status = ""
    for _ in range(_MAX_BATCH_RUNS):
        _batch(ctx)
        status, _ = _status(scenario, ctx, payment)
        if status == "ACSC" or status in _REJECTED:
            break
    if status != "ACSC":
        raise NotApplicable(f"the payment did not get booked by the batch runs (it is {status})")
    listed = _e3(scenario, ctx, account)
    creditor = body["creditorName"]
    if not any(
        isinstance(item, Mapping) and item.get("creditorName") == creditor
        for item in _document(listed)
    ):
        raise _fail(
            f"E3 does not list the booked sandbox payment to {creditor}",
            scenario.spec,
            listed,
            "E3 lists the transactions of sandbox payments from the account",
        )


# --- consents (spec 8, spec 4.3 E6) -------------------------------------------------------------


def _engaged_consent(
    scenario: Scenario, ctx: RunContext, seed: int, *, transactions: int = 0
) -> tuple[Any, Any]:
    """A fresh corporate engagement (REGISTER and VIEW) and the member's consent on its account."""
    engagement = ctx.data.new_engagement(seed)
    if transactions:
        _e7(scenario, ctx, engagement.account, _transactions(ctx, engagement.account, seed))
    member_account = replace(engagement.account, owner=engagement.member)
    return engagement, ctx.data.new_consent(seed, member_account)


def _al(scenario: Scenario, ctx: RunContext, consent: Any) -> Exchange:
    request = OperationRequest.build(
        ctx, "AL", psu=consent.psu, headers={"Consent-ID": consent.consent_id}
    )
    return _step(scenario, ctx, request)


def consent_accounts(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """After a consent (CC, CA, SCA) the account list shows the consented account."""
    engagement, consent = _engaged_consent(scenario, ctx, seed)
    listed = _al(scenario, ctx, consent)
    ibans = [item.get("iban") for item in _document(listed).get("accounts") or []]
    if engagement.account.iban not in ibans:
        raise _fail(
            f"the account list does not show the consented account {engagement.account.iban}",
            scenario.spec,
            listed,
            "an account engaged with REGISTER and VIEW, consented by its PSU, is listed",
        )


def consent_transactions(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """After a consent the account's transactions (AT) are listed."""
    _, consent = _engaged_consent(scenario, ctx, seed, transactions=3)
    request = OperationRequest.build(
        ctx,
        "AT",
        psu=consent.psu,
        path_values={"id": consent.account_id or ""},
        query={"bookingStatus": "booked"},
        headers={"Consent-ID": consent.consent_id},
    )
    listed = _step(scenario, ctx, request)
    booked = (_document(listed).get("transactions") or {}).get("booked") or []
    check_equal(listed, "booked transactions listed", 3, len(booked), spec=scenario.spec)


def consent_transaction_details(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """After a consent, E8 returns the details of a transaction taken from AT's list."""
    _, consent = _engaged_consent(scenario, ctx, seed, transactions=3)
    if consent.account_id is None or consent.transaction_id is None:
        raise _fail(
            "the consented account lists no booked transaction with a transactionId",
            scenario.spec,
            ctx.client.exchanges[-1] if ctx.client.exchanges else None,
            "booked transactions carry stable transaction ids (spec 9, 1.18.0)",
        )
    request = OperationRequest.build(
        ctx,
        "E8",
        psu=consent.psu,
        path_values={"id": consent.account_id, "transactionId": consent.transaction_id},
    )
    details = _step(scenario, ctx, request)
    check_equal(
        details,
        "transactionsDetails.transactionId",
        consent.transaction_id,
        (_document(details).get("transactionsDetails") or {}).get("transactionId"),
        spec=scenario.spec,
    )


def consent_needs_register_and_view(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An account engaged without REGISTER is not offered for consent (spec 4.3 E6): the consent
    is refused, or the account list leaves it out."""
    engagement = ctx.data.new_engagement(seed, roles=("VIEW",))
    member = engagement.member.psu
    request = OperationRequest.build(
        ctx,
        "CC",
        psu=member,
        body=factories.consent_request(seed, [engagement.account.iban]),
    )
    created = request.send(ctx)
    if 400 <= created.status < 500:
        check_response_schema(created, request.operation, ctx.contract)
        return
    judge_expectation(
        created, _success(ctx, "CC"), request.operation, ctx.contract, spec=scenario.spec
    )
    consent_id = str(_document(created).get("consentId"))
    link = ((_document(created).get("_links") or {}).get("scaRedirect") or {}).get("href")
    if link is None:
        started = OperationRequest.build(
            ctx, "CA", psu=member, path_values={"consentId": consent_id}
        )
        _, link = _start_authorisation(scenario, ctx, started)
    _sca(ctx, str(link), member, approve=True)
    listed = OperationRequest.build(ctx, "AL", psu=member, headers={"Consent-ID": consent_id})
    exchange = listed.send(ctx)
    if exchange.status >= 400:
        check_status(exchange, (401, 403), spec=scenario.spec)
        return
    ibans = [item.get("iban") for item in _document(exchange).get("accounts") or []]
    if engagement.account.iban in ibans:
        raise _fail(
            "an account engaged with VIEW only (no REGISTER) was offered for consent",
            scenario.spec,
            exchange,
            "an engagement needs both REGISTER and VIEW to be offered for consent",
            created,
        )


# --- data fill (spec 9, 1.16.0) -----------------------------------------------------------------


def data_fill(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The ids the data fill returns can be read: customers (E9), accounts (E12), cards (E10)."""
    filled = _document(_step(scenario, ctx, OperationRequest.build(ctx, "SDF")))
    listed = _step(scenario, ctx, OperationRequest.build(ctx, "E9"))
    known = {item.get("customerId") for item in _document(listed)}
    missing = [customer for customer in filled.get("customers") or [] if customer not in known]
    if missing:
        raise _fail(
            f"E9 does not list the filled customers {missing}",
            scenario.spec,
            listed,
            "the customers the data fill created are listed",
        )
    for account_id in filled.get("accounts") or []:
        _step(
            scenario,
            ctx,
            OperationRequest.build(ctx, "E12", path_values={"mockAccountId": str(account_id)}),
        )
    for card_id in filled.get("cardAccounts") or []:
        _step(
            scenario,
            ctx,
            OperationRequest.build(ctx, "E10", path_values={"mockCardAccountId": str(card_id)}),
        )


#: Flow by the name the scenario's ``params["flow"]`` carries (immutable).
FLOWS: Mapping[str, Flow] = MappingProxyType(
    {
        "payment-status-after-creation": payment_status_after_creation,
        "payment-sca-completed": payment_sca_completed,
        "payment-sca-cancelled": payment_sca_cancelled,
        "batch-run-advances": batch_run_advances,
        "batch-run-skips-periodic": batch_run_skips_periodic,
        "basket-worst-case": basket_worst_case,
        "basket-authorisation-started": basket_authorisation_started,
        "basket-sca-completed": basket_sca_completed,
        "basket-sca-cancelled": basket_sca_cancelled,
        "payment-authorisation-started": payment_authorisation_started,
        "payment-cancelled": payment_cancelled,
        "roundtrip-customer": roundtrip_customer,
        "roundtrip-account": roundtrip_account,
        "roundtrip-card-account": roundtrip_card_account,
        "roundtrip-agreement": roundtrip_agreement,
        "roundtrip-engagement": roundtrip_engagement,
        "roundtrip-account-transaction": roundtrip_account_transaction,
        "list-account-transactions": list_account_transactions,
        "filter-dates": filter_dates,
        "filter-pagination": filter_pagination,
        "list-card-transactions": list_card_transactions,
        "filter-booking-status": filter_booking_status,
        "roundtrip-balances": roundtrip_balances,
        "payment-in-transactions": payment_in_transactions,
        "consent-accounts": consent_accounts,
        "consent-transactions": consent_transactions,
        "consent-transaction-details": consent_transaction_details,
        "consent-needs-register-and-view": consent_needs_register_and_view,
        "data-fill": data_fill,
    }
)
