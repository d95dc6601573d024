"""The reference server answers what each requirement makes due (issue 39, ``pipeline/due.py``).

Two static checks over ``reference_server/``:

- every ``refuse(due(contract, <requirement>, ...), ..., status=<literal>)`` whose requirement is
  a literal or a constant (module-level, imported, or a name the function assigns one of them)
  names a requirement the contract has, and its status is among the statuses due on every
  operation that requirement is judged on (where it names any): a server choice outside what is
  due fails here, not in a run;
- every refusal built as a bare ``ApiError(`` is listed in :data:`LEFT` with the reason it
  answers no requirement, so that a new one must be justified (or wired to its requirement).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.contract import load_contract
from conformance.contract.crossfield import CHECKS
from reference_server.pipeline.validation import rule_of_check

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "reference_server"

_CONTROL = "a /_control route of the reference server (not the contract)"
_SANDBOX_RULE = (
    "a sandbox creation's own consistency check on the contract's assumed body; no requirement "
    "states it (SCH-request is the schema's constraints)"
)
_FAULT_500 = "a fault's 500 (server-error-on-*): 500s stay as they are"
_CONSENT_STATE = "a consent-state answer no rules.json row states"
_BANK_STYLE = "a bank style of a profile (--profile), not the contract"
_PAYMENT_STATE = "a payment's or basket's state refused; no rules.json row states the answer"

#: Every bare ``ApiError(`` left in ``reference_server/``: file → function → one reason per site,
#: in the order they appear.
LEFT: dict[str, dict[str, tuple[str, ...]]] = {
    "api.py": {
        "decoded_value": (
            "a malformed RFC 2047 encoding met where a handler decodes a header: neither the "
            "operation nor the requirement is known there (the format rules are auth.py's)",
        ),
    },
    "app.py": {
        "Throttle.answer": ("the gateway's rate limit (--throttle, a profile's rate_limit)",),
        "Application._dispatch": (
            "the fault server-error-on-unknown-resource turning a 404 into 500",
            "an unhandled exception: 500",
        ),
        "Application._call_route": (_CONTROL + ": loopback only",),
        "Application._call_operation": ("an operation without a handler: 501",),
        "Application._with_body_problems": (
            "re-states a refusal already answered as its requirement makes due (its status "
            "and code), adding the body's problems",
        ),
    },
    "pipeline/auth.py": {
        "_refused": (
            "builds the answer due.answer makes of catalogue.broken's requirement (the request "
            "rules' one place)",
        ),
        "check_gateway_headers": (_BANK_STYLE + ": the gateway's own headers",) * 2,
    },
    "pipeline/due.py": {"refuse": ("the one place a requirement's due becomes an ApiError",)},
    "pipeline/tokens.py": {"check_bearer": (_BANK_STYLE + ": its [oauth] bearer token",) * 2},
    "pipeline/validation.py": {"parse_body": (_FAULT_500,), "_unreadable": (_FAULT_500,)},
    "resources/_common.py": {
        "owner_by_number": (_SANDBOX_RULE,),
        "one_balance_per_type": (_SANDBOX_RULE,),
    },
    "resources/baskets.py": {
        "_payments": ("an unknown payment id in E1's body (ROB-unknown-id is an id in the path)",),
        "_check_release": ("a played release before NCBCT joined baskets (a bank style)",),
        "_check_joinable": (_PAYMENT_STATE,),
        "show_basket": (_CONTROL,),
    },
    "resources/consents.py": {
        "_check_model": (_BANK_STYLE + ": its consent model",) * 2,
        "_check_offered": (_BANK_STYLE + ": first-access has no consent endpoint",),
        "create_consent": (
            "a validUntil in the past: no rules.json row states the answer",
            "accounts not offered to the PSU: no rules.json row states the answer",
        ),
        "authorise_consent": (_CONSENT_STATE,),
        "age_consent": (_CONTROL,),
    },
    "resources/control.py": {"move_clock": (_CONTROL,) * 2},
    "resources/payments.py": {
        "check_execution_dates": ("an execution date beyond the bank's one-year horizon",),
        "cancel_payment": (
            "a payment past cancelling (ERR-6 is the pending payment's, wired)",
            _PAYMENT_STATE + " (a reading: basket-payment-not-cancellable)",
        ),
        "authorise_cancellation": (_PAYMENT_STATE,),
        "authorise_payment": (
            _PAYMENT_STATE,
            _PAYMENT_STATE,
            _PAYMENT_STATE + " (a reading: sca-started-at-creation)",
        ),
    },
    "resources/sandbox_accounts.py": {"create_account": (_SANDBOX_RULE,)},
    "resources/sandbox_agreements.py": {
        "create_agreement": (_SANDBOX_RULE,) * 3,
        "add_engagement": (_SANDBOX_RULE,) * 3,
    },
    "resources/sandbox_cards.py": {
        "create_card_account": (_SANDBOX_RULE + " (a reading: card-account-status-required)",),
        "create_card_transactions": (_SANDBOX_RULE,) * 2,
    },
    "resources/sandbox_customers.py": {"create_customer": (_SANDBOX_RULE,) * 4},
    "resources/sca.py": {
        "sca_status": ("the /sca pages of the reference server (not the contract)",),
        "oauth_metadata": ("the /sca pages of the reference server (not the contract)",),
    },
    "services/consent_access.py": {
        "_session_consent": (
            _BANK_STYLE + ": first-access binds the consent to TPP-Session-ID",
            _BANK_STYLE + ": first-access's 401 with the SCA link",
        ),
        "_used_consent": (_CONSENT_STATE,) * 3,
        "_named_consent": (_CONSENT_STATE,) * 2,
        "_check_usable": (
            "a consent past its validUntil (the SCA renewal's is wired)",
            _CONSENT_STATE + " (received, rejected)",
            "a consent that does not cover the account",
        ),
    },
    "services/sca_flow.py": {
        "unknown_psu_error": ("spec 5 item 6's 401 with scaRedirect: an answer, not a refusal",),
        "sca_required_error": ("spec 5 item 6's 401 with scaRedirect: an answer, not a refusal",),
    },
    "transport/http.py": {
        "RequestHandler._read_body": (
            "HTTP framing (RFC 9112), before any operation",
            "HTTP framing (RFC 9112), before any operation",
            _FAULT_500,
        ),
        "RequestHandler.send_error": ("the HTTP layer's own errors (http.server)",),
    },
}


@dataclass(frozen=True)
class Site:
    """A ``refuse(due(...))`` call: where, the requirement ids it may name, its literal status."""

    where: str
    requirements: tuple[str, ...]
    status: int | None


def _modules() -> Iterator[tuple[str, ast.Module, Any]]:
    for path in sorted(SERVER.rglob("*.py")):
        relative = path.relative_to(SERVER).as_posix()
        name = "reference_server." + relative.removesuffix(".py").replace("/", ".")
        name = name.removesuffix(".__init__")
        # ``__main__`` runs the server when imported: its constants are not read
        module = None if name.endswith("__main__") else importlib.import_module(name)
        yield relative, ast.parse(path.read_text("utf-8")), module


def _called(node: ast.AST, name: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (
        isinstance(func, ast.Attribute) and func.attr == name
    )


def _scopes(tree: ast.Module) -> Iterator[tuple[str, ast.AST, ast.AST | None]]:
    """Every node with its enclosing function's qualified name and node (None at module level)."""

    def walk(node: ast.AST, scope: str, function: ast.AST | None) -> Iterator[Any]:
        for child in ast.iter_child_nodes(node):
            inner, owner = scope, function
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{scope}.{child.name}" if scope else child.name
                if not isinstance(child, ast.ClassDef):
                    owner = child
            yield child, inner, owner
            yield from walk(child, inner, owner)

    for node, scope, function in walk(tree, "", None):
        yield scope, node, function


