"""A seeded negative-mode fuzz of every operation, with signed requests (issue 14): each case is a
valid request of one operation (its example body from ``schemas/examples``, the headers spec 4.2
requires, a made-up id where the path names a resource) broken in one or a few random ways, sent
signed like the suite signs. The server must answer every case below 500 and log no traceback.

The breaks: a body member replaced by a value of another JSON type, a huge string, a deep
nesting, control or non-BMP characters, or removed; a junk member added; the body replaced by a
scalar or an array, or by JSON nested deeper than the bounded reader reads (65 to 100,000
levels); a listed header given a random or oversized value or left out; a path segment replaced
by odd characters; junk query parameters. ``cases(seed, count)`` is
deterministic for a seed; ``run_fuzz`` sends them and returns what went wrong.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import logging
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from conformance.bankside.client import TargetClient
from conformance.commands.export_examples import example_request
from conformance.contract import Contract, load_contract

__all__ = ["FuzzCase", "FuzzResult", "cases", "run_fuzz"]

_ODD_STRINGS = (
    "",
    " ",
    "\x00",
    "\u202e\u0000\ud7ff",
    "😀" * 50,
    "A" * 70_000,
    "' OR 1=1 --",
    "<script>alert(1)</script>",
    "${jndi:ldap://x}",
    "../../etc/passwd",
    "NaN",
    "-0",
    "1e400",
)
_ODD_VALUES: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    2**63,
    -(2**31) - 1,
    1.5e308,
    [],
    {},
    [[[[[[[[[[[]]]]]]]]]]],
    {"a": {"b": {"c": {"d": {}}}}},
)


#: The share of cases whose body is replaced by JSON nested deep, and the depths: one past the
#: bounded reader's limit (64), and far past Python's recursion limit.
_DEEP_SHARE = 0.05
_DEEP = (65, 1_000, 100_000)


@dataclass(frozen=True)
class FuzzCase:
    """One request: method, path with query, headers (None: leave the header out), body bytes."""

    number: int
    operation: str
    method: str
    path: str
    headers: tuple[tuple[str, str | None], ...]
    body: bytes | None
    what: str


@dataclass
class FuzzResult:
    """What a fuzz run found: the cases answered 5xx, and the tracebacks the server logged."""

    sent: int = 0
    server_errors: list[tuple[FuzzCase, int]] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaves(value, (*path, index))


def _set(node: Any, path: Sequence[Any], value: Any, *, remove: bool = False) -> Any:
    if not path:
        return value
    parent = node
    for step in path[:-1]:
        parent = parent[step]
    if remove and isinstance(parent, dict):
        parent.pop(path[-1], None)
    elif remove and isinstance(parent, list):
        parent.pop(path[-1])
    else:
        parent[path[-1]] = value
    return node


def _odd(rng: random.Random) -> Any:
    return (
        rng.choice(_ODD_STRINGS) if rng.random() < 0.5 else copy.deepcopy(rng.choice(_ODD_VALUES))
    )


def _break_body(rng: random.Random, body: Any) -> tuple[Any, str]:
    broken = copy.deepcopy(body)
    choice = rng.random()
    if choice < 0.1:
        return _odd(rng), "the body replaced"
    paths = [path for path in _leaves(broken) if path]
    if not paths:
        return _odd(rng), "the body replaced"
    path = rng.choice(paths)
    if choice < 0.35:
        return _set(broken, path, None, remove=True), f"{'/'.join(map(str, path))} removed"
    if choice < 0.45 and isinstance(broken, dict):
        broken[rng.choice(("__proto__", "x" * 300, "😀", "$where"))] = _odd(rng)
        return broken, "a junk member added"
    return _set(broken, path, _odd(rng)), f"{'/'.join(map(str, path))} replaced"


def _examples(contract: Contract) -> dict[str, dict[str, Any]]:
    today = dt.datetime.now(dt.UTC).date()
    found: dict[str, dict[str, Any]] = {}
    for op_id, operation in contract.operations.items():
        if operation.request_schema is not None:
            found[op_id] = example_request(contract, op_id, today)
        else:
            free = {p.name for p in operation.path_parameters} - set(operation.fixed_path_values)
            found[op_id] = {
                "method": operation.method,
                "path": operation.path if free else operation.render_path(),
                "headers": {"x-accept-fix": "amount-as-string", "TPP-Session-ID": "s"},
                "body": None,
            }
    return found


def cases(seed: int, count: int, contract: Contract | None = None) -> Iterator[FuzzCase]:
    """``count`` cases over every operation, the same for the same seed."""
    contract = contract or load_contract()
    examples = _examples(contract)
    rng = random.Random(seed)
    operations = sorted(examples)
    for number in range(count):
        op_id = operations[number % len(operations)]
        operation = contract.operations[op_id]
        example = examples[op_id]
        path = str(example["path"])
        for parameter in operation.path_parameters:
            placeholder = "{" + parameter.name + "}"
            if placeholder in path:
                value = rng.choice(("conformance-unknown-id", "%00", "..", "😀", "a" * 300))
                path = path.replace(placeholder, quote(value, safe=""))
        headers: dict[str, str | None] = dict(example["headers"])
        body = example["body"]
        what: list[str] = []
        for _ in range(rng.randint(1, 3)):
            choice = rng.random()
            if body is not None and choice < 0.6:
                body, said = _break_body(rng, body)
                what.append(said)
            elif choice < 0.8:
                listed = [*operation.required_headers, *operation.optional_headers]
                name = rng.choice(listed)
                if name.lower() in ("signature", "digest", "tpp-signature-certificate"):
                    continue  # the signer makes these
                header_value: str | None = rng.choice(
                    (None, "", "x" * 5000, "\u00e6\u00f8\u00e5", "=?utf-8?B?***?=")
                )
                headers[name] = header_value
                what.append(f"header {name} {'removed' if header_value is None else 'changed'}")
            else:
                path += ("&" if "?" in path else "?") + "limit=-1&offset=abc&x%00=%ff"
                what.append("junk query")
        content = None if body is None else json.dumps(body, ensure_ascii=rng.random() < 0.5)
        if content is not None and rng.random() < _DEEP_SHARE:
            depth = rng.choice(_DEEP)  # past the bounded reader's 64 levels, far past Python's
            content = "[" * depth + "]" * depth
            what.append(f"the body nested {depth} deep")
        yield FuzzCase(
            number=number,
            operation=op_id,
            method=str(example["method"]),
            path=path,
            headers=tuple(headers.items()),
            body=None if content is None else content.encode("utf-8", "surrogatepass"),
            what="; ".join(what) or "unchanged",
        )


class _Tracebacks(logging.Handler):
    """Counts the records the server logs with an exception attached."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.count += 1


def run_fuzz(
    base_url: str, fuzz: Sequence[FuzzCase] | Iterator[FuzzCase]
) -> tuple[FuzzResult, int]:
    """Send every case signed to ``base_url``; the result and the tracebacks logged meanwhile
    by an in-process reference server (0 when the server is another process)."""
    watcher = _Tracebacks()
    logger = logging.getLogger("reference_server")
    logger.addHandler(watcher)
    result = FuzzResult()
    try:
        with TargetClient(base_url, verify=False, timeout=30.0) as client:
            for case in fuzz:
                answer = client.request(
                    case.method, case.path, content=case.body, headers=list(case.headers)
                )
                client.take_exchanges()
                result.sent += 1
                result.statuses[answer.status] = result.statuses.get(answer.status, 0) + 1
                if answer.status >= 500:
                    result.server_errors.append((case, answer.status))
    finally:
        logger.removeHandler(watcher)
    return result, watcher.count
