"""``conformance export-examples``: a valid request for every operation that takes a body, one JSON
file each (``schemas/examples/<op id>.json``), to start from with ``conformance call --example``.

Each file holds the operation, its spec part, method and path, the headers spec 4.2 requires of it
(the signer adds Digest, Signature and TPP-Signature-Certificate, spec 5) and a body built by the
suite's own factories, so it is valid against the operation's schema and cross-field rules (a
test checks every file). Ids of resources that must exist first (a sandbox account, the payments
of a basket) are placeholders in the path, or made-up UUIDs in the body: replace them with real
ones. ``conformance call --example`` moves dates that have passed since the files were written a
whole number of years ahead, so an example never goes stale.
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from conformance._data import data_directory
from conformance.bankside.request import Psu, standard_headers
from conformance.commands import COMMANDS
from conformance.contract import Contract, load_contract
from conformance.contract.identifiers import bban_to_iban, generate_bban, generate_masked_pan
from conformance.generate import factories
from conformance.profile import TargetProfile

__all__ = ["EXAMPLE_SEED", "example_directory", "example_request", "register", "run"]

#: The seed every example is drawn with (the files do not change between exports on one day).
EXAMPLE_SEED = 20261125
_PSU_ID = "6f2c0a4e-0b8e-4b36-9d7a-1c0f6ad1f001"
_SESSION_ID = "8b7f3a1e-4c2d-4e5f-9a6b-0c1d2e3f4a5b"


def example_directory() -> Path:
    """Where the examples live: ``schemas/examples`` of the checkout or the installed package."""
    return data_directory("schemas") / "examples"


def _bodies(today: date) -> dict[str, Callable[[], Any]]:
    rng = random.Random(EXAMPLE_SEED)
    bban = generate_bban(rng)
    account = {"iban": bban_to_iban(bban), "bban": bban, "currency": "NOK"}
    return {
        "E1": lambda: factories.signing_basket(
            str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(2)
        ),
        "E5": lambda: factories.sandbox_card_transactions(
            EXAMPLE_SEED, generate_masked_pan(rng), 1, today=today
        ),
        "E6": lambda: factories.sandbox_engagement(EXAMPLE_SEED, _PSU_ID, account["iban"]),
        "E7": lambda: factories.sandbox_account_transactions(EXAMPLE_SEED, account, 1, today=today),
        "E15": lambda: factories.balance_update(EXAMPLE_SEED, "NOK"),
        "E16": lambda: factories.ndct_payment(EXAMPLE_SEED),
        "E17": lambda: factories.periodic_payment(EXAMPLE_SEED, today=today),
        "E18": lambda: factories.ncbct_payment(EXAMPLE_SEED),
        "CC": lambda: factories.consent_request(EXAMPLE_SEED, [account["iban"]]),
        "SA": lambda: factories.sandbox_account_create(EXAMPLE_SEED, "31000001"),
        "SAG": lambda: factories.sandbox_agreement_create(EXAMPLE_SEED, None),
        "SCA": lambda: factories.sandbox_card_account_create(EXAMPLE_SEED, "31000001"),
        "SCU": lambda: factories.sandbox_customer_create(EXAMPLE_SEED),
    }


def example_request(contract: Contract, op_id: str, today: date) -> dict[str, Any]:
    """The example of ``op_id``: operation, name, spec, method, path, headers and body."""
    operation = contract.operations[op_id]
    profile = TargetProfile(name="example", base_url="http://example.invalid")
    headers = standard_headers(operation, profile, Psu(psu_id=_PSU_ID))
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
        "body": _bodies(today)[op_id](),
    }


def example_operations(contract: Contract) -> list[str]:
    """The operations that take a body (and so have an example)."""
    return [op.id for op in contract.operations.values() if op.request_schema is not None]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
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
