"""The border between the two trees holds both ways: an import across it that its two allow-list
contracts (pyproject.toml, "the border: ...") do not allow breaks them, and today's tree keeps
them. The tree is copied to a temporary folder, one import is injected into the copy, and
``lint-imports`` runs there."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
#: The two contracts of the border, by the start of their names.
SERVER_SIDE = "the border: reference_server imports only"
SUITE_SIDE = "the border: of conformance only the commands"

#: The imports the review names as passing a deny-list: the server reaching into the suite's
#: findings, and scenario generation reaching into the server.
INJECTIONS = {
    "server-imports-problems": (
        "reference_server/model/clock.py",
        "import conformance.problems",
        SERVER_SIDE,
    ),
    "generation-imports-server": (
        "conformance/generate/auth.py",
        "import reference_server.model.clock",
        SUITE_SIDE,
    ),
}


def _lint(tree: Path) -> str:
    """``lint-imports`` over the copy in ``tree``: its output (contracts kept and broken)."""
    done = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(tree), "PATH": str(LINT_IMPORTS.parent)},
    )
    return done.stdout + done.stderr


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    ignore = shutil.ignore_patterns("__pycache__")
    for package in ("conformance", "reference_server"):
        shutil.copytree(ROOT / package, tree / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def _verdict(output: str, contract: str) -> str:
    """KEPT or BROKEN for the contract whose name starts with ``contract``."""
    flat = " ".join(output.split())
    after = flat.split(contract, 1)[1]
    return "BROKEN" if after.split("KEPT", 1)[0].count("BROKEN") else "KEPT"


@pytest.mark.parametrize("name", sorted(INJECTIONS))
def test_an_import_across_the_border_breaks_its_contract(tmp_path: Path, name: str) -> None:
    path, statement, contract = INJECTIONS[name]
    tree = _copy(tmp_path)
    assert "Contracts: " in (kept := _lint(tree)) and " 0 broken" in kept, kept
    module = tree / path
    module.write_text(f"{statement}  # injected\n" + module.read_text(encoding="utf-8"))
    output = _lint(tree)
    assert _verdict(output, contract) == "BROKEN", output
    assert "Contracts: " in output and " 1 broken" in output, output
