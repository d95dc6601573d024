"""A suite run against the reference server playing each reading of the spec's two-way places
(``conformance run --permissive`` / ``--demanding``, ``reference_server/assumptions.md``) fails no
must requirement and blocks nothing.

- **Permissive**: every must requirement rests on a sentence of the spec, so a bank that reads
  each two-way place the other way still conforms (issue 19 item 2). A new must requirement that
  rests on a reading fails this test.
- **Demanding**: where the spec is silent a bank may refuse more, require more or answer in
  another form, and the suite, told by the profile what a profile would tell it (``[sca]
  start``, ``[setup] templates``), judges such a bank conformant (issue 29 item 1). A positive
  scenario that rests on a second use of shared data or on our reading fails this test."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.profile import DEMANDING_PROFILE, PERMISSIVE_PROFILE, load_profile
from runs.shared_runs import reading_run

#: Each reading, the profile its shorthand plays, and the least it judges (judged, not skipped).
READINGS = [
    pytest.param("permissive", PERMISSIVE_PROFILE, 1900, id="permissive"),
    pytest.param("demanding", DEMANDING_PROFILE, 2300, id="demanding"),
]


@pytest.mark.slow  # the session's one run of each reading (shared_runs.py)
@pytest.mark.parametrize(("reading", "profile", "judged_floor"), READINGS)
def test_a_run_against_a_reading_has_no_must_failure(
    reading: str, profile: Path, judged_floor: int
) -> None:
    run = reading_run(reading)
    document = run.document()
    # the shorthand plays the reading's profile: the suite ran with it (and the server played it)
    assert document["profile"]["name"] == load_profile(profile).name
    totals = document["totals"]
    failed = sorted(
        f"{s['id']} ({s['rule']}): {s['reason']}"
        for s in document["scenarios"]
        if s["verdict"] in ("failed", "error")
    )
    assert not failed, f"{len(failed)} must failures:\n" + "\n".join(failed[:40])
    blocked = [s["id"] for s in document["scenarios"] if s["verdict"] == "blocked"]
    assert not blocked, f"set-up refused, so not judged: {blocked}"
    assert totals["passed"] + totals["failed_should"] > judged_floor, totals
    assert run.returncode == 0, run.tail()
