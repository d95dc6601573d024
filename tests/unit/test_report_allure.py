"""Allure attachments of a scenario (``conformance/report/allure.py``) and the identity scrub
they go through (``conformance/report/masking.py``): every exchange is in the one attachment, in
order, masked; nothing is rendered when no Allure listener records; the fast scrub pattern
masks exactly what the look-around pattern it replaced masked."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from conformance.contract.identifiers import generate_national_id
from conformance.exchange import Exchange
from conformance.report import allure as allure_report
from conformance.report.masking import scrub_identities

NATIONAL_ID = generate_national_id(random.Random(7))


def exchange(method: str, path: str, status: int, body: str = "{}") -> Exchange:
    return Exchange(
        method=method,
        url=f"http://bank.invalid{path}",
        request_headers=(("Accept", "application/json"),),
        request_body=b"",
        signing_string=None,
        status=status,
        response_headers=(("Content-Type", "application/json"),),
        response_body=body.encode(),
        elapsed=0.001,
        signer="standard",
        base_url="http://bank.invalid",
    )


@pytest.fixture
def attached(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What ``allure.attach`` was called with, as if an Allure listener were recording."""
    calls: list[dict[str, Any]] = []

    def attach(body: str, name: str, attachment_type: Any = None, **_: Any) -> None:
        calls.append({"body": body, "name": name, "type": attachment_type})

    monkeypatch.setattr(allure_report, "enabled", lambda: True)
    monkeypatch.setattr("conformance.report.allure.allure.attach", attach)
    return calls


def test_one_exchange_is_attached_under_its_own_name(attached: list[dict[str, Any]]) -> None:
    allure_report.attach_exchanges([exchange("GET", "/v1/sandbox/accounts/1", 200)])
    assert [call["name"] for call in attached] == ["01 GET /v1/sandbox/accounts/1 → 200"]
    assert attached[0]["body"].startswith(">>> GET http://bank.invalid/v1/sandbox/accounts/1")


def test_several_exchanges_go_into_one_attachment_in_order_and_masked(
    attached: list[dict[str, Any]],
) -> None:
    exchanges = [
        exchange("POST", "/v1/sandbox/customers", 201, f'{{"nationalId": "{NATIONAL_ID}"}}'),
        exchange("POST", "/v1/sandbox/accounts", 201),
        exchange("GET", "/v1/accounts", 200),
    ]
    allure_report.attach_exchanges(exchanges)
    assert len(attached) == 1
    name, body = attached[0]["name"], attached[0]["body"]
    assert name == "01 POST /v1/sandbox/customers → 201 … 03 GET /v1/accounts → 200"
    headings = re.findall(r"^=== (.+) ===$", body, flags=re.MULTILINE)
    assert headings == [
        "01 POST /v1/sandbox/customers → 201",
        "02 POST /v1/sandbox/accounts → 201",
        "03 GET /v1/accounts → 200",
    ]
    for item in exchanges:
        assert item.render().replace(NATIONAL_ID, "*********" + NATIONAL_ID[-2:]) in body
    assert NATIONAL_ID not in body


def test_nothing_is_attached_for_no_exchange(attached: list[dict[str, Any]]) -> None:
    allure_report.attach_exchanges([])
    assert attached == []


def test_nothing_is_rendered_when_no_listener_records(monkeypatch: pytest.MonkeyPatch) -> None:
    def render(self: Exchange) -> str:
        raise AssertionError("rendered for nobody")

    monkeypatch.setattr(Exchange, "render", render)
    assert not allure_report.enabled()  # no --alluredir in this process
    allure_report.attach_exchanges([exchange("GET", "/v1/accounts", 200)])


def test_the_scrub_masks_what_the_look_around_pattern_masked() -> None:
    """The pattern was ``(?<![0-9])[0-9]{11}(?![0-9])``; the faster one must agree on texts
    with identity numbers, account numbers and digit runs of every length, anywhere."""
    old = re.compile(r"(?<![0-9])[0-9]{11}(?![0-9])")

    def reference(text: str) -> str:
        return old.sub(lambda m: scrub_identities(m.group(0)), text)

    rng = random.Random(20260129)
    pieces = [NATIONAL_ID, generate_national_id(rng), "12345678903", "0", "42", " ", "-", "x", "é"]
    for _ in range(2000):
        text = "".join(
            rng.choice(pieces)
            if rng.random() < 0.7
            else str(rng.randrange(10 ** rng.randint(1, 14)))
            for _ in range(rng.randint(1, 8))
        )
        assert scrub_identities(text) == reference(text), text
