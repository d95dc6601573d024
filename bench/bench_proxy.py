"""Benchmark: what ``conformance proxy`` adds (issue 24). Each figure beside its baseline,
measured in the same run:

- the bundled suite run (``conformance run`` against a reference server started apart, as the
  README's recipe) directly, then through the proxy (judging every exchange, in its own process):
  wall time of each and the ratio; and how long the proxy needs after the run's last exchange to
  judge what is queued and write the reports;
- the added latency per exchange: the median of 300 signed reads (E9) one after another on a
  keep-alive connection, directly and through the proxy;
- the judge's throughput: the direct run's exchanges (recorded by the server's
  ``--exchange-log``) judged offline, in exchanges per second, beside the rate at which the suite
  sent them.

Exit status 1 when the run through the proxy takes more than 1.5 times the direct run, or the
judge is slower than the suite's own request rate (then the proxy would be the bottleneck).
"""

from __future__ import annotations

import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx

from conformance.contract import load_contract
from conformance.signing import (
    SignatureAuth,
    default_identity,
    generate_ca,
    generate_tpp_identity,
    write_identity,
)
from conformance.traffic.exchange_log import read_exchange_log
from conformance.traffic.judge import TrafficJudge
from conformance.traffic.options import load_trust
from conformance.traffic.reports import TrafficRun, write_reports
from conformance.traffic.settings import TrafficSettings

ROOT = Path(__file__).resolve().parents[1]
PROFILE = ROOT / "profiles" / "reference-server.toml"
READS = 300
MAX_RUN_RATIO = 1.5
#: Rounds of the pair (direct, through the proxy), alternated: a shared machine's load drifts.
ROUNDS = 2
#: Workers of each suite run, fixed so that both runs of a pair are alike (the harness would
#: choose by the preflight's answer time, which the machine's load sways).
WORKERS = 2


def _identities(folder: Path) -> dict[str, Path]:
    ca = generate_ca()
    files = write_identity(generate_tpp_identity(ca), folder, ca=ca)
    utf8 = generate_ca("Conformance Test CA Ærø")
    utf8_files = write_identity(generate_tpp_identity(utf8), folder / "utf8", ca=utf8)
    return {
        "ca": files["ca_certificate"],
        "ca_key": files["ca_key"],
        "utf8": utf8_files["ca_certificate"],
        "utf8_key": utf8_files["ca_key"],
        "tpp": files["certificate"],
        "tpp_key": files["key"],
    }


