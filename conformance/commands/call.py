"""``conformance call``: send one request signed like the suite signs it, and show the exchange
(headers with curl's ``-H`` conventions; exit 0 whenever an exchange happened).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from collections.abc import Iterator, Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from conformance.bankside.client import TargetClient
from conformance.commands import COMMANDS, Subparsers
from conformance.commands.export_examples import example_directory
from conformance.commands.run import add_target_arguments, add_tls_arguments
from conformance.errors import ConformanceError
from conformance.profile import profile_from_options
from conformance.report.replays import load_values, masked_parts, unmasked

if TYPE_CHECKING:
    from conformance.exchange import Exchange
    from conformance.scenario import Scenario

__all__ = ["add_arguments", "fresh_dates", "parse_header", "register", "run"]

#: RFC 9110 5.1: a field name is a token.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")

_DESCRIPTION = """\
Send one request to the target, signed like the suite signs it (spec 5), and print the request
(with its signing string) and the response. -H 'Name: value' sets a header, -H 'Name:' removes a
default header (X-Request-ID, Accept, Content-Type), -H 'Name;' sends an empty value. Exit code 0
whenever the exchange happened, whatever the HTTP status; with --scenario ID the answer is judged
as the run judged it, and "still breaks" exits 1, "now holds" 0. A replay line a report printed
with masked values (PSU-ID: ***6d93) is sent with the run's values put back by --values FILE
(reports/replay-values.jsonl, kept on the machine of the run, or of conformance proxy or judge);
a masked value left is an error."""


def register(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "call",
        help=COMMANDS["call"],
        description=_DESCRIPTION,
    )
    add_arguments(parser)
    parser.set_defaults(func=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``call`` (separate so that tests can parse a reproduce command)."""
    parser.add_argument("method", metavar="METHOD", nargs="?", help="HTTP method, e.g. GET, POST")
    parser.add_argument(
        "path",
        metavar="PATH",
        nargs="?",
        help="path relative to the target, with its query (/v1/payments/...?allowLogicalDuplicate="
        "true); a full http(s) URL also names the target",
    )
    parser.add_argument(
        "--example",
        metavar="OP",
        help="send the example request of operation OP (E16, CC, ...: conformance "
        "export-examples): its method, path, headers and body, under -H, --data and a PATH "
        "given (needed where its path names a resource)",
    )
    add_target_arguments(
        parser, "target", "profile", target="base URL of the target (overrides the profile)"
    )
    body = parser.add_mutually_exclusive_group()
    body.add_argument(
        "--data", metavar="FILE", help="send the bytes of FILE as the body ('-': stdin)"
    )
    body.add_argument("--data-json", metavar="JSON", help="send this text as the body, as given")
    parser.add_argument(
        "-H",
        "--header",
        dest="headers",
        metavar="'Name: value'",
        action="append",
        default=[],
        help="request header; repeatable; 'Name:' removes a default, 'Name;' sends it empty",
    )
    add_target_arguments(parser, "cert", "key")
    add_tls_arguments(parser)
    parser.add_argument(
        "--digest",
        choices=("sha-256", "sha-512"),
        default="sha-256",
        type=str.lower,
        help="Digest algorithm (spec 5.4; default sha-256)",
    )
    parser.add_argument(
        "--no-sign",
        action="store_true",
        help="send no Digest, Signature or TPP-Signature-Certificate (give them with -H to replay)",
    )
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="overrides the profile's")
    parser.add_argument(
        "--scenario",
        metavar="ID",
        help="judge the answer against scenario ID's requirement as the run did, and say "
        "whether it still breaks (exit 1) or now holds (exit 0); a failure's reproduce line "
        "names it",
    )
    parser.add_argument(
        "--values",
        metavar="FILE",
        help="put back the values the reports masked (***6d93) from the run's FILE "
        "(reports/replay-values.jsonl: owner-only, never in a copy of the reports), for the "
        "scenario --scenario names (or the traffic report's entry --entry names)",
    )
    parser.add_argument(
        "--entry",
        metavar="ID",
        help="with --values: the entry of a traffic report (conformance proxy or judge: "
        "X00013-E16) whose masked values to put back; its reproduce line names both",
    )


def parse_header(argument: str) -> tuple[str, str | None]:
    """``Name: value`` → (Name, value); ``Name:`` → (Name, None): remove; ``Name;`` → (Name, "")."""
    name, colon, value = argument.partition(":")
    if not colon:
        if argument.endswith(";") and _TOKEN.fullmatch(argument[:-1]):
            return argument[:-1], ""
        raise ConformanceError(f"-H {argument!r} is not of the form 'Name: value'")
    name = name.strip()
    if not _TOKEN.fullmatch(name):
        raise ConformanceError(f"-H {argument!r}: {name!r} is not a valid header name")
    value = value.strip(" \t")
    return name, (value or None)


