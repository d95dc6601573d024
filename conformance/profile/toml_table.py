"""One TOML table of a profile being read: typed getters that name the file and the key in
their errors, and :meth:`Table.finish`, which rejects a key nobody read (a misspelt key is an
error, not a silently ignored setting).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from conformance.errors import ProfileError, did_you_mean

__all__ = ["Table", "describe", "read_toml"]

_T = TypeVar("_T")
_D = TypeVar("_D")

_TYPE_NAMES = {str: "a string", bool: "true or false", float: "a number", dict: "a table"}


class Table:
    """One TOML table being read: typed getters, and :meth:`finish` rejects keys nobody read."""

    def __init__(self, data: Mapping[str, Any], where: str, source: Path) -> None:
        self._data = data
        self._where = where
        self._source = source
        self._read: set[str] = set()

    def error(self, key: str, problem: str) -> ProfileError:
        return ProfileError(f"profile {self._source}: {self._name(key)} {problem}")

    def _name(self, key: str) -> str:
        return f"{self._where}.{key}" if self._where else key

    def _raw(self, key: str) -> Any:
        self._read.add(key)
        return self._data.get(key)

    def get(self, key: str, kind: type[_T], default: _D) -> _T | _D:
        value = self._raw(key)
        if value is None:
            return default
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise self.error(key, f"must be {_TYPE_NAMES[kind]}, not {describe(value)}")
        if isinstance(value, str) and not value.strip():
            raise self.error(key, "must not be empty")
        return value

    def peek(self, key: str) -> Any:
        """The raw value of ``key`` (None when absent), without marking it read."""
        return self._data.get(key)

    def optional_str(self, key: str) -> str | None:
        return self.get(key, str, None)

    def strings(self, key: str) -> tuple[str, ...] | None:
        value = self._raw(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.error(key, f"must be a list of strings, not {describe(value)}")
        return tuple(value)

    def names(self) -> tuple[str, ...]:
        return tuple(self._data)

    def table(self, key: str) -> Table:
        value = self._raw(key)
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise self.error(key, f"must be a table ([{self._name(key)}]), not {describe(value)}")
        return Table(value, self._name(key), self._source)

    def tables(self, key: str) -> list[Table]:
        """An array of tables (``[[key]]``), each read as a :class:`Table` named ``key[N]``."""
        value = self._raw(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise self.error(key, f"must be an array of tables ([[{self._name(key)}]])")
        return [
            Table(item, f"{self._name(key)}[{index}]", self._source)
            for index, item in enumerate(value)
        ]

    def finish(self) -> None:
        unknown = sorted(set(self._data) - self._read)
        if unknown:
            place = f"in [{self._where}]" if self._where else "at the top level"
            allowed = ", ".join(sorted(self._read))
            raise ProfileError(
                f"profile {self._source}: unknown key {unknown[0]!r} {place}"
                f"{did_you_mean(unknown[0], self._read)} (allowed: {allowed})"
            )


def describe(value: Any) -> str:
    kinds = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    for kind, name in kinds.items():
        if type(value) is kind:
            return f"{name} ({value!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as stream:
            return tomllib.load(stream)
    except FileNotFoundError:
        raise ProfileError(f"profile {path} does not exist") from None
    except IsADirectoryError:
        raise ProfileError(f"profile {path} is a directory, not a TOML file") from None
    except OSError as error:
        raise ProfileError(f"profile {path} cannot be read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ProfileError(f"profile {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(f"profile {path} is not valid TOML: {error}") from None
