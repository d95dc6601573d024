"""One home per fact: the spec's small facts (``conformance/contract/facts.py``) and the request
rules (``conformance/contract/request_rules.py``) are defined once, and no second definition
creeps back into the two trees.

What the scan can see, read from the sources' syntax trees (``ast``):

- a second assignment to a fact's name, anywhere in ``conformance/`` or ``reference_server/``;
- a literal equal to a fact's value (a ``frozenset({...})``, a set, a tuple or a dict of
  constants: ``_FAMILIES = frozenset({"payments", "baskets"})`` under any name), and a
  ``BodyCase(...)`` built outside the facts;
- ``tpp_code="FORBIDDEN"`` written out instead of ``facts.AUTH_TPP_CODE``;
- a second function named as a request rule or one of its helpers (``present``/``_present``,
  ``lists``/``_lists``, ``stale_date``, ...), outside ``generate/`` and ``runners/`` (which
  build and run the scenarios that break a rule, named for their case);
- in the two sides that used to hold their own copies of the request rules (the reference
  server's ``pipeline/`` and ``conformance/traffic/``), a call that only a rule's own
  implementation makes: ``verify_request`` (signature), ``verify_chain`` (trust),
  ``parsedate_to_datetime`` (the Date), ``is_valid_national_id`` (the PSU), ``header_schema``
  (header formats).

What it cannot see: a fact rewritten in another form (a set built in a loop, a role per family
spelt as ``if``/``else``), or a rule re-implemented under another name elsewhere without the
calls above. Those are left to review.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from conformance.contract import facts, request_rules

ROOT = Path(__file__).resolve().parents[2]
TREES = ("conformance", "reference_server")
FACTS_FILE = ROOT / "conformance" / "contract" / "facts.py"
RULES_FILE = ROOT / "conformance" / "contract" / "request_rules.py"

#: The facts of issue 33 item 1, by their one name.
FACT_NAMES = (
    "ROLE_OF_FAMILY",
    "PAYMENT_STYLE_FAMILIES",
    "PAYMENT_STATUSES",
    "NOT_ACCEPTED",
    "REJECTED",
    "BASKET_LISTED",
    "AUTH_REJECTION_STATUSES",
    "AUTH_TPP_CODE",
    "STATUS_SHOWN",
    "ERRORS_SHOWN",
    "BODY_CASES",
    "FIELD_KINDS",
)
#: Facts whose value a literal elsewhere could copy (a one-string code is too common to scan:
#: ``tpp_code="FORBIDDEN"`` is looked for instead).
LITERAL_FACTS = tuple(name for name in FACT_NAMES if name not in ("AUTH_TPP_CODE", "BODY_CASES"))
#: The function facts and the request rules with their helpers, by their one name (a leading
#: underscore is the same name: ``_present`` is a copy of ``present``).
FUNCTION_NAMES = (
    "basket_worst_status",
    "body_case",
    "missing_headers",
    "signature_verification",
    "signature_violation",
    "untrusted_certificate",
    "missing_role",
    "stale_date",
    "date_timestamp",
    "replay_key",
    "replayed",
    "header_misfits",
    "psu_violations",
    "present",
    "lists",
)
#: Calls only a request rule makes, not allowed in the two sides that judge by the kernel.
RULE_CALLS = (
    "verify_request",
    "verify_chain",
    "parsedate_to_datetime",
    "is_valid_national_id",
    "header_schema",
)
SIDES = (ROOT / "reference_server" / "pipeline", ROOT / "conformance" / "traffic")
#: Other facts that happen to have a fact's value, each with why it is another fact.
SAME_VALUE_OTHER_FACT = {
    "PERIODIC_PRODUCTS": "E17 creates the periodic payments (spec 3), not only the one whose "
    "format errors spec 7 shows as 400 (STATUS_SHOWN)",
}


def _sources() -> Iterator[tuple[Path, ast.Module]]:
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            if path in (FACTS_FILE, RULES_FILE):
                continue
            yield path, ast.parse(path.read_text("utf-8"), str(path))


SOURCES = list(_sources())
#: Every node of every source, walked once: (file, node).
NODES = [(path, node) for path, module in SOURCES for node in ast.walk(module)]
#: The functions and the calls among them.
FUNCTIONS = [
    (path, node) for path, node in NODES if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
]
CALLS = [(path, node) for path, node in NODES if isinstance(node, ast.Call)]
#: Where scenarios that break a rule are generated and run, named for the case they build
#: (``_stale_date``, ``_missing_role``): not second implementations of the rule.
CASE_BUILDERS = (ROOT / "conformance" / "generate", ROOT / "conformance" / "runners")


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"


def _constant(node: ast.AST) -> Any:
    """The value of a constant literal (``frozenset({...})`` included), else raise ValueError."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "frozenset"
        and len(node.args) == 1
        and not node.keywords
    ):
        return frozenset(_constant(node.args[0]))
    if isinstance(node, ast.Set):
        return frozenset(_constant(item) for item in node.elts)
    return ast.literal_eval(node)


def _assigned(nodes: Iterable[ast.AST]) -> Iterator[tuple[str, ast.AST, ast.AST]]:
    """(name, the assignment, its value) of every assignment to a plain name among ``nodes``."""
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, node, node.value
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.value is not None
        ):
            yield node.target.id, node, node.value


#: Every assignment to a plain name, anywhere: (file, name, assignment, value).
ASSIGNMENTS = [
    (path, name, node, value)
    for path, module in SOURCES
    for name, node, value in _assigned(ast.walk(module))
]
#: The module-level ones (a class's attribute of the same name is another thing).
MODULE_ASSIGNMENTS = [
    (path, name, node) for path, module in SOURCES for name, node, _ in _assigned(module.body)
]


