"""A failure's replay (issue 44 item 1): the values the reports mask are kept in the run's own
owner-only file, and ``conformance call --values FILE --scenario ID`` puts them back; a masked
value left is an error that says what is needed, never a request the bank judges otherwise."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import pytest

from conformance.commands.call import _with_values, add_arguments
from conformance.errors import ConformanceError
from conformance.report.replays import (
    VALUES_FILE,
    Rerun,
    load_values,
    masked_parts,
    record_values,
    unmasked,
)

RAW = (
    ".venv/bin/conformance call POST /v1/consents/1a2b3c4d5e6f/status --target http://bank "
    "-H 'PSU-ID: 0f1e2d3c-aaaa-bbbb-cccc-5d6e7f806d93' -H 'PSU-IP-Address: 192.0.2.7' "
    "-H 'TPP-Session-ID: kept' --data-json '{\"creditorName\": \"Kari Nordmann\"}'"
)
SHOWN = (
    ".venv/bin/conformance call POST /v1/consents/***3c4d/status --target http://bank "
    "-H 'PSU-ID: ***6d93' -H 'PSU-IP-Address: ***' "
    "-H 'TPP-Session-ID: kept' --data-json '{\"creditorName\": \"***\"}'"
)


def _call_args(line: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    words = shlex.split(line)
    return parser.parse_args(words[words.index("call") + 1 :])


def test_what_masking_hid_is_kept_owner_only_and_put_back(tmp_path: Path) -> None:
    assert record_values(tmp_path, "E16-x-rejected", RAW, SHOWN)
    path = tmp_path / VALUES_FILE
    assert path.stat().st_mode & 0o077 == 0
    values = load_values(path, "E16-x-rejected")
    assert values.path == "/v1/consents/1a2b3c4d5e6f/status"
    assert values.headers == {
        "PSU-ID": "0f1e2d3c-aaaa-bbbb-cccc-5d6e7f806d93",
        "PSU-IP-Address": "192.0.2.7",
    }
    headers: list[tuple[str, str | None]] = [
        ("PSU-ID", "***6d93"),
        ("psu-ip-address", "***"),
        ("TPP-Session-ID", "kept"),
    ]
    path_sent, headers_sent, body = unmasked(
        values, "/v1/consents/***3c4d/status", headers, b'{"creditorName": "***"}'
    )
    assert path_sent == "/v1/consents/1a2b3c4d5e6f/status"
    assert headers_sent == [
        ("PSU-ID", "0f1e2d3c-aaaa-bbbb-cccc-5d6e7f806d93"),
        ("psu-ip-address", "192.0.2.7"),
        ("TPP-Session-ID", "kept"),
    ]
    assert body == b'{"creditorName": "Kari Nordmann"}'
    assert masked_parts(path_sent, headers_sent) == []


def test_a_line_nothing_was_masked_in_writes_nothing(tmp_path: Path) -> None:
    assert not record_values(tmp_path, "E16-x-rejected", RAW, RAW)
    assert not (tmp_path / VALUES_FILE).exists()


def test_the_last_entry_of_a_scenario_counts_and_another_is_not_taken(tmp_path: Path) -> None:
    record_values(tmp_path, "A", RAW, SHOWN)
    record_values(tmp_path, "A", RAW.replace("192.0.2.7", "192.0.2.8"), SHOWN)
    assert load_values(tmp_path / VALUES_FILE, "A").headers["PSU-IP-Address"] == "192.0.2.8"
    with pytest.raises(ConformanceError, match="holds no values of the scenario B"):
        load_values(tmp_path / VALUES_FILE, "B")


def test_call_refuses_a_masked_value_and_says_what_it_needs(tmp_path: Path) -> None:
    args = _call_args(SHOWN)
    headers: list[tuple[str, str | None]] = [("PSU-ID", "***6d93"), ("PSU-IP-Address", "***")]
    with pytest.raises(ConformanceError) as raised:
        _with_values(args, "/v1/consents/***3c4d/status", headers, None)
    message = raised.value.message
    assert "the path, PSU-ID, PSU-IP-Address still hold(s) a value the reports masked" in message
    assert "--values" in message and "--scenario" in message
    args = _call_args(SHOWN + f" --values {tmp_path / VALUES_FILE}")
    with pytest.raises(ConformanceError, match="--values needs --scenario ID"):
        _with_values(args, "/v1/x", [], None)


def test_call_puts_the_values_back(tmp_path: Path) -> None:
    record_values(tmp_path, "A", RAW, SHOWN)
    args = _call_args(SHOWN + f" --scenario A --values {tmp_path / VALUES_FILE}")
    headers: list[tuple[str, str | None]] = [("PSU-ID", "***6d93"), ("PSU-IP-Address", "***")]
    path, sent, body = _with_values(args, "/v1/consents/***3c4d/status", headers, b"{}")
    assert path == "/v1/consents/1a2b3c4d5e6f/status"
    assert dict(sent)["PSU-ID"] == "0f1e2d3c-aaaa-bbbb-cccc-5d6e7f806d93"
    assert body == b"{}"  # no masked value in it: sent as given


def test_a_scenario_run_again_is_named_in_full() -> None:
    rerun = Rerun(".venv/bin/conformance run --fault delete-pdng-allowed")
    assert rerun.line("PC-ERR-6-pending-payment-not-deletable-rejected") == (
        ".venv/bin/conformance run --fault delete-pdng-allowed -- -k "
        "PC-ERR-6-pending-payment-not-deletable-rejected"
    )


class _Config:
    """What :func:`scenario_replay` asks of pytest's config: the reports folder."""

    def __init__(self, reports: Path) -> None:
        self.reports = reports

    def getoption(self, name: str, default: object = None) -> object:
        return str(self.reports) if name == "reports" else default


