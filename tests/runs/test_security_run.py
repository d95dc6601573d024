"""Issue 14's "done when", through a real run: against the reference server with its ownership
checks on, the security scenarios hold; against one started with ``--shared-sandbox`` (the checks
off) exactly the object-level authorisation scenarios report findings, in their own group."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.bankside.bundled import bundled_reference_server

SELECTION = "other-tpp or other-psu"


def _run(url: str, reports: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "run", "--target", url, "--reports", str(reports),
         "-n", "0", "--", "-k", SELECTION],
        capture_output=True, text=True, timeout=600, check=False, env=dict(os.environ),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]  # should: not counted
    document: dict[str, object] = json.loads((reports / "compliance.json").read_text("utf-8"))
    return document


@pytest.mark.slow  # several whole runs: make test-slow
def test_a_shared_sandbox_fails_exactly_the_ownership_scenarios(tmp_path: Path) -> None:
    with bundled_reference_server(log_path=tmp_path / "checked.log") as url:
        checked = _run(url, tmp_path / "checked")
    with bundled_reference_server(
        server_args=["--shared-sandbox"], log_path=tmp_path / "shared.log"
    ) as url:
        shared = _run(url, tmp_path / "shared")
    scenarios = shared["scenarios"]
    assert isinstance(scenarios, list) and len(scenarios) == 29
    assert {s["verdict"] for s in checked["scenarios"]} == {"passed"}
    found = {s["id"] for s in scenarios if s["verdict"] == "failed (should)"}
    # E8 names the consent by its Consent-ID too, so another PSU reaches it on a shared sandbox
    assert found == {s["id"] for s in scenarios}
    markdown = (tmp_path / "shared" / "compliance.md").read_text(encoding="utf-8")
    assert "0 of 29 judged security scenarios held" in markdown
