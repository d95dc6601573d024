"""Benchmark: the project's compiled schema checks against jsonschema-rs, on the same schemas and
the same thousands of instances: the suite's own requests and the reference server's answers.

The hot path of the server (every request body) and of the suite (every answer body) asks one
question of a schema: valid or not. The project answers it with its own compiler
(:mod:`conformance.contract.compiled`: closures built once per schema, held equal to
``jsonschema`` by ``tests/unit/test_contract_check.py``). jsonschema-rs (Draft 2020-12, in Rust) is
the maintained alternative. It would replace the compiler only if it is as fast or faster AND
gives the same verdicts, ``format`` included (the project asserts ``date``, ``ipv4``, ``ipv6``
and ``uuid``, as ``jsonschema``'s default format checker does; ``uri`` is not checked there).

How: one bundled run of the suite (``conformance run -n 0``) records every exchange
(:mod:`bench.body_recorder`); each JSON request body is paired with its operation's request
schema, each JSON answer with the schema of its status. For every pair, three verdicts:
``jsonschema`` (the reference), the compiled check, and jsonschema-rs (``validate_formats``,
the contract's type files as its registry), with ``uri`` unchecked like the project's (and
the count of answers that differ when jsonschema-rs checks it too). Then the time of all
checks, each way, best of ``BENCH_VALIDATOR_REPEAT`` (default 5) passes; and the time to
build the checks of every schema once. Needs ``jsonschema-rs`` installed (``pip install
jsonschema-rs``); it is not a dependency of the project.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.body_recorder import ENV_FILE
from conformance.contract import Contract, load_contract

_ROOT = Path(__file__).resolve().parent.parent

Pair = tuple[int, Any]
"""A schema (by its index in the list of schemas) and an instance."""

#: Instances no run of the suite sends, where the two regular-expression dialects part: the
#: contract's own patterns (a national identity number, an amount) with a trailing newline,
#: which Python's ``re.search`` (``jsonschema``'s, and so the project's) lets ``$`` match
#: before and ECMA-262's (jsonschema-rs's) does not; and ``\d``/``\w``, Unicode in Python,
#: ASCII in ECMA-262.
EDGES: tuple[tuple[dict[str, Any], str], ...] = (
    ({"pattern": "^[0-9]{11}$"}, "12345678903\n"),
    ({"pattern": "^[0-9]{1,13}(?:\\.[0-9]{1,5})?$"}, "10.00\n"),
    ({"pattern": "^\\d+$"}, "\u0663"),
    ({"pattern": "^\\w+$"}, "\u00f8"),
)


def record_run(target: Path) -> None:
    """A bundled run of the whole suite in one process, every exchange written to ``target``."""
    with tempfile.TemporaryDirectory(prefix="bench-validator-") as reports:
        command = [sys.executable, "-m", "conformance", "run", "-n", "0", "--reports", reports]
        command += ["--", "-p", "bench.body_recorder", "-q"]
        env = {**os.environ, ENV_FILE: str(target)}
        done = subprocess.run(command, cwd=_ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"validator: the recording run failed:\n{done.stdout[-2000:]}")


def _json(encoded: str) -> tuple[bool, Any]:
    raw = base64.b64decode(encoded)
    if not raw:
        return False, None
    try:
        return True, json.loads(raw)
    except ValueError:
        return False, None


def pairs_of(contract: Contract, records: Iterable[dict[str, Any]]) -> tuple[list[Any], list[Pair]]:
    """The schemas met and every (schema, instance) pair of the recorded exchanges."""
    schemas: list[Any] = []
    index: dict[int, int] = {}
    pairs: list[Pair] = []

    def add(schema: Any, instance: Any) -> None:
        if id(schema) not in index:
            index[id(schema)] = len(schemas)
            schemas.append(schema)
        pairs.append((index[id(schema)], instance))

    for record in records:
        matched = contract.match(record["method"], record["path"].split("?", 1)[0])
        if matched is None:
            continue
        operation, _ = matched
        present, body = _json(record["request"])
        if present and operation.request_schema is not None:
            add(operation.request_schema, body)
        present, answer = _json(record["response"])
        response = operation.responses.get(record["status"])
        if present and response is not None and response.schema is not None:
            add(response.schema, answer)
    return schemas, pairs


def rust_validators(
    contract: Contract, schemas: list[Any], *, uri: bool
) -> list[Callable[[Any], bool]]:
    """jsonschema-rs validators of ``schemas``, the contract's type files as the registry."""
    import jsonschema_rs

    registry = jsonschema_rs.Registry(
        [(document["$id"], dict(document)) for document in contract.types.values()]
    )
    formats = None if uri else {"uri": lambda value: True}
    return [
        jsonschema_rs.Draft202012Validator(
            schema, validate_formats=True, registry=registry, formats=formats
        ).is_valid
        for schema in schemas
    ]


