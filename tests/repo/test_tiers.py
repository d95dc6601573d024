"""The tests are in tiers (docs/guides/develop.md, "Where a test goes"): no test file lies
directly in ``tests/``, every tier folder is a package (pytest and mypy name its modules
``tier.test_x``), and the whole-run tier is left out of ``make test`` and run by ``make
test-slow``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
TIERS = ("unit", "repo", "runs", "server", "suite", "signing", "traffic")


def test_no_test_file_lies_directly_in_tests() -> None:
    loose = sorted(path.name for path in TESTS.glob("test_*.py"))
    assert loose == [], f"place these in a tier (docs/guides/develop.md): {loose}"


def test_every_folder_of_tests_is_a_tier_and_a_package() -> None:
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    assert folders == set(TIERS), folders
    for tier in TIERS:
        assert (TESTS / tier / "__init__.py").is_file(), tier


def test_make_test_leaves_the_whole_run_tier_to_test_slow() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    fast = re.search(r"^test-not-slow:.*\n\t(.*)\n", makefile, re.M)
    slow = re.search(r"^test-slow:.*\n\t(.*)\n", makefile, re.M)
    assert fast and slow
    assert '-m "not slow"' in fast[1] and "--ignore=tests/runs" in fast[1], fast[1]
    assert "-m slow" in slow[1] and slow[1].rstrip().endswith(" tests"), slow[1]
    conftest = (TESTS / "runs" / "conftest.py").read_text(encoding="utf-8")
    assert "pytest.mark.slow" in conftest  # every test of the tier is slow
