"""``reference_server.api.Headers``: case-insensitive, first value wins, arrival order."""

from __future__ import annotations

import pytest

from reference_server.api import Headers

LINES = (("X-Request-ID", "1"), ("Host", "x"), ("x-request-id", "2"), ("PSU-ID", ""))


def test_lookups_ignore_case_and_keep_the_first_value() -> None:
    headers = Headers(LINES)
    assert headers["x-REQUEST-id"] == "1"
    assert headers.get("X-Request-Id") == "1"
    assert headers.get("Missing") is None and headers.get("Missing", "d") == "d"
    assert "host" in headers and "Missing" not in headers and 1 not in headers  # type: ignore[comparison-overlap]
    with pytest.raises(KeyError):
        headers["Missing"]


def test_names_come_once_as_first_received_in_arrival_order() -> None:
    headers = Headers(LINES)
    assert list(headers) == ["X-Request-ID", "Host", "PSU-ID"]
    assert len(headers) == 3
    assert list(headers.named()) == [
        ("x-request-id", "X-Request-ID", "1"),
        ("host", "Host", "x"),
        ("psu-id", "PSU-ID", ""),
    ]
    assert dict(headers.folded()) == {"x-request-id": "1", "host": "x", "psu-id": ""}
    assert dict(headers.items()) == {"X-Request-ID": "1", "Host": "x", "PSU-ID": ""}
    assert headers.raw() == LINES


def test_the_folded_view_is_read_only() -> None:
    with pytest.raises(TypeError):
        Headers(LINES).folded()["host"] = "y"  # type: ignore[index]