def _values(
    expression: ast.AST, module: Any, function: ast.AST | None, tree: ast.Module | None = None
) -> tuple[str, ...] | None:
    """The strings ``expression`` may be: a literal, a constant of the module (its own or
    imported), either branch of a conditional, every value the function assigns the name, or
    every value the module's calls of the function pass for that parameter; None when one
    cannot be told."""
    if isinstance(expression, ast.Constant) and isinstance(expression.value, str):
        return (expression.value,)
    if isinstance(expression, ast.IfExp):
        body = _values(expression.body, module, function, tree)
        orelse = _values(expression.orelse, module, function, tree)
        return None if body is None or orelse is None else body + orelse
    if isinstance(expression, ast.Name):
        if function is not None:
            assigned = [
                node.value
                for node in ast.walk(function)
                if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == expression.id for t in node.targets)
            ]
            if assigned:
                found: tuple[str, ...] = ()
                for value in assigned:
                    each = _values(value, module, None)
                    if each is None:
                        return None
                    found += each
                return found
        if isinstance(function, ast.FunctionDef) and tree is not None:
            passed = _passed(tree, function, expression.id)
            if passed is not None:
                return _resolved_all(passed, module)
        constant = getattr(module, expression.id, None)
        return (constant,) if isinstance(constant, str) else None
    return None


def _resolved_all(expressions: list[ast.expr], module: Any) -> tuple[str, ...] | None:
    found: tuple[str, ...] = ()
    for expression in expressions:
        each = _values(expression, module, None)
        if each is None:
            return None
        found += each
    return found


def _passed(tree: ast.Module, function: ast.FunctionDef, name: str) -> list[ast.expr] | None:
    """What the module's calls of ``function`` pass for its parameter ``name``; None when it is
    no parameter, the function is never called here, or a call passes it otherwise."""
    parameters = [argument.arg for argument in function.args.args]
    if name not in parameters:
        return None
    index = parameters.index(name)
    passed: list[ast.expr] = []
    for node in ast.walk(tree):
        if not _called(node, function.name) or not isinstance(node, ast.Call):
            continue
        keyword = next((k.value for k in node.keywords if k.arg == name), None)
        if keyword is not None:
            passed.append(keyword)
        elif index < len(node.args):
            passed.append(node.args[index])
        else:
            return None
    return passed or None


