"""The server clock and the batch run schedule (spec 3: five runs a day)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reference_server.model.clock import BATCH_RUN_TIMES, Clock, batch_runs_between

START = datetime(2026, 1, 29, 7, 30, tzinfo=UTC)


def fixed() -> Clock:
    return Clock(lambda: START)


def test_clock_moves_by_offset_and_resets() -> None:
    clock = fixed()
    assert clock.now() == START
    clock.advance(timedelta(days=2))
    assert clock.today().isoformat() == "2026-01-31"
    clock.set(datetime(2030, 1, 1))  # naive = UTC
    assert clock.now() == datetime(2030, 1, 1, tzinfo=UTC)
    clock.reset()
    assert clock.now() == START and clock.offset == timedelta(0)


def test_five_runs_a_day() -> None:
    assert len(BATCH_RUN_TIMES) == 5
    day = batch_runs_between(START - timedelta(hours=8), START + timedelta(hours=16, minutes=30))
    assert [run.hour for run in day] == [6, 9, 12, 15, 18]


def test_runs_are_half_open_and_span_days() -> None:
    six = datetime(2026, 1, 29, 6, 0, tzinfo=UTC)
    assert batch_runs_between(six, six) == []
    assert batch_runs_between(six - timedelta(seconds=1), six) == [six]
    assert batch_runs_between(six, six + timedelta(hours=1)) == []
    assert len(batch_runs_between(START, START + timedelta(days=3))) == 15
