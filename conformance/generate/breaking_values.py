"""Values that break one constraint and nothing else, computed, never drawn at random.

The value that breaks a pattern is the first of a fixed list of candidates that ``re.search``
proves not to match; a value outside an enum is built from the enum's own shape; a string of a
given length still matches the field's pattern. Also :func:`id_safe`, which turns a value into a
fragment of a scenario id.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator

from conformance._types import Schema
from conformance.scenario import FrozenObject

__all__ = [
    "BAD_FORMAT_VALUES",
    "OTHER_TYPE",
    "OTHER_TYPE_TEXT",
    "bad_any_format",
    "breaking_pattern",
    "distinct_items",
    "id_safe",
    "other_than_const",
    "outside_enum",
    "string_of_length",
]


#: A value that is not of the named ``format``, for the formats ``jsonschema`` checks without
#: optional packages (``date`` by the standard library; ``uuid``, ``ipv4``, ``ipv6``, ``email``).
#: Formats whose check needs an extra package (``uri``: rfc3987, ``date-time``: rfc3339-validator)
#: are left out on purpose: the contract's validator, and so the reference server, may not check
#: them, and which scenarios exist must not depend on what happens to be installed.
BAD_FORMAT_VALUES: Mapping[str, str] = {
    "date": "2026-02-30",
    "uuid": "not-a-uuid",
    "ipv4": "999.1.1.1",
    "ipv6": "not-an-ipv6-address",
    "email": "not-an-email",
}

#: The value a ``type`` mutation sends instead of a value of the declared type (body targets).
OTHER_TYPE: Mapping[str, Any] = {
    "string": 12345,
    "integer": "12",
    "number": "12",
    "boolean": "yes",
    "object": (),
    "array": FrozenObject(),
    "null": "null",
}
#: The text a ``type`` mutation sends in a query string (everything there is text).
OTHER_TYPE_TEXT: Mapping[str, str] = {"integer": "abc", "number": "abc", "boolean": "yes"}

#: Candidates for a string that breaks a ``pattern``: the first one ``re.search`` rejects wins.
_PATTERN_BREAKERS = ("abc", "ZZZ", "123", "1.5", "a", "Z", "1", "_", "abc def", "-")
#: Characters tried, in order, to fill a string of a given length that still matches a pattern.
#: Characters tried, in order, to fill a string of a given length that still matches a pattern.
_FILLERS = ("A", "1", "a", "Z", "0")
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def id_safe(value: Any, limit: int | None = 32) -> str:
    """``value`` as a fragment of a pytest id: ASCII letters, digits, ``.``, ``_`` and ``-`` kept,
    any other run of characters replaced by one ``_``; cut to ``limit`` characters (values; names
    pass ``None``); ``empty`` for ``""``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = _ID_UNSAFE.sub("_", str(value))
    return (text[:limit] if limit is not None else text) or "empty"


def _matches(pattern: str | None, text: str) -> bool:
    return pattern is None or re.search(pattern, text) is not None


def string_of_length(length: int, pattern: str | None = None) -> str:
    """A string of exactly ``length`` characters that matches ``pattern`` when one can be built
    from a repeated filler character; otherwise ``"A" * length`` (the pattern then breaks too)."""
    for filler in _FILLERS:
        candidate = filler * length
        if _matches(pattern, candidate):
            return candidate
    return _FILLERS[0] * length


def breaking_pattern(
    pattern: str, min_length: int = 0, max_length: int | None = None
) -> str | None:
    """The first candidate that ``pattern`` does not match and that keeps the length bounds.

    Candidates are padded to ``min_length`` and cut to ``max_length`` so that only the pattern
    breaks. ``None`` when every candidate matches (the pattern accepts all of them).
    """
    for candidate in _PATTERN_BREAKERS:
        text = candidate
        if len(text) < min_length:
            text = text + text[-1] * (min_length - len(text))
        if max_length is not None and len(text) > max_length:
            text = text[:max_length]
        if text and not _matches(pattern, text):
            return text
    return None


def outside_enum(values: Sequence[Any], schema: Schema | None = None) -> Any | None:
    """A value of the enum's own type that is not in it, keeping the schema's length bounds.

    Strings: ``Z`` (or ``0`` for an all-digit enum such as regulatory reporting codes) repeated to
    the length of the enum's shortest value, so a two-letter country list gets ``ZZ``; long
    identifiers (product names) get ``unknown``. Integers: one above the largest. Booleans: the
    missing one. ``None`` when no such value exists (an enum of every boolean, mixed types).
    """
    schema = schema or {}
    if values and all(isinstance(v, str) for v in values):
        shortest = min(len(v) for v in values)
        fill = "0" if all(v.isdigit() for v in values) else "Z"
        candidates = [fill * max(shortest, 1)] if shortest <= 8 else []
        candidates += ["unknown", fill * (shortest + 1), "unknown-value"]
        for candidate in candidates:
            if candidate in values:
                continue
            if len(candidate) > schema.get("maxLength", len(candidate)):
                continue
            if len(candidate) < schema.get("minLength", 0):
                continue
            return candidate
        return None
    if values and all(isinstance(v, bool) for v in values):
        missing = [b for b in (True, False) if b not in values]
        return missing[0] if missing else None
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return max(values) + 1
    return None


def other_than_const(value: Any) -> Any | None:
    """A value of the same JSON type as ``value`` and different from it."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return "unknown" if value != "unknown" else "unknown-value"
    return None


def bad_any_format(formats: Sequence[str]) -> str | None:
    """A value that is none of ``formats`` (an ``anyOf`` of formats, e.g. an IPv4 or IPv6)."""
    checker = Draft202012Validator.FORMAT_CHECKER
    candidates = [BAD_FORMAT_VALUES[f] for f in formats if f in BAD_FORMAT_VALUES]
    for candidate in [*candidates, "not-a-valid-value"]:
        if not any(checker.conforms(candidate, f) for f in formats):
            return candidate
    return None


def distinct_items(items: Schema, count: int) -> tuple[Any, ...] | None:
    """``count`` distinct valid items when the item schema enumerates them (enum, integer range)."""
    if count < 0:
        return None
    if count == 0:
        return ()
    if isinstance(items.get("enum"), list) and len(items["enum"]) >= count:
        return tuple(items["enum"][:count])
    if items.get("type") == "integer" and "minimum" in items and "maximum" in items:
        low, high = int(items["minimum"]), int(items["maximum"])
        if high - low + 1 >= count:
            return tuple(range(low, low + count))
    return None