class _Made:
    """An earlier exchange of the scenario that made a payment (a 201 to a POST)."""

    method, status, response_body = "POST", 201, b'{"paymentId": "pay-7f3a9b2c41"}'

    def response_header(self, name: str) -> str | None:
        return None


@pytest.mark.parametrize(
    ("kind", "op", "bundled", "cleanup", "line", "rerun"),
    [
        ("constraint", "CS", True, False, RAW, True),  # the bundled server's replay: empty
        ("flow", "CS", False, False, RAW, True),  # judged over several requests
        ("constraint", "CS", False, False, RAW, False),
        ("constraint", "CS", False, True, RAW, True),  # a path id --cleanup took away
        ("header", "AL", False, True, "conformance call GET /v1/accounts", False),
        ("header", "AL", False, True, "conformance call GET /v1/accounts -H 'Consent-ID: c'", True),
        ("header", "AL", False, True, "conformance call GET /v1/accounts/pay-7f3a9b2c41", True),
    ],
    ids=["bundled", "flow", "bank", "cleaned-path-id", "cleaned-nothing", "consent", "made"],
)
def test_a_replay_whose_resource_is_gone_runs_the_scenario_again(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    op: str,
    bundled: bool,
    cleanup: bool,
    line: str,
    rerun: bool,
) -> None:
    """Issue 44 item 1: a resource the run made and cleaned up (``--cleanup``), or one the
    bundled server's fresh replay does not hold, is made again by running the scenario again
    (``RERUN``: ``conformance run … -- -k ID``); else the replay is the call line."""
    from conformance.plugin import replay
    from conformance.report.replays import RERUN
    from conformance.report.verdicts import ScenarioFacts

    monkeypatch.setattr(replay, "uses_bundled_server", lambda config: bundled)
    monkeypatch.setattr(replay, "cleanup_requested", lambda config: cleanup)
    facts = ScenarioFacts("PS-x-rejected", op, "r", "spec 4.3", "must", kind, "t")
    failure = AssertionError("no")
    failure.replay = line  # type: ignore[attr-defined]
    got = replay.scenario_replay(
        _Config(tmp_path),  # type: ignore[arg-type]
        facts,
        failure,
        [_Made(), _Made()],  # type: ignore[list-item]
    )
    assert (got == RERUN) is rerun, got
    if not rerun:
        assert "conformance call " in got and got.endswith("--scenario PS-x-rejected")
