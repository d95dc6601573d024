"""The one JSON reader for what arrives from outside (``conformance.contract.bounded_json``):
a document nested deeper than the limit, or longer, is refused unread as not JSON, never a
``RecursionError``; brackets inside strings do not count."""

from __future__ import annotations

import json
import re

import pytest

from conformance.contract.bounded_json import MAX_DEPTH, JsonTooLarge, _too_deep_at, loads


def test_a_document_within_the_limits_reads_as_json_loads_reads_it() -> None:
    text = '{"a": [1, {"b": "[[[[{{{{"}], "c": "\\"]"}'
    assert loads(text) == json.loads(text)
    assert loads(text.encode("utf-16")) == json.loads(text)
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads(nested) == json.loads(nested)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 3_000, 200_000])
def test_a_document_nested_too_deep_is_not_json(depth: int) -> None:
    with pytest.raises(json.JSONDecodeError, match="nested deeper than") as refused:
        loads(b"[" * depth + b"]" * depth)
    assert isinstance(refused.value, JsonTooLarge)


def test_a_document_too_long_or_with_a_bom_is_not_json() -> None:
    with pytest.raises(JsonTooLarge, match="longer than 10 bytes"):
        loads("[" + "1," * 10 + "1]", max_bytes=10)
    with pytest.raises(json.JSONDecodeError, match="BOM"):
        loads("\ufeff{}")


def _deep_at_token_by_token(text: str, max_depth: int) -> int | None:
    """The scan without its shortcut: every bracket outside a string, one at a time."""
    depth = 0
    for match in re.finditer(r'"(?:[^"\\]++|\\.)*+"?|[\[\]{}]', text):
        if match.group() in "[{":
            depth += 1
            if depth > max_depth:
                return match.start()
        elif match.group() in "]}":
            depth -= 1
    return None


@pytest.mark.parametrize(
    "text",
    [
        json.dumps([{"a": [1, {"b": "[[[{{{"}]}] * 20),  # brackets in strings do not count
        "[" * 5 + '"\\"]]]]]]]]"' + "]" * 5,  # an escaped quote does not end the string
        "[" * 5 + "{}" * 30 + "]" * 5,
        "[" * 6 + "]" * 6 + "[" * 3 + "}" * 3,  # brackets that do not pair: scanned
        "]" * 10 + "[" * 70,  # closing first, then deeper than the limit
        "[" * 6 + '"cut off [[[[',
        "[" * 7 + "]" * 7,
        "[[]" * 40,
    ],
)
def test_the_depth_shortcut_finds_what_the_token_scan_finds(text: str) -> None:
    for limit in (3, 5, 6, 7):
        assert _too_deep_at(text, limit) == _deep_at_token_by_token(text, limit), limit
