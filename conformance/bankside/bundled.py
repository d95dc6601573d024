"""The bundled reference server of a run and the identities it is started with.

:func:`bundled_reference_server` starts ``python -m reference_server`` for one run and yields its
URL; :func:`write_run_identity` writes the run's CAs and TPP identity (and
:func:`write_tls_identity` the mutual-TLS pair of ``conformance run --tls``) the server is told
to trust; :func:`trust_anchor_arguments` gives the plugin the same CAs. ``conformance run``, the
pytest plugin and the benchmarks share them, so neither the plugin nor the ``run`` command
imports the other.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from conformance.bankside.trace import SERVER_TRACE, trace_dir
from conformance.errors import ConformanceError
from conformance.exchange import replay_program

__all__ = [
    "UTF8_CA_NAME",
    "BundledIdentity",
    "BundledTls",
    "ReplayServer",
    "ServerWatch",
    "bundled_reference_server",
    "identity_folder",
    "process_gone",
    "tls_trust_anchor_arguments",
    "trust_anchor_arguments",
    "write_run_identity",
    "write_tls_identity",
]


#: How long the bundled server may take to print where it listens (it loads the contract).
_SERVER_START_TIMEOUT = 60.0

#: How long it may take to stop after SIGTERM before it is killed.
_SERVER_STOP_TIMEOUT = 10.0

_LISTENING = re.compile(r"reference server listening on (https?://\S+)")


#: The name of the run's second CA: not ASCII, for the RFC 2047 scenario (spec 5 item 3).
UTF8_CA_NAME = "Conformance Test CA Ærø"


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
    crl: Path | None = None,
    watch: ServerWatch | None = None,
) -> Iterator[str]:
    """Start ``python -m reference_server --port 0``; yield its base URL; stop it on exit.

    The URL comes from the first line the server prints (``reference server listening on
    http://127.0.0.1:PORT``). Its log (stderr, one line per request) goes to ``log_path`` or
    nowhere. ``trust`` is the CA (or CAs) whose signing certificates it accepts, no other
    (``--trust``), and ``crl`` the revocation list it consults (``--crl``). With ``tls`` it
    serves HTTPS and requires a client certificate (mutual TLS).
    A server that exits or stays silent is a :class:`ConformanceError` naming the log. With
    ``watch`` it learns the server's process id, and why the server stopped if it stops before
    the context ends (:class:`ServerWatch`).
    """
    command = [sys.executable, "-m", "reference_server", "--host", "127.0.0.1", "--port", "0"]
    for ca in (trust,) if isinstance(trust, Path) else trust or ():
        command += ["--trust", str(ca)]
    if crl is not None:
        command += ["--crl", str(crl)]
    for fault in faults:
        command += ["--fault", fault]
    if tls is not None:
        command += tls.server_arguments()
    command += list(server_args)  # e.g. --profile FILE: play that bank
    traced = trace_dir()
    if traced is not None:  # the self-check's recording run (bankside/trace.py)
        command += ["--switch-trace", str(traced / SERVER_TRACE)]
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
        if watch is not None:
            watch.follow(process, log_path)
            stack.callback(watch.ending.set)  # first on the way out: a stop of ours is no news
        yield url


class ServerWatch:
    """The bundled server of a run, watched: its process id (:attr:`pid`; ``conformance run``
    hands it to every pytest process, which stops its session when that process is gone) and,
    when it stopped before the run ended, why (:attr:`stopped`: its exit code and log), set by a
    thread that waits for the process. Handed to the in-process pytest run as a
    plugin object, so that the run's verdict names the cause."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.stopped: str | None = None
        #: Set when the run stops the server itself (the end of the context).
        self.ending = threading.Event()

    def follow(self, process: subprocess.Popen[str], log_path: Path | None) -> None:
        """Watch ``process`` from a daemon thread."""
        self.pid = process.pid
        threading.Thread(
            target=self._wait, args=(process, log_path), name="reference-server-watch", daemon=True
        ).start()

    def _wait(self, process: subprocess.Popen[str], log_path: Path | None) -> None:
        code = process.wait()
        if not self.ending.is_set():
            self.stopped = (
                f"the bundled reference server stopped during the run, exit code {code}"
                + (f"; its log: {log_path}" if log_path is not None else "")
            )


def process_gone(pid: int) -> bool:
    """Whether no process ``pid`` is left (one that ended is gone once its parent has waited for
    it: :class:`ServerWatch` does so at once). On Windows, where ``os.kill`` would end the
    process, it is never said to be gone."""
    if os.name == "nt":
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process: it is there
        return False
    return _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has ended and waits only for its parent to collect it (Linux's ``/proc``;
    elsewhere never said): it serves no more, though ``os.kill(pid, 0)`` still finds it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    fields = stat.rpartition(")")[2].split()
    return bool(fields) and fields[0] == "Z"


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
    """A CA and a TPP identity it issued, a second CA with a non-ASCII name, and a certificate
    the first CA has revoked with the CA's revocation list, written to ``directory`` for one run.

    The bundled server is started trusting only these two CAs (``--trust``, :attr:`trusted`)
    and the suite signs with the identity and mints its negative-case certificates from the
    first CA (the runners' trust anchor), so that "a certificate of another CA is refused"
    (spec 5 item 1) can be judged. The second (:data:`UTF8_CA_NAME`) issues the certificate of
    the RFC 2047 scenario: its keyId ``CA=`` is not ASCII, so the Signature header must be
    MIME-encoded (spec 5 item 3). The revoked certificate (``revoked/``) is the one the
    revocation scenarios sign with; the server gets the list (``ca.crl``) as ``--crl``. Fresh CAs
    per run: nothing secret outlives the directory.
    """
    # on use, not at import: the pytest plugin imports this module in every pytest process
    from conformance.signing import generate_ca, generate_tpp_identity, write_identity
    from conformance.signing.revocation import write_crl

    ca = generate_ca()
    tpp = generate_tpp_identity(ca)
    written = write_identity(tpp, directory, ca=ca)
    revoked = generate_tpp_identity(ca, key=tpp.private_key)
    revoked_files = write_identity(revoked, Path(directory) / "revoked")
    crl = Path(directory) / "ca.crl"
    write_crl(ca, crl, [revoked.certificate.serial_number])
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
        revoked_certificate=revoked_files["certificate"],
        revoked_key=revoked_files["key"],
        crl=crl,
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
        client_ca_key=client["ca_key"],
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
    #: The client CA's key: the suite mints QWACs from it for the checks of the TLS client
    #: certificate (``--tls-trust-anchor``).
    client_ca_key: Path

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
    #: A certificate of the first CA that the CA has revoked, with its key, and the CA's
    #: revocation list naming it (the server's ``--crl``).
    revoked_certificate: Path
    revoked_key: Path
    crl: Path

    @property
    def trusted(self) -> tuple[Path, Path]:
        """The CA certificates the bundled server is told to trust (``--trust`` each)."""
        return self.ca_certificate, self.utf8_ca_certificate


def trust_anchor_arguments(identity: BundledIdentity) -> list[str]:
    """The plugin's ``--trust-anchor*`` options for the CAs of ``identity`` and its
    ``--revoked-cert``/``--revoked-key``: what a bundled run gives pytest, and what a run
    against a server trusting the same CAs (with their ``--crl``) needs for the same verdicts
    (the suite benchmark passes them)."""
    return [
        "--trust-anchor",
        str(identity.ca_certificate),
        "--trust-anchor-key",
        str(identity.ca_key),
        "--trust-anchor-utf8",
        str(identity.utf8_ca_certificate),
        "--trust-anchor-utf8-key",
        str(identity.utf8_ca_key),
        "--revoked-cert",
        str(identity.revoked_certificate),
        "--revoked-key",
        str(identity.revoked_key),
    ]


def tls_trust_anchor_arguments(tls: BundledTls) -> list[str]:
    """The plugin's ``--tls-trust-anchor*`` options for the client CA of ``tls``: the suite
    mints the QWACs of the TLS client certificate checks from it."""
    return [
        "--tls-trust-anchor",
        str(tls.client_ca),
        "--tls-trust-anchor-key",
        str(tls.client_ca_key),
    ]


def identity_folder(reports: Path) -> Path:
    """Where a bundled run keeps its identities, beside its reports (``reports/identity/``,
    git-ignored with the reports): the replay commands in the reports name these files, so they
    outlive the run. Emptied first: one run's identities, never a mix."""
    folder = reports / "identity"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def _shown(path: str | Path) -> str:
    """A path as a command shows it: relative to the working directory when it is below it."""
    absolute = Path(path).resolve()
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


@dataclass(frozen=True)
class ReplayServer:
    """How to start a server like the one a bundled run stopped, so that its replay commands
    (which name its URL) can be sent as printed: the same port, the same trusted CAs, faults,
    profile and TLS files (all kept under ``reports/identity/``). It starts empty: a replay that
    names a resource the run created meets a 404 there; a creation or a refusal replays as it
    was judged.

    Handed to the in-process pytest run by ``conformance run`` as a plugin object; the reports
    show :meth:`command`.
    """

    url: str
    trust: tuple[Path, ...] = ()
    faults: tuple[str, ...] = ()
    profile: Path | None = None
    tls: BundledTls | None = None

    def command(self) -> str:
        """``conformance serve --port N --trust ... [--fault ...] [--profile ...] [TLS]``."""
        port = self.url.rsplit(":", 1)[-1].rstrip("/")
        words = ["serve", "--port", port]
        for ca in self.trust:
            words += ["--trust", _shown(ca)]
        for fault in self.faults:
            words += ["--fault", fault]
        if self.profile is not None:
            words += ["--profile", _shown(self.profile)]
        if self.tls is not None:
            words += [
                word if word.startswith("--") else _shown(word)
                for word in self.tls.server_arguments()
            ]
        return f"{replay_program()} {shlex.join(words)}"
