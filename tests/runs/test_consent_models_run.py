"""The consent models played end to end: the reference server plays a bank of each model
(``[consent] model``) and the suite, run with that profile, judges its consent scenarios (CC, CG,
CD, the lifecycle rows and flows, the consented account operations) without a failure or a
should finding; run with the default (detailed) profile against a bank-offered bank, the consent
creations fail, so the model is what makes the difference. A first-access bank (no consent
endpoint) is judged on its account operations, spec 8's ages too where the run has the reference
server's controls, its consent operations not applicable. The bank-offered and first-access
banks are the example profiles' (their whole runs, made once in the session)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.bankside.bundled import bundled_reference_server
from conformance.profile import load_profile
from runs.shared_runs import EXAMPLES, example_run

#: The scenarios that create, read, delete or use a consent.
SELECTION = "CC or CG or CD or CS or CA or CNS or consent or AL or AT"


def _run(profile: Path, server_profile: Path, reports: Path, log: Path) -> dict[str, object]:
    with bundled_reference_server(
        server_args=["--profile", str(server_profile)], log_path=log
    ) as url:
        subprocess.run(
            [sys.executable, "-m", "conformance", "run", "--profile", str(profile),
             "--target", url, "--reports", str(reports), "-n", "2", "--", "-k", SELECTION],
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
    document: dict[str, object] = json.loads((reports / "compliance.json").read_text("utf-8"))
    return document


def _profile(folder: Path, model: str, *, controls: bool = False) -> Path:
    path = folder / f"{model}.toml"
    path.write_text(
        f'name = "a {model} bank"\nbase_url = "http://127.0.0.1:8000"\n'
        + ("reference_server = true\n" if controls else "")
        + f'[consent]\nmodel = "{model}"\n',
        encoding="utf-8",
    )
    return path


#: The models an example profile plays (``profiles/examples/<model>-consents.toml``): the
#: session's whole run with it (``shared_runs.example_run``) is that model's bank played, read
#: here rather than run again on the selection.
WITH_AN_EXAMPLE = frozenset({"bank-offered", "first-access"})


@pytest.mark.slow
@pytest.mark.parametrize("model", ["bank-offered", "global", "first-access"])
def test_a_bank_of_each_model_is_played_and_passes(model: str, tmp_path: Path) -> None:
    if model in WITH_AN_EXAMPLE:
        example = EXAMPLES / f"{model}-consents.toml"
        assert load_profile(example).consent.model == model
        document = example_run(example).document()
    else:
        profile = _profile(tmp_path, model)
        document = _run(profile, profile, tmp_path / "reports", tmp_path / "server.log")
    totals = document["totals"]
    assert isinstance(totals, dict)
    assert totals["passed"] > 200, totals
    assert totals["failed"] == totals["failed_should"] == totals["error"] == 0, totals
    assert totals["blocked"] == 0, totals


@pytest.mark.slow
def test_the_detailed_body_fails_at_a_bank_offered_bank(tmp_path: Path) -> None:
    detailed = _profile(tmp_path, "detailed")
    offered = _profile(tmp_path, "bank-offered")
    document = _run(detailed, offered, tmp_path / "reports", tmp_path / "server.log")
    scenarios = document["scenarios"]
    assert isinstance(scenarios, list)
    verdicts = {item["id"]: item["verdict"] for item in scenarios}
    assert verdicts["CC-complete-request-accepted"] != "passed"
    assert verdicts["CG-authorised-consent-reads-its-access"] != "passed"


#: Spec 8's ages and limits and spec 7 rule 8 on the account operations (must rules).
AGE_AND_LIMIT_RULES = (
    "AL-ERR-8-consent-account-gone-empty-list-holds",
    "AL-LIM-sca-renewal-180-days-rejected",
    "AT-LIM-sca-renewal-180-days-rejected",
    "E8-LIM-sca-renewal-180-days-rejected",
    "E8-LIM-transaction-details-consent-max-90-days-rejected",
    "E8-LIM-transaction-details-daily-calls-without-ip-rejected",
)


@pytest.mark.slow
def test_a_first_access_bank_is_judged_on_its_sessions_consents(tmp_path: Path) -> None:
    """With the reference server's controls (the consent aged, the account deleted) spec 8's
    rules are judged on consents given at the first access, and hold; the consent operations
    are not applicable, naming the model."""
    profile = _profile(tmp_path, "first-access", controls=True)
    document = _run(profile, profile, tmp_path / "reports", tmp_path / "server.log")
    totals = document["totals"]
    assert isinstance(totals, dict)
    assert totals["failed"] == totals["failed_should"] == totals["error"] == 0, totals
    assert totals["blocked"] == 0, totals
    scenarios = document["scenarios"]
    assert isinstance(scenarios, list)
    verdicts = {item["id"]: item["verdict"] for item in scenarios}
    assert {verdicts[scenario] for scenario in AGE_AND_LIMIT_RULES} == {"passed"}, verdicts
    reasons = {item["id"]: item.get("reason", "") for item in scenarios}
    for scenario in ("CC-complete-request-accepted", "CG-authorised-consent-reads-its-access"):
        assert verdicts[scenario] == "not applicable"
        assert "first-access" in reasons[scenario]
