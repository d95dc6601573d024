"""The ``conformance`` command line.

Each sub-command lives in its own module under ``conformance.commands`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a callable taking the parsed
arguments and returning the exit code. A :class:`~conformance.errors.ConformanceError` raised by a
command becomes one line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from conformance import __version__
from conformance.errors import ConformanceError

#: Sub-command modules, in the order ``--help`` lists them.
COMMANDS: tuple[str, ...] = (
    "run",
    "report",
    "selfcheck",
    "call",
    "certs",
    "serve",
    "export_openapi",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Conformance suite for the PSD2-style open-banking interface (spec 1.22.0).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"conformance.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ConformanceError as error:
        print(f"conformance: {error.message}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("conformance: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
