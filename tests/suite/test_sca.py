"""The SCA steps: the reference server's page filled in and left at the TPP-Redirect-URI, a person
at the terminal (refused without one or under xdist), a user command given the link."""

from __future__ import annotations

import io
import shlex
import sys
from collections.abc import Callable
from dataclasses import replace
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from conformance.bankside.client import TargetClient
from conformance.bankside.sca import CommandSca, ManualSca, ReferenceSca, ScaError, sca_step_for
from conformance.checks import ConformanceFailure, NotApplicable
from conformance.profile import ScaSettings, TargetProfile
from conformance.profile.lifecycle import Lifecycle
from conformance.runners import run_scenario
from conformance.runners.context import RunContext
from conformance.scenario import Scenario

REDIRECT = "https://tpp.invalid/conformance/redirect"


def started_payment(context: RunContext, seed: int) -> tuple[str, str, object]:
    """A new payment whose authorisation (PA) has started: its scaRedirect, PSU number, payment."""
    payment = context.data.payment(seed, "E16")
    link = context.data.start_authorisation(
        "PA",
        {"payment-product": payment.product, "payment-id": payment.payment_id},
        payment.psu,
        "starting the payment authorisation",
    )
    return link, payment.psu.customer_number or "", payment


def status_of(context: RunContext, payment: object) -> str:
    return str(context.data.payment_status(payment).json()["transactionStatus"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("approve", "sca_status", "payment_status"),
    [
        (True, "FINALISED", "ACTC"),
        (False, "FAILED", "RJCT"),
    ],
)
def test_reference_sca_fills_the_page_and_stops_at_the_tpp(
    context: RunContext, approve: bool, sca_status: str, payment_status: str
) -> None:
    link, number, payment = started_payment(context, 11 if approve else 12)
    outcome = ReferenceSca(context.client, REDIRECT).complete(
        link, customer_number=number, approve=approve
    )
    assert outcome.approved is approve
    assert outcome.redirect_url is not None and outcome.redirect_url.startswith(REDIRECT)
    assert parse_qs(urlsplit(outcome.redirect_url).query)["scaStatus"] == [sca_status]
    assert not any(exchange.url.startswith(REDIRECT) for exchange in context.client.exchanges)
    assert status_of(context, payment) == payment_status


def test_reference_sca_with_another_customer_number_is_an_error(context: RunContext) -> None:
    link, _, payment = started_payment(context, 13)
    with pytest.raises(ScaError, match="answered HTTP 200, not a redirect"):
        ReferenceSca(context.client, REDIRECT).complete(link, customer_number="99999999")
    assert status_of(context, payment) == "RCVD"


def test_a_page_without_a_form_is_an_error() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, html="<p>hello</p>"))
    with (
        TargetClient("http://bank.test", transport=transport, sign=False) as client,
        pytest.raises(ScaError, match="no form"),
    ):
        ReferenceSca(client, REDIRECT).complete("/sca/1", customer_number="1")


