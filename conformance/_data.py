"""Where the project's data directories (``schemas/``, ``profiles/``) are, installed or not.

In a checkout (and an editable install, which runs the checkout's code) they sit beside the
packages, at the repository's root, where DESIGN.md puts the contract. A built wheel cannot
install top-level data directories, so ``pyproject.toml`` ships them inside the package as
``conformance/_bundled/<name>``; a bank team that runs ``pip install`` on the wheel gets the same
contract and the same reference profile. The bundled copy is looked for first: it exists only in
an installed wheel, while the checkout's directory is a guess (``site-packages/schemas`` of a
wheel install could belong to another distribution).
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
