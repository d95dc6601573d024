"""A check that saw nothing has not passed (issue 29 item 10): a limit on an answer's field is
judged on an answer that carries the field, set up so that it does where the run can (a payment
the bank booked carries its endToEndId), and not judged, with the reason, where the target's
answer leaves the field out."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.checks import NotApplicable, json_document
from conformance.contract import Contract
from conformance.runners import run_scenario
from conformance.runners.context import RunContext
from conformance.scenario import Scenario
from reference_server.app import Application
from reference_server.transport.http import start
from suite.conftest import build_context

END_TO_END = "E8-LIM-end-to-end-id-max-35-holds"


def _documents(context: RunContext, status: int) -> list[dict[str, Any]]:
    """The JSON objects answered with ``status`` in the scenario just run."""
    documents = (json_document(e) for e in context.exchanges if e.status == status)
    return [document for document in documents if isinstance(document, dict)]


def _details(context: RunContext) -> list[dict[str, Any]]:
    """The transaction details E8 answered in the scenario just run."""
    return [
        document["transactionsDetails"]
        for document in _documents(context, 200)
        if "transactionsDetails" in document
    ]


def test_the_end_to_end_id_bound_is_judged_on_a_booked_payment_that_carries_one(
    scenarios: dict[str, Scenario], context: RunContext
) -> None:
    run_scenario(scenarios[END_TO_END], context)
    (details,) = _details(context)
    assert isinstance(details.get("endToEndId"), str) and details["endToEndId"]


def test_without_a_booked_payment_an_answer_without_end_to_end_id_is_not_judged(
    scenarios: dict[str, Scenario], contract: Contract
) -> None:
    # no batch run can be had (not the reference server, no [hooks] batch): E8 reads the
    # consent's transaction, made with E7, whose creation (spec 2.9) has no endToEndId. A
    # server of its own: the run seed's shared data would collide with the session's.
    running = start(Application())
    context, client = build_context(contract, running.url, reference_server=False)
    try:
        with pytest.raises(NotApplicable, match="the target's answer carries no endToEndId"):
            run_scenario(scenarios[END_TO_END], context)
    finally:
        client.close()
        running.stop()
    (details,) = _details(context)
    assert "endToEndId" not in details


@pytest.mark.parametrize("operation", ["E16", "E17", "E18"])
def test_a_payment_answer_without_psu_message_leaves_its_bound_not_judged(
    scenarios: dict[str, Scenario], context: RunContext, operation: str
) -> None:
    # the reference server never sends psuMessage (spec 2.6: optional)
    with pytest.raises(NotApplicable, match=r"carries no psuMessage \(2 answers read\)"):
        run_scenario(scenarios[f"{operation}-LIM-psu-message-max-512-holds"], context)


def test_the_tpp_message_text_bound_is_judged_on_the_error_answer_that_carries_one(
    scenarios: dict[str, Scenario], context: RunContext
) -> None:
    run_scenario(scenarios["E16-LIM-tpp-message-text-max-512-holds"], context)
    texts = [
        message.get("text")
        for document in _documents(context, 400)
        for message in document.get("tppMessages", [])
    ]
    assert any(isinstance(text, str) for text in texts)
