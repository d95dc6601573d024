"""docs/explanation/security.md's table "Each attack of the review and its test" names a row for
each of the review's 44 failures (C1-C2, H1-H5, M1-M16, L1-L21), and every test it names exists
in the file it names."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SECURITY = ROOT / "docs" / "explanation" / "security.md"
HEADING = "## Each attack of the review and its test"
IDS = [
    *(f"C{n}" for n in range(1, 3)),
    *(f"H{n}" for n in range(1, 6)),
    *(f"M{n}" for n in range(1, 17)),
    *(f"L{n}" for n in range(1, 22)),
]


def _rows() -> dict[str, str]:
    text = SECURITY.read_text(encoding="utf-8")
    section = text.split(HEADING, 1)[1].split("\n## ", 1)[0]
    return {
        found.group(1): found.group(2)
        for found in re.finditer(r"^\| ([CHML]\d+) \| (.*) \|$", section, re.MULTILINE)
    }


def test_every_failure_of_the_review_has_its_row() -> None:
    assert list(_rows()) == IDS


def test_every_test_the_table_names_exists() -> None:
    named = 0
    for failure, row in _rows().items():
        file = None
        for path, name, case in re.findall(r"`(?:([\w/]+\.py))?::(\w+)(?:\[([^\]]*)\])?`", row):
            file = path or file
            assert file, f"{failure}: {name} without its file"
            source = (ROOT / "tests" / file).read_text(encoding="utf-8")
            assert re.search(rf"^def {name}\(", source, re.MULTILINE), f"{failure}: {file}::{name}"
            assert not case or f'"{case}"' in source, f"{failure}: {name}[{case}]"
            named += 1
        assert file or "stays" in row, f"{failure}: neither a test nor why it stays"
    assert named >= len(IDS)
