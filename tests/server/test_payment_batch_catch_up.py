"""The batch hook's shortcut (``payment_batch._QUIET``): skipping the store read on quiet requests
never skips a run that fell due, whoever changed the clock or the batch state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reference_server.app import Application
from reference_server.model.clock import Clock, batch_runs_between, next_batch_run
from reference_server.model.payment_data import BATCH_STATE, BatchState
from reference_server.services.payment_batch import _QUIET, catch_up

START = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)  # between the 09:00 and 12:00 runs


def _app() -> Application:
    clock = Clock(lambda: START)
    return Application(clock=clock, modules=("batch",))


def _last_run(app: Application) -> str:
    state = app.store.get(BATCH_STATE, BatchState.id)
    assert state is not None
    return state.last_run


def test_next_batch_run_is_the_first_run_after_the_moment() -> None:
    for moment in (
        START,
        datetime(2026, 3, 2, 12, 0, tzinfo=UTC),
        datetime(2026, 3, 2, 23, 0, tzinfo=UTC),
    ):
        following = next_batch_run(moment)
        assert following > moment
        assert batch_runs_between(moment, following) == [following]
        assert batch_runs_between(moment, following - timedelta(microseconds=1)) == []


def test_quiet_requests_then_a_run_that_fell_due() -> None:
    app = _app()
    assert catch_up(app) == 0  # records the moment
    app.clock.advance(timedelta(minutes=30))
    assert catch_up(app) == 0 and catch_up(app) == 0
    assert app.store in _QUIET  # quiet: the shortcut answers from here on
    app.clock.advance(timedelta(hours=2))  # 12:30: the 12:00 run fell due
    catch_up(app)
    assert _last_run(app) == datetime(2026, 3, 2, 12, 0, tzinfo=UTC).isoformat()


def test_a_state_written_behind_the_shortcut_is_read_again() -> None:
    app = _app()
    catch_up(app)
    app.clock.advance(timedelta(minutes=5))
    assert catch_up(app) == 0
    earlier = (START - timedelta(days=1)).isoformat()
    app.store.put(BATCH_STATE, BatchState(earlier))  # a day of runs is now due
    catch_up(app)
    assert _last_run(app) != earlier


def test_a_reset_or_a_clock_moved_back_takes_the_full_path() -> None:
    app = _app()
    catch_up(app)
    app.clock.advance(timedelta(minutes=5))
    catch_up(app)
    app.clock.set(START - timedelta(hours=3))  # before the recorded run: the record follows
    catch_up(app)
    assert _last_run(app) == (START - timedelta(hours=3)).isoformat()
    app.store.reset()
    catch_up(app)
    assert app.store.get(BATCH_STATE, BatchState.id) is not None
