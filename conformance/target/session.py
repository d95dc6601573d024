"""The run session that ``conformance run`` and the pytest plugin share: the run seed, the
bundled reference server, the run's generated identity and the probe of a target before a run."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import secrets
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from conformance.errors import ConformanceError, TargetError

if TYPE_CHECKING:
    from conformance.profile import TargetProfile

__all__ = [
    "DEFAULT_SEED",
    "TARGET_OPTIONS",
    "UTF8_CA_NAME",
    "BundledIdentity",
    "BundledTls",
    "PreflightDone",
    "bundled_reference_server",
    "parse_seed",
    "preflight",
    "run_seed",
    "trust_anchor_arguments",
    "write_run_identity",
    "write_tls_identity",
]


#: The default seed of a run against the bundled reference server (:func:`run_seed`): the date
#: of the spec release the suite checks (1.22.0, 2026-01-29), so that two bundled runs of the same
#: suite send the same data unless asked otherwise.
DEFAULT_SEED = 20260129

#: How long the bundled server may take to print where it listens (it loads the contract).
_SERVER_START_TIMEOUT = 60.0

#: How long it may take to stop after SIGTERM before it is killed.
_SERVER_STOP_TIMEOUT = 10.0

_LISTENING = re.compile(r"reference server listening on (https?://\S+)")


#: The name of the run's second CA: not ASCII, for the RFC 2047 scenario (spec 5 item 3).
UTF8_CA_NAME = "Conformance Test CA Ærø"

#: Operations whose GET has no path parameter: the probe asks one of them for a JSON answer.
_PROBE_OPERATIONS = ("AL", "E9")


def parse_seed(text: str | int | None) -> int:
    """``None`` → :data:`DEFAULT_SEED`; ``"random"`` → a fresh one; else a whole number ≥ 0.

    A random seed is drawn once, in the process that starts the run, and handed to every xdist
    worker: the data of one run is reproducible from the seed the header and reports print.
    """
    if text is None:
        return DEFAULT_SEED
    if isinstance(text, int):
        value = text
    elif text.strip().lower() == "random":
        return secrets.randbelow(2**31)
    else:
        try:
            value = int(text.strip(), 10)
        except ValueError:
            raise ConformanceError(
                f"--seed must be a whole number or 'random', not {text!r}"
            ) from None
    if value < 0:
        raise ConformanceError(f"--seed must not be negative, not {value}")
    return value


def run_seed(text: str | int | None, *, bundled: bool) -> int:
    """The seed of a run: ``--seed`` when given (:func:`parse_seed`); else :data:`DEFAULT_SEED`
    for the bundled reference server, which starts empty on every run, and a random one for any
    other target.

    A target keeps what a run created (customers, accounts, payments), and the same seed creates
    the same things again, which the target rightly refuses (the account number exists, the
    payment is a logical duplicate): a second run with the first one's seed would fail in its
    set-up. The seed is printed either way; it reproduces a run's data on a target that does not
    hold that data yet (a fresh sandbox, or one reset by its data fill).
    """
    if text is None:
        return DEFAULT_SEED if bundled else parse_seed("random")
    return parse_seed(text)


def _read_lines(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    """Drain the server's stdout (so it never blocks on a full pipe); None marks its end."""
    try:
        for line in stream:
            lines.put(line.rstrip("\n"))
    except (OSError, ValueError):
        pass
    finally:
        lines.put(None)


def _log_tail(log_path: Path | None, count: int = 5) -> str:
    if log_path is None:
        return ""
    try:
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-count:]
    except OSError:
        return ""
    return (": " + " / ".join(tail)) if tail else ""


