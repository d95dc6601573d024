"""The conformance suite as pytest collects it: one test module, parametrised by the plugin."""

from pathlib import Path

__all__ = ["SUITE_DIR"]

#: The directory pytest is pointed at to run the suite (its one test module).
SUITE_DIR = Path(__file__).resolve().parent
