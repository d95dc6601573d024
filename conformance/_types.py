"""The names of the JSON shapes the suite passes around, one home each (httpx's ``_types.py`` in
spirit): a signature says "a JSON object" rather than ``dict[str, Any]``.

:data:`JsonObject` is the mutable object a body is built or parsed as; its immutable form, kept in
a frozen :class:`~conformance.scenario.Scenario`, is :class:`~conformance.scenario.FrozenObject`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

__all__ = ["Json", "JsonObject", "Schema"]

#: A JSON value as ``json.loads`` gives it (``Any``: a recursive union would make every read of a
#: member a cast; the name says what the value is).
Json: TypeAlias = Any
#: A JSON object as ``json.loads`` gives it, or as a factory builds a body to send.
JsonObject: TypeAlias = dict[str, Any]
#: A JSON Schema (or a part of one), read only.
Schema: TypeAlias = Mapping[str, Any]