def _split_url(path: str, target: str | None) -> tuple[str, str | None]:
    """A full URL as PATH names the target too (its scheme and host); the rest is the path."""
    if not path.startswith(("http://", "https://")):
        if not path.startswith("/"):
            raise ConformanceError(f"PATH must start with '/' (or be a full URL), not {path!r}")
        return path, target
    if target is not None:
        raise ConformanceError("give either --target or a full URL as PATH, not both")
    scheme, _, rest = path.partition("://")
    host, slash, remainder = rest.partition("/")
    return slash + remainder if slash else "/", f"{scheme}://{host}"


def _example(op_id: str) -> dict[str, Any]:
    """The stored example of ``op_id`` (``schemas/examples``), or one clear error."""
    folder = example_directory()
    path = folder / f"{op_id}.json"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.json")))
        raise ConformanceError(f"--example {op_id}: no such example (there are: {known})")
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def _method_and_path(
    args: argparse.Namespace, example: Mapping[str, Any] | None
) -> tuple[str, str]:
    """METHOD and PATH as given, or the example's where they are left out (one argument that
    looks like a path is the PATH)."""
    method, path = args.method, args.path
    if example is None:
        if method is None or path is None:
            raise ConformanceError("give METHOD and PATH (or --example OP)")
        return method, path
    if path is None and method is not None and method.startswith(("/", "http://", "https://")):
        method, path = None, method
    path = path or str(example["path"])
    if "{" in path:
        raise ConformanceError(
            f"--example {example['operation']}: its path {example['path']} names a resource; "
            f"give the path with real ids, e.g. conformance call --example "
            f"{example['operation']} {example['path'].replace('{', '<').replace('}', '>')}"
        )
    return method or str(example["method"]), path


#: The request fields that must lie ahead (spec 7: execution dates in the past are refused).
_FUTURE_DATES = frozenset({"requestedExecutionDate", "startDate", "endDate"})


def fresh_dates(body: Any, today: date) -> Any:
    """``body`` with its future dates moved the same whole number of years ahead, so that the
    earliest lies after ``today`` (an example written a while ago stays valid; whole years keep
    the day of the month a periodic payment's rules look at)."""
    found = list(_future_dates(body))
    if not found or min(found) > today:
        return body
    return _moved(body, today.year - min(found).year + 1)


