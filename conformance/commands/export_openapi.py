"""``conformance export-openapi``: write (or ``--check``) the OpenAPI 3.1 export of the contract."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.commands import COMMANDS, Subparsers
from conformance.contract import load_contract
from conformance.contract.openapi import render_openapi
from conformance.errors import ConformanceError

OUTPUT_NAME = "openapi.json"


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "export-openapi",
        help=COMMANDS["export-openapi"],
        description=(
            "Generate the OpenAPI 3.1 export of the contract in schemas/ (deterministic output). "
            f"Without --out it goes to {OUTPUT_NAME} inside the contract directory."
        ),
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="PATH",
        help=f"where to write (default: schemas/{OUTPUT_NAME} of the contract)",
    )
    parser.add_argument(
        "--schemas",
        type=Path,
        default=None,
        metavar="DIR",
        help="contract directory (default: $CONFORMANCE_SCHEMAS or the checkout's schemas/)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the file differs from the generated document",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    contract = load_contract(args.schemas)
    out: Path = args.out if args.out is not None else contract.root / OUTPUT_NAME
    text = render_openapi(contract)
    if args.check:
        current = out.read_text(encoding="utf-8") if out.is_file() else None
        if current != text:
            state = "is missing" if current is None else "is out of date"
            print(f"{out} {state}: run `conformance export-openapi`", file=sys.stderr)
            return 1
        print(f"{out} is up to date")
        return 0
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as error:
        # An installed wheel's contract lives in site-packages, which may not be writable.
        raise ConformanceError(
            f"cannot write {out}: {error.strerror or error}; name another file with --out"
        ) from None
    print(f"wrote {out}")
    return 0
