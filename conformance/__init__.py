"""Conformance suite for a PSD2-style open-banking interface (spec release 1.22.0).

The package is both a library (contract loader, request signing, certificates, signed client)
and a pytest plugin that generates the conformance scenarios from ``schemas/``.
"""

__version__ = "0.1.0"
SPEC_VERSION = "1.22.0"

__all__ = ["SPEC_VERSION", "__version__"]
