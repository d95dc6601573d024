"""The switch trace (``--switch-trace``): which fault switches each tagged request asked, the tag
taken off before anything else reads the request (``reference_server/faults/trace.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.contract import Contract
from conformance.contract.trace import TRACE_HEADER
from reference_server.api import Headers
from reference_server.faults.trace import SwitchTrace, untagged
from reference_server.transport.http import start
from server.conftest import core_app, make_client


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_tagged_request_writes_each_switch_it_asked_once(tmp_path: Path) -> None:
    trace = SwitchTrace(tmp_path / "trace.jsonl")
    with trace.request(Headers([(TRACE_HEADER, "E1-some-scenario")])):
        trace.asked("kid-error-401")
        trace.asked("html-errors")
        trace.asked("kid-error-401")
    with trace.request(Headers([(TRACE_HEADER, "E2-asked-nothing")])):
        pass
    trace.close()
    assert lines(tmp_path / "trace.jsonl") == [
        {"tag": "E1-some-scenario", "faults": ["html-errors", "kid-error-401"]}
    ]


def test_a_switch_asked_outside_a_tagged_request_is_written_without_a_tag(tmp_path: Path) -> None:
    trace = SwitchTrace(tmp_path / "trace.jsonl")
    trace.asked("no-content-type")
    trace.asked("no-content-type")  # once: the self-check runs such a fault everywhere anyway
    with trace.request(Headers([("X-Request-ID", "1")])):  # no tag: the preflight's requests
        trace.asked("html-errors")
    trace.close()
    assert lines(tmp_path / "trace.jsonl") == [
        {"tag": None, "faults": ["no-content-type"]},
        {"tag": None, "faults": ["html-errors"]},
    ]


def test_the_tag_is_taken_off_and_the_other_headers_kept_in_order() -> None:
    headers = Headers([("Date", "d"), (TRACE_HEADER.lower(), "t"), ("X-Request-ID", "1")])
    assert list(untagged(headers).raw()) == [("Date", "d"), ("X-Request-ID", "1")]
    plain = Headers([("Date", "d")])
    assert untagged(plain) is plain


def test_a_server_with_a_trace_records_each_tagged_request_and_answers_as_without(
    tmp_path: Path, contract: Contract
) -> None:
    """Over HTTP: the tagged request's switches are written under its tag, and the tag changes
    nothing of the answer (the same status as the untagged request)."""
    trace = SwitchTrace(tmp_path / "trace.jsonl")
    running = start(core_app(switch_trace=trace))
    try:
        with make_client(running.url, contract, checked=False) as client:
            plain = client.get("/v1/no-such-resource")
            tagged = client.get("/v1/no-such-resource", headers={TRACE_HEADER: "S-404"})
    finally:
        running.stop()
    assert tagged.status_code == plain.status_code == 404
    assert {**tagged.json(), "id": ""} == {**plain.json(), "id": ""}  # each error has its id
    recorded = lines(tmp_path / "trace.jsonl")
    assert {"tag": "S-404", "faults": recorded[-1]["faults"]} == recorded[-1]
    assert "html-errors" in recorded[-1]["faults"]  # every error answer asks it
    assert recorded[0]["tag"] is None


def test_the_tpp_message_switch_is_asked_only_for_an_answer_with_tpp_messages() -> None:
    """The switch of ``tpp-message-code-outside-list`` is asked only where it changes the answer
    (an error body with tppMessages): the self-check then runs the fault on the scenarios that
    reached it, not on every scenario whose answer was an error."""
    from reference_server.pipeline.errors import form_for

    class Asked:
        def __init__(self) -> None:
            self.asked: list[str] = []

        def faulty(self, name: str) -> bool:
            self.asked.append(name)
            return True

        def reads(self, name: str) -> bool:
            return False

    app = Asked()
    assert not form_for(app, None, payment_style=False).every_own_code  # type: ignore[arg-type]
    assert app.asked == []
    assert form_for(app, None, payment_style=True).every_own_code  # type: ignore[arg-type]
    assert app.asked == ["tpp-message-code-outside-list"]
