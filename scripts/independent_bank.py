"""The suite against a bank no one on the team wrote (``make independent``; CI runs it).

``../shared/banks/independent-1/`` is an implementation of interface.md that another team wrote
from the text alone (Starlette + uvicorn), with its hand-written profile (``bank.toml``) and what a
true run says of it (``EXPECTED.md``). This script:

1. gives the bank a virtual environment of its own (``.venv-banks/<name>``: starlette, uvicorn,
   cryptography, at the versions :data:`BANK_PACKAGES` pins), never the project's;
2. makes the run's identities with ``conformance certs`` (a CA and a TPP certificate, a CA with a
   non-ASCII name for the RFC 2047 scenarios), and starts the bank on a free loopback port
   trusting both CAs;
3. runs ``conformance run`` with the bank's profile (its ``base_url`` set to that port) and the
   CAs' keys as ``--trust-anchor`` options, reports in ``reports/<name>/``;
4. holds the run to the bank's expectation (:data:`EXPECTATIONS`, written from its
   ``EXPECTED.md``): must failures on exactly its stated breaks, nothing blocked, nothing in
   error, a complete run, at least the stated number of scenarios judged.

It prints one line saying whether the run matched, and exits 0 when it did, 1 when it did not,
2 when the bank could not be set up. The bank's own code is never changed: it stands for a bank
the team does not control.

    .venv/bin/python scripts/independent_bank.py [--bank ../shared/banks/independent-1]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: The bank's packages, pinned so that a run next month meets the same bank (its README names
#: them unpinned: these are the versions its run was measured with).
BANK_PACKAGES = ("starlette==1.10.0", "uvicorn==0.54.0", "cryptography==50.0.2")


@dataclass(frozen=True)
class Expectation:
    """What a true run says of one bank (its ``EXPECTED.md``): the scenario ids (shell patterns)
    that fail at must, how many, and the least number of scenarios judged."""

    must_failures: tuple[str, ...]
    must_failure_count: int
    least_judged: int


#: Per bank folder, from its ``EXPECTED.md``: independent-1 breaks spec 7's code list in the
#: refusals of unsigned or wrongly signed E16-E18 requests, and takes integers for three string
#: fields of E17's creditorAddress (spec 2.7).
EXPECTATIONS: Mapping[str, Expectation] = {
    "independent-1": Expectation(
        must_failures=(
            "E16-auth-*-rejected",
            "E17-auth-*-rejected",
            "E18-auth-*-rejected",
            "E17-creditorAddress.buildingNumber-type-integer-rejected",
            "E17-creditorAddress.city-type-integer-rejected",
            "E17-creditorAddress.postalCode-type-integer-rejected",
        ),
        must_failure_count=30,
        least_judged=2000,
    ),
}

#: The verdicts of scenarios that were judged (compliance.json ``totals``).
_JUDGED = ("passed", "failed", "failed_should")


def judge(compliance: Mapping[str, Any], expectation: Expectation) -> list[str]:
    """Where the run in ``compliance`` (a compliance.json) departs from ``expectation``: one
    line each, empty when it matches."""
    problems: list[str] = []
    run = compliance.get("run", {})
    if not run.get("complete", False):
        problems.append("the run did not complete")
    totals = compliance.get("totals", {})
    for verdict in ("blocked", "error"):
        if totals.get(verdict, 0):
            problems.append(f"{totals[verdict]} scenario(s) {verdict}, expected none")
    judged = sum(int(totals.get(verdict, 0)) for verdict in _JUDGED)
    if judged < expectation.least_judged:
        problems.append(f"{judged} scenarios judged, expected at least {expectation.least_judged}")
    failed = sorted(
        scenario["id"]
        for scenario in compliance.get("scenarios", ())
        if scenario.get("verdict") == "failed"
    )
    unexpected = [
        scenario
        for scenario in failed
        if not any(fnmatch.fnmatchcase(scenario, pattern) for pattern in expectation.must_failures)
    ]
    if unexpected:
        problems.append(
            f"must failures not among the bank's stated breaks: {', '.join(unexpected)}"
        )
    if len(failed) != expectation.must_failure_count:
        problems.append(
            f"{len(failed)} must failures, expected {expectation.must_failure_count} "
            "(the bank's stated breaks)"
        )
    return problems


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _bank_python(venv: Path) -> Path:
    """The bank's interpreter, its virtual environment made on first use."""
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    wanted = "\n".join(BANK_PACKAGES)
    if stamp.is_file() and stamp.read_text() == wanted:
        return python
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *BANK_PACKAGES],
        check=True,
    )
    stamp.write_text(wanted)
    return python


