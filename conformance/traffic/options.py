"""What ``conformance proxy`` and ``conformance judge`` share: the profile and masking, the CAs a
signing certificate is judged against, and the reports written at the end."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography import x509

from conformance.contract import load_contract
from conformance.errors import CertificateError
from conformance.report.compliance import profile_summary
from conformance.report.masking import configure_masking, policy_for
from conformance.traffic.judge import TrafficJudge
from conformance.traffic.reports import TrafficRun, terminal_lines, write_reports
from conformance.traffic.settings import TrafficSettings

if TYPE_CHECKING:
    from conformance.profile import TargetProfile
    from conformance.traffic.session import TrafficSession

__all__ = ["add_judge_arguments", "finish", "judge_for", "load_trust"]


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="the bank's target profile: its paths, product ids, required header sets, query "
        "names, KID type, clock skew and [mask] (default: the contract's own choices)",
    )
    parser.add_argument(
        "--trust",
        type=Path,
        action="append",
        default=[],
        metavar="CA.pem",
        help="a CA the bank trusts for signing certificates (repeatable): a certificate of "
        "another CA is then a TPP finding (spec 5 item 1); without it trust is not judged",
    )
    parser.add_argument(
        "--reports",
        type=Path,
        default=Path("reports"),
        metavar="DIR",
        help="where the reports go (default reports/): compliance.md/.html/.json, junit.xml, "
        "allure-results/",
    )
    parser.add_argument("--quiet", action="store_true", help="no line per exchange")


def load_trust(paths: list[Path]) -> tuple[x509.Certificate, ...]:
    """Every certificate of each PEM file (or one DER file)."""
    found: list[x509.Certificate] = []
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError as error:
            raise CertificateError(f"cannot read the --trust file {path}: {error}") from None
        try:
            found += (
                x509.load_pem_x509_certificates(data)
                if b"-----BEGIN" in data
                else [x509.load_der_x509_certificate(data)]
            )
        except ValueError as error:
            raise CertificateError(f"{path} holds no certificate: {error}") from None
    return tuple(found)


def judge_for(profile: TargetProfile | None, trust: list[Path]) -> TrafficJudge:
    """The judge of a profile (masking set from its ``[mask]``, as a run does)."""
    contract = load_contract()
    if profile is not None:
        configure_masking(policy_for(profile))
    return TrafficJudge(contract, TrafficSettings.of(profile, contract, load_trust(trust)))


def finish(
    session: TrafficSession,
    reports: Path,
    *,
    source: str,
    target: str,
    profile: TargetProfile | None,
) -> int:
    """Write the reports, print the totals; exit 1 when a must finding was made, else 3 when
    no exchange of the interface was judged (an empty capture: a CI gate must not pass on it)
    or the judge failed on one (said, with how many)."""
    run = TrafficRun(
        source=source,
        target=target,
        started=session.started,
        finished=datetime.now(UTC),
        profile=profile_summary(profile),
    )
    document = write_reports(reports, session.judged, run, session.judge.contract)
    print(session.totals())
    for line in terminal_lines(document):
        print(line)
    print(
        f"reports written to {reports}/ (compliance.md, compliance.html, compliance.json, "
        "junit.xml, allure-results/)"
    )
    if session.must_findings():
        return 1
    if not any(not item.skipped for item in session.judged) and not session.unjudged:
        print("NOT JUDGED: no exchange of the interface was judged (exit 3)")
        return 3
    if session.unjudged:
        print(
            f"NOT JUDGED: the judge failed on {len(session.unjudged)} exchange(s), which the "
            f"reports leave out; the first: {session.unjudged[0]}"
        )
        return 3
    return 0
