"""``conformance export-examples``: a valid request for every operation, one JSON file each
(``schemas/examples/<op id>.json``), to start from with ``conformance call --example``.

Each file holds the operation, its spec part, method and path, the headers spec 4.2 requires of it
(the signer adds Digest, Signature and TPP-Signature-Certificate, spec 5) and the example body of
the operation's home (``null`` for an operation without a body: its example is the headers and
the path) (``conformance.operations``, made by the suite's own factories), so
it is valid against the operation's schema and cross-field rules (a test checks every file). Ids
of resources that must exist first (a sandbox account, the payments of a basket) are placeholders
in the path, or made-up UUIDs in the body: replace them with real ones. ``conformance call
--example`` moves dates that have passed since the files were written a whole number of years
ahead, so an example never goes stale.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from conformance._data import data_directory
from conformance.bankside.request import Psu, standard_headers
from conformance.commands import COMMANDS, Subparsers
from conformance.contract import Contract, load_contract
from conformance.operations import parts_of
from conformance.operations.parts import EXAMPLE_SEED, ExampleInputs
from conformance.profile import TargetProfile

__all__ = [
    "EXAMPLE_SEED",
    "example_directory",
    "example_operations",
    "example_request",
    "register",
    "run",
]

_SESSION_ID = "8b7f3a1e-4c2d-4e5f-9a6b-0c1d2e3f4a5b"


def example_directory() -> Path:
    """Where the examples live: ``schemas/examples`` of the checkout or the installed package."""
    return data_directory("schemas") / "examples"


def example_request(contract: Contract, op_id: str, today: date) -> dict[str, Any]:
    """The example of ``op_id``: operation, name, spec, method, path, headers and body."""
    operation = contract.operations[op_id]
    inputs = ExampleInputs(today=today)
    profile = TargetProfile(name="example", base_url="http://example.invalid")
    headers = standard_headers(operation, profile, Psu(psu_id=inputs.psu_id))
    if "TPP-Session-ID" in headers:
        headers["TPP-Session-ID"] = _SESSION_ID
    return {
        "operation": op_id,
        "name": operation.name,
        "spec": operation.spec,
        "method": operation.method,
        "path": operation.path
        if {p.name for p in operation.path_parameters} - set(operation.fixed_path_values)
        else operation.render_path(),
        "headers": headers,
        "body": parts_of(op_id).example(inputs) if operation.request_schema is not None else None,
    }


def example_operations(contract: Contract) -> list[str]:
    """Every operation (one without a body has an example too: its headers and path)."""
    return list(contract.operations)


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "export-examples",
        help=COMMANDS["export-examples"],
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument(
        "--output",
        metavar="DIR",
        help="where the files go (default: schemas/examples of this checkout)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    contract = load_contract()
    folder = Path(args.output) if args.output else example_directory()
    folder.mkdir(parents=True, exist_ok=True)
    today = datetime.now(UTC).date()
    for op_id in example_operations(contract):
        path = folder / f"{op_id}.json"
        document = example_request(contract, op_id, today)
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"conformance: {len(example_operations(contract))} examples written to {folder}/")
    return 0
