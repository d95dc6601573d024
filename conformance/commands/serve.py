"""``conformance serve``: run the bundled reference server (same options as
``python -m reference_server``), a local sandbox to develop a TPP against or to point the suite at.
"""

from __future__ import annotations

from conformance.commands import COMMANDS, Subparsers

__all__ = ["register"]


def register(subparsers: Subparsers) -> None:
    # on use: `conformance --help` lists this command without loading the server
    from reference_server.cli import add_arguments, run

    parser = subparsers.add_parser(
        "serve",
        help=COMMANDS["serve"],
        description="Run the reference server of the interface on the standard library's "
        "http.server; prints the URL it listens on.",
    )
    add_arguments(parser)
    parser.set_defaults(func=run)
