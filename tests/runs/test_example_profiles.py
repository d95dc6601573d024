"""The round trip of every shipped example profile (``profiles/examples/``): the reference server
plays the bank the profile describes (``python -m reference_server --profile P``), and the suite run
with the same profile against it gives no must failure, no error and nothing blocked, and the
whole run lists exactly the must rules the profile leaves unjudged ("not judged here", under the
verdict).

Per profile, the smoke scenarios (one positive and one negative per operation: every path,
header set, set-up template and signature the profile changes; ``-k smoke`` runs them alone, a
few seconds each) and the whole suite (its flows and SCA style too) are marked ``slow`` and run
in ``make test-slow``, which CI runs too (``.ci/run``): 14.5 s of CPU that ``make test`` no
longer spends (``bench/RESULTS.md``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.bankside.bundled import bundled_reference_server
from conformance.contract import load_contract
from conformance.generate import generate_scenarios
from conformance.profile import ENV_PREFIX, load_profile

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "profiles" / "examples").glob("*.toml"))

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
def test_the_reference_server_plays_the_bank_smoke(
    profile: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = _round_trip(profile, tmp_path, monkeypatch, ["--smoke"])
    assert document["totals"]["passed"] > 20  # production-like: no sandbox scenarios


@pytest.mark.slow
@pytest.mark.parametrize("profile", EXAMPLES, ids=lambda path: path.stem)
def test_the_reference_server_plays_the_bank_and_the_suite_passes(
    profile: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = _round_trip(profile, tmp_path, monkeypatch, ["-n", "2"])
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


def _round_trip(
    profile: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: list[str]
) -> dict[str, Any]:
    """The suite with ``options`` against the reference server playing ``profile``'s bank: no
    must failure, no error, nothing blocked, no should finding, no secret in any report."""
    loaded = load_profile(profile)
    for value in loaded.headers.values():  # the secrets the profile reads from the environment
        if value.startswith(ENV_PREFIX):
            monkeypatch.setenv(value.removeprefix(ENV_PREFIX), "round-trip-secret")
    if loaded.oauth is not None and loaded.oauth.client_secret_env:
        monkeypatch.setenv(loaded.oauth.client_secret_env, "round-trip-secret")
    reports = tmp_path / "reports"
    with bundled_reference_server(
        server_args=["--profile", str(profile)], log_path=tmp_path / "server.log"
    ) as url:
        done = subprocess.run(
            [sys.executable, "-m", "conformance", "run", "--profile", str(profile),
             "--target", url, "--reports", str(reports), *options],
            capture_output=True, text=True, timeout=900, check=False, env=dict(os.environ),
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    document: dict[str, Any] = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    totals = document["totals"]
    assert totals["failed"] == totals["error"] == totals["blocked"] == 0, totals
    assert totals["failed_should"] == 0, totals  # the security group holds too
    texts = "".join(p.read_text("utf-8", "replace") for p in reports.rglob("*") if p.is_file())
    assert "round-trip-secret" not in texts  # the gateway key is masked in every report
    assert not re.search(r"PRIVATE KEY", texts)
    if loaded.oauth is not None:  # tokens fetched from the bank's endpoint, masked everywhere
        log = (tmp_path / "server.log").read_text("utf-8")
        assert f"POST {loaded.oauth.token_url} 200" in log
        assert "Authorization: ***" in texts and not re.search(r"Bearer [\w-]{8}", texts)
    return document
