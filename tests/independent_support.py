"""What the tests of the independent bank share: ``scripts/independent_bank.py`` and where the
bank lives."""

from __future__ import annotations

from types import ModuleType

from script_support import ROOT, load_script

BANK = ROOT.parent / "shared" / "banks" / "independent-1"

__all__ = ["BANK", "ROOT", "script"]


def script() -> ModuleType:
    """``scripts/independent_bank.py``, loaded once."""
    return load_script("independent_bank")
