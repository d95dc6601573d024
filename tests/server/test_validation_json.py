"""``validation.parse_body`` reads JSON exactly as ``json.loads(..., parse_constant=...)`` did:
the same documents, and the same refusals with the same words (they go into the 400 answer);
besides, a number beyond a double is refused instead of being read as infinity."""

from __future__ import annotations

import json

import pytest

from reference_server.api import ApiError, Headers, Request
from reference_server.pipeline.validation import _reject_constant, parse_body

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


@pytest.mark.parametrize("text", ['{"a": 1e400}', "[-1.5E+309]", "1e999"])
def test_a_number_beyond_a_double_is_refused_not_read_as_infinity(text: str) -> None:
    verdict, message = _ours(text)
    assert verdict == "refused"
    assert "out of range" in str(message)


@pytest.mark.parametrize("text", ["1.5", "1e308", "-0.0", "[2.5e-324]", "12345678901234567890"])
def test_numbers_a_double_holds_are_read_as_before(text: str) -> None:
    assert _ours(text) == _reference(text)
