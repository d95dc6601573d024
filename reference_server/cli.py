"""Command line of the reference server (``python -m reference_server``, ``conformance serve``).

Prints ``reference server listening on http://HOST:PORT`` (flushed, with the real port when
``--port 0`` asked for a free one) so that a parent process can read where to connect, and stops
cleanly on Ctrl-C or SIGTERM: the signal handler asks ``server.shutdown()`` from another thread
(calling it from the serving thread would deadlock), then the store is closed.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sqlite3
import ssl
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import FrameType

from cryptography import x509

from conformance.errors import ConformanceError
from conformance.profile import load_profile
from conformance.signing.revocation import RevocationLists, load_crls
from reference_server.app import Application, Throttle
from reference_server.faults import FAULTS, UnknownFaultError
from reference_server.faults.trace import SwitchTrace
from reference_server.model.bank_style import BankStyle, style_of
from reference_server.model.readings import DIRECTIONS, LENIENT, STRICT, of_direction
from reference_server.model.store import Store
from reference_server.transport.exchange_log import ExchangeLog
from reference_server.transport.http import MAX_CONNECTIONS, ReferenceServer
from reference_server.transport.tls import server_context

__all__ = [
    "LOG_FORMAT",
    "RequestLogFormatter",
    "add_arguments",
    "add_fault_argument",
    "add_reading_arguments",
    "build_parser",
    "configure_logging",
    "main",
    "run",
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The server's options, shared with ``conformance serve``."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=_port, default=8000, help="port to bind; 0 picks a free one (default 8000)"
    )
    parser.add_argument(
        "--data",
        type=Path,
        metavar="PATH",
        help="SQLite file that keeps the state across restarts (default: in memory)",
    )
    parser.add_argument(
        "--trust",
        type=Path,
        action="append",
        default=[],
        metavar="CA.pem",
        help="accept only signing certificates issued by this CA (spec 5 part 1); repeatable, "
        "and a PEM file may hold several CA certificates: a certificate of any of them is accepted",
    )
    parser.add_argument(
        "--crl",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="refuse a signing or TLS client certificate this revocation list revokes (PEM or "
        "DER, as `conformance certs` writes ca.crl; repeatable); a list of a --trust CA must "
        "carry its signature",
    )
    add_fault_argument(parser, "switch on a deliberate fault")
    parser.add_argument(
        "--list-faults", action="store_true", help="print the faults and the rule each breaks"
    )
    parser.add_argument(
        "--max-connections",
        type=_positive_int,
        default=MAX_CONNECTIONS,
        help=f"connections served at once (default {MAX_CONNECTIONS}); at the cap the longest "
        "idle one is closed for a newcomer, else 503 with Retry-After",
    )
    parser.add_argument(
        "--allow-replay",
        action="store_true",
        help="carry out a byte-identical replay of a signed request (for benchmarks that send "
        "one pre-signed request many times); by default it is refused",
    )
    parser.add_argument(
        "--shared-sandbox",
        action="store_true",
        help="let every TPP reach every payment, basket and consent (a sandbox shared on "
        "purpose); by default a TPP reaches only its own",
    )
    add_reading_arguments(parser)
    parser.add_argument(
        "--throttle-every",
        type=_non_negative,
        default=0,
        metavar="N",
        help="answer every Nth contract request 429 with Retry-After, as a bank gateway's rate "
        "limit does (default 0: never)",
    )
    parser.add_argument(
        "--retry-after",
        type=_non_negative,
        default=1,
        metavar="SECONDS",
        help="the Retry-After of a throttled answer (default 1)",
    )
    parser.add_argument(
        "--tls-cert",
        type=Path,
        metavar="PEM",
        help="serve HTTPS with this certificate (its key in the file or in --tls-key)",
    )
    parser.add_argument("--tls-key", type=Path, metavar="PEM", help="the key of --tls-cert")
    parser.add_argument(
        "--client-ca",
        type=Path,
        action="append",
        default=[],
        metavar="CA.pem",
        help="with --tls-cert: require a TLS client certificate (mutual TLS) issued by this CA "
        "(repeatable); the handshake is refused without one, with one of another CA, or expired",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="play the bank this target profile describes (its gateway headers, its KID "
        "reference type), read by the suite's own loader",
    )
    parser.add_argument(
        "--oauth-lifetime",
        type=_positive_int,
        default=3600,
        metavar="SECONDS",
        help="with a --profile that has [oauth]: how long an access token of the server's token "
        "endpoint is valid (default 3600)",
    )
    parser.add_argument(
        "--exchange-log",
        type=Path,
        metavar="FILE",
        help="append every request and its answer, whole, to FILE as JSON lines (for "
        "`conformance judge FILE`); the file holds unmasked test traffic and is made mode 0600",
    )
    parser.add_argument(
        "--switch-trace",
        type=Path,
        metavar="FILE",
        help="append, per request, the fault switches its answer asked to FILE as JSON lines, "
        "under the request's X-Conformance-Trace tag (the self-check's recording run)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="logging level (default INFO: one line per request)",
    )


def add_fault_argument(parser: argparse.ArgumentParser, purpose: str) -> None:
    """``--fault NAME``, declared once for the server and the commands that start it
    (``conformance run``, ``fleet run``, ``selfcheck``): repeatable, a name of
    ``reference_server.faults``; ``purpose`` says what a name given does there."""
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME",
        help=f"{purpose} (repeatable; python -m reference_server --list-faults)",
    )


def add_reading_arguments(parser: argparse.ArgumentParser, *, bundled: bool = False) -> None:
    """``--permissive`` and ``--demanding``, declared once from the readings' directions
    (``model/readings.py``) for the server and for ``conformance run`` (``bundled``: the run
    starts the bundled server playing that direction's profile and runs the suite with it). Each
    is a shorthand for a profile: the readings are that profile's ``readings``."""
    for direction in (LENIENT, STRICT):
        shown = DIRECTIONS[direction]
        if bundled:
            text = (
                f"bundled reference server only: it plays the {shown.word} reading of every "
                f"place {shown.where}, and the suite runs with the same profile: --play "
                f"{shown.shown} (with --play another profile, its server plays these readings "
                "too); a must failure there rests on a reading, not on the spec"
            )
        else:
            text = (
                f"play the {shown.word} reading of every place {shown.where} (assumptions.md, "
                f"'{shown.heading}'): {shown.plays}; the readings {shown.shown} plays, added to "
                "--profile's (without --profile: --profile that file)"
            )
        parser.add_argument(shown.flag, action="store_true", help=text)


def _positive_int(text: str) -> int:
    """A whole number of at least 1 (argparse turns the ``ValueError`` into a usage error)."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


_positive_int.__name__ = "positive integer"


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m reference_server",
        description="Reference server of the PSD2-style interface (spec 1.22.0), for the "
        "conformance suite's self-check and as a local sandbox.",
    )
    add_arguments(parser)
    return parser


def list_faults() -> str:
    width = max(len(name) for name in FAULTS) if FAULTS else 0
    return "\n".join(
        f"{fault.name:<{width}}  {fault.rule}: {fault.description}" for fault in FAULTS.values()
    )


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; returns the exit code."""
    if args.list_faults:
        print(list_faults())
        return 0
    configure_logging(args.log_level)

    try:
        tls = _tls(args)
        app = _application(args)
    except (UnknownFaultError, OSError, ValueError, ConformanceError) as error:
        print(f"reference server: {error}", file=sys.stderr)
        return 2
    server = _server(args, app, tls)
    if server is None:
        return 2
    _serve(server, app)
    return 0


def _application(args: argparse.Namespace) -> Application:
    """The application the options describe: trust, revocation, store, bank, faults, readings."""
    trust = [ca for path in args.trust for ca in _load_cas(path)]
    revocation = RevocationLists.of((crl for path in args.crl for crl in load_crls(path)), trust)
    store = _open_store(args.data)
    bank = _bank_style(_played_profile(args))
    return Application(
        store=store,
        faults=args.fault,
        trust_ca=trust,
        throttle=Throttle(
            args.throttle_every, args.retry_after, rate=bank.rate_limit if bank else 0.0
        ),
        bank=_with_flagged_readings(args, bank),
        shared_sandbox=args.shared_sandbox,
        replay_protection=not args.allow_replay,
        revocation=revocation,
        token_lifetime=args.oauth_lifetime,
        switch_trace=None if args.switch_trace is None else SwitchTrace(args.switch_trace),
    )


def _server(
    args: argparse.Namespace, app: Application, tls: ssl.SSLContext | None
) -> ReferenceServer | None:
    """The listening server with its exchange log; None (the application closed, the reason
    printed) when it cannot listen or write the log."""
    try:
        server = ReferenceServer(
            (args.host, args.port), app, tls=tls, max_connections=args.max_connections
        )
    except OSError as error:
        app.close()
        print(
            f"reference server: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr
        )
        return None
    if args.exchange_log is not None:
        try:
            server.exchange_log = ExchangeLog(args.exchange_log, server.url)
        except OSError as error:
            server.server_close()
            app.close()
            print(f"reference server: cannot write {args.exchange_log}: {error}", file=sys.stderr)
            return None
    return server


def _serve(server: ReferenceServer, app: Application) -> None:
    """Serve until SIGINT or SIGTERM, then close the server, the application and the log."""

    def stop(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=server.shutdown, name="shutdown", daemon=True).start()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    print(f"reference server listening on {server.url}", flush=True)
    if app.faults:
        print(f"faults switched on: {', '.join(sorted(app.faults))}", flush=True)
    for direction, word in ((LENIENT, "leniently"), (STRICT, "strictly")):
        played = app.readings & of_direction(direction)
        if played:
            name = DIRECTIONS[direction].word
            print(f"{name} reading: {len(played)} places read {word}", flush=True)
    others = app.readings - of_direction(LENIENT) - of_direction(STRICT)
    if others:
        print(f"readings played: {', '.join(sorted(others))}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        app.close()
        if server.exchange_log is not None:
            server.exchange_log.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


#: The log line: ``2026-03-01 10:00:00,123 INFO reference_server.http: POST /v1/... 201 1.2ms``.
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RequestLogFormatter(logging.Formatter):
    """``logging.Formatter`` with :data:`LOG_FORMAT`, writing the same text for less work.

    The server logs one line per request; ``formatTime`` calls ``time.strftime`` for each, although
    the text changes once a second. Here the seconds part is formatted once per second and the
    milliseconds added as ``logging`` does (``default_msec_format``). The cache is one immutable
    tuple, replaced whole, so threads can share it.
    """

    def __init__(self) -> None:
        super().__init__(LOG_FORMAT)
        self._second: tuple[int, str] = (-1, "")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        cached = self._second
        if cached[0] != second:
            cached = (second, time.strftime(self.default_time_format, self.converter(second)))
            self._second = cached
        assert self.default_msec_format is not None
        return self.default_msec_format % (cached[1], record.msecs)


def configure_logging(level: str) -> None:
    """Log to stderr at ``level`` (INFO: one line per request), in :data:`LOG_FORMAT`."""
    handler = logging.StreamHandler()
    handler.setFormatter(RequestLogFormatter())
    logging.basicConfig(level=getattr(logging, level), handlers=[handler])


def _port(text: str) -> int:
    """A TCP port, 0 to 65535 (argparse turns the ``ValueError`` into a usage error)."""
    port = int(text)
    if not 0 <= port <= 65535:
        raise ValueError(text)
    return port


_port.__name__ = "port"  # argparse names the type in its message: "invalid port value: '70000'"


def _flagged(args: argparse.Namespace) -> tuple[str, ...]:
    """The directions whose flag (``--permissive``, ``--demanding``) is given."""
    return tuple(key for key in (LENIENT, STRICT) if getattr(args, DIRECTIONS[key].flag[2:]))


def _played_profile(args: argparse.Namespace) -> Path | None:
    """The profile the server plays: ``--profile``, else the profile of the one reading flag
    given (``--permissive`` is ``--profile profiles/reference-server-permissive.toml``)."""
    flagged = _flagged(args)
    if args.profile is None and len(flagged) == 1:
        return DIRECTIONS[flagged[0]].profile
    chosen: Path | None = args.profile
    return chosen


def _with_flagged_readings(args: argparse.Namespace, bank: BankStyle | None) -> BankStyle | None:
    """``bank`` playing also the readings of each reading flag's profile (with ``--profile``
    another bank's, or with both flags)."""
    added = frozenset().union(*(of_direction(key) for key in _flagged(args)))
    if not added:
        return bank
    style = bank or BankStyle()
    return replace(style, readings=style.readings | added)


def _bank_style(path: Path | None) -> BankStyle | None:
    """The bank the profile at ``path`` describes (None: the bundled server's defaults)."""
    return None if path is None else style_of(load_profile(path))


def _tls(args: argparse.Namespace) -> ssl.SSLContext | None:
    """The HTTPS context of ``--tls-cert``/``--tls-key``/``--client-ca`` (None: plain HTTP)."""
    if args.tls_cert is None:
        if args.tls_key is not None or args.client_ca:
            raise ValueError("--tls-key and --client-ca need --tls-cert (HTTPS)")
        return None
    return server_context(args.tls_cert, args.tls_key, args.client_ca)


def _open_store(path: Path | None) -> Store:
    """The in-memory store, or the one in the SQLite file ``path``; a file SQLite cannot open or
    that is not one of its databases is a ``ValueError`` naming it (one line, not a traceback)."""
    if path is None:
        return Store()
    try:
        return Store(path)
    except sqlite3.Error as error:
        raise ValueError(f"cannot use {path} as the data file: {error}") from None


def _load_cas(path: Path) -> list[x509.Certificate]:
    """The CA certificates of one ``--trust`` file: every certificate of a PEM file, or one DER."""
    try:
        data = path.read_bytes()
    except OSError as error:
        reason = error.strerror or error
        raise ValueError(f"cannot read the --trust file {path}: {reason}") from None
    try:
        return x509.load_pem_x509_certificates(data)
    except ValueError:
        try:
            return [x509.load_der_x509_certificate(data)]
        except ValueError:
            raise ValueError(f"{path} holds no CA certificate (PEM or DER)") from None


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))
