"""The wheel carries what an installed suite needs (a non-editable ``pip install``).

``pyproject.toml`` lists its packages by hand, because ``schemas/`` and ``profiles/`` can only
travel in a wheel as packages mapped from the repository root (``package-dir``). A hand-written
list goes stale when a subpackage is added, so it is held to the tree here; and every file of the
data directories must be matched by a ``package-data`` glob, or the installed contract would miss
it silently.
"""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conformance import _data
from conformance._data import DATA_DIRECTORIES, data_directory

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "setuptools"
]


def _code_packages() -> set[str]:
    found = set()
    for top in ("conformance", "reference_server"):
        for init in (ROOT / top).rglob("__init__.py"):
            found.add(".".join(init.parent.relative_to(ROOT).parts))
    return found


def _tracked(directory: str) -> list[str]:
    """The files git tracks under ``directory`` (what a clean clone and a wheel build see)."""
    listed = subprocess.run(
        ["git", "ls-files", directory], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout: {listed.stderr.strip()}")
    return [str(Path(line).relative_to(directory)) for line in listed.stdout.splitlines()]


def _data_packages() -> set[str]:
    """One package per directory of each data directory (setuptools wants them all named)."""
    found = set()
    for name in DATA_DIRECTORIES:
        for file in _tracked(name):
            found.add(".".join(("conformance", "_bundled", name, *Path(file).parent.parts)))
    return found


def test_every_package_is_listed() -> None:
    assert set(SETUPTOOLS["packages"]) == _code_packages() | _data_packages()


@pytest.mark.parametrize("name", DATA_DIRECTORIES)
def test_data_directory_is_mapped_into_the_package(name: str) -> None:
    package = f"conformance._bundled.{name}"
    assert package in SETUPTOOLS["packages"]
    assert SETUPTOOLS["package-dir"][package] == name


@pytest.mark.parametrize("name", DATA_DIRECTORIES)
def test_every_tracked_data_file_is_package_data(name: str) -> None:
    files = _tracked(name)
    assert files, f"{name}/ has no tracked files"
    missing = []
    for file in files:
        path = Path(file)
        package = ".".join(("conformance", "_bundled", name, *path.parent.parts))
        globs = SETUPTOOLS["package-data"].get(package, [])
        if not any(fnmatch.fnmatchcase(path.name, glob) for glob in globs):
            missing.append(file)
    assert missing == [], f"not shipped in the wheel: {missing}"


def test_a_checkout_uses_its_own_directories() -> None:
    assert data_directory("schemas") == ROOT / "schemas"
    assert data_directory("profiles") == ROOT / "profiles"


def test_an_installed_wheel_uses_its_bundled_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "site-packages" / "conformance"
    (package / "_bundled" / "schemas").mkdir(parents=True)
    (tmp_path / "site-packages" / "schemas").mkdir()  # another distribution's, say
    monkeypatch.setattr(_data, "_PACKAGE", package)
    assert data_directory("schemas") == package / "_bundled" / "schemas"
    # Absent from the wheel: the checkout's place, so that the caller's error names it.
    assert data_directory("profiles") == tmp_path / "site-packages" / "profiles"


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown data directory"):
        data_directory("reports")


@pytest.mark.slow  # a build, a fresh venv and a smoke run: make test-slow
def test_the_distributions_pass_twine_and_the_wheel_works_from_another_folder(
    tmp_path: Path,
) -> None:
    """``python -m build`` makes an sdist and a wheel of what git tracks (a fresh clone's files),
    ``twine check --strict`` passes both (their metadata and README render as an index shows
    them), and the wheel installed into a fresh venv runs from a folder that is not a checkout:
    its help, and a smoke run against the bundled server on the contract inside the wheel."""
    source = tmp_path / "source"
    for file in _tracked("."):
        (source / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / file, source / file)
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "build", "--outdir", str(dist), str(source))
    built = sorted(path.name for path in dist.iterdir())
    assert len(built) == 2 and built[0].endswith(".whl") and built[1].endswith(".tar.gz"), built
    _run(sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir()))
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", str(venv))
    wheel = next(dist.glob("*.whl"))
    _run(str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    helped = _run(str(venv / "bin" / "conformance"), "--help", cwd=elsewhere)
    assert "conformance" in helped.stdout and "run" in helped.stdout
    smoke = _run(str(venv / "bin" / "conformance"), "run", "--smoke", cwd=elsewhere)
    assert "SMOKE RUN PASSED" in smoke.stdout
    assert (elsewhere / "reports" / "compliance.json").is_file()


def _run(*command: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}\n{done.stderr}"
    return done
