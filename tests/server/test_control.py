"""``/_control`` (reference-server only): clock and reset; unsigned, loopback only, not /v1."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from reference_server.api import Headers, Request
from reference_server.app import Application
from reference_server.resources.control import parse_duration
from reference_server.transport.http import RunningServer
from server import bodies


@pytest.fixture
def plain(server: RunningServer, app: Application) -> Iterator[httpx.Client]:
    """An unsigned client: the controls need no signature."""
    with httpx.Client(base_url=server.url, verify=False) as client:
        yield client


def test_clock_is_shown(plain: httpx.Client) -> None:
    shown = plain.get("/_control/clock").json()
    now = datetime.fromisoformat(shown["now"])
    assert abs(now - datetime.now(UTC)) < timedelta(seconds=5)
    assert shown["offsetSeconds"] == 0


@pytest.mark.parametrize(
    ("body", "delta"),
    [
        ({"advance": "P1D"}, timedelta(days=1)),
        ({"advance": "PT2H30M"}, timedelta(hours=2, minutes=30)),
        ({"advance": "P1W"}, timedelta(weeks=1)),
        ({"advance": "-P2D"}, timedelta(days=-2)),
        ({"advanceSeconds": 90}, timedelta(seconds=90)),
    ],
)
def test_clock_advances(
    plain: httpx.Client, app: Application, body: dict, delta: timedelta
) -> None:
    response = plain.post("/_control/clock", json=body)
    assert response.status_code == 200
    assert abs(app.clock.offset - delta) < timedelta(seconds=1)


def test_clock_is_set_and_reset(plain: httpx.Client, app: Application) -> None:
    shown = plain.post("/_control/clock", json={"set": "2030-03-01T10:00:00Z"}).json()
    assert shown["today"] == "2030-03-01"
    assert app.clock.today().isoformat() == "2030-03-01"
    assert plain.post("/_control/reset").json() == {"reset": True}
    assert app.clock.offset == timedelta(0)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"advance": "P1M"},
        {"advance": "1 day"},
        {"advanceSeconds": "10"},
        {"set": "soon"},
        {"advance": "P1D", "set": "2030-01-01"},
        [],
    ],
)
def test_bad_clock_controls_are_400(plain: httpx.Client, body: object) -> None:
    response = plain.post("/_control/clock", json=body)
    assert response.status_code == 400
    assert response.json()["code"] == "FORMAT_ERROR"


def test_moved_clock_drives_the_sandbox_date_rule(
    plain: httpx.Client, client: httpx.Client
) -> None:
    """A transaction dated three days ahead becomes valid once the clock is four days ahead."""
    customer = client.post("/v1/sandbox/customers", json=bodies.customer()).json()
    account = client.post(
        "/v1/sandbox/accounts", json=bodies.account(customer["customerNumber"])
    ).json()
    item = bodies.account_transaction(
        account, bookingDate=bodies.days_ago(-3), valueDate=bodies.days_ago(-3)
    )
    path = f"/v1/sandbox/accounts/{account['id']}/transactions"
    assert client.post(path, json=[item]).status_code == 400
    plain.post("/_control/clock", json={"advance": "P4D"})
    assert client.post(path, json=[item]).status_code == 201


def test_reset_empties_the_store(plain: httpx.Client, client: httpx.Client) -> None:
    client.post("/v1/sandbox/customers", json=bodies.customer())
    plain.post("/_control/reset")
    assert client.get("/v1/sandbox/customers").json() == []


def test_controls_answer_loopback_only(app: Application) -> None:
    request = Request(
        "POST", "/_control/reset", "/_control/reset", {}, Headers(), b"", ("192.0.2.7", 5000)
    )
    response = app.dispatch(request)
    assert response.status == 403


def test_wrong_method_on_a_control_is_405(plain: httpx.Client) -> None:
    response = plain.delete("/_control/clock")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"


def test_duration_parser() -> None:
    assert parse_duration("P1DT1H1M1.5S") == timedelta(days=1, hours=1, minutes=1, seconds=1.5)
    for text in ("P", "PT", "P1Y", "P1DT", "D1"):
        with pytest.raises(ValueError):
            parse_duration(text)
