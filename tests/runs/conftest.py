"""The whole-run tier: every test collected under ``tests/runs/`` is marked ``slow`` (so ``make
test``'s ``-m "not slow"`` leaves the tier out and ``make test-slow``'s ``-m slow`` runs it)."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.slow)
