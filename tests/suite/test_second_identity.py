"""A scenario that signs as a second identity (the RFC 2047 Signature of spec 5 item 3, signed by
a certificate of a CA named outside ASCII) names that identity's own resources: its payments,
baskets, consents, customers and accounts are made by it (``RunContext.as_identity``). So a bank
that owns resources per certificate (the reference server's permissive reading
``ownership-per-certificate``) is judged as fairly as one that owns them per organisation, and a
bank that refuses the identity's set-up blocks the scenario instead of passing it."""

from __future__ import annotations

import base64
import gc
from collections.abc import Callable, Iterator

import pytest
from cryptography import x509

from conformance.checks import SetUpFailure
from conformance.contract import Contract
from conformance.runners import RunContext, run_scenario
from conformance.scenario import Scenario
from conformance.signing import default_ca, default_identity
from reference_server.app import Application
from reference_server.model.bank_style import BankStyle
from reference_server.transport.http import RunningServer, start
from suite.conftest import build_context

RFC2047 = "-auth-rfc2047-signature-accepted"


@pytest.fixture(scope="module")
def per_certificate(contract: Contract) -> Iterator[RunContext]:
    """A reference server that owns resources per certificate, and a context against it."""
    running: RunningServer = start(
        Application(bank=BankStyle(readings=frozenset({"ownership-per-certificate"})))
    )
    context, client = build_context(contract, running.url)
    yield context
    client.close()
    running.stop()


def _signers(context: RunContext) -> set[int]:
    """The serial numbers of the certificates the context's last scenario signed with."""
    serials = set()
    for exchange in context.exchanges:
        value = dict((k.lower(), v) for k, v in exchange.request_headers).get(
            "tpp-signature-certificate"
        )
        if value:
            certificate = x509.load_der_x509_certificate(base64.b64decode(value))
            serials.add(certificate.serial_number)
    return serials


def test_every_rfc2047_scenario_passes_against_ownership_per_certificate(
    scenarios: dict[str, Scenario], per_certificate: RunContext
) -> None:
    chosen = [s for s in scenarios.values() if s.id.endswith(RFC2047)]
    assert len(chosen) == len({s.operation for s in scenarios.values()})  # one per operation
    own = default_identity().certificate.serial_number
    for scenario in chosen:
        if per_certificate.unsupported_reason(scenario.operation) is not None:
            continue  # an optional operation (SI) the test's profile does not name
        per_certificate.exchanges.clear()
        run_scenario(scenario, per_certificate)
        signers = _signers(per_certificate)
        assert signers and own not in signers, (scenario.id, signers)  # set up by itself


def test_a_bank_that_refuses_the_identity_s_set_up_blocks_the_scenario(
    scenarios: dict[str, Scenario], faulty: Callable[..., RunContext]
) -> None:
    """The server trusts only the run's CA: the RFC 2047 identity (another CA) cannot create the
    account E12 reads, and the scenario is blocked with that reason, never judged on the run's
    own account."""
    context = faulty(trust_ca=default_ca().certificate)
    with pytest.raises(SetUpFailure, match="Set-up failed"):
        run_scenario(scenarios["E12" + RFC2047], context)


def test_the_second_identity_outlives_the_scenario_context_that_made_it(
    per_certificate: RunContext,
) -> None:
    """With scenarios in flight (``--threads``) the first to sign as the second identity may be
    one scenario's context (``for_scenario``); that context going away must not close the client
    the worker's other scenarios go on signing with (it did: "the client has been closed")."""
    one_scenario = per_certificate.for_scenario()
    derived = one_scenario.as_identity("gc-check", default_identity())
    del one_scenario
    gc.collect()
    assert per_certificate.as_identity("gc-check", default_identity()) is derived
    assert not derived.client._http.is_closed