def _due_calls(expression: ast.AST) -> Iterator[ast.Call]:
    if isinstance(expression, ast.IfExp):
        yield from _due_calls(expression.body)
        yield from _due_calls(expression.orelse)
    elif isinstance(expression, ast.Call) and _called(expression, "due"):
        yield expression


def _sites() -> tuple[list[Site], list[str]]:
    """The resolved ``refuse(due(...))`` sites, and those whose requirement cannot be told."""
    sites: list[Site] = []
    unresolved: list[str] = []
    for relative, tree, module in _modules():
        for _scope, node, function in _scopes(tree):
            if not (_called(node, "refuse") and isinstance(node, ast.Call) and node.args):
                continue
            where = f"{relative}:{node.lineno}"
            status = next(
                (
                    keyword.value.value
                    for keyword in node.keywords
                    if keyword.arg == "status" and isinstance(keyword.value, ast.Constant)
                ),
                None,
            )
            for call in _due_calls(node.args[0]):
                ids = _values(call.args[1], module, function, tree) if len(call.args) > 1 else None
                if ids is None:
                    unresolved.append(where)
                else:
                    sites.append(Site(where, ids, status if isinstance(status, int) else None))
    return sites, unresolved


def _problems(sites: list[Site]) -> list[str]:
    contract = load_contract()
    by_id: dict[str, list[Any]] = {}
    for requirement in contract.requirements.values():
        by_id.setdefault(requirement.id, []).append(requirement)
    problems = []
    for site in sites:
        for requirement_id in site.requirements:
            found = by_id.get(requirement_id)
            if not found:
                problems.append(f"{site.where}: the contract has no requirement {requirement_id}")
                continue
            if site.status is None:
                continue
            for requirement in found:
                due = requirement.expected
                if due is not None and due.statuses and site.status not in due.statuses:
                    problems.append(
                        f"{site.where}: status {site.status} is not due for {requirement_id} on "
                        f"{requirement.operation or 'every operation'} ({list(due.statuses)})"
                    )
    return problems


def test_every_refusal_answers_a_status_its_requirement_makes_due() -> None:
    sites, _ = _sites()
    assert len(sites) >= 30, [site.where for site in sites]  # the walk finds the wired sites
    assert {"SCH-request", "ROB-unknown-id", "ROB-malformed-json"} <= {
        requirement for site in sites for requirement in site.requirements
    }
    assert _problems(sites) == []


def test_a_status_outside_what_is_due_is_found() -> None:
    """The check can fail: a 409 on SCH-request (400 due) and an unknown id are reported."""
    wrong = [
        Site("here:1", ("SCH-request",), 409),
        Site("here:2", ("NO-such-requirement",), 400),
    ]
    problems = _problems(wrong)
    assert any("status 409 is not due for SCH-request" in problem for problem in problems)
    assert any("no requirement NO-such-requirement" in problem for problem in problems)


def test_only_the_helpers_leave_their_requirement_to_a_caller() -> None:
    """The walk tells every requirement a refusal names (a helper's parameter by what its
    callers pass), so that a new site is checked, not skipped; the one exception is the
    cross-field refusal, whose row ``validation.rule_of_check`` finds (checked below)."""
    _, unresolved = _sites()
    assert [where.partition(":")[0] for where in unresolved] == ["pipeline/validation.py"]


def test_a_crossfield_violation_answers_its_rows_due() -> None:
    """Each cross-field check's violations (400, or a fault's status) on each operation and with
    each code its rows name find a row (``validation.rule_of_check``) that makes 400 due."""
    contract = load_contract()
    seen = 0
    for rule in contract.rules:
        if rule.check not in CHECKS:
            continue
        for operation in rule.operations:
            for code in {rule.expected_code or "FORMAT_ERROR", "FORMAT_ERROR"}:
                try:
                    found = rule_of_check(contract, rule.check, operation, code)
                except LookupError:
                    assert rule.expected_code is not None  # a check whose rows all name a code
                    continue
                due = contract.requirement(found, operation).expected
                assert due is not None and 400 in due.statuses, (rule.id, operation, code)
                seen += 1
    assert seen > 10


def _bare() -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for relative, tree, _module in _modules():
        for scope, node, _function in _scopes(tree):
            bare = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            if bare and _called(node, "ApiError"):
                per_file = found.setdefault(relative, {})
                per_file[scope] = per_file.get(scope, 0) + 1
    return found


def test_every_bare_api_error_is_listed_with_its_reason() -> None:
    listed = {
        path: {function: len(reasons) for function, reasons in functions.items()}
        for path, functions in LEFT.items()
    }
    assert _bare() == listed


@pytest.mark.parametrize("path", sorted(LEFT))
def test_each_reason_is_said(path: str) -> None:
    assert all(reason.strip() for reasons in LEFT[path].values() for reason in reasons)
