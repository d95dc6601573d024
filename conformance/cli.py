"""The ``conformance`` command line: parses the sub-command and runs it; a
:class:`~conformance.errors.ConformanceError` becomes one line and a non-zero exit.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from conformance import __version__
from conformance.commands import COMMANDS
from conformance.errors import INTERRUPTED_EXIT, ConformanceError


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with the full sub-parser of the command ``argv`` names and a one-line entry
    for each other command (enough for ``--help`` and for argparse's "invalid choice").

    Only the chosen command's module is imported: the modules together import the signed client,
    the certificate tools, the OpenAPI export and the self-check, ~0.2 s of start-up that
    ``conformance run`` (which imports pytest and the plugin anyway) or ``conformance serve``
    would otherwise pay on every invocation.
    """
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Conformance suite for the PSD2-style open-banking interface (spec 1.22.0).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = _chosen_command(sys.argv[1:] if argv is None else argv)
    for name, summary in COMMANDS.items():
        if name == chosen:
            module = importlib.import_module(f"conformance.commands.{name.replace('-', '_')}")
            module.register(subparsers)
        else:
            subparsers.add_parser(name, help=summary)
    return parser


def _chosen_command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names: its first word that is not an option (the top-level options,
    ``-h`` and ``--version``, take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ConformanceError as error:
        print(f"conformance: {error.message}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt as interrupt:
        said = str(interrupt)
        print(f"conformance: interrupted{f' ({said})' if said else ''}", file=sys.stderr)
        return INTERRUPTED_EXIT


if __name__ == "__main__":
    sys.exit(main())