def _timed(checks: list[Callable[[Any], bool]], pairs: list[Pair], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for schema, instance in pairs:
            checks[schema](instance)
        best = min(best, time.perf_counter() - started)
    return best


@dataclass
class _Verdicts:
    """How the verdicts of the compiled checks and of jsonschema-rs (uri unchecked, and checked)
    compare with jsonschema's on the recorded instances, with the first instances that differ
    in jsonschema-rs."""

    valid: int = 0
    differ_compiled: int = 0
    differ_rust: int = 0
    differ_uri: int = 0
    examples: list[str] = field(default_factory=list)


def _compare(
    pairs: list[Pair],
    reference: list[Callable[[Any], bool]],
    compiled: list[Callable[[Any], bool]],
    rust: list[Callable[[Any], bool]],
    rust_uri: list[Callable[[Any], bool]],
) -> _Verdicts:
    verdicts = _Verdicts()
    for schema, instance in pairs:
        expected = reference[schema](instance)
        verdicts.valid += expected
        if compiled[schema](instance) is not expected:
            verdicts.differ_compiled += 1
        if rust[schema](instance) is not expected:
            verdicts.differ_rust += 1
            if len(verdicts.examples) < 3:
                verdicts.examples.append(json.dumps(instance)[:200])
        if rust_uri[schema](instance) is not expected:
            verdicts.differ_uri += 1
    return verdicts


def _edges(contract: Contract) -> tuple[list[str], int]:
    """The edge instances where jsonschema-rs differs from jsonschema (in words), and how many
    the compiled checks get wrong."""
    edges = []
    differ_compiled = 0
    for schema, instance in EDGES:
        expected = contract.validator(schema).is_valid(instance)
        if contract.checker(schema)(instance) is not expected:
            differ_compiled += 1
        if rust_validators(contract, [schema], uri=False)[0](instance) is not expected:
            edges.append(f"{schema['pattern']} on {instance!r}: jsonschema says {expected}")
    return edges, differ_compiled


def _decision(compiled_seconds: float, rust_seconds: float, differ_rust: int) -> str:
    """jsonschema-rs replaces the compiler only when it is as fast and gives equal verdicts."""
    faster = rust_seconds <= compiled_seconds
    equal = differ_rust == 0
    if faster and equal:
        return "jsonschema-rs would replace the compiler"
    return "the compiler stays: jsonschema-rs is " + " and ".join(
        part
        for part, applies in (
            (f"{rust_seconds / compiled_seconds:.2f}x its time", not faster),
            (f"different on {differ_rust} instance(s)", not equal),
        )
        if applies
    )


def main() -> None:
    try:
        import jsonschema_rs  # noqa: F401
    except ImportError:
        print("validator: skipped, jsonschema-rs is not installed (pip install jsonschema-rs)")
        return
    repeat = int(os.environ.get("BENCH_VALIDATOR_REPEAT", "5"))
    contract = load_contract()
    with tempfile.TemporaryDirectory(prefix="bench-validator-") as folder:
        target = Path(folder) / "exchanges.jsonl"
        record_run(target)
        records = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    schemas, pairs = pairs_of(contract, records)
    started = time.perf_counter()
    compiled = [contract.checker(schema) for schema in schemas]
    compile_seconds = time.perf_counter() - started
    started = time.perf_counter()
    rust = rust_validators(contract, schemas, uri=False)
    rust_build_seconds = time.perf_counter() - started
    rust_uri = rust_validators(contract, schemas, uri=True)
    reference = [contract.validator(schema).is_valid for schema in schemas]
    verdicts = _compare(pairs, reference, compiled, rust, rust_uri)
    edges, edges_compiled = _edges(contract)
    verdicts.differ_compiled += edges_compiled
    compiled_seconds = _timed(compiled, pairs, repeat)
    rust_seconds = _timed(rust, pairs, repeat)
    count = len(pairs)
    print(
        f"{count} instances ({verdicts.valid} valid by jsonschema) over {len(schemas)} schemas, "
        f"from {len(records)} recorded exchanges of a bundled run"
    )
    print(
        f"compiled checks   {compiled_seconds * 1e3:8.1f} ms  "
        f"{compiled_seconds / count * 1e6:6.2f} us/instance  "
        f"(built in {compile_seconds * 1e3:.0f} ms); verdicts differing from "
        f"jsonschema: {verdicts.differ_compiled}"
    )
    print(
        f"jsonschema-rs     {rust_seconds * 1e3:8.1f} ms  "
        f"{rust_seconds / count * 1e6:6.2f} us/instance  "
        f"(built in {rust_build_seconds * 1e3:.0f} ms); verdicts differing from "
        f"jsonschema: {verdicts.differ_rust} (with uri checked too: {verdicts.differ_uri})"
    )
    for example in verdicts.examples:
        print(f"  differs: {example}")
    print(
        f"edge instances (no run sends them): jsonschema-rs differs on {len(edges)} of "
        f"{len(EDGES)}, the compiled checks on none"
    )
    for edge in edges:
        print(f"  differs: {edge}")
    decision = _decision(compiled_seconds, rust_seconds, verdicts.differ_rust + len(edges))
    print(
        f"validator: jsonschema-rs takes {rust_seconds / compiled_seconds:.2f}x the compiled "
        f"checks' time (best of {repeat}); {decision}"
    )


if __name__ == "__main__":
    main()
