"""``validation.parse_body`` reads JSON exactly as ``json.loads(..., parse_constant=...)`` did:
the same documents, and the same refusals with the same words (they go into the 400 answer)."""

from __future__ import annotations

import json

import pytest

from reference_server.api import ApiError, Headers, Request
from reference_server.validation import _reject_constant, parse_body

TEXTS = [
    '{"a": 1}',
    "\ufeff{}",
    '{"a": NaN}',
    "[1,",
    '{"a": 1} x',
    '"s"',
    "-Infinity",
    " [] ",
    "{}",
]


def _reference(text: str) -> tuple[str, object]:
    try:
        return "ok", json.loads(text, parse_constant=_reject_constant)
    except ValueError as error:
        return "refused", f"the body is not valid JSON: {error}"


def _ours(text: str) -> tuple[str, object]:
    request = Request(
        "POST", "/", "/", {}, Headers([("Content-Type", "application/json")]), text.encode()
    )
    try:
        return "ok", parse_body(request)
    except ApiError as error:
        return "refused", error.message


@pytest.mark.parametrize("text", TEXTS)
def test_bodies_read_as_json_loads_reads_them(text: str) -> None:
    assert _ours(text) == _reference(text)
