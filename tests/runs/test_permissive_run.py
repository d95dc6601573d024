"""A suite run against the reference server playing the permissive reading (``conformance run
--permissive``, ``reference_server/assumptions.md`` "The permissive reading") fails no must
requirement: every must requirement rests on a sentence of the spec, and a bank that reads each
two-way place the other way still conforms (issue 19 item 2). A new must requirement that rests
on a reading fails this test."""

from __future__ import annotations

import pytest

from conformance.profile import PERMISSIVE_PROFILE, load_profile
from runs.shared_runs import reading_run


@pytest.mark.slow  # the session's one run of the permissive reading (shared_runs.py)
def test_a_run_against_the_permissive_server_has_no_must_failure() -> None:
    run = reading_run("permissive")
    document = run.document()
    # the shorthand plays the reading's profile: the suite ran with it (and the server played it)
    assert document["profile"]["name"] == load_profile(PERMISSIVE_PROFILE).name
    totals = document["totals"]
    failed = sorted(
        f"{s['id']} ({s['rule']}): {s['reason']}"
        for s in document["scenarios"]
        if s["verdict"] in ("failed", "error")
    )
    assert not failed, f"{len(failed)} must failures:\n" + "\n".join(failed[:40])
    blocked = [s["id"] for s in document["scenarios"] if s["verdict"] == "blocked"]
    assert not blocked, f"set-up refused, so not judged: {blocked}"
    assert totals["passed"] + totals["failed_should"] > 1900, totals  # judged, not skipped
    assert run.returncode == 0, run.tail()
