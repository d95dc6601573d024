"""``conformance verify DIR``: check a sealed record (``conformance run --seal``): the seal and
its certificate chain, every file's digest, and every exchange judged again."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.commands import COMMANDS, Subparsers
from conformance.errors import ConformanceError

if TYPE_CHECKING:
    from cryptography import x509

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
        "sealed verdict line, the record's own eligibility and its scope. The chain is validated "
        "at the time of verification (RFC 5280: CAs above the seal's certificate, key usage, "
        "validity now, not at the sealer's sealed_at), or at the time of the record's RFC 3161 "
        "time-stamp token (run --tsa) when --tsa-trust names its authority's CA. With --policy, "
        "the record's eligibility "
        "is recomputed from what it sealed and the certifier's policy. Exit 0 when all holds and "
        "the chain leads to a --trust CA (VERIFIED), 1 with a line per difference or per reason "
        "the policy refuses it, 3 when nothing differs but who sealed the record could not be "
        "established (no --trust).",
    )
    parser.add_argument("folder", type=Path, metavar="DIR", help="the evidence folder")
    parser.add_argument(
        "--trust",
        type=Path,
        action="append",
        default=[],
        metavar="CA.pem",
        help="a CA the seal's chain must lead to (repeatable); without it the chain is checked "
        "within itself only, who sealed the record is not established, and verify never says "
        "VERIFIED (exit 3)",
    )
    parser.add_argument(
        "--crl",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="a certificate revocation list (PEM or DER, repeatable), signed by a CA of the "
        "chain or --trust: a seal certificate it names is a difference; without it revocation "
        "is not checked, and the report says so",
    )
    parser.add_argument(
        "--tsa-trust",
        type=Path,
        action="append",
        default=[],
        metavar="TSA-CA.pem",
        help="a CA of the time-stamping authorities you trust (repeatable): the record's "
        "timestamp.tsr must verify over its seal and lead to one, and the seal's chain is then "
        "validated at the token's time; a record without a token is a difference. Without it a "
        "token is checked within itself only and its time is not used",
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
            folder,
            trust=load_trust(args.trust),
            profile=args.profile,
            previous=args.previous,
            crls=_load_crls(args.crl),
            tsa_trust=load_trust(args.tsa_trust),
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
    refused = _under_policy(folder, policy) if result.consistent else False
    if result.verified:
        print(
            f"VERIFIED: the seal, every file and {result.rejudged} exchanges judged again agree"
            + ("; NOT ELIGIBLE under the policy (above)" if refused else "")
        )
        return 1 if refused else 0
    if not result.consistent:
        print(f"NOT VERIFIED: {len(result.problems)} difference(s)")
        return 1
    for what in result.unestablished:
        print(f"NOT ESTABLISHED {what}")
    print(
        f"NOT VERIFIED: the seal, every file and {result.rejudged} exchanges judged again agree "
        "with each other, but the record is not established as its sealer's"
    )
    return 3


def _load_crls(paths: list[Path]) -> tuple[x509.CertificateRevocationList, ...]:
    """The revocation list of each file (PEM or DER); one line when one cannot be read."""
    from cryptography import x509

    lists: list[x509.CertificateRevocationList] = []
    for path in paths:
        try:
            data = path.read_bytes()
            lists.append(
                x509.load_pem_x509_crl(data)
                if b"-----BEGIN" in data
                else x509.load_der_x509_crl(data)
            )
        except (OSError, ValueError) as error:
            raise ConformanceError(f"--crl {path} is not a revocation list: {error}") from None
    return tuple(lists)


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
