"""The one JSON reader for what arrives from outside (``conformance.contract.bounded_json``):
a document nested deeper than the limit, or longer, is refused unread as not JSON, never a
``RecursionError``; brackets inside strings do not count."""

from __future__ import annotations

import json

import pytest

from conformance.contract.bounded_json import MAX_DEPTH, JsonTooLarge, loads


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