def _conformance(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "conformance", *arguments]


def _identities(folder: Path) -> None:
    """A CA and TPP certificate (``folder``), and a CA with a non-ASCII name (``folder/utf8``),
    made afresh for each run (``--force``: the run's own folder, so a second ``make independent``
    in one checkout replaces the first run's identities instead of stopping on them)."""
    for extra in ((), ("--ca-name", "Conformance Test CA Ærø")):
        out = folder / "utf8" if extra else folder
        subprocess.run(
            _conformance("certs", "--out", str(out), "--force", *extra),
            check=True,
            stdout=subprocess.DEVNULL,
        )


@contextmanager
def _running_bank(python: Path, bank: Path, port: int, ids: Path, log: Path) -> Iterator[None]:
    """The bank listening on ``port`` of the loopback address, stopped on leaving."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                str(python),
                "server.py",
                "--port",
                str(port),
                "--trust",
                str(ids / "ca.pem"),
                "--trust",
                str(ids / "utf8" / "ca.pem"),
            ],
            cwd=bank,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_for(port, process)
            yield
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def _wait_for(port: int, process: subprocess.Popen[bytes], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the bank stopped at start (exit {process.returncode})")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/accounts", timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers: an unsigned request is refused
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the bank did not answer on port {port} within {seconds:.0f} s")


def _profile(bank: Path, port: int, out: Path) -> Path:
    """The bank's own profile with its ``base_url`` set to ``port``."""
    text = (bank / "bank.toml").read_text(encoding="utf-8")
    text, count = re.subn(
        r"^base_url\s*=.*$", f'base_url = "http://127.0.0.1:{port}"', text, flags=re.MULTILINE
    )
    if count != 1:
        raise RuntimeError(f"{bank / 'bank.toml'} has no base_url line to set")
    out.write_text(text, encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bank", type=Path, default=ROOT.parent / "shared/banks/independent-1")
    parser.add_argument("--reports", type=Path, default=None, help="default: reports/<bank>")
    parser.add_argument("--venv", type=Path, default=None, help="default: .venv-banks/<bank>")
    args = parser.parse_args(argv)
    bank: Path = args.bank.resolve()
    name = bank.name
    expectation = EXPECTATIONS.get(name)
    if expectation is None or not (bank / "server.py").is_file():
        print(f"independent bank: {bank} is not a known bank folder", file=sys.stderr)
        return 2
    reports: Path = (args.reports or ROOT / "reports" / name).resolve()
    ids = reports / "identity"
    reports.mkdir(parents=True, exist_ok=True)
    try:
        python = _bank_python((args.venv or ROOT / ".venv-banks" / name).resolve())
        _identities(ids)
        port = _free_port()
        profile = _profile(bank, port, reports / "bank.toml")
        with _running_bank(python, bank, port, ids, reports / "bank.log"):
            started = time.monotonic()
            run = subprocess.run(
                _conformance(
                    "run",
                    "--profile",
                    str(profile),
                    "--cert",
                    str(ids / "tpp.pem"),
                    "--key",
                    str(ids / "tpp.key"),
                    "--reports",
                    str(reports),
                    "--",
                    "--trust-anchor",
                    str(ids / "ca.pem"),
                    "--trust-anchor-key",
                    str(ids / "ca.key"),
                    "--trust-anchor-utf8",
                    str(ids / "utf8" / "ca.pem"),
                    "--trust-anchor-utf8-key",
                    str(ids / "utf8" / "ca.key"),
                ),
                cwd=ROOT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            took = time.monotonic() - started
    except (OSError, RuntimeError, subprocess.CalledProcessError) as problem:
        print(f"independent bank: {name} could not be set up: {problem}", file=sys.stderr)
        return 2
    (reports / "run.log").write_text(run.stdout, encoding="utf-8")
    verdict = run.stdout.rstrip().splitlines()[-1] if run.stdout.strip() else "(no output)"
    print(f"{name}: {verdict}")
    compliance_file = reports / "compliance.json"
    if not compliance_file.is_file():
        print(f"independent bank: {name}: the run wrote no compliance.json (exit {run.returncode})")
        return 1
    problems = judge(json.loads(compliance_file.read_text(encoding="utf-8")), expectation)
    if problems:
        for problem in problems:
            print(f"independent bank: {name}: {problem}")
        print(f"independent bank: {name} does NOT match its EXPECTED.md ({reports / 'run.log'})")
        return 1
    print(
        f"independent bank: {name} matches its EXPECTED.md: must failures on exactly its "
        f"{expectation.must_failure_count} stated breaks, nothing blocked, nothing in error "
        f"({took:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
