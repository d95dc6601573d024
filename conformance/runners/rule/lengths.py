"""Rule checks for field lengths: maximum and minimum lengths enforced on requests, lengths of
response fields, the account name length.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conformance.bankside.setup_data.base import BATCH_SUPPLY
from conformance.checks import (
    ConformanceFailure,
    NotApplicable,
    breaking,
    check_json_body,
    check_max_length,
    values_at,
)
from conformance.operations.accounts import (
    account_list_request,
    transaction_details_request,
)
from conformance.problems import body_breach
from conformance.runners.rule.common import (
    changed_body,
    rule_request,
    send_and_judge,
    send_expecting_success,
    set_at,
)

if TYPE_CHECKING:
    from conformance.bankside.request import OperationRequest
    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario


#: Rows of check_max_length_enforced / check_min_length_enforced: rule id → (pointer per
#: operation, the limit, whether a conforming value at the limit is sent too).
_LENGTH_FIELDS: Mapping[str, tuple[Mapping[str, tuple[str | int, ...]], int, bool]] = (
    MappingProxyType(
        {
            "LIM-remittance-unstructured-max-140": (
                {op: ("remittanceInformationUnstructured",) for op in ("E16", "E17", "E18")},
                140,
                True,
            ),
            "LIM-creditor-name-max-70": (
                {op: ("creditorName",) for op in ("E16", "E17", "E18")},
                70,
                True,
            ),
            "LIM-ultimate-debtor-max-70": (
                {op: ("ultimateDebtor",) for op in ("E16", "E17")},
                70,
                True,
            ),
            "LIM-bban-max-30": (
                {
                    "E16": ("creditorAccount", "bban"),
                    "E17": ("creditorAccount", "bban"),
                    "E18": ("debtorAccount", "bban"),
                    "SA": ("bban",),
                    "E7": (0, "creditorAccount", "bban"),
                },
                30,
                False,
            ),
            "LIM-iban-max-34": (
                {
                    "E17": ("creditorAccount", "iban"),
                    "E18": ("creditorAccount", "iban"),
                    "SA": ("iban",),
                    "E7": (0, "creditorAccount", "iban"),
                },
                34,
                False,
            ),
            "LIM-remittance-unstructured-non-empty": (
                {op: ("remittanceInformationUnstructured",) for op in ("E16", "E17", "E18")},
                1,
                False,
            ),
        }
    )
)


def _text(length: int, digits: bool) -> str:
    """A value of exactly ``length`` characters: digits for account numbers, else letters."""
    unit = "1234567890" if digits else "Nordmann-Regnskap-"
    return (unit * (length // len(unit) + 1))[:length]


def _length_pointer(scenario: Scenario) -> tuple[tuple[str | int, ...], int, bool]:
    try:
        pointers, limit, conforming = _LENGTH_FIELDS[scenario.rule]
        return pointers[scenario.operation], limit, conforming
    except KeyError:
        raise NotApplicable(
            f"the suite does not know which field {scenario.rule} limits on {scenario.operation}"
        ) from None


def check_max_length_enforced(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A value one character over the limit is refused; at the limit it is accepted."""
    pointer, limit, conforming = _length_pointer(scenario)
    digits = pointer[-1] in ("bban", "iban")
    request = rule_request(scenario, ctx, seed)
    with breaking(body_breach(pointer, "maxLength", f"{limit + 1} characters")):
        send_and_judge(
            scenario,
            ctx,
            changed_body(request, lambda body: set_at(body, pointer, _text(limit + 1, digits))),
        )
    if conforming:
        send_expecting_success(
            scenario,
            ctx,
            changed_body(request, lambda body: set_at(body, pointer, _text(limit, digits))),
        )


