"""Issue 44 item 1's "done when", through real runs: the ``reproduce:`` line a failure prints
runs as printed and reproduces the finding.

- A should finding against a bank (the reference server playing an example profile, started as
  a bank is: not the bundled server, so the reports mask its secrets): the printed ``call`` line
  carries ``***`` values, names the run's values file, and, pasted into a shell, sends the real
  ones and says "still breaks". The file is owner-only.
- A state rule (a PDNG payment's deletion, spec 7 rule 6) cannot be replayed by one request on a
  fresh server: its printed line is the ``conformance run … -- -k ID`` that makes the state again,
  and it fails the same way.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.report.replays import VALUES_FILE

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "profiles" / "examples" / "berlin-group-naming.toml"
#: Codes outside spec 7's tppMessages list in a basket's refusal: a should finding (our reading).
FAULT = "tpp-message-code-outside-list"
SHOULD = "E1-wrong-content-type-rejected"
STATE_FAULT = "delete-pdng-allowed"
STATE_RULE = "PC-ERR-6-pending-payment-not-deletable-rejected"


def _conformance(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "conformance", *argv],
        cwd=cwd, capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip


def _printed(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A printed command run as a shell would run it."""
    return subprocess.run(
        shlex.split(line), cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )


def _scenario(reports: Path, scenario_id: str) -> dict[str, object]:
    document = json.loads((reports / "compliance.json").read_text(encoding="utf-8"))
    (found,) = [s for s in document["scenarios"] if s["id"] == scenario_id]
    return dict(found)


@pytest.mark.slow  # a bank served and a run against it
def test_a_masked_should_findings_replay_reproduces_it(tmp_path: Path) -> None:
    assert _conformance("certs", "--out", "ids", cwd=tmp_path).returncode == 0
    bank = subprocess.Popen(
        [sys.executable, "-m", "conformance", "serve", "--port", "0", "--trust", "ids/ca.pem",
         "--profile", str(PROFILE), "--fault", FAULT],
        cwd=tmp_path, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert bank.stdout is not None
        url = bank.stdout.readline().split("listening on ", 1)[1].strip()
        run = _conformance(
            "run", "--target", url, "--profile", str(PROFILE), "--cert", "ids/tpp.pem",
            "--key", "ids/tpp.key", "--", "-k", SHOULD, "-n", "0", cwd=tmp_path,
        )  # fmt: skip
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
        scenario = _scenario(tmp_path / "reports", SHOULD)
        assert scenario["verdict"] == "failed (should)"
        replay = str(scenario["reproduce"])
        assert "PSU-ID: ***" in replay  # masked, as every report of a bank's run
        assert f"--scenario {SHOULD} --values reports/{VALUES_FILE}" in replay
        assert f"reproduce: {replay}" in run.stdout
        values = tmp_path / "reports" / VALUES_FILE
        assert values.stat().st_mode & 0o077 == 0
        again = _printed(replay, tmp_path)
        assert again.returncode == 1, again.stdout[-3000:] + again.stderr
        assert f"still breaks {SHOULD} (" in again.stdout
        assert "at should:" in again.stdout and "UNSUPPORTED_MEDIA_TYPE" in again.stdout
        assert "PSU-ID: ***" not in again.stdout  # the run's PSU-ID was sent, not its mask
        # without the values, the replay says what it needs instead of sending the masks
        bare = _printed(replay.split(" --values ", 1)[0], tmp_path)
        assert bare.returncode == 2 and "PSU-ID" in bare.stderr and "--values" in bare.stderr
    finally:
        bank.terminate()
        bank.wait(timeout=10)
        if bank.stdout is not None:
            bank.stdout.close()


@pytest.mark.slow  # two runs of one scenario on the bundled server
def test_a_state_rules_replay_runs_the_scenario_again(tmp_path: Path) -> None:
    run = _conformance(
        "run", "--fault", STATE_FAULT, "--", "-k", STATE_RULE, "-n", "0", cwd=tmp_path
    )
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    replay = str(_scenario(tmp_path / "reports", STATE_RULE)["reproduce"])
    assert f" run --reports reports/rerun --fault {STATE_FAULT} -- -k {STATE_RULE}" in replay
    assert f"reproduce: {replay}" in run.stdout
    junit = (tmp_path / "reports" / "junit.xml").read_text(encoding="utf-8")
    assert f'name="reproduce" value="{replay}"' in junit  # JUnit names it in full too
    again = _printed(replay + " -n 0", tmp_path)
    assert again.returncode == 1, again.stdout[-3000:]
    assert f"FAILED {STATE_RULE}" in again.stdout
    assert _scenario(tmp_path / "reports" / "rerun", STATE_RULE)["verdict"] == "failed"
    assert _scenario(tmp_path / "reports", STATE_RULE)["reproduce"] == replay  # the run's stay
