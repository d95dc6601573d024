"""The round trip of every shipped example profile (``profiles/examples/``): the reference server
plays the bank the profile describes (``python -m reference_server --profile P``), and the suite run
with the same profile against it gives no must failure, no error and nothing blocked, and the
whole run lists exactly the must rules the profile leaves unjudged ("not judged here", under the
verdict).

Each example is judged whole once per session (``shared_runs.example_run``, issue 45): the tests
here, the discover round trip and the fleet read that run, none makes its own; a whole run holds
every smoke scenario too, so there is no separate smoke run of an example (``conformance run
--play P --smoke`` is the quick check of an edited example). All in ``make test-slow``, which CI
runs too (``.ci/run``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from conformance.contract import load_contract
from conformance.generate import generate_scenarios
from conformance.profile import load_profile
from runs.shared_runs import EXAMPLES as EXAMPLES_FOLDER
from runs.shared_runs import SECRET, example_run

EXAMPLES = sorted(EXAMPLES_FOLDER.glob("*.toml"))

#: The must rules a bank without the reference server's controls cannot be made to show (a
#: payment in PDNG, aged consents, a closed account), unless its profile supplies them
#: (``[prepared]``, ``[hooks]``). A basket whose payment changed is read with BS on any target.
NEEDS_PREPARED_STATES = frozenset(
    {
        "AL-ERR-8-consent-account-gone-empty-list-holds",
        "AL-LIM-sca-renewal-180-days-rejected",
        "AT-LIM-sca-renewal-180-days-rejected",
        "E8-LIM-sca-renewal-180-days-rejected",
        "E8-LIM-transaction-details-consent-max-90-days-rejected",
        "PC-ERR-6-pending-payment-not-deletable-rejected",
    }
)
#: What a bank without a batch run (no [hooks] batch) leaves unjudged: a periodic payment that a
#: batch run leaves alone (spec 3).
NEEDS_BATCH = frozenset({"E17-batch-run-leaves-periodic-unchanged"})
#: With the sandbox also the E3 listing of a payment booked by a batch run (spec 4.3 E3), and
#: E8's endToEndId bound, read on such a payment's transaction (E7's creation gives none, and
#: the reference server's E8 of one carries none).
SANDBOX_NEEDS_BATCH = NEEDS_BATCH | {
    "E3-sandbox-payment-is-listed",
    "E8-LIM-end-to-end-id-max-35-holds",
}
#: Each example's "not judged here" must rules: none where the bank prepared every state.
NOT_JUDGED = {
    "bank-offered-consents": NEEDS_PREPARED_STATES | SANDBOX_NEEDS_BATCH,
    "berlin-group-naming": NEEDS_PREPARED_STATES | SANDBOX_NEEDS_BATCH,
    "decoupled-bankid": NEEDS_PREPARED_STATES | SANDBOX_NEEDS_BATCH,
    "first-access-consents": NEEDS_PREPARED_STATES | SANDBOX_NEEDS_BATCH,
    "gateway-bank": NEEDS_PREPARED_STATES | SANDBOX_NEEDS_BATCH,
    "oauth-token-bank": NEEDS_PREPARED_STATES | SANDBOX_NEEDS_BATCH,
    "older-release": NEEDS_PREPARED_STATES | SANDBOX_NEEDS_BATCH,
    "prepared-states": frozenset(),
    "production-like": NEEDS_PREPARED_STATES | NEEDS_BATCH,
}


def test_every_example_says_what_it_leaves_unjudged() -> None:
    assert {path.stem for path in EXAMPLES} == set(NOT_JUDGED)


def test_there_are_example_profiles() -> None:
    assert EXAMPLES, "profiles/examples/ holds no profile"


@pytest.mark.parametrize("profile", EXAMPLES, ids=lambda path: path.stem)
def test_every_waiver_of_an_example_names_scenarios_that_exist(profile: Path) -> None:
    ids = [scenario.id for scenario in generate_scenarios(load_contract())]
    for waiver in load_profile(profile).waivers:
        assert any(waiver.covers(scenario_id) for scenario_id in ids), waiver


@pytest.mark.slow
@pytest.mark.parametrize("profile", EXAMPLES, ids=lambda path: path.stem)
def test_the_reference_server_plays_the_bank_and_the_suite_passes(profile: Path) -> None:
    document = _round_trip(profile)
    assert document["totals"]["passed"] > 500  # production-like: no sandbox scenarios
    unjudged = {e["scenario"] for e in document["not_judged"] if e["level"] == "must"}
    assert unjudged == NOT_JUDGED[profile.stem]
    verdicts = {s["id"]: s["verdict"] for s in document["scenarios"]}
    judged_here = NEEDS_PREPARED_STATES - unjudged  # the prepared states judged them, and held
    assert {verdicts[scenario] for scenario in judged_here} <= {"passed"}, verdicts
    lifecycle = load_profile(profile).lifecycle
    reasons = {s["id"]: s.get("reason", "") for s in document["scenarios"]}
    if lifecycle.release is not None:  # what spec 9 dates later: not applicable, named
        assert verdicts["E1-basket-ncbct-accepted"] == "not applicable"
        assert "release 1.21.20" in reasons["E1-basket-ncbct-accepted"]
    if not lifecycle.cancellation_needs_sca:  # cancelled at once: no PCA, the flows judged
        assert verdicts["PCA-norwegian-domestic-credit-transfers-accepted"] == "not applicable"
        assert verdicts["E16-authorised-payment-cancellation-needs-sca"] == "passed"
    for waiver in load_profile(profile).waivers:  # every waiver names scenarios that ran
        assert any(waiver.covers(s["id"]) for s in document["scenarios"]), waiver


def _round_trip(profile: Path) -> dict[str, Any]:
    """The example's whole run: no must failure, no error, nothing blocked, no should finding, no
    secret in any report."""
    run = example_run(profile)
    loaded = load_profile(profile)
    assert run.returncode == 0, run.tail()
    document = run.document()
    totals = document["totals"]
    assert totals["failed"] == totals["error"] == totals["blocked"] == 0, totals
    assert totals["failed_should"] == 0, totals  # the security group holds too
    reports = run.reports
    texts = "".join(p.read_text("utf-8", "replace") for p in reports.rglob("*") if p.is_file())
    assert SECRET not in texts  # the gateway key is masked in every report
    assert not re.search(r"PRIVATE KEY", texts)
    if loaded.oauth is not None:  # tokens fetched from the bank's endpoint, masked everywhere
        log = (run.folder / "server.log").read_text("utf-8")
        assert f"POST {loaded.oauth.token_url} 200" in log
        assert "Authorization: ***" in texts and not re.search(r"Bearer [\w-]{8}", texts)
    return document