def _comparable(value: Any) -> Any:
    return frozenset(value) if isinstance(value, frozenset | set) else value


def test_the_scan_reads_the_tree() -> None:
    assert len(SOURCES) > 200
    assert len(ASSIGNMENTS) > 1000 and len(MODULE_ASSIGNMENTS) > 500
    assert all(hasattr(facts, name) for name in FACT_NAMES)
    assert all(hasattr(facts, n) or hasattr(request_rules, n) for n in FUNCTION_NAMES)


@pytest.mark.parametrize("name", FACT_NAMES)
def test_no_second_assignment_to_a_facts_name(name: str) -> None:
    again = [_where(path, node) for path, assigned, node in MODULE_ASSIGNMENTS if assigned == name]
    assert not again, f"{name} is defined in contract/facts.py and again at {again}"


@pytest.mark.parametrize("name", LITERAL_FACTS)
def test_no_literal_copies_a_facts_value(name: str) -> None:
    wanted = _comparable(getattr(facts, name))
    if isinstance(wanted, Mapping):
        wanted = dict(wanted)
    copies = []
    for path, assigned, node, value in ASSIGNMENTS:
        if assigned in SAME_VALUE_OTHER_FACT:
            continue
        try:
            literal = _constant(value)
        except (ValueError, TypeError, SyntaxError):
            continue
        if _comparable(literal) == wanted:
            copies.append(_where(path, node))
    assert not copies, f"the value of facts.{name} is written again at {copies}"


def test_the_literal_scan_sees_a_copy() -> None:
    """The scan above can fail: a copy under another name is found."""
    module = ast.parse('_FAMILIES = frozenset({"baskets", "payments"})\nX: dict = {"a": 1}')
    values = [_constant(value) for _, _, value in _assigned(ast.walk(module))]
    assert facts.PAYMENT_STYLE_FAMILIES in values


def test_body_cases_are_built_only_in_the_facts() -> None:
    built = [
        _where(path, node)
        for path, node in CALLS
        if isinstance(node.func, ast.Name) and node.func.id == "BodyCase"
    ]
    assert not built, f"a BodyCase is built outside contract/facts.py at {built}"


def test_the_auth_tpp_code_is_not_spelt_out() -> None:
    spelt = [
        _where(path, keyword)
        for path, node in CALLS
        for keyword in node.keywords
        if keyword.arg == "tpp_code"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value == facts.AUTH_TPP_CODE
    ]
    assert not spelt, f"tpp_code={facts.AUTH_TPP_CODE!r} is written out at {spelt}"


@pytest.mark.parametrize("name", FUNCTION_NAMES)
def test_no_second_function_of_a_rules_name(name: str) -> None:
    again = [
        _where(path, node)
        for path, node in FUNCTIONS
        if node.name.lstrip("_") == name
        and not any(builder in path.parents for builder in CASE_BUILDERS)
    ]
    assert not again, f"{name} is a function of contract/ and is defined again at {again}"


@pytest.mark.parametrize("call", RULE_CALLS)
def test_the_two_sides_judge_requests_through_the_kernel(call: str) -> None:
    made = [
        _where(path, node)
        for path, node in CALLS
        if (
            (isinstance(node.func, ast.Name) and node.func.id == call)
            or (isinstance(node.func, ast.Attribute) and node.func.attr == call)
        )
        and any(side in path.parents for side in SIDES)
    ]
    assert not made, f"{call} is called at {made}: a request rule belongs in request_rules.py"


#: The one home of "the operation is one spec 4.1 numbers" (``Operation.numbered``).
MODEL_FILE = ROOT / "conformance" / "contract" / "model.py"
#: How a pattern that tells an E-number starts (``E[0-9]+``, ``^E([0-9]+)$``, ``E(\d+)``).
_E_NUMBER_STARTS = ("E[0-9]", "E([0-9]", "E[1-9]", "E([1-9]", "E\\d", "E(\\d")


def _e_number_patterns(nodes: Iterable[tuple[Path, ast.AST]]) -> list[str]:
    return [
        _where(path, node)
        for path, node in nodes
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.lstrip("^").startswith(_E_NUMBER_STARTS)
    ]


def test_the_e_number_switch_has_one_home() -> None:
    """Whether an operation is one the spec numbers (E1 … E18) is the must/should switch of
    every requirement on an operation: ``Operation.numbered`` decides it, and no second pattern
    tells an E-number elsewhere (review 5 §2.1 found four)."""
    again = [
        where
        for where in _e_number_patterns(NODES)
        if not where.startswith("conformance/contract/model.py:")
    ]
    assert not again, (
        f"an E-number pattern outside contract/model.py (Operation.numbered) at {again}"
    )
    module = ast.parse('import re\n_SPEC = re.compile(r"^E[0-9]+$")\nre.fullmatch(r"E(\\d+)", x)')
    assert len(_e_number_patterns((MODEL_FILE, node) for node in ast.walk(module))) == 2


def test_the_safe_methods_have_one_home() -> None:
    """Safe methods are never a replay: ``request_rules.SAFE_METHODS``, read by the reference
    server and the traffic judge alike (review 5 §2.1 found a copy on each side)."""
    copies = []
    for path, _, node, value in ASSIGNMENTS:
        try:
            literal = _constant(value)
        except (ValueError, TypeError, SyntaxError):
            continue
        if _comparable(literal) == request_rules.SAFE_METHODS:
            copies.append(_where(path, node))
    assert not copies, f"request_rules.SAFE_METHODS is written again at {copies}"
