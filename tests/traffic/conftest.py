"""Fixtures of the traffic tests: test identities on disk, a proxy in this process in front of a
reference server, and the suite run through it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.bankside.bundled import bundled_reference_server
from conformance.contract import load_contract
from conformance.signing import generate_ca, generate_tpp_identity, write_identity
from conformance.traffic.judge import TrafficJudge
from conformance.traffic.model import JudgedExchange
from conformance.traffic.options import load_trust
from conformance.traffic.proxy import JudgeWorker, Upstream, start_proxy
from conformance.traffic.session import TrafficSession
from conformance.traffic.settings import TrafficSettings

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "profiles" / "reference-server.toml"


@dataclass(frozen=True)
class Identities:
    """A CA, a UTF-8 named CA and a TPP signing identity, as files (``conformance certs``)."""

    ca: Path
    ca_key: Path
    utf8_ca: Path
    utf8_ca_key: Path
    tpp: Path
    tpp_key: Path

    @property
    def cas(self) -> list[Path]:
        return [self.ca, self.utf8_ca]

    def run_arguments(self) -> list[str]:
        return [
            "--cert", str(self.tpp), "--key", str(self.tpp_key), "--",
            "--trust-anchor", str(self.ca), "--trust-anchor-key", str(self.ca_key),
            "--trust-anchor-utf8", str(self.utf8_ca),
            "--trust-anchor-utf8-key", str(self.utf8_ca_key),
        ]  # fmt: skip


@pytest.fixture(scope="session")
def identities(tmp_path_factory: pytest.TempPathFactory) -> Identities:
    folder = tmp_path_factory.mktemp("ids")
    ca = generate_ca()
    files = write_identity(generate_tpp_identity(ca), folder, ca=ca)
    utf8 = generate_ca("Conformance Test CA Ærø")
    utf8_files = write_identity(generate_tpp_identity(utf8), folder / "utf8", ca=utf8)
    return Identities(
        files["ca_certificate"],
        files["ca_key"],
        utf8_files["ca_certificate"],
        utf8_files["ca_key"],
        files["certificate"],
        files["key"],
    )


@dataclass
class ProxiedRun:
    """The suite's run through the proxy: its exit code, output and the judged exchanges."""

    returncode: int
    output: str
    judged: list[JudgedExchange]

    def findings(self, side: str) -> list[tuple[JudgedExchange, str, str]]:
        """(exchange, rule, level) of every finding of ``side``."""
        return [
            (item, finding.rule, finding.level)
            for item in self.judged
            for finding in item.findings
            if finding.side == side
        ]


def run_through_proxy(
    identities: Identities,
    tmp_path: Path,
    *,
    faults: Sequence[str] = (),
    selection: Sequence[str] = (),
    timeout: float = 600,
) -> ProxiedRun:
    """A reference server (with ``faults``), the proxy in front of it (judging in this process),
    and ``conformance run`` against the proxy with ``selection`` (pytest arguments)."""
    contract = load_contract()
    judge = TrafficJudge(contract, TrafficSettings(trust=load_trust(identities.cas)))
    session = TrafficSession(judge, quiet=True)
    with bundled_reference_server(
        faults=faults, trust=identities.cas, log_path=tmp_path / "server.log"
    ) as url:
        worker = JudgeWorker(session.take, lambda _verdict: None)
        proxy = start_proxy(Upstream(url), worker.put)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "conformance", "run", "--target", proxy.url,
                 "--profile", str(PROFILE), "--reports", str(tmp_path / "run"),
                 *identities.run_arguments(), *selection],
                capture_output=True, text=True, timeout=timeout, check=False,
                env=dict(os.environ),
            )  # fmt: skip
        finally:
            proxy.stop()
            worker.close()
    return ProxiedRun(done.returncode, done.stdout[-4000:] + done.stderr[-2000:], session.judged)


@pytest.fixture
def proxied(identities: Identities, tmp_path: Path) -> Iterator[object]:
    yield lambda **options: run_through_proxy(identities, tmp_path, **options)
