"""The release: version and licence in pyproject.toml, the release manifest
(``scripts/release_manifest.py``) and an installed suite held to it (``report/release.py``).

An installation is laid out here as a wheel installs it (the manifest's paths under a
``site-packages`` folder), and a fresh interpreter imports the suite from it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from script_support import load_script

from conformance import __version__
from conformance.report.release import MANIFEST_FILE, release_reasons

ROOT = Path(__file__).resolve().parents[2]


release_manifest = load_script("release_manifest")


def test_the_version_and_the_licence() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == __version__ == "1.0.0"
    assert project["license"] == "Apache-2.0"
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert f"## [{__version__}]" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_the_manifest_lists_every_module_and_data_file_the_wheel_installs() -> None:
    files = release_manifest.wheel_files()
    assert "conformance/checks.py" in files
    assert "reference_server/__init__.py" in files
    assert any(name.startswith("conformance/_bundled/schemas/operations/") for name in files)
    assert any(name.startswith("conformance/_bundled/profiles/examples/") for name in files)
    assert f"conformance/{MANIFEST_FILE}" not in files
    for name, path in files.items():
        assert path.is_file(), name


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """The suite laid out as its wheel installs it, with its release manifest."""
    site = tmp_path / "site-packages"
    files = release_manifest.wheel_files()
    for name, path in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, site / name)
    manifest = {
        "format": "psd2-conformance-release/1",
        "version": __version__,
        "commit": "0" * 40,
        "contract_digest": "x",
        "files": {name: release_manifest.file_sha256(path) for name, path in files.items()},
    }
    (site / "conformance" / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    return site


def _check(site: Path) -> dict[str, object]:
    """The installed files held to their manifest, by the suite imported from ``site``."""
    code = (
        "import json, conformance.report.release as r; "
        f"assert r.__file__.startswith({str(site)!r}), r.__file__; "
        "print(json.dumps(r.check_installed()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60,
        env={**os.environ, "PYTHONPATH": str(site)}, cwd=site,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    checked: dict[str, object] = json.loads(done.stdout)
    return checked


def test_an_untouched_installation_is_the_release(installed: Path) -> None:
    checked = _check(installed)
    assert checked["changed"] == checked["missing"] == checked["added"] == []
    assert release_reasons(checked) == []


def test_one_byte_changed_in_a_check_is_named(installed: Path) -> None:
    edited = installed / "conformance" / "checks.py"
    edited.write_bytes(edited.read_bytes().replace(b"must", b"mUst", 1))
    (installed / "conformance" / "extra_check.py").write_text("", encoding="utf-8")
    (installed / "reference_server" / "app.py").unlink()
    checked = _check(installed)
    assert checked["changed"] == ["conformance/checks.py"]
    assert checked["added"] == ["conformance/extra_check.py"]
    assert checked["missing"] == ["reference_server/app.py"]
    assert release_reasons(checked) == [
        "installed file(s) conformance/checks.py differs from the release",
        "installed file(s) reference_server/app.py is missing from the installation",
        "installed file(s) conformance/extra_check.py is not part of the release",
    ]


def test_a_checkout_without_a_manifest_says_so(tmp_path: Path) -> None:
    from conformance.report.release import check_installed

    checked = check_installed(tmp_path / MANIFEST_FILE)
    assert checked["manifest_sha256"] is None
    assert release_reasons(checked) == [
        "no release manifest: the suite runs from a checkout, not from a release"
    ]


def test_a_wheel_is_held_to_its_manifest(tmp_path: Path, installed: Path) -> None:
    import zipfile

    wheel = tmp_path / "psd2_conformance-1.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path in sorted(installed.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(installed).as_posix())
        archive.writestr("psd2_conformance-1.0.0.dist-info/METADATA", "")
    assert release_manifest.check_wheel(wheel) == []
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr("conformance/stray.py", "")
    assert release_manifest.check_wheel(wheel) == ["not in the manifest: conformance/stray.py"]
