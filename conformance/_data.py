"""Where the data directories (``schemas/``, ``profiles/``) are: beside the packages in a checkout,
inside the package (``conformance/_bundled/``) in an installed wheel.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent

#: The data directories the project ships, by name (the keys of ``package-dir`` in pyproject).
DATA_DIRECTORIES = ("schemas", "profiles")


def data_directory(name: str) -> Path:
    """The directory ``name`` (one of :data:`DATA_DIRECTORIES`) of this installation.

    The path is returned even when neither candidate exists (the checkout's, then), so that the
    error a caller raises names the place the project expects.
    """
    if name not in DATA_DIRECTORIES:
        raise ValueError(f"unknown data directory {name!r}; expected one of {DATA_DIRECTORIES}")
    bundled = _PACKAGE / "_bundled" / name
    if bundled.is_dir():
        return bundled
    return _PACKAGE.parent / name
