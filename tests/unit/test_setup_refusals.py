"""A refused set-up request says what blocked its scenarios and what would unblock them
(``bankside/setup_data/refusals.py``): status, spec 7 code, the header or field named, and the
profile key or ``discover`` step, with no id from the answer (one cause per refusal)."""

from __future__ import annotations

from typing import Any

from conformance.bankside.setup_data.refusals import refusal_summary, refused_title
from conformance.exchange import Exchange
from unit.test_checks import exchange


def _answer(status: int, body: Any) -> Exchange:
    return exchange(status, body, method="GET", path="/v1/accounts")


def test_a_missing_header_names_the_headers_and_the_profile_key() -> None:
    answer = _answer(
        400,
        {
            "code": "HTTP_HEADER_REQUIRED",
            "message": "Missing required header(s): x-accept-fix, tpp-session-id",
        },
    )
    assert refusal_summary(answer) == (
        "HTTP 400 HTTP_HEADER_REQUIRED, naming x-accept-fix, tpp-session-id"
    )
    title = refused_title("the first account access", "AL", answer, sandbox_creation=False)
    assert title.startswith("Set-up failed: the first account access (AL) was answered HTTP 400")
    assert "[required_headers] AL" in title and "conformance discover" in title


def test_a_refused_body_field_points_to_the_setup_templates() -> None:
    answer = _answer(
        400,
        {
            "code": "FORMAT_ERROR",
            "tppMessages": [{"category": "ERROR", "code": "FORMAT_ERROR", "path": "iban"}],
        },
    )
    title = refused_title("creating a sandbox account", "SA", answer, sandbox_creation=True)
    assert "HTTP 400 FORMAT_ERROR, naming iban" in title
    assert "[setup] templates (SA.json" in title


def test_a_refused_identity_points_to_the_certificate() -> None:
    answer = _answer(401, {"code": "CERTIFICATE_INVALID", "message": "serial 0a1b not trusted"})
    title = refused_title("creating a sandbox customer", "SCU", answer, sandbox_creation=True)
    assert "HTTP 401 CERTIFICATE_INVALID;" in title and "0a1b" not in title
    assert "certificate and key it trusts" in title


def test_an_operation_not_there_points_to_paths_and_unsupported() -> None:
    title = refused_title("reading the basket", "BS", _answer(404, {}), sandbox_creation=False)
    assert "[paths] BS" in title and "[operations] unsupported" in title


def test_an_answer_that_suggests_nothing_has_no_hint() -> None:
    title = refused_title("creating a payment", "E16", _answer(500, {}), sandbox_creation=False)
    assert title == "Set-up failed: creating a payment (E16) was answered HTTP 500"
