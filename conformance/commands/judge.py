"""``conformance judge FILE``: judge recorded traffic (a HAR file, or the reference server's
``--exchange-log``) as ``conformance proxy`` judges live traffic, and write the same reports."""

from __future__ import annotations

import argparse
from pathlib import Path

from conformance.commands import COMMANDS, Subparsers
from conformance.errors import ConformanceError

__all__ = ["register"]


def register(subparsers: Subparsers) -> None:
    # on use: the judge imports the contract and the report writers
    from conformance.traffic.options import add_judge_arguments

    parser = subparsers.add_parser(
        "judge",
        help=COMMANDS["judge"],
        description="Judge recorded traffic between a TPP and a bank: every exchange of a HAR "
        "file (HAR 1.2: browser devtools, mitmproxy, API gateways) or of the reference server's "
        "--exchange-log, the request against spec 4.2/5 and its schema and rules, the answer "
        "against its operation, and what the state of earlier exchanges allows. Each finding "
        "names the side that broke the rule (TPP or bank). Exit 1 on a must finding; 3 when "
        "no exchange of the interface was judged, or the judge failed on one.",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="a .har file or an exchange log")
    add_judge_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from conformance.profile import load_profile, profile_from_options
    from conformance.traffic.exchange_log import looks_like_exchange_log, read_exchange_log
    from conformance.traffic.har import read_har
    from conformance.traffic.options import finish, judge_for
    from conformance.traffic.session import TrafficSession

    path: Path = args.file
    if path.is_dir():
        raise ConformanceError(f"{path} is a folder: give a .har file or an exchange log")
    if not path.is_file():
        raise ConformanceError(f"{path} does not exist")
    with path.open(encoding="utf-8-sig", errors="replace") as stream:
        first = stream.readline()
    if looks_like_exchange_log(first):
        exchanges, kind = list(read_exchange_log(path)), "reference server exchange log"
    else:
        exchanges, kind = list(read_har(path)), "HAR"
    target = exchanges[0][0].base_url if exchanges else "http://recorded.invalid"
    # Without a profile, the contract's own choices, and a target's secrets masked as in a run.
    profile = (
        load_profile(args.profile)
        if args.profile is not None
        else profile_from_options(target=target)
    )
    session = TrafficSession(judge_for(profile, args.trust), quiet=args.quiet)
    session.take_all(exchanges)
    return finish(session, args.reports, source=f"{kind} {path}", target=target, profile=profile)
