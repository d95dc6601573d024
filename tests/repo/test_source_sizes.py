"""No giant modules (STYLE.md, "Things the models avoid"): no source file of the suite or the
reference server is longer than 900 lines. A file that grows past it is split by topic, as
``report/compliance_page.py`` (the outline) and ``report/compliance_render.py`` (its Markdown
and HTML) were."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREES = ("conformance", "reference_server")
#: The most lines a source file may have.
LIMIT = 900


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_source_file_is_longer_than_the_limit() -> None:
    sources = [path for tree in TREES for path in sorted((ROOT / tree).rglob("*.py"))]
    assert len(sources) > 200  # the scan reads the trees
    over = {
        str(path.relative_to(ROOT)): count for path in sources if (count := _lines(path)) > LIMIT
    }
    assert not over, f"source files over {LIMIT} lines (split them by topic): {over}"
