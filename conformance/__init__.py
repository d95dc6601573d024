"""Conformance suite for a PSD2-style open-banking interface (spec release 1.22.0): a library and
a pytest plugin; ARCHITECTURE.md maps the packages.
"""

__version__ = "1.0.0"
SPEC_VERSION = "1.22.0"

__all__ = ["SPEC_VERSION", "__version__"]
