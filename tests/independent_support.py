"""What the tests of the independent bank share: ``scripts/independent_bank.py`` imported as a
module (it is a script, not a package module), and where the bank lives."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
BANK = ROOT.parent / "shared" / "banks" / "independent-1"


@functools.cache
def script() -> ModuleType:
    """``scripts/independent_bank.py``, loaded once."""
    spec = importlib.util.spec_from_file_location(
        "independent_bank", ROOT / "scripts" / "independent_bank.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module