def _future_dates(node: Any) -> Iterator[date]:
    """The dates of the fields that must lie ahead, wherever they are in ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _FUTURE_DATES and isinstance(value, str):
                day = _date_or_none(value)
                if day is not None:
                    yield day
            yield from _future_dates(value)
    elif isinstance(node, list):
        for item in node:
            yield from _future_dates(item)


def _date_or_none(value: str) -> date | None:
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def _moved(node: Any, years: int) -> Any:
    """``node`` with the fields that must lie ahead ``years`` later."""
    if isinstance(node, dict):
        return {
            key: _plus_years(value, years)
            if key in _FUTURE_DATES and isinstance(value, str)
            else _moved(value, years)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_moved(item, years) for item in node]
    return node


def _plus_years(value: str, years: int) -> str:
    try:
        day = date.fromisoformat(value)
    except ValueError:
        return value
    try:
        return day.replace(year=day.year + years).isoformat()
    except ValueError:  # 29 February
        return day.replace(year=day.year + years, day=28).isoformat()


def _body(args: argparse.Namespace, stderr: TextIO) -> bytes | None:
    if args.data is not None:
        if args.data == "-":
            return sys.stdin.buffer.read()
        try:
            return Path(args.data).read_bytes()
        except OSError as error:
            raise ConformanceError(
                f"cannot read the --data file {args.data}: {error.strerror}"
            ) from None
    if args.data_json is not None:
        try:
            json.loads(args.data_json)
        except json.JSONDecodeError as error:
            print(
                f"conformance: note: --data-json is not valid JSON ({error}); sent as given",
                file=stderr,
            )
        text: str = args.data_json
        return text.encode("utf-8")
    return None


def run(
    args: argparse.Namespace, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Send the request and print the exchange; 0 whenever an answer came back."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    example = _example(args.example) if args.example else None
    method_text, path_text = _method_and_path(args, example)
    method = method_text.upper()
    if not _TOKEN.fullmatch(method):
        raise ConformanceError(f"{method_text!r} is not an HTTP method")
    path, target = _split_url(path_text, args.target)
    headers = [parse_header(argument) for argument in args.headers]
    body = _body(args, err)
    if example is not None:
        given = {name.lower() for name, _ in headers}
        kept = [(n, v) for n, v in example["headers"].items() if n.lower() not in given]
        headers = [*kept, *headers]  # -H replaces or ('Name:') removes an example's header
        if body is None and example["body"] is not None:  # null: the operation takes no body
            body = json.dumps(fresh_dates(example["body"], date.today())).encode("utf-8")
    scenario = _scenario(args.scenario) if args.scenario is not None else None
    path, headers, body = _with_values(args, path, headers, body)
    profile = profile_from_options(
        target=target,
        cert=args.cert,
        key=args.key,
        profile=args.profile,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tls_ca=args.tls_ca,
    )
    if args.timeout is not None:
        if args.timeout <= 0:
            raise ConformanceError(
                f"--timeout must be a positive number of seconds, not {args.timeout}"
            )
        connection = dataclasses.replace(profile.connection, timeout=args.timeout)
        profile = dataclasses.replace(profile, connection=connection)
    with TargetClient.from_profile(
        profile, digest_algorithm=args.digest.upper(), sign=not args.no_sign
    ) as client:
        exchange = client.request(method, path, content=body, headers=headers)
    print(exchange.render(), file=out)
    generated = profile.certificate is None and not args.no_sign
    if generated and exchange.status == 401 and b"CERTIFICATE_INVALID" in exchange.response_body:
        print(
            "conformance: note: signed with an identity generated for this call (no --cert); "
            "a server that trusts only given CAs (conformance serve --trust ids/ca.pem) "
            "refuses it: give --cert and --key of an identity it trusts (ids/tpp.pem, "
            "ids/tpp.key)",
            file=err,
        )
    return 0 if scenario is None else _judged(exchange, scenario, out)


def _scenario(scenario_id: str) -> Scenario:
    """The generated scenario ``scenario_id``, one whose verdict is one answer judged."""
    # on use: `conformance call` without --scenario needs no generation
    from conformance.contract import load_contract
    from conformance.generate import generate_scenarios

    found = {item.id: item for item in generate_scenarios(load_contract())}.get(scenario_id)
    if found is None:
        raise ConformanceError(f"--scenario: the suite has no scenario {scenario_id!r}")
    if found.kind == "flow":
        raise ConformanceError(
            f"--scenario: {scenario_id} is a flow, judged over several requests; run it again "
            f"with conformance run (its options) -- -k {scenario_id}"
        )
    return found


def _with_values(
    args: argparse.Namespace,
    path: str,
    headers: list[tuple[str, str | None]],
    body: bytes | None,
) -> tuple[str, list[tuple[str, str | None]], bytes | None]:
    """The request with the run's values put back (``--values``); a masked value left in the
    path or a header is an error that says what is needed."""
    key = args.scenario or getattr(args, "entry", None)
    if args.values is not None:
        if key is None:
            raise ConformanceError(
                "--values needs --scenario ID: the scenario whose values to put back (or "
                "--entry ID, a traffic report's entry; a failure's reproduce line names both)"
            )
        values = load_values(Path(args.values), key)
        path, headers, body = unmasked(values, path, headers, body)
    left = masked_parts(path, headers)
    if left:
        raise ConformanceError(
            f"{', '.join(left)} still hold(s) a value the reports masked (***): sent as it is, "
            "the bank would judge another request. A run of the suite keeps the real values "
            "in its reports/replay-values.jsonl, on the machine it ran on (give --values FILE "
            "--scenario ID, or --entry ID for traffic, as a reproduce line does); else give "
            "them with -H"
        )
    return path, headers, body


def _judged(exchange: Exchange, scenario: Scenario, out: TextIO) -> int:
    """Say whether the answer still breaks ``scenario``'s requirement: 1 if it does, else 0."""
    # on use: `conformance call` without --scenario needs no runner
    from conformance.contract import load_contract
    from conformance.runners.judging import judge_again

    level, found = judge_again(exchange, scenario, load_contract())
    label = f"{scenario.id} ({scenario.rule}, {scenario.spec})"
    if not found:
        print(f"now holds: the answer meets {label}: {scenario.title}", file=out)
        return 0
    first = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    print(f"still breaks {label} at {level}: {first.title}{more}", file=out)
    return 1
