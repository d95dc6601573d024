"""Writing the sealed record of a run into ``<reports>/evidence/`` (see the package), and
finding the previous record that a new one names."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from conformance import SPEC_VERSION, __version__
from conformance.contract import load_contract
from conformance.errors import ConformanceError
from conformance.evidence.rejudge import ScenarioExchanges, judge_kept
from conformance.evidence.sealing import SealKey, seal
from conformance.evidence.timestamp import TIMESTAMP, request_timestamp
from conformance.profile import profile_files
from conformance.report.compliance import COMPLIANCE_JSON
from conformance.report.exchange_record import (
    EVIDENCE_DIR,
    EXCHANGES_DIR,
    RECORDING_DIR,
    iter_files,
    read_exchanges,
)

__all__ = [
    "MANIFEST",
    "PROFILE_COPY",
    "RECORD_FORMAT",
    "SEAL",
    "VERDICTS",
    "SealedRecord",
    "clear_recording",
    "digest",
    "kept_exchanges",
    "make_room",
    "previous_record",
    "scenario_verdicts",
    "seal_record",
]

RECORD_FORMAT: Final = "psd2-conformance/evidence/1"
MANIFEST: Final = "manifest.json"
SEAL: Final = "seal.jws"
VERDICTS: Final = "verdicts.json"
PROFILE_COPY: Final = "profile.toml"


@dataclass(frozen=True)
class SealedRecord:
    """A record just sealed: its digest, the one it follows, where the record before it went."""

    digest: str
    previous: str | None
    moved: Path | None


def digest(data: bytes) -> str:
    """``sha256:`` and the hex SHA-256 of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def previous_record(reports: Path, named: Path | None) -> str | None:
    """The digest of the record a new one follows: of ``named`` (an evidence folder or its
    manifest), else of the record already in ``reports`` (None: the first of its series)."""
    if named is not None:
        manifest = named / MANIFEST if named.is_dir() else named
        if not manifest.is_file():
            raise ConformanceError(f"--seal-previous: {manifest} is not a sealed record's manifest")
        return digest(manifest.read_bytes())
    manifest = reports / EVIDENCE_DIR / MANIFEST
    return digest(manifest.read_bytes()) if manifest.is_file() else None


def make_room(reports: Path) -> Path | None:
    """Empty ``<reports>/evidence/`` for a new record; a record already there is moved beside it
    (``evidence-<first 12 hex digits of its digest>``) so that the series stays on disk.
    Returns where it went (None: there was none)."""
    folder = reports / EVIDENCE_DIR
    if not folder.exists():
        return None
    manifest = folder / MANIFEST
    if manifest.is_file():
        name = digest(manifest.read_bytes()).removeprefix("sha256:")[:12]
        kept = reports / f"{EVIDENCE_DIR}-{name}"
        if kept.exists():
            shutil.rmtree(kept)
        folder.rename(kept)
        return kept
    shutil.rmtree(folder)  # exchanges of a run that was not sealed
    return None


def clear_recording(reports: Path) -> None:
    """Remove what an earlier sealed run that never ended left of its recording."""
    shutil.rmtree(reports / RECORDING_DIR, ignore_errors=True)


def kept_exchanges(folder: Path) -> list[ScenarioExchanges]:
    """Every scenario's kept exchanges in ``folder`` (an evidence folder), by file name."""
    listed: list[ScenarioExchanges] = []
    for path in iter_files(folder / EXCHANGES_DIR):
        scenario, exchanges = read_exchanges(path)
        listed.append((scenario, path.name, exchanges))
    return listed


def _write_json(path: Path, document: Any) -> bytes:
    data = (json.dumps(document, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode()
    path.write_bytes(data)
    return data


def scenario_verdicts(compliance: Mapping[str, Any]) -> dict[str, str]:
    """Each scenario's verdict in a compliance document."""
    return {str(item["id"]): str(item["verdict"]) for item in compliance.get("scenarios", ())}


def seal_record(
    reports: Path,
    key: SealKey,
    *,
    profile: Path | None,
    previous: Path | None,
    started: datetime,
    tsa: str | None = None,
) -> SealedRecord:
    """Write and seal ``<reports>/evidence/`` for the run whose reports are in ``reports``
    (its compliance.json written since ``started``, its exchanges in ``evidence.recording/``)
    with the run's ``profile`` file. The new record follows ``previous`` (an evidence folder),
    else the record already in ``evidence/``, which is moved aside (:func:`make_room`). With
    ``tsa`` (a time-stamping authority's URL) the seal gets an RFC 3161 token, ``timestamp.tsr``."""
    folder = reports / EVIDENCE_DIR
    source = reports / COMPLIANCE_JSON
    if not source.is_file() or source.stat().st_mtime < started.timestamp():
        raise ConformanceError("the run wrote no compliance.json: there is nothing to seal")
    follows = previous_record(reports, previous)
    moved = make_room(reports)
    recording = reports / RECORDING_DIR
    if recording.is_dir():
        recording.rename(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / EXCHANGES_DIR).mkdir(exist_ok=True)
    compliance_bytes = source.read_bytes()
    (folder / COMPLIANCE_JSON).write_bytes(compliance_bytes)
    compliance = json.loads(compliance_bytes)
    files: dict[str, str] = {COMPLIANCE_JSON: digest(compliance_bytes)}
    profile_entry: dict[str, Any] = {"file": None, "sha256": None}
    if profile is not None:
        profile_bytes = profile.read_bytes()
        (folder / PROFILE_COPY).write_bytes(profile_bytes)
        files[PROFILE_COPY] = digest(profile_bytes)
        profile_entry = {"file": PROFILE_COPY, "sha256": digest(profile_bytes)}
        # The profiles it extends, under their own names beside it, so that the copy reads as
        # the run read it (``extends`` names a file of the same folder).
        for base in profile_files(profile)[1:]:
            if base.name in files or base.name == PROFILE_COPY:
                raise ConformanceError(f"cannot keep {base} in the record: its name is taken")
            base_bytes = base.read_bytes()
            (folder / base.name).write_bytes(base_bytes)
            files[base.name] = digest(base_bytes)
    for path in iter_files(folder / EXCHANGES_DIR):
        files[f"{EXCHANGES_DIR}/{path.name}"] = digest(path.read_bytes())
    verdicts = {
        "scenarios": scenario_verdicts(compliance),
        "exchanges": judge_kept(kept_exchanges(folder), profile),
    }
    files[VERDICTS] = digest(_write_json(folder / VERDICTS, verdicts))
    manifest = {
        "format": RECORD_FORMAT,
        "suite_version": __version__,
        "suite_commit": compliance.get("run", {}).get("suite_commit"),
        "spec_version": SPEC_VERSION,
        "contract_digest": "sha256:" + load_contract().digest,
        "sealed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "previous": follows,
        "profile": profile_entry,
        "files": dict(sorted(files.items())),
    }
    manifest_bytes = _write_json(folder / MANIFEST, manifest)
    sealed = (seal(manifest_bytes, key) + "\n").encode("ascii")
    (folder / SEAL).write_bytes(sealed)
    if tsa is not None:
        (folder / TIMESTAMP).write_bytes(request_timestamp(tsa, sealed))
    return SealedRecord(digest(manifest_bytes), follows, moved)
