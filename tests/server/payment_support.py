"""What the payment-side server tests share: a server with every resource module, and a
:class:`World` that creates sandbox PSUs, payments and baskets through signed HTTP and walks the
SCA redirect like a browser.

The shared ``server`` fixture of ``conftest.py`` loads the core modules only (so the two halves of
the server are tested independently); the payment side needs them all, so it has its own
session-scoped server (``full_server`` in ``conftest.py``, stopped at the session's end). Each
test module wraps :func:`world_on` in a fixture.

Time: :meth:`World.__init__` sets the server clock to 10:00 UTC tomorrow (between the 09:00 and
12:00 batch runs, inside the signing certificate's validity), so batch runs happen only when a test
moves the clock or asks for one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from conformance.contract import Contract
from conformance.generate import factories
from reference_server.app import Application
from reference_server.pipeline.validation import BANK_ZONE
from reference_server.transport.http import RunningServer, start
from server import bodies
from server.conftest import ErrorCapture, make_client

NDCT = "norwegian-domestic-credit-transfers"
NCBCT = "norwegian-cross-border-credit-transfers"
REDIRECT_URI = "https://tpp.example/callback?state=s1"

#: Headers every payment-side operation gets (spec 4.2 required sets of E1, E2, E8, E16-E18).
BASE_HEADERS = {
    "x-accept-fix": "amount-as-string",
    "TPP-Session-ID": "session-1",
    "TPP-Redirect-URI": REDIRECT_URI,
}

PATHS = {
    "E16": f"/v1/payments/{NDCT}",
    "E17": f"/v1/periodic-payments/{NDCT}",
    "E18": f"/v1/payments/{NCBCT}",
}


def start_faulty(*faults: str) -> RunningServer:
    """A server with faults switched on; the caller stops it."""
    return start(Application(faults=faults))


@dataclass(frozen=True)
class Psu:
    """A private sandbox customer with one NOK account (offered for consent: spec 4.3 E6)."""

    customer_id: str
    customer_number: str
    name: str
    account: Mapping[str, Any]

    @property
    def bban(self) -> str:
        return str(self.account["bban"])

    @property
    def iban(self) -> str:
        return str(self.account["iban"])

    def headers(self, **extra: str) -> dict[str, str]:
        return {"PSU-ID": self.customer_id, "PSU-IP-Address": "192.0.2.10", **extra}


class World:
    """Signed requests to one server, with the steps the payment tests repeat."""

    def __init__(self, app: Application, url: str, contract: Contract, *, checked: bool = True):
        self.app = app
        self.contract = contract
        self.client = make_client(url, contract, headers=dict(BASE_HEADERS), checked=checked)
        #: Signed, but answers are not checked against the base schema: for the answers an
        #: ``x-accept-fix`` value changes (the contract records those as ``x-acceptFixVariants``).
        self.unchecked = make_client(url, contract, headers=dict(BASE_HEADERS), checked=False)
        self.browser = httpx.Client(
            base_url=url, follow_redirects=False, timeout=10.0, verify=False
        )
        self._seed = 0
        tomorrow = datetime.now(UTC).date() + timedelta(days=1)
        self.set_clock(datetime.combine(tomorrow, time(10, 0), tzinfo=UTC))

    def close(self) -> None:
        self.client.close()
        self.unchecked.close()
        self.browser.close()

    def seed(self) -> int:
        self._seed += 1
        return self._seed

    # -- clock and batch --------------------------------------------------------------------------

    def set_clock(self, moment: datetime) -> None:
        answer = self.browser.post("/_control/clock", json={"set": moment.isoformat()})
        assert answer.status_code == 200, answer.text

    def advance(self, duration: str) -> None:
        answer = self.browser.post("/_control/clock", json={"advance": duration})
        assert answer.status_code == 200, answer.text

    def now(self) -> datetime:
        return self.app.clock.now()

    def today(self) -> date:
        """The bank's date (Europe/Oslo), which the payment date rules use."""
        return self.app.clock.now().astimezone(BANK_ZONE).date()

    def run_batch(self) -> dict[str, Any]:
        answer = self.browser.post("/_control/batch")
        assert answer.status_code == 200, answer.text
        return answer.json()

    # -- sandbox ----------------------------------------------------------------------------------

    def new_psu(self, name: str = "Kari Nordmann", balance: int = 100_000) -> Psu:
        made = self.client.post("/v1/sandbox/customers", json=bodies.customer(name=name))
        assert made.status_code == 201, made.text
        customer = made.json()
        customer = customer[0] if isinstance(customer, list) else customer
        body = bodies.account(
            customer["customerNumber"],
            balances=[
                {"balanceAmount": {"currency": "NOK", "amount": balance}, "balanceType": "expected"}
            ],
        )
        account = self.client.post("/v1/sandbox/accounts", json=body)
        assert account.status_code == 201, account.text
        return Psu(customer["customerId"], customer["customerNumber"], name, account.json())

    # -- payments ---------------------------------------------------------------------------------

    def ndct_body(self, psu: Psu, **fields: Any) -> dict[str, Any]:
        body = factories.ndct_payment(self.seed(), debtor_bban=psu.bban, kid=False)
        body.update(fields)
        return body

    def ncbct_body(self, psu: Psu, **fields: Any) -> dict[str, Any]:
        body = factories.ncbct_payment(self.seed(), debtor_bban=psu.bban)
        body.update(fields)
        return body

    def periodic_body(self, psu: Psu, **fields: Any) -> dict[str, Any]:
        body = factories.periodic_payment(self.seed(), today=self.today(), debtor_bban=psu.bban)
        body.update(fields)
        return body

    def create(
        self,
        operation: str,
        body: Mapping[str, Any],
        psu: Psu,
        *,
        params: Mapping[str, str] | None = None,
        **headers: str,
    ) -> httpx.Response:
        """E16, E17 or E18 as ``psu`` (extra headers by name, ``_`` for ``-``)."""
        extra = {name.replace("_", "-"): value for name, value in headers.items()}
        return self.client.post(
            PATHS[operation], json=dict(body), headers=psu.headers(**extra), params=params
        )

    def payment(self, psu: Psu, operation: str = "E16", **fields: Any) -> str:
        """A new payment's id (asserting 201)."""
        maker = {"E16": self.ndct_body, "E17": self.periodic_body, "E18": self.ncbct_body}
        answer = self.create(operation, maker[operation](psu, **fields), psu)
        assert answer.status_code == 201, answer.text
        return str(answer.json()["paymentId"])

    def status(self, payment_id: str, product: str = NDCT) -> str:
        answer = self.client.get(f"/v1/payments/{product}/{payment_id}/status")
        assert answer.status_code == 200, answer.text
        return str(answer.json()["transactionStatus"])

    def cancel(self, payment_id: str, product: str = NDCT) -> httpx.Response:
        return self.client.delete(f"/v1/payments/{product}/{payment_id}")

    def authorise_payment(self, payment_id: str, psu: Psu, product: str = NDCT) -> httpx.Response:
        return self.client.post(
            f"/v1/payments/{product}/{payment_id}/authorisations", headers=psu.headers()
        )

    # -- baskets ----------------------------------------------------------------------------------

    def basket(self, payment_ids: list[str], psu: Psu) -> httpx.Response:
        return self.client.post(
            "/v1/signing-baskets", json={"paymentIds": payment_ids}, headers=psu.headers()
        )

    def basket_id(self, payment_ids: list[str], psu: Psu) -> str:
        answer = self.basket(payment_ids, psu)
        assert answer.status_code == 201, answer.text
        return str(answer.json()["basketId"])

    def start_basket(self, basket_id: str, psu: Psu, **headers: str) -> httpx.Response:
        return self.client.post(
            f"/v1/signing-baskets/{basket_id}/authorisations", headers={**psu.headers(), **headers}
        )

    def read_basket(self, basket_id: str, psu: Psu, what: str = "") -> httpx.Response:
        """BR (``what`` empty) or BS (``what = "status"``): the basket read, signed."""
        suffix = f"/{what}" if what else ""
        return self.client.get(f"/v1/signing-baskets/{basket_id}{suffix}", headers=psu.headers())

    def basket_status(self, basket_id: str) -> str:
        answer = self.browser.get(f"/_control/signing-baskets/{basket_id}")
        assert answer.status_code == 200, answer.text
        return str(answer.json()["transactionStatus"])

    # -- SCA redirect -----------------------------------------------------------------------------

    def sca(
        self, redirect: str, customer_number: str | None, action: str = "approve"
    ) -> httpx.Response:
        """Open the scaRedirect page like a browser, then submit its form (form-encoded)."""
        page = self.browser.get(redirect)
        assert page.status_code == 200, page.text
        assert 'name="customerNumber"' in page.text
        form = {"action": action}
        if customer_number is not None:
            form["customerNumber"] = customer_number
        return self.browser.post(redirect, data=form)

    def approve(self, redirect: str, psu: Psu) -> dict[str, str]:
        """Complete the SCA as ``psu``; the query of the final redirect to the TPP."""
        final = self.sca(redirect, psu.customer_number)
        assert final.status_code == 303, final.text
        return landing(final)

    def authorised(self, psu: Psu, *payment_ids: str) -> str:
        """Put the payments in a basket and authorise it; the basket id."""
        basket_id = self.basket_id(list(payment_ids), psu)
        started = self.start_basket(basket_id, psu)
        assert started.status_code == 201, started.text
        self.approve(started.json()["_links"]["scaRedirect"]["href"], psu)
        return basket_id


def landing(final: httpx.Response) -> dict[str, str]:
    """The query parameters of the redirect back to the TPP (asserting it goes there)."""
    location = final.headers["Location"]
    assert location.startswith("https://tpp.example/callback?"), location
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


def world_on(
    running: RunningServer, server_errors: ErrorCapture, contract: Contract, *, checked: bool = True
) -> Iterator[World]:
    """A fresh world on ``running`` (reset first; ``checked``: every answer validated against the
    contract); a server-side exception logged during the test fails it."""
    running.app.reset()
    server_errors.drain()
    made = World(running.app, running.url, contract, checked=checked)
    yield made
    made.close()
    records = server_errors.drain()
    if records:
        formatter = logging.Formatter()
        pytest.fail(
            "the server logged an error during the test:\n"
            + "\n".join(formatter.format(record) for record in records)
        )