def check_min_length_enforced(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """An empty remittance text is refused (spec 8: non-empty)."""
    pointer, _, _ = _length_pointer(scenario)
    request = rule_request(scenario, ctx, seed)
    with breaking(body_breach(pointer, "minLength", "0 characters")):
        send_and_judge(scenario, ctx, changed_body(request, lambda body: set_at(body, pointer, "")))


def check_length_bounds_enforced(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """bankTransactionCode of 3 and of 15 characters are refused (spec 8: 4 to 14)."""
    request = rule_request(scenario, ctx, seed)
    for length in (3, 15):
        code = partial(set_at, pointer=(0, "bankTransactionCode"), value="P" * length)
        changed = changed_body(request, code)
        send_and_judge(scenario, ctx, changed)


#: Response fields checked by check_response_field_length: rule id → (pointers, bounds).
_RESPONSE_LENGTHS: Mapping[str, tuple[tuple[str, ...], int, int]] = MappingProxyType(
    {
        "LIM-end-to-end-id-max-35": (("transactionsDetails/endToEndId",), 0, 35),
        "LIM-tpp-message-text-max-512": (("tppMessages/*/text",), 0, 512),
        "LIM-psu-message-max-512": (("psuMessage",), 0, 512),
        "LIM-bank-transaction-code-length-response": (
            (
                "transactionsDetails/bankTransactionCode",
                "*/bankTransactionCode",
                "bankTransactionCode",
            ),
            4,
            14,
        ),
    }
)


#: The rule whose field a transaction the bank booked itself carries (a payment's endToEndId),
#: which E7's creation (spec 2.9) cannot give a transaction.
_END_TO_END_RULE = "LIM-end-to-end-id-max-35"


def check_response_field_length(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """Lengths the spec bounds in answers (spec 8): endToEndId, tppMessages text, psuMessage,
    bankTransactionCode. Payment rows look at a success and at an error answer. A bound no
    answer showed a value for has not been judged: not applicable, naming the field the
    target's answers left out (a check that saw nothing has not passed)."""
    pointers, low, high = _RESPONSE_LENGTHS.get(scenario.rule, ((), 0, 0))
    if not pointers:
        raise NotApplicable(f"the suite does not know which answer field {scenario.rule} bounds")
    request = _length_request(scenario, ctx, seed)
    answers = [send_and_judge(scenario, ctx, request)]
    if ctx.contract.operations[scenario.operation].family == "payments":
        broken = changed_body(request, lambda body: set_at(body, ("creditorName",), "x" * 71))
        answers.append(send_and_judge(scenario, ctx, broken))
    seen = False
    for exchange in answers:
        document = check_json_body(exchange)
        for pointer in pointers:
            check_max_length(exchange, document, pointer, high, spec=scenario.spec)
            if low:
                _check_min_length(exchange, document, pointer, low, scenario.spec)
            seen = seen or any(isinstance(value, str) for value in values_at(document, pointer))
    if not seen:
        field = pointers[0].rsplit("/", 1)[-1]
        raise NotApplicable(
            f"the target's answer carries no {field}"
            + (f" ({len(answers)} answers read)" if len(answers) > 1 else "")
            + f": the bound of {scenario.rule} was not judged",
            supply=BATCH_SUPPLY if _books_with_a_batch(scenario, ctx) else "",
        )


def _books_with_a_batch(scenario: Scenario, ctx: RunContext) -> bool:
    """Whether a batch run would let the run book the payment whose details the rule reads
    (the endToEndId bound, at a sandbox without one)."""
    return scenario.rule == _END_TO_END_RULE and ctx.profile.sandbox and not ctx.data.can_run_batch


def _length_request(scenario: Scenario, ctx: RunContext, seed: int) -> OperationRequest:
    """The request whose answer carries the bounded field. For endToEndId, E8 of a payment the
    run booked (spec 2.8's endToEndId is the bank's, and E7's creation cannot give one) where
    the run can book one (the sandbox and a batch run), else the consent's transaction."""
    if (
        scenario.rule != _END_TO_END_RULE
        or not ctx.profile.sandbox
        or _books_with_a_batch(scenario, ctx)
    ):
        return rule_request(scenario, ctx, seed)
    consent = ctx.data.booked_payment_consent(seed)
    if consent.account_id is None or consent.transaction_id is None:
        raise NotApplicable("the consented account lists no booked transaction to read (AT)")
    return transaction_details_request(ctx, consent)


def _check_min_length(exchange: Exchange, document: Any, pointer: str, low: int, spec: str) -> None:
    found = values_at(document, pointer)
    short = [value for value in found if isinstance(value, str) and len(value) < low]
    if short:
        raise ConformanceFailure(
            f"{pointer} is shorter than {low} characters: {short[:3]}",
            spec=spec,
            sent=exchange,
            expected=f"{pointer} has {low} characters or more",
        )


LONG_NAME = ("Brukskonto for husholdningen i Storgata 12 og hytta paa Geilo nr 4567" * 2)[:70]


def check_account_name_length(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """A 70-character account name: at most 35 characters in AL by default, whole with
    x-accept-fix longer-name (spec 8, spec 9)."""
    account = ctx.data.shared(
        "long-name-account",
        lambda: ctx.data.new_account(ctx.data.seed_for("long-name"), account_name=LONG_NAME),
    )
    consent = ctx.data.shared("long-name-consent", lambda: ctx.data.new_consent(ctx.seed, account))
    request = account_list_request(ctx, consent)
    longer = scenario.rule.endswith("longer-name-70")
    if longer:
        request = request.with_header("x-accept-fix", "longer-name")
    exchange = send_and_judge(scenario, ctx, request)
    listed = [
        item
        for item in check_json_body(exchange).get("accounts") or []
        if isinstance(item, Mapping) and item.get("iban") == account.iban
    ]
    name = listed[0].get("name") if listed else None
    if not isinstance(name, str):
        raise NotApplicable(
            "the target's answer carries no name for the account"
            + ("" if listed else f" (it lists no account with the iban {account.iban})")
            + f": the bound of {scenario.rule} was not judged"
        )
    if longer and name != LONG_NAME:
        raise ConformanceFailure(
            f"with x-accept-fix longer-name the 70-character account name reads {name!r}",
            spec="spec 8, spec 9",
            sent=exchange,
            expected=f"the account name whole, up to 70 characters: {LONG_NAME!r}",
        )
    if not longer and len(name) > 35:
        raise ConformanceFailure(
            f"without x-accept-fix longer-name the account name has {len(name)} characters",
            spec="spec 8, spec 9",
            sent=exchange,
            expected="account names are extended to 70 characters only with longer-name "
            "(35 by default, assumed)",
        )