def _stop(process: subprocess.Popen[str]) -> None:
    """SIGTERM (the server shuts down cleanly on it), then kill if it lingers."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=_SERVER_STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def bundled_reference_server(
    *,
    faults: Sequence[str] = (),
    trust: Path | Sequence[Path] | None = None,
    log_path: Path | None = None,
    start_timeout: float = _SERVER_START_TIMEOUT,
    tls: BundledTls | None = None,
    server_args: Sequence[str] = (),
) -> Iterator[str]:
    """Start ``python -m reference_server --port 0``; yield its base URL; stop it on exit.

    The URL comes from the first line the server prints (``reference server listening on
    http://127.0.0.1:PORT``). Its log (stderr, one line per request) goes to ``log_path`` or
    nowhere. ``trust`` is the CA (or CAs) whose signing certificates it accepts, no other
    (``--trust``). With ``tls`` it serves HTTPS and requires a client certificate (mutual TLS).
    A server that exits or stays silent is a :class:`ConformanceError` naming the log.
    """
    command = [sys.executable, "-m", "reference_server", "--host", "127.0.0.1", "--port", "0"]
    for ca in (trust,) if isinstance(trust, Path) else trust or ():
        command += ["--trust", str(ca)]
    for fault in faults:
        command += ["--fault", fault]
    if tls is not None:
        command += tls.server_arguments()
    command += list(server_args)  # e.g. --profile FILE: play that bank
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with contextlib.ExitStack() as stack:
        log = (
            stack.enter_context(log_path.open("w", encoding="utf-8"))
            if log_path is not None
            else subprocess.DEVNULL
        )
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            encoding="utf-8",
            env=env,
        )
        assert process.stdout is not None
        stack.callback(process.stdout.close)
        lines: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(
            target=_read_lines,
            args=(process.stdout, lines),
            name="reference-server-out",
            daemon=True,
        )
        reader.start()
        stack.callback(reader.join, _SERVER_STOP_TIMEOUT)
        stack.callback(_stop, process)
        url = _wait_for_url(process, lines, start_timeout, log_path)
        yield url


def _wait_for_url(
    process: subprocess.Popen[str],
    lines: queue.Queue[str | None],
    timeout: float,
    log_path: Path | None,
) -> str:
    seen: list[str] = []
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            raise ConformanceError(
                f"the bundled reference server did not say where it listens within {timeout:g} s"
                + _log_tail(log_path)
            ) from None
        if line is None:
            code = process.wait()
            said = " / ".join(seen)
            raise ConformanceError(
                f"the bundled reference server stopped at start (exit code {code})"
                + (f": {said}" if said else _log_tail(log_path))
            )
        match = _LISTENING.search(line)
        if match:
            return match.group(1)
        seen.append(line)


def write_run_identity(directory: Path) -> BundledIdentity:
    """A CA and a TPP identity it issued, and a second CA with a non-ASCII name, written to
    ``directory`` for one run.

    The bundled server is started trusting only these two CAs (``--trust``, :attr:`trusted`)
    and the suite signs with the identity and mints its negative-case certificates from the
    first CA (the runners' trust anchor), so that "a certificate of another CA is refused"
    (spec 5 item 1) can be judged. The second (:data:`UTF8_CA_NAME`) issues the certificate of
    the RFC 2047 scenario: its keyId ``CA=`` is not ASCII, so the Signature header must be
    MIME-encoded (spec 5 item 3). Fresh CAs per run: nothing secret outlives the directory.
    """
    # on use, not at import: the pytest plugin imports this module in every pytest process
    from conformance.signing import generate_ca, generate_tpp_identity, write_identity

    ca = generate_ca()
    tpp = generate_tpp_identity(ca)
    written = write_identity(tpp, directory, ca=ca)
    utf8_ca = generate_ca(UTF8_CA_NAME)
    utf8 = write_identity(
        generate_tpp_identity(utf8_ca, key=tpp.private_key), Path(directory) / "utf8", ca=utf8_ca
    )
    return BundledIdentity(
        certificate=written["certificate"],
        key=written["key"],
        ca_certificate=written["ca_certificate"],
        ca_key=written["ca_key"],
        utf8_ca_certificate=utf8["ca_certificate"],
        utf8_ca_key=utf8["ca_key"],
    )


def write_tls_identity(directory: Path) -> BundledTls:
    """For ``conformance run --tls``: a server CA and the bundled server's certificate for
    127.0.0.1, and a client CA with a QWAC-style TLS client certificate it issued, written to
    ``directory``. The server requires a client certificate of that CA (mutual TLS); the suite
    trusts only the server CA."""
    # on use, not at import: the pytest plugin imports this module in every pytest process
    from conformance.signing import (
        generate_ca,
        generate_qwac,
        generate_server_certificate,
        write_identity,
    )

    folder = Path(directory)
    server_ca = generate_ca("Conformance Test TLS Server CA")
    server = write_identity(
        generate_server_certificate(server_ca), folder / "server", stem="server"
    )
    client_ca = generate_ca("Conformance Test QWAC CA")
    client = write_identity(generate_qwac(client_ca), folder / "client", ca=client_ca, stem="qwac")
    return BundledTls(
        server_certificate=server["certificate"],
        server_key=server["key"],
        server_ca=server["ca_certificate"],
        client_ca=client["ca_certificate"],
        client_certificate=client["certificate"],
        client_key=client["key"],
    )


@dataclass(frozen=True)
class BundledTls:
    """Where :func:`write_tls_identity` put the files (keys with mode 0600)."""

    server_certificate: Path
    server_key: Path
    server_ca: Path
    client_ca: Path
    client_certificate: Path
    client_key: Path

    def server_arguments(self) -> list[str]:
        """The reference server's options: HTTPS, a client certificate of the client CA."""
        return [
            "--tls-cert",
            str(self.server_certificate),
            "--tls-key",
            str(self.server_key),
            "--client-ca",
            str(self.client_ca),
        ]


@dataclass(frozen=True)
class BundledIdentity:
    """Where :func:`write_run_identity` put the files (keys with mode 0600)."""

    certificate: Path
    key: Path
    ca_certificate: Path
    ca_key: Path
    utf8_ca_certificate: Path
    utf8_ca_key: Path

    @property
    def trusted(self) -> tuple[Path, Path]:
        """The CA certificates the bundled server is told to trust (``--trust`` each)."""
        return self.ca_certificate, self.utf8_ca_certificate


def preflight(profile: TargetProfile) -> float | None:
    """Fail fast on what would make every scenario fail: certificate, connection, non-JSON; the
    fastest answer's seconds (the round trip to the target, for the run's concurrency), or None
    when no probe was answered.

    Loads the signing certificate (:class:`~conformance.errors.CertificateError`), checks that
    the target answers HTTP at all (:class:`TargetError`: refused, DNS, TLS, timeout), then
    sends a signed GET of each supported operation without path parameters (the account list,
    the sandbox customer list) until one answers JSON: every answer of the interface is JSON
    (spec 7), so when none does the base URL points at something else. One JSON answer is
    enough: a target whose error answers alone are not JSON (the account list without a consent
    is an error) breaks spec 7, and that is for the scenarios to judge, not the probe.
    """
    # on use, not at import: the pytest plugin imports this module in every pytest process
    from conformance.contract import load_contract
    from conformance.target.client import TargetClient

    operations = load_contract().operations
    with TargetClient.from_profile(profile) as client:
        client.check_reachable()
        first_error: TargetError | None = None
        probes = (operations[op] for op in _PROBE_OPERATIONS)
        for probe in (op for op in probes if profile.supports(op)):
            exchange = client.get(profile.render_path(probe))
            if not exchange.response_body:
                return exchange.elapsed
            try:
                exchange.json()
            except TargetError as error:
                first_error = first_error or error
            else:  # on the connection check_reachable opened: a round trip, no handshake
                return exchange.elapsed
        if first_error is not None:
            raise TargetError(
                f"{first_error.message}; is {profile.base_url} the base URL of the interface "
                "(the part before /v1)?"
            )
    return None


#: The options that name a target and how to reach it (keywords of ``profile_from_options``).
TARGET_OPTIONS = ("target", "profile", "cert", "key", "tls_cert", "tls_key", "tls_ca")


@dataclass(frozen=True)
class PreflightDone:
    """Handed to the in-process pytest run by :func:`run`: the target these options name has
    just passed :func:`preflight`, so the plugin's own check at session start (for plain
    ``pytest --target``) is not repeated (a second profile load and four more probes, ~0.1-0.2 s
    on the way to the first scenario). The plugin skips it only when its options
    (:data:`TARGET_OPTIONS`) are these."""

    options: tuple[tuple[str, str | None], ...]

    @classmethod
    def naming(cls, **options: str | None) -> PreflightDone:
        """For the given options; the others of :data:`TARGET_OPTIONS` are None."""
        unknown = set(options) - set(TARGET_OPTIONS)
        if unknown:
            raise TypeError(f"not a target option: {', '.join(sorted(unknown))}")
        return cls(tuple((name, options.get(name)) for name in TARGET_OPTIONS))

    def covers(self, options: Mapping[str, str | None]) -> bool:
        return dict(self.options) == {name: options.get(name) for name in TARGET_OPTIONS}


def trust_anchor_arguments(identity: BundledIdentity) -> list[str]:
    """The plugin's ``--trust-anchor*`` options for the CAs of ``identity``: what a bundled run
    gives pytest, and what a run against a server trusting the same CAs needs for the same
    verdicts (the suite benchmark passes them)."""
    return [
        "--trust-anchor",
        str(identity.ca_certificate),
        "--trust-anchor-key",
        str(identity.ca_key),
        "--trust-anchor-utf8",
        str(identity.utf8_ca_certificate),
        "--trust-anchor-utf8-key",
        str(identity.utf8_ca_key),
    ]
