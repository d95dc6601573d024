"""The release manifest and the installed suite held to it.

A release of the suite (``make release-manifest``, ``scripts/release_manifest.py``) ships
``conformance/_release.json`` inside the wheel: the suite version, the git commit it was cut from,
the contract digest (:func:`conformance.contract.loader.contract_digest` of ``schemas/``) and the
SHA-256 of every file the wheel installs into ``site-packages`` (the manifest itself and the
``.dist-info`` metadata apart), by its path there (``conformance/checks.py``,
``conformance/_bundled/schemas/...``, ``reference_server/...``).

A run that could certify a bank holds the installed files to that manifest
(:func:`check_installed`): a file whose bytes differ, a file missing, or a module added beside the
released ones makes the run NOT ELIGIBLE, naming the file (``report/eligibility.py``). A run from a
checkout has no manifest, and says so instead. The manifest's own SHA-256 is what a certifier's
policy accepts (``conformance verify --policy``).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from conformance import __version__
from conformance._data import DATA_DIRECTORIES, data_directory

__all__ = [
    "MANIFEST_FILE",
    "MANIFEST_FORMAT",
    "check_installed",
    "file_sha256",
    "installed_path",
    "manifest_path",
    "release_reasons",
    "suite_commit",
]

#: The manifest's file name, inside the ``conformance`` package.
MANIFEST_FILE: Final = "_release.json"
#: The manifest's format (its ``format`` key).
MANIFEST_FORMAT: Final = "psd2-conformance-release/1"
#: The installed packages a release covers.
_PACKAGES: Final = ("conformance", "reference_server")
_PACKAGE: Final = Path(__file__).resolve().parent.parent
_BUNDLED: Final = "conformance/_bundled/"


def manifest_path() -> Path:
    """Where this installation's release manifest is (it may not exist: a checkout)."""
    return _PACKAGE / MANIFEST_FILE


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def installed_path(name: str) -> Path:
    """The file of this installation a manifest path names: in a wheel, beside the packages; in a
    checkout, ``conformance/_bundled/<data>/...`` is the data directory beside them."""
    if name.startswith(_BUNDLED):
        data, _, rest = name.removeprefix(_BUNDLED).partition("/")
        if data in DATA_DIRECTORIES:
            return data_directory(data) / rest
    return _PACKAGE.parent / name


def _installed_modules() -> Iterator[str]:
    """The Python modules installed in the suite's packages, by manifest path."""
    for package in _PACKAGES:
        for module in (_PACKAGE.parent / package).rglob("*.py"):
            name = module.relative_to(_PACKAGE.parent).as_posix()
            if not name.startswith(_BUNDLED):
                yield name


def check_installed(manifest: Path | None = None) -> dict[str, Any]:
    """The installed suite held to its release manifest.

    ``{"manifest_sha256", "version", "commit", "contract_digest", "changed", "missing",
    "added"}``; ``manifest_sha256`` is None when there is no manifest (a checkout), and the file
    lists are then empty.
    """
    path = manifest if manifest is not None else manifest_path()
    if not path.is_file():
        return {"manifest_sha256": None, "version": __version__, "changed": [], "missing": []}
    raw = path.read_bytes()
    listed: Mapping[str, Any] = json.loads(raw)
    files: Mapping[str, str] = listed.get("files", {})
    changed, missing = [], []
    for name, digest in sorted(files.items()):
        installed = installed_path(name)
        if not installed.is_file():
            missing.append(name)
        elif file_sha256(installed) != digest:
            changed.append(name)
    added = sorted(name for name in _installed_modules() if name not in files)
    return {
        "manifest_sha256": hashlib.sha256(raw).hexdigest(),
        "version": listed.get("version"),
        "commit": listed.get("commit"),
        "contract_digest": listed.get("contract_digest"),
        "changed": changed,
        "missing": missing,
        "added": added,
    }


def _named(files: list[str], limit: int = 5) -> str:
    shown = ", ".join(files[:limit])
    return shown + (f" and {len(files) - limit} more" if len(files) > limit else "")


def release_reasons(release: Mapping[str, Any]) -> list[str]:
    """Why the installed suite is not a release as published (``[]``: it is)."""
    if release.get("manifest_sha256") is None:
        return ["no release manifest: the suite runs from a checkout, not from a release"]
    reasons = []
    if release.get("version") != __version__:
        reasons.append(
            f"the release manifest is of version {release.get('version')}, the suite is "
            f"{__version__}"
        )
    for key, words in (
        ("changed", "differs from the release"),
        ("missing", "is missing from the installation"),
        ("added", "is not part of the release"),
    ):
        files = list(release.get(key) or ())
        if files:
            reasons.append(f"installed file(s) {_named(files)} {words}")
    return reasons


def suite_commit() -> str | None:
    """The git commit of the checkout the suite runs from, or None (an installed wheel)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and commit else None
