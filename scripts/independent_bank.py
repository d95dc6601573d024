"""The suite against banks no one on the team wrote (``make independent``; CI runs it).

Each is an implementation of interface.md written from the text alone by engineers who had seen
neither the suite nor its reference server, with its profile (``bank.toml``) and what a true run
says of it (``EXPECTED.md``): ``../shared/banks/independent-1/`` (Starlette + uvicorn, another
team's), and ``banks/independent-2/`` (``http.server``, a strict gateway) and
``banks/independent-3/`` (``wsgiref``, a developer-portal sandbox), each written from the spec
alone for this project. For each bank this script:

1. gives the bank a virtual environment of its own (``.venv-banks/<name>``: the packages its
   :class:`Expectation` pins), never the project's;
2. makes the run's identities with ``conformance certs`` (a CA and a TPP certificate, a CA with a
   non-ASCII name for the RFC 2047 scenarios), and starts the bank on a free loopback port
   trusting both CAs;
3. runs ``conformance run`` with the bank's profile (its ``base_url`` set to that port) and the
   CAs' keys as ``--trust-anchor`` options, reports in ``reports/<name>/``;
4. holds the run to the bank's expectation (:data:`EXPECTATIONS`, written from its
   ``EXPECTED.md``): must failures on exactly its stated breaks, blocked exactly the scenarios
   it lists (none for most), nothing in error, a complete run, at least the stated number of
   scenarios judged.

It prints one line per bank saying whether the run matched, and exits 0 when every one did, 1
when one did not, 2 when one could not be set up. A bank's own code is never changed: it stands
for a bank the team does not control.

    .venv/bin/python scripts/independent_bank.py [--bank banks/independent-2 ...]
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

#: independent-1's packages, pinned so that a run next month meets the same bank (its README
#: names them unpinned: these are the versions its run was measured with).
BANK_PACKAGES = ("starlette==1.10.0", "uvicorn==0.54.0", "cryptography==50.0.2")
#: The packages of the banks on the standard library's servers: cryptography only.
STDLIB_BANK_PACKAGES = ("cryptography==50.0.2",)


@dataclass(frozen=True)
class Expectation:
    """What a true run says of one bank (its ``EXPECTED.md``): the scenario ids (shell patterns)
    that fail at must, how many, the least number of scenarios judged, and the scenarios (shell
    patterns, how many) a run blocks with the reason EXPECTED.md gives; where the bank lives
    and the packages its virtual environment pins."""

    must_failures: tuple[str, ...]
    must_failure_count: int
    least_judged: int
    folder: Path
    packages: tuple[str, ...] = BANK_PACKAGES
    blocked: tuple[str, ...] = ()
    blocked_count: int = 0


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
        folder=ROOT.parent / "shared" / "banks" / "independent-1",
    ),
    "independent-2": Expectation(
        must_failures=(),
        must_failure_count=0,
        least_judged=2000,
        folder=ROOT / "banks" / "independent-2",
        packages=STDLIB_BANK_PACKAGES,
        blocked=(
            "E6-engagement-without-register-not-offered",
            "E16-auth-psu-identity-accepted",
            "E17-auth-psu-identity-accepted",
            "E18-auth-psu-identity-accepted",
            "AL-LIM-account-name-*-holds",
            "AT-LIM-default-page-size-200-holds",
            "AT-LIM-pagination-links-page-size-200-holds",
            "AT-paging-follows-next-to-the-end",
        ),
        blocked_count=9,
    ),
    "independent-4": Expectation(
        must_failures=("AT-LIM-pagination-links-page-size-200-holds",),
        must_failure_count=1,
        least_judged=1800,
        folder=ROOT / "banks" / "independent-4",
        packages=STDLIB_BANK_PACKAGES,
    ),
    "independent-5": Expectation(
        must_failures=(
            "E7-LIM-bban-max-30-rejected",
            "E7-LIM-iban-max-34-rejected",
            "E7-0.creditorAccount.bban-maxLength-31-rejected",
            "E7-0.creditorAccount.iban-maxLength-35-rejected",
        ),
        must_failure_count=4,
        least_judged=1800,
        folder=ROOT / "banks" / "independent-5",
        packages=STDLIB_BANK_PACKAGES,
    ),
    "independent-3": Expectation(
        must_failures=(),
        must_failure_count=0,
        least_judged=2000,
        folder=ROOT / "banks" / "independent-3",
        packages=STDLIB_BANK_PACKAGES,
        blocked=("E14-private-agreement-reads-back",),
        blocked_count=1,
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
    if totals.get("error", 0):
        problems.append(f"{totals['error']} scenario(s) error, expected none")
    problems += _blocked(compliance, expectation)
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


def _blocked(compliance: Mapping[str, Any], expectation: Expectation) -> list[str]:
    """Where the blocked scenarios depart from the ones EXPECTED.md lists."""
    blocked = sorted(
        str(scenario["id"])
        for scenario in compliance.get("scenarios", ())
        if scenario.get("verdict") == "blocked"
    )
    count = int(compliance.get("totals", {}).get("blocked", len(blocked)))
    problems: list[str] = []
    unexpected = [
        scenario
        for scenario in blocked
        if not any(fnmatch.fnmatchcase(scenario, pattern) for pattern in expectation.blocked)
    ]
    if unexpected:
        problems.append(f"blocked scenarios EXPECTED.md does not list: {', '.join(unexpected)}")
    if count != expectation.blocked_count:
        wanted = expectation.blocked_count or "none"
        problems.append(f"{count} scenario(s) blocked, expected {wanted}")
    return problems


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _bank_python(venv: Path, packages: tuple[str, ...] = BANK_PACKAGES) -> Path:
    """The bank's interpreter, its virtual environment made on first use."""
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    wanted = "\n".join(packages)
    if stamp.is_file() and stamp.read_text() == wanted:
        return python
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *packages],
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
    """The bank's own profile with its ``base_url`` set to ``port``, and its ``[sca] command``
    and ``[setup] templates`` named in the bank's folder where they name a file of it (the
    profile is written to ``out``, in the run's reports)."""
    text = (bank / "bank.toml").read_text(encoding="utf-8")
    text, count = re.subn(
        r"^base_url\s*=.*$", f'base_url = "http://127.0.0.1:{port}"', text, flags=re.MULTILINE
    )
    if count != 1:
        raise RuntimeError(f"{bank / 'bank.toml'} has no base_url line to set")

    def in_bank(found: re.Match[str]) -> str:
        named = bank / found.group(2)
        return f'{found.group(1)}"{named}"' if named.exists() else found.group(0)

    text = re.sub(r'^((?:command|templates)\s*=\s*)"([^"/]+)"', in_bank, text, flags=re.M)
    out.write_text(text, encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--bank",
        type=Path,
        action="append",
        default=None,
        help="a bank's folder (again for more); default: every bank of EXPECTATIONS",
    )
    parser.add_argument("--reports", type=Path, default=None, help="default: reports/<bank>")
    parser.add_argument("--venv", type=Path, default=None, help="default: .venv-banks/<bank>")
    args = parser.parse_args(argv)
    banks = [bank.resolve() for bank in args.bank or [e.folder for e in EXPECTATIONS.values()]]
    if len(banks) > 1 and (args.reports or args.venv):
        print("independent bank: --reports and --venv go with one --bank", file=sys.stderr)
        return 2
    codes = [run_bank(bank, args.reports, args.venv) for bank in banks]
    return max(codes)