@contextmanager
def _process(command: list[str], pattern: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A subprocess that prints its URL first (``listening on URL``); stopped with SIGINT."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(pattern, line)
    if found is None:
        process.kill()
        raise RuntimeError(f"no URL from {command[:4]}: {line!r}")
    try:
        yield process, found.group(1)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()


def _server(ids: dict[str, Path] | None, log: Path | None = None) -> list[str]:
    """The reference server; trusting ``ids``' CAs, or (None) the default test identity's."""
    command = [sys.executable, "-m", "reference_server", "--port", "0", "--log-level", "WARNING"]
    if ids is not None:
        command += ["--trust", str(ids["ca"]), "--trust", str(ids["utf8"])]
    if log is not None:
        command += ["--exchange-log", str(log)]
    return command


def _suite(url: str, ids: dict[str, Path], reports: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--target", url, "--profile", str(PROFILE),
         "--reports", str(reports), "--cert", str(ids["tpp"]), "--key", str(ids["tpp_key"]),
         "-n", str(WORKERS),
         "--", "--trust-anchor", str(ids["ca"]), "--trust-anchor-key", str(ids["ca_key"]),
         "--trust-anchor-utf8", str(ids["utf8"]), "--trust-anchor-utf8-key", str(ids["utf8_key"])],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the suite run failed: {done.stdout[-1500:]}")
    return elapsed


def _reads(url: str) -> float:
    auth = SignatureAuth(default_identity().signing_credentials())
    times = []
    with httpx.Client(base_url=url, auth=auth, timeout=10) as client:
        for number in range(READS + 20):
            started = time.perf_counter()
            answer = client.get("/v1/sandbox/customers", headers={"X-Request-ID": f"r{number}"})
            if number >= 20:  # warm-up
                times.append(time.perf_counter() - started)
            if answer.status_code != 200:
                raise RuntimeError(f"a read answered {answer.status_code}")
    return statistics.median(times)


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="bench-proxy-"))
    ids = _identities(folder / "ids")
    log = folder / "exchanges.jsonl"
    proxy = [sys.executable, "-m", "conformance", "proxy", "--listen", "127.0.0.1:0", "--quiet"]
    trust = ["--trust", str(ids["ca"]), "--trust", str(ids["utf8"])]
    directs: list[float] = []
    proxieds: list[float] = []
    drains: list[float] = []
    totals = ""
    for round_ in range(ROUNDS):
        with _process(_server(ids, log if round_ == 0 else None), r"listening on (\S+)") as (
            _,
            url,
        ):
            directs.append(_suite(url, ids, folder / "direct"))
        with _process(_server(ids), r"listening on (\S+)") as (_, url):
            command = [*proxy, *trust, "--target", url, "--reports", str(folder / "proxied")]
            with _process(command, r"listening on (\S+)") as (process, proxy_url):
                proxieds.append(_suite(proxy_url, ids, folder / "run-proxied"))
                stopped = time.perf_counter()
                process.send_signal(signal.SIGINT)
                totals = process.communicate(timeout=300)[0]
                drains.append(time.perf_counter() - stopped)
    with _process(_server(None), r"listening on (\S+)") as (_, url):
        command = [*proxy, "--target", url, "--reports", str(folder / "reads")]
        with _process(command, r"listening on (\S+)") as (_, proxy_url):
            read_direct = _reads(url)
            read_proxied = _reads(proxy_url)
    exchanges = list(read_exchange_log(log))
    contract = load_contract()
    judge = TrafficJudge(contract, TrafficSettings(trust=load_trust([ids["ca"], ids["utf8"]])))
    started = time.perf_counter()
    judged = [judge.judge(exchange, at=at) for exchange, at in exchanges]
    judging = time.perf_counter() - started
    started = time.perf_counter()
    write_reports(
        folder / "offline",
        judged,
        TrafficRun("bench", "bench", datetime.now(UTC), datetime.now(UTC), {}),
        contract,
    )
    writing = time.perf_counter() - started
    judge_rate = len(exchanges) / judging
    direct, proxied = statistics.median(directs), statistics.median(proxieds)
    demand = len(exchanges) / direct
    print("proxy: the bundled suite run, directly and through conformance proxy")
    rounds = ", ".join(f"{d:.1f} / {p:.1f}" for d, p in zip(directs, proxieds, strict=True))
    print(f"  rounds (-n {WORKERS}), direct / through the proxy: {rounds} s")
    print(
        f"  direct: {direct:.1f} s (baseline, median); through the proxy: {proxied:.1f} s; "
        f"ratio {proxied / direct:.2f}x (target <= {MAX_RUN_RATIO}x)"
    )
    print(
        f"  after the run's last exchange: {statistics.median(drains):.1f} s to judge the queue "
        f"and write the reports (writing them alone, offline: {writing:.1f} s)"
    )
    print(f"  proxy's totals: {totals.strip().splitlines()[0] if totals.strip() else '(none)'}")
    print(f"proxy: added latency per exchange, median of {READS} signed reads (keep-alive)")
    print(
        f"  direct: {read_direct * 1000:.2f} ms (baseline); through the proxy: "
        f"{read_proxied * 1000:.2f} ms; added {(read_proxied - read_direct) * 1000:.2f} ms; "
        f"ratio {read_proxied / read_direct:.2f}x"
    )
    print(f"proxy: judging {len(exchanges)} recorded exchanges offline: {judging:.1f} s, "
          f"{judge_rate:.0f} exchanges/s; the suite sent {demand:.0f}/s "
          f"(judge capacity {judge_rate / demand:.2f}x the demand)")  # fmt: skip
    ok = proxied / direct <= MAX_RUN_RATIO and judge_rate > demand
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