def test_the_form_is_read_like_a_browser_reads_it() -> None:
    page = (
        '<form method="post" action="/sca/1/confirm"><input type="hidden" name="token" '
        'value="t-9"><input name="customerNumber"><button name="action" value="approve">'
        "OK</button></form>"
    )
    sent: list[httpx.Request] = []

    def bank(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if request.method == "GET":
            return httpx.Response(200, html=page)
        return httpx.Response(303, headers={"Location": f"{REDIRECT}?code=1"})

    with TargetClient(
        "http://bank.test", transport=httpx.MockTransport(bank), sign=False
    ) as client:
        outcome = ReferenceSca(client, REDIRECT).complete("/sca/1", customer_number="42")
    assert outcome.redirect_url == f"{REDIRECT}?code=1"
    posted = sent[-1]
    assert posted.url.path == "/sca/1/confirm"
    assert parse_qs(posted.content.decode()) == {
        "token": ["t-9"],
        "customerNumber": ["42"],
        "action": ["approve"],
    }


# --- manual ---------------------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def __init__(self) -> None:
        super().__init__("\n")
        self.written: list[str] = []

    def write(self, text: str) -> int:
        self.written.append(text)
        return len(text)


def test_manual_sca_prints_the_link_and_waits_for_enter() -> None:
    terminal = FakeTerminal()
    outcome = ManualSca(terminal=lambda: terminal, environ={}).complete(
        "https://bank.test/sca/7", customer_number="50000001", approve=False
    )
    shown = "".join(terminal.written)
    assert "https://bank.test/sca/7" in shown and "CANCEL" in shown and "50000001" in shown
    assert outcome.approved is False


def test_manual_sca_is_not_applicable_under_xdist_or_without_a_terminal() -> None:
    with pytest.raises(NotApplicable, match="pytest-xdist"):
        ManualSca(environ={"PYTEST_XDIST_WORKER": "gw1"}).complete("l", customer_number=None)

    def no_terminal() -> io.StringIO:
        raise OSError("no tty")

    with pytest.raises(NotApplicable, match="needs a terminal"):
        ManualSca(terminal=no_terminal, environ={}).complete("l", customer_number=None)


# --- command --------------------------------------------------------------------------------------


def python(code: str) -> str:
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


def test_command_sca_gets_the_link_and_returns_the_redirect_it_prints() -> None:
    code = (
        "import os, sys; print('working');"
        "print(os.environ['CONFORMANCE_REDIRECT_URI'] + '?link=' + sys.argv[1]"
        " + '&action=' + os.environ['CONFORMANCE_SCA_ACTION']"
        " + '&who=' + os.environ['CONFORMANCE_SCA_CUSTOMER_NUMBER'])"
    )
    outcome = CommandSca(python(code), REDIRECT).complete(
        "https://bank.test/sca/1", customer_number="77", approve=True
    )
    assert outcome.redirect_url == f"{REDIRECT}?link=https://bank.test/sca/1&action=approve&who=77"


def test_command_sca_failures_are_clear_errors() -> None:
    with pytest.raises(ScaError, match="exit code 3: refused"):
        CommandSca(
            python("import sys; print('refused', file=sys.stderr); sys.exit(3)"), REDIRECT
        ).complete("l", customer_number=None)
    with pytest.raises(ScaError, match="was not found"):
        CommandSca("/nonexistent/sca-helper", REDIRECT).complete("l", customer_number=None)
    with pytest.raises(ScaError, match="did not finish"):
        CommandSca(python("import time; time.sleep(5)"), REDIRECT, timeout=0.2).complete(
            "l", customer_number=None
        )


def test_the_profile_chooses_the_step() -> None:
    profile = TargetProfile(name="t", base_url="http://bank.test")
    with TargetClient("http://bank.test", sign=False) as client:
        assert isinstance(sca_step_for(profile, client), ReferenceSca)
        manual = replace(profile, sca=ScaSettings(mode="manual"))
        assert isinstance(sca_step_for(manual, client), ManualSca)
        command = replace(profile, sca=ScaSettings(mode="command", command="./sca.sh"))
        assert isinstance(sca_step_for(command, client), CommandSca)


NOK = "https://tpp.invalid/conformance/failed"


def test_command_sca_returns_a_landing_on_the_nok_redirect_uri() -> None:
    code = "import os; print(os.environ['CONFORMANCE_NOK_REDIRECT_URI'] + '?error=access_denied')"
    outcome = CommandSca(python(code), REDIRECT, nok_redirect_uri=NOK).complete(
        "https://bank.test/sca/1", customer_number="77", approve=False
    )
    assert outcome.redirect_url == f"{NOK}?error=access_denied"


#: What the SCA command prints after a cancelled SCA, and the verdict on that landing.
LANDINGS = (
    ("os.environ['CONFORMANCE_NOK_REDIRECT_URI'] + '?error=access_denied'", "passed"),
    ("os.environ['CONFORMANCE_NOK_REDIRECT_URI'] + '?scaStatus=FAILED'", "passed"),
    ("os.environ['CONFORMANCE_REDIRECT_URI'] + '?error=access_denied'", "failed"),
    ("os.environ['CONFORMANCE_NOK_REDIRECT_URI'] + '?scaStatus=FINALISED'", "failed"),
    ("os.environ['CONFORMANCE_NOK_REDIRECT_URI'] + '?state=s1'", "failed"),
    ("'https://elsewhere.invalid/'", "not applicable"),
)


def test_the_landing_the_sca_command_prints_is_judged(
    faulty: Callable[..., RunContext], scenarios: dict[str, Scenario]
) -> None:
    fresh = faulty()  # a server of its own: no fault, none of the other tests' data
    profile = replace(
        fresh.profile,
        sca=ScaSettings(mode="command", command="true"),
        lifecycle=Lifecycle(nok_redirect_uri=NOK),
    )
    base = replace(fresh, profile=profile)
    scenario = scenarios["PA-failed-sca-returns-where-the-tpp-asked"]
    found: list[str] = []
    for index, (printed, _) in enumerate(LANDINGS):
        command = python(f"import os; print({printed})")
        step = CommandSca(command, REDIRECT, nok_redirect_uri=NOK)
        context = replace(base, sca=step, seed=base.seed + index)  # a fresh payment each
        try:
            run_scenario(scenario, context)
            found.append("passed")
        except NotApplicable:
            found.append("not applicable")
        except ConformanceFailure:
            found.append("failed")
    assert found == [verdict for _, verdict in LANDINGS]
