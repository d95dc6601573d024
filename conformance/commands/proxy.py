"""``conformance proxy``: a reverse proxy between a TPP's app and a bank that passes every
exchange through unchanged and judges it as it passes; on stop (Ctrl-C, ``--duration``,
``--exchanges``) the reports of a run, with the exchanges as their evidence."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from conformance.commands import COMMANDS, Subparsers
from conformance.errors import ConformanceError

__all__ = ["register"]


def _listen(text: str) -> tuple[str, int]:
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not positive")
    return value


def register(subparsers: Subparsers) -> None:
    # on use: the judge imports the contract and the report writers
    from conformance.traffic.options import add_judge_arguments

    parser = subparsers.add_parser(
        "proxy",
        help=COMMANDS["proxy"],
        description="A reverse proxy a TPP points its app at: every exchange goes to --target "
        "unchanged and is judged as it passes (the request: spec 4.2 headers, spec 5 "
        "signature, digest and certificate, body schema and rules, product and path; the "
        "answer: status, schema, spec 7 error body and rules; across exchanges: what the state "
        "allows). One line per exchange; on Ctrl-C, --duration or --exchanges the reports of a "
        "run. Exit 1 on a must finding; 3 when "
        "no exchange of the interface was judged, or the judge failed on one.",
    )
    parser.add_argument(
        "--target",
        metavar="URL",
        help="the bank: scheme, host and port (default: the profile's base_url); paths go "
        "through unchanged",
    )
    parser.add_argument(
        "--listen",
        type=_listen,
        default=("127.0.0.1", 8080),
        metavar="HOST:PORT",
        help="where the app connects (default 127.0.0.1:8080; port 0: a free one, printed)",
    )
    add_judge_arguments(parser)
    parser.add_argument(
        "--server-cert",
        type=Path,
        metavar="PEM",
        help="serve HTTPS to the app with this certificate (`conformance certs --server`)",
    )
    parser.add_argument("--server-key", type=Path, metavar="PEM", help="its key")
    parser.add_argument(
        "--tls-cert",
        metavar="FILE",
        help="the QWAC shown to the bank (mutual TLS; over the profile's tls_certificate)",
    )
    parser.add_argument("--tls-key", metavar="FILE", help="its key (PEM)")
    parser.add_argument(
        "--tls-ca", metavar="FILE", help="the CA bundle the bank's certificate is checked against"
    )
    parser.add_argument(
        "--preserve-host",
        action="store_true",
        help="forward the app's Host header as it is (default: the target's host)",
    )
    parser.add_argument("--duration", type=_positive, metavar="SECONDS", help="stop after this")
    parser.add_argument(
        "--exchanges", type=int, metavar="N", help="stop after N exchanges are judged"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import ssl

    from conformance.bankside.tls import client_context
    from conformance.profile import profile_from_options
    from conformance.traffic.options import finish, judge_for
    from conformance.traffic.proxy import JudgeWorker, Upstream, start_proxy
    from conformance.traffic.session import TrafficSession

    if args.target is None and args.profile is None:
        raise ConformanceError("give --target URL (the bank) or --profile FILE (its base_url)")
    profile = profile_from_options(
        target=args.target,
        profile=args.profile,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tls_ca=args.tls_ca,
    )
    outgoing = client_context(profile.tls)
    upstream = Upstream(
        profile.base_url,
        tls=outgoing if isinstance(outgoing, ssl.SSLContext) else None,
        timeout=profile.connection.timeout,
        preserve_host=args.preserve_host,
    )
    serving = None
    if args.server_cert is not None:
        serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        serving.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            serving.load_cert_chain(
                str(args.server_cert), None if args.server_key is None else str(args.server_key)
            )
        except (OSError, ssl.SSLError) as error:
            raise ConformanceError(f"the server certificate cannot be used: {error}") from None
    session = TrafficSession(
        judge_for(profile, args.trust),
        limit=args.exchanges,
        quiet=args.quiet,
    )
    worker = JudgeWorker(session.take, lambda _verdict: None)
    host, port = args.listen
    try:
        proxy = start_proxy(
            upstream,
            worker.put,
            host,
            port,
            tls=serving,
            on_refused=lambda text: print(f"proxy: {text}", file=sys.stderr, flush=True),
        )
    except OSError as error:
        raise ConformanceError(f"cannot listen on {host}:{port}: {error}") from None
    stop = threading.Event()

    def interrupted(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, interrupted) for sig in (signal.SIGINT, signal.SIGTERM)}
    print(f"proxy listening on {proxy.url} → {upstream.base_url}", flush=True)
    try:
        waited = 0.0
        while not stop.is_set() and not session.done.is_set():
            stop.wait(0.2)
            waited += 0.2
            if args.duration is not None and waited >= args.duration:
                break
    finally:
        proxy.stop()
        worker.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return finish(
        session,
        args.reports,
        source=f"proxy {proxy.url} → {upstream.base_url}",
        target=upstream.base_url,
        profile=profile,
    )
