"""``conformance compare OLD NEW``: what changed between two runs, as Markdown; exit 1 when a
scenario newly fails."""

from __future__ import annotations

import argparse
from pathlib import Path

from conformance.commands import COMMANDS, Subparsers
from conformance.report.compare import compare_runs, load_run, render_comparison


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "compare",
        help=COMMANDS["compare"],
        description=(
            "Compare two runs (each a compliance.json or the reports directory holding it): "
            "newly failing and newly passing scenarios, other verdict changes, changed findings, "
            "added and removed scenarios. Prints Markdown (for a CI comment); exit 1 when a "
            "scenario newly fails (failed or error), else 0."
        ),
    )
    parser.add_argument("old", type=Path, metavar="OLD", help="the earlier run")
    parser.add_argument("new", type=Path, metavar="NEW", help="the later run")
    parser.add_argument("--out", type=Path, metavar="FILE", help="also write the Markdown to FILE")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    comparison = compare_runs(load_run(args.old), load_run(args.new))
    text = render_comparison(comparison, str(args.old), str(args.new))
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return 1 if comparison.regressed else 0
