"""TOML text for the draft: values, keys and tables as ``tomllib`` reads them back (the standard
library reads TOML but does not write it)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["toml_key", "toml_value"]

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(name: str) -> str:
    """A bare key where TOML allows one, else a quoted one."""
    return name if _BARE.match(name) else json.dumps(name, ensure_ascii=False)


def toml_value(value: Any) -> str:
    """One value: a string, boolean, number, array or inline table."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")