def run_bank(bank: Path, reports_option: Path | None, venv_option: Path | None) -> int:
    """One bank's run held to its expectation: 0 matched, 1 not, 2 not set up."""
    name = bank.name
    expectation = EXPECTATIONS.get(name)
    if expectation is None or not (bank / "server.py").is_file():
        print(f"independent bank: {bank} is not a known bank folder", file=sys.stderr)
        return 2
    reports: Path = (reports_option or ROOT / "reports" / name).resolve()
    ids = reports / "identity"
    reports.mkdir(parents=True, exist_ok=True)
    try:
        venv = (venv_option or ROOT / ".venv-banks" / name).resolve()
        python = _bank_python(venv, expectation.packages)
        _identities(ids)
        port = _free_port()
        profile = _profile(bank, port, reports / "bank.toml")
        with _running_bank(python, bank, port, ids, reports / "bank.log"):
            started = time.monotonic()
            run = subprocess.run(
                _run_command(profile, ids, reports),
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
    blocked = (
        f"blocked exactly its {expectation.blocked_count} listed"
        if expectation.blocked_count
        else "nothing blocked"
    )
    print(
        f"independent bank: {name} matches its EXPECTED.md: must failures on exactly its "
        f"{expectation.must_failure_count} stated breaks, {blocked}, nothing in error "
        f"({took:.0f} s)"
    )
    return 0


def _run_command(profile: Path, ids: Path, reports: Path) -> list[str]:
    """``conformance run`` against the bank with the run's identities (the CAs' keys as the
    suite's trust anchors, for its negative certificates)."""
    return _conformance(
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
    )


if __name__ == "__main__":
    sys.exit(main())
