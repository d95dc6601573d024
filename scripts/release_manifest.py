"""Write the release manifest (``make release-manifest``), or hold a built wheel to it.

``python scripts/release_manifest.py`` writes ``conformance/_release.json`` (git-ignored; the
wheel ships it as package data): the suite version, the commit of the checkout (a clean one, unless
``--allow-dirty``), the contract digest of ``schemas/`` and the SHA-256 of every file the wheel
installs, found from ``pyproject.toml``'s setuptools table as setuptools finds them (each listed
package's modules, its ``package-data`` globs, ``package-dir`` mapping ``schemas/`` and
``profiles/`` into ``conformance/_bundled/``).

``python scripts/release_manifest.py --check-wheel dist/X.whl`` says whether that wheel installs
exactly the manifest's files with the manifest's digests, and the manifest itself (exit 1 when not):
``make release-check`` runs it after the build.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from conformance import __version__  # noqa: E402
from conformance.contract.loader import contract_digest  # noqa: E402
from conformance.report.release import MANIFEST_FILE, MANIFEST_FORMAT, file_sha256  # noqa: E402


def _setuptools() -> dict[str, Any]:
    table: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(table["tool"]["setuptools"])


def _package_folder(package: str, package_dir: dict[str, str]) -> Path:
    """The folder of the checkout a package is built from."""
    if package in package_dir:
        return ROOT / package_dir[package]
    for parent, folder in package_dir.items():
        if package.startswith(parent + "."):
            return ROOT / folder / Path(*package.removeprefix(parent + ".").split("."))
    return ROOT / Path(*package.split("."))


def wheel_files() -> dict[str, Path]:
    """Every file the wheel installs (the manifest apart), by its path in ``site-packages``."""
    setuptools = _setuptools()
    package_dir: dict[str, str] = setuptools.get("package-dir", {})
    globs: dict[str, list[str]] = setuptools.get("package-data", {})
    files: dict[str, Path] = {}
    for package in setuptools["packages"]:
        folder = _package_folder(package, package_dir)
        installed = Path(*package.split("."))
        patterns = ["*.py", *globs.get(package, [])]
        for path in sorted(folder.iterdir()):
            matched = any(fnmatch.fnmatchcase(path.name, p) for p in patterns)
            if path.is_file() and matched and path.name != MANIFEST_FILE:
                files[(installed / path.name).as_posix()] = path
    return files


def _commit(allow_dirty: bool) -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()

    if git("status", "--porcelain", "--untracked-files=no") and not allow_dirty:
        raise SystemExit(
            "release_manifest: the checkout has uncommitted changes; a release is cut from a "
            "commit (commit them, or --allow-dirty for a trial)"
        )
    return git("rev-parse", "HEAD")


def manifest(allow_dirty: bool) -> dict[str, Any]:
    """The release manifest of this checkout."""
    return {
        "format": MANIFEST_FORMAT,
        "name": "psd2-conformance",
        "version": __version__,
        "commit": _commit(allow_dirty),
        "contract_digest": contract_digest(ROOT / "schemas"),
        "files": {name: file_sha256(path) for name, path in sorted(wheel_files().items())},
    }


def check_wheel(wheel: Path) -> list[str]:
    """How ``wheel`` departs from the manifest it carries (``[]``: it installs exactly that)."""
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if ".dist-info/" not in n and not n.endswith("/")]
        manifest_name = f"conformance/{MANIFEST_FILE}"
        if manifest_name not in names:
            return [f"{wheel.name} carries no {manifest_name}"]
        listed: dict[str, str] = json.loads(archive.read(manifest_name))["files"]
        problems = [f"not in the manifest: {n}" for n in names if n not in (*listed, manifest_name)]
        problems += [f"not in the wheel: {n}" for n in listed if n not in names]
        problems += [
            f"digest differs: {n}"
            for n in listed
            if n in names and hashlib.sha256(archive.read(n)).hexdigest() != listed[n]
        ]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--allow-dirty", action="store_true", help="a trial from a changed tree")
    parser.add_argument("--check-wheel", type=Path, help="hold this built wheel to its manifest")
    args = parser.parse_args(argv)
    if args.check_wheel is not None:
        problems = check_wheel(args.check_wheel)
        for problem in problems:
            print(f"release_manifest: {problem}")
        if not problems:
            print(f"release_manifest: {args.check_wheel.name} installs exactly its manifest")
        return 1 if problems else 0
    written = manifest(args.allow_dirty)
    target = ROOT / "conformance" / MANIFEST_FILE
    text = json.dumps(written, indent=2, sort_keys=True) + "\n"
    target.write_text(text, encoding="utf-8")
    digest = hashlib.sha256(text.encode()).hexdigest()
    print(
        f"release_manifest: {target.relative_to(ROOT)} for {written['version']} at "
        f"{written['commit'][:12]}: {len(written['files'])} files, manifest sha256:{digest}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
