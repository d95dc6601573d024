"""``conformance discover``: probe a bank with signed requests and write a draft profile of it,
each key with the exchange that decided it (``conformance.discover``); ``--check FILE`` probes
again and lists where the bank now differs from that profile (exit 1)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.commands import COMMANDS, Subparsers
from conformance.commands.run import add_target_arguments, add_tls_arguments
from conformance.errors import ProfileError, TargetError

__all__ = ["register"]

_DESCRIPTION = """\
Probe a bank's implementation of the interface with signed requests and write a draft profile:
its base path, which operations exist, the NCBCT product id and periodic service paths, where
SCA starts and how it is done, the consent model, headers its gateway demands, the fields its
sandbox creations require beyond the suite's, its required header sets and the names of AT's
date parameters. A refusal that names a header or a body field teaches it (sent again with it).
Every key written carries a comment with the exchange that decided it; a key it could not decide
is written commented out, with the default and why; a break of a stated rule is a finding, never
a key. What a probe made (a payment, a consent) is taken away again. With --check FILE it probes
again and lists where the bank now answers otherwise than FILE says (exit 1 when it does; 3 when
the bank refused the probes: not checked)."""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "discover",
        help=COMMANDS["discover"],
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_target_arguments(
        parser,
        target="the bank's base URL (before /v1)",
        profile="a base profile: what you know already (certificates, PSUs, [oauth], "
        "[headers]); its keys stay in the draft",
    )
    add_tls_arguments(parser)
    parser.add_argument(
        "--out", metavar="FILE", type=Path, help="where the draft goes (default: bank.toml)"
    )
    parser.add_argument(
        "--force", action="store_true", help="write --out even where a file of that name exists"
    )
    parser.add_argument(
        "--check",
        metavar="FILE",
        type=Path,
        help="probe again and list where the bank differs from this profile (exit 1 if it does)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from conformance.contract import load_contract
    from conformance.discover.check import differences
    from conformance.discover.draft import shown, write_draft
    from conformance.discover.session import discover
    from conformance.profile import profile_from_options

    if args.check is not None and (args.profile is not None or args.out is not None):
        raise ProfileError("--check FILE takes the profile to check; give no --profile or --out")
    out: Path = args.out or Path("bank.toml")
    if args.check is None and out.exists() and not args.force:
        raise ProfileError(
            f"--out {out}: the file exists; give another --out, or --force to write over it"
        )
    given = args.check if args.check is not None else args.profile
    if args.target is None and given is None:
        raise ProfileError("give the bank's base URL with --target (or a profile naming it)")
    profile = profile_from_options(
        target=args.target, profile=None if given is None else str(given), cert=args.cert,
        key=args.key, tls_cert=args.tls_cert, tls_key=args.tls_key, tls_ca=args.tls_ca,
    )  # fmt: skip
    contract = load_contract()
    found = discover(profile, contract=contract)
    for decision in found.decisions:
        if decision.is_decided:
            print(f"decided   {decision.name} = {shown(decision.value)}")
        else:
            print(f"undecided {decision.name}: {decision.why}")
    for line in found.findings:
        print(f"finding   {line}")
    print(found.cleanup_line())
    for note in found.notes:
        print(f"  kept: {note}")
    if args.check is not None:
        return _report_check(found.stopped, differences(found, profile, contract), args.check)
    folder = write_draft(
        found, out, contract, base=profile if args.profile else None, base_data=_base_data(args)
    )
    print(f"draft written to {out}" + (f" (set-up templates in {folder})" if folder else ""))
    if found.stopped:
        raise TargetError(
            f"discover: {found.stopped}; the draft {out} says what could not be decided"
        )
    return 0


#: The options naming a file, and the profile key each is written into the draft as.
_IDENTITY_OPTIONS = (
    ("cert", "certificate"), ("key", "key"), ("tls_cert", "tls_certificate"),
    ("tls_key", "tls_key"), ("tls_ca", "ca_certificate"),
)  # fmt: skip


def _base_data(args: argparse.Namespace) -> dict[str, Any]:
    """The draft's keys before discovery's: the base profile's (its paths made absolute), and
    the certificates and keys given on the command line (absolute paths), so that the draft
    signs as discovery did (issue 42)."""
    from conformance.discover.draft import absolute_paths
    from conformance.profile import profile_data

    data: dict[str, Any] = {}
    if args.profile is not None:
        data = profile_data(args.profile)  # with the keys of the profiles it extends
        absolute_paths(data, Path(args.profile).resolve().parent)
    given: dict[str, str] = {}
    for option, key in _IDENTITY_OPTIONS:
        value = getattr(args, option, None)
        if value is not None:
            given[key] = str(Path(value).resolve())
    for certificate, key in (("certificate", "key"), ("tls_certificate", "tls_key")):
        if certificate in given and key not in given:
            data.pop(key, None)  # the key is in the certificate's file
    data.update(given)
    return data


def _report_check(stopped: str | None, lines: list[str], checked: Path) -> int:
    if stopped:
        raise TargetError(
            f"discover --check: not checked: {stopped}; nothing of {checked} was compared"
        )
    if not lines:
        print(f"the bank answers as {checked} says")
        return 0
    print(f"the bank differs from {checked} in {len(lines)} key(s):", file=sys.stderr)
    for line in lines:
        print(f"  {line}", file=sys.stderr)
    return 1
