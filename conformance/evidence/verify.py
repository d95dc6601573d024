"""``conformance verify``'s check of a sealed record: the seal and its chain, every file against
its sealed digest (and no file unsealed), the scenario verdicts of ``verdicts.json`` against
``compliance.json``, each scenario's exchanges present, and the traffic judge's verdict on every
exchange recomputed and compared with the sealed one. A record with an RFC 3161 time-stamp
token (``timestamp.tsr``, ``evidence/timestamp.py``) has its chain validated at the token's time
when a time-stamping authority the verifier trusts signed it; else at the time of verification."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from cryptography import x509

from conformance import __version__
from conformance.contract import load_contract
from conformance.errors import CertificateError, ConformanceError
from conformance.evidence.record import (
    MANIFEST,
    PROFILE_COPY,
    SEAL,
    VERDICTS,
    digest,
    kept_exchanges,
    scenario_verdicts,
)
from conformance.evidence.rejudge import judge_kept
from conformance.evidence.sealing import checked_chain, own_root, revoked, verified_seal
from conformance.evidence.timestamp import TIMESTAMP, checked_timestamp
from conformance.report.compliance import COMPLIANCE_JSON
from conformance.report.exchange_record import EXCHANGES_DIR, exchanges_file

__all__ = ["Verification", "verify_record"]

#: Bytes read at a time to hash a file.
_CHUNK = 1024 * 1024
#: How far ahead of this machine's clock a sealer's clock may be.
_CLOCK_SKEW = timedelta(minutes=5)


@dataclass
class Verification:
    """What a check of a record found: ``problems`` make it fail; ``notes`` are said."""

    record: str = ""
    sealed_by: str = ""
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: What the check could not establish (who sealed the record, without a trusted CA): the
    #: record is then not verified, though nothing in it differs.
    unestablished: list[str] = field(default_factory=list)
    rejudged: int = 0
    #: The time a trusted time-stamp token gives the seal (None: none, or not trusted).
    timestamped: datetime | None = None

    @property
    def consistent(self) -> bool:
        """Nothing differs: the seal, the files and the verdicts agree with each other."""
        return not self.problems

    @property
    def verified(self) -> bool:
        """Nothing differs, and the seal leads to a CA the verifier trusts."""
        return not self.problems and not self.unestablished


def verify_record(
    folder: Path,
    *,
    trust: tuple[x509.Certificate, ...] = (),
    profile: Path | None = None,
    previous: Path | None = None,
    crls: tuple[x509.CertificateRevocationList, ...] = (),
    tsa_trust: tuple[x509.Certificate, ...] = (),
    now: datetime | None = None,
) -> Verification:
    """Check the record in ``folder``. ``profile`` stands in for the sealed copy when that one
    names files not kept beside it (its digest must be the sealed one); ``previous`` is the
    record this one should follow; ``crls`` are revocation lists the chain is checked against
    (each must be signed by the issuer it names, found in the chain or ``trust``); ``tsa_trust``
    the CAs of the time-stamping authorities whose time is taken for the chain's validity (a
    record without a token is then a difference); ``now`` the moment of verification."""
    result = Verification()
    manifest_path, seal_path = folder / MANIFEST, folder / SEAL
    if not manifest_path.is_file() or not seal_path.is_file():
        raise ConformanceError(f"{folder} is not a sealed record: {MANIFEST} or {SEAL} is missing")
    manifest_bytes = manifest_path.read_bytes()
    result.record = digest(manifest_bytes)
    seal_bytes = seal_path.read_bytes()
    try:
        chain = verified_seal(seal_bytes.decode("ascii"), manifest_bytes)
    except (ConformanceError, UnicodeDecodeError) as error:
        result.problems.append(f"seal: {getattr(error, 'message', error)}")
        return result
    result.sealed_by = chain[0].subject.rfc4514_string()
    now = now or datetime.now(UTC)
    at = _trusted_time(folder, seal_bytes, tsa_trust, result)
    result.problems += [f"chain: {problem}" for problem in checked_chain(chain, at or now, trust)]
    result.problems += [f"chain: {problem}" for problem in revoked(chain, trust, crls)]
    if not crls:
        result.notes.append("revocation is not checked (give --crl FILE for the CA's list)")
    if not trust:
        result.unestablished.append(
            "who sealed it: the chain is checked within itself only, not against a CA you trust "
            "(give --trust CA.pem), so anyone could have sealed this record"
        )
        if not own_root(chain):
            result.unestablished.append(
                f"the chain: it ends at {chain[-1].subject.rfc4514_string()}, whose issuer "
                "the record does not hold, so its certificates are not validated at all"
            )
    manifest = _manifest(manifest_bytes, at or now, result)
    if manifest is None:
        return result
    _check_previous(manifest, previous, result)
    _check_files(folder, manifest, result)
    if result.problems:
        return result  # an edited or missing file: re-judging it would say nothing more
    _check_verdicts(folder, manifest, profile, result)
    return result


def _trusted_time(
    folder: Path, sealed: bytes, tsa_trust: tuple[x509.Certificate, ...], result: Verification
) -> datetime | None:
    """The time of the record's time-stamp token over ``sealed`` (the seal's bytes) when an
    authority of ``tsa_trust`` signed it; None without a token or trust (said as a note), or
    when the token does not verify (a problem)."""
    path = folder / TIMESTAMP
    if not path.is_file():
        if tsa_trust:
            result.problems.append(
                f"{TIMESTAMP}: missing, though --tsa-trust asks for a trusted time"
            )
        return None
    try:
        stamp = checked_timestamp(path.read_bytes(), sealed, tsa_trust)
    except CertificateError as error:
        result.problems.append(f"timestamp: {error.message}")
        return None
    when = stamp.time.isoformat(timespec="seconds")
    if not stamp.trusted:
        result.notes.append(
            f"time-stamped {when} by {stamp.authority}, checked within itself only: its time "
            "is not used (give --tsa-trust TSA-CA.pem)"
        )
        return None
    result.notes.append(
        f"time-stamped {when} by {stamp.authority}: the chain is validated at that time"
    )
    result.timestamped = stamp.time
    return stamp.time


def _manifest(data: bytes, now: datetime, result: Verification) -> dict[str, Any] | None:
    """The sealed manifest, or None with a problem said when it is not one (not JSON, not an
    object, ``files`` not an object, ``sealed_at`` not a date or later than ``now``: the time of
    verification, or of a trusted time-stamp token)."""
    try:
        manifest = json.loads(data)
    except (ValueError, RecursionError) as error:
        result.problems.append(f"{MANIFEST}: not JSON ({error})")
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        result.problems.append(f"{MANIFEST}: not a manifest (an object with a files object)")
        return None
    try:
        sealed_at = datetime.fromisoformat(str(manifest["sealed_at"]))
    except (KeyError, ValueError) as error:
        result.problems.append(f"{MANIFEST}: sealed_at is missing or not a date ({error})")
        return None
    if sealed_at.tzinfo is None:
        sealed_at = sealed_at.replace(tzinfo=UTC)
    if sealed_at > now + _CLOCK_SKEW:
        than = "its time-stamp" if result.timestamped else "now"
        result.problems.append(
            f"{MANIFEST}: sealed_at {sealed_at.isoformat()} is later than {than} "
            f"({now.isoformat(timespec='seconds')})"
        )
    return manifest


def _check_previous(manifest: dict[str, Any], previous: Path | None, result: Verification) -> None:
    named = manifest.get("previous")
    result.notes.append(
        f"follows the record {named}" if named else "the first record of its series"
    )
    if previous is None:
        return
    path = previous / MANIFEST if previous.is_dir() else previous
    wanted = digest(path.read_bytes()) if path.is_file() else f"(no {path})"
    if named != wanted:
        result.problems.append(f"previous: the record names {named}, --previous is {wanted}")


def _check_files(folder: Path, manifest: dict[str, Any], result: Verification) -> None:
    """Every sealed file present and unedited, and nothing else in the folder. The record is
    the manifest and nothing else: a name that leaves the folder (absolute, ``..``) is refused
    unread (L1); a symlink, a FIFO or any other entry that is not a regular file is refused
    and never followed or read (M8, M9); files are hashed as streams (L3)."""
    files: dict[str, str] = manifest["files"]
    _check_sealed(folder, files, result)
    _check_unsealed(folder, files, result)


def _check_sealed(folder: Path, files: dict[str, str], result: Verification) -> None:
    for name, sealed in files.items():
        if not _inside(name):
            result.problems.append(f"{name}: a sealed name outside the record (refused unread)")
            continue
        path = folder / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            result.problems.append(f"{name}: sealed, and not a regular file (not read)")
        elif not path.is_file():
            result.problems.append(f"{name}: sealed, and missing")
        elif _streamed_digest(path) != sealed:
            result.problems.append(f"{name}: edited since it was sealed (its digest differs)")


def _check_unsealed(folder: Path, files: dict[str, str], result: Verification) -> None:
    present: set[str] = set()
    for root, folders, names in os.walk(folder, followlinks=False):
        here = Path(root)
        for entry in [*folders, *names]:
            path = here / entry
            relative = path.relative_to(folder).as_posix()
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                if relative not in files:
                    result.problems.append(
                        f"{relative}: not part of the sealed record (and not a regular file)"
                    )
            elif path.is_file():
                present.add(relative)
    for name in sorted(present - set(files) - {MANIFEST, SEAL, TIMESTAMP}):
        result.problems.append(f"{name}: not part of the sealed record")


def _inside(name: str) -> bool:
    """Whether a sealed name stays inside the record: relative, without ``..``."""
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and "\\" not in name


def _streamed_digest(path: Path) -> str:
    """The ``sha256:`` digest of a file, read in chunks (a huge file costs no memory)."""
    hasher = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(_CHUNK):
            hasher.update(chunk)
    return "sha256:" + hasher.hexdigest()


def _check_verdicts(
    folder: Path, manifest: dict[str, Any], profile: Path | None, result: Verification
) -> None:
    compliance = json.loads((folder / COMPLIANCE_JSON).read_text(encoding="utf-8"))
    sealed = json.loads((folder / VERDICTS).read_text(encoding="utf-8"))
    stated = scenario_verdicts(compliance)
    if sealed.get("scenarios") != stated:
        changed = sorted(
            set(stated.items()).symmetric_difference(sealed.get("scenarios", {}).items())
        )
        result.problems.append(
            "verdicts: the scenario verdicts of verdicts.json and compliance.json differ: "
            + ", ".join(f"{scenario} {verdict}" for scenario, verdict in changed[:5])
        )
    files = manifest.get("files", {})
    for scenario in stated:
        name = f"{EXCHANGES_DIR}/{exchanges_file(Path(), scenario).name}"
        if name not in files:
            result.problems.append(f"exchanges: none kept for scenario {scenario}")
    if manifest.get("contract_digest") != "sha256:" + load_contract().digest:
        result.notes.append(
            f"judged again by suite {__version__} with another contract than the sealed one: "
            "a difference may come from the suite"
        )
    rejudged = judge_kept(kept_exchanges(folder), _profile(folder, manifest, profile, result))
    result.rejudged = len(rejudged)
    before = sealed.get("exchanges", [])
    if len(before) != len(rejudged):
        result.problems.append(
            f"exchanges: {len(before)} verdicts sealed, {len(rejudged)} exchanges kept"
        )
    for old, new in zip(before, rejudged, strict=False):
        if old != new:
            where = f"{new['file']} exchange {new['position']}"
            result.problems.append(
                f"exchanges: {where} judged again differs from the sealed verdict: sealed "
                f"{old.get('findings')}, now {new['findings']}"
            )


def _profile(
    folder: Path, manifest: dict[str, Any], given: Path | None, result: Verification
) -> Path | None:
    """The profile to judge with: ``given`` when its digest is the sealed one, else the copy."""
    sealed = manifest.get("profile", {}).get("sha256")
    if given is not None:
        if digest(given.read_bytes()) != sealed:
            result.problems.append(f"profile: {given} is not the sealed profile (digest differs)")
        return given
    return folder / PROFILE_COPY if sealed else None
