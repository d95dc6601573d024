"""``conformance verify DIR``: check a sealed record (``conformance run --seal``): the seal and
its certificate chain, every file's digest, and every exchange judged again."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.commands import COMMANDS, Subparsers
from conformance.errors import ConformanceError

if TYPE_CHECKING:
    from conformance.evidence.policy import Policy

__all__ = ["register"]


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "verify",
        help=COMMANDS["verify"],
        description="Check a sealed record of a run (conformance run --seal writes "
        "<reports>/evidence/): the detached JWS seal over manifest.json and its certificate "
        "chain (x5c), each file against its sealed digest and no file added, the scenario "
        "verdicts of verdicts.json against compliance.json, and the traffic judge's verdict on "
        "every kept exchange recomputed and compared with the sealed one; then it restates the "
        "sealed verdict line, the record's own eligibility and its scope. With --policy, the "
        "record's eligibility is recomputed from what it sealed and the certifier's policy. Exit 0 "
        "when all holds, 1 with a line per difference or per reason the policy refuses it.",
    )
    parser.add_argument("folder", type=Path, metavar="DIR", help="the evidence folder")
    parser.add_argument(
        "--trust",
        type=Path,
        action="append",
        default=[],
        metavar="CA.pem",
        help="a CA the seal's chain must lead to (repeatable); without it the chain is checked "
        "within itself only, and the report says so",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="the sealed profile, when the copy in the record names files not kept beside it "
        "(its digest must be the sealed one)",
    )
    parser.add_argument(
        "--previous",
        type=Path,
        metavar="DIR",
        help="the record this one should follow: its digest must be the one this one names",
    )
    parser.add_argument(
        "--policy",
        type=Path,
        metavar="POLICY.toml",
        help="the certifier's policy: the suite releases accepted (by release manifest digest), "
        "the operations and products that must be in scope, the least share of must scenarios "
        "judged, the longest age of a record; eligibility is then recomputed from the sealed "
        "record and the policy, never taken from the record (docs/guides/certify-with-evidence.md)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from conformance.evidence.policy import load_policy
    from conformance.evidence.verify import verify_record
    from conformance.traffic.options import load_trust

    folder: Path = args.folder
    if not folder.is_dir():
        raise ConformanceError(f"{folder} is not a folder")
    policy = None if args.policy is None else load_policy(args.policy)
    try:
        result = verify_record(
            folder, trust=load_trust(args.trust), profile=args.profile, previous=args.previous
        )
    except ConformanceError as error:
        if "does not exist" in error.message and args.profile is None:
            raise ConformanceError(
                f"{error.message}; give the sealed profile with --profile FILE"
            ) from None
        raise
    print(
        f"record {result.record}" + (f", sealed by {result.sealed_by}" if result.sealed_by else "")
    )
    for note in result.notes:
        print(f"note: {note}")
    for problem in result.problems:
        print(f"DIFFERS {problem}")
    refused = _under_policy(folder, policy) if result.verified else False
    if result.verified:
        print(
            f"VERIFIED: the seal, every file and {result.rejudged} exchanges judged again agree"
            + ("; NOT ELIGIBLE under the policy (above)" if refused else "")
        )
        return 1 if refused else 0
    print(f"NOT VERIFIED: {len(result.problems)} difference(s)")
    return 1


def _under_policy(folder: Path, policy: Policy | None) -> bool:
    """Restate what the verified record concludes (its verdict line, its eligibility, its
    scope), then what it is under the certifier's policy, or which checks were not made without
    one; whether the policy refuses it."""
    from conformance.evidence.policy import (
        POLICY_CHECKS,
        policy_of_record,
        read_record,
        record_lines,
    )

    compliance, _ = read_record(folder)
    for line in record_lines(compliance):
        print(line)
    if policy is None:
        print(
            "note: no --policy: not checked whether "
            + "; whether ".join(POLICY_CHECKS.values())
            + " (the record's own eligibility is the bank's claim)"
        )
        return False
    judged = policy_of_record(folder, policy)
    for check in judged.not_checked:
        print(f"note: the policy {policy.source} does not check whether {check}")
    print(judged.line())
    return not judged.eligible
