"""The CI templates of ``docs/ci/`` are valid workflows of their CI systems (the published
schemas ``check-jsonschema`` vendors, so no network), and each does what ``docs/ci/README.md``
says: a matrix over profiles, a nightly schedule where the file can hold one, JUnit to the test
view, the reports as artefacts even when the run fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CI = Path(__file__).resolve().parents[2] / "docs" / "ci"
TEMPLATES = {
    "github-actions.yml": "vendor.github-workflows",
    "gitlab-ci.yml": "vendor.gitlab-ci",
}


def _validate(path: Path, schema: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(("name", "schema"), TEMPLATES.items())
def test_the_template_is_valid_for_its_ci(name: str, schema: str) -> None:
    done = _validate(CI / name, schema)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("name", "schema"), TEMPLATES.items())
def test_a_broken_template_is_refused(name: str, schema: str, tmp_path: Path) -> None:
    """The check can fail: the same file with a key its schema does not know is refused."""
    broken = tmp_path / name
    text = (CI / name).read_text(encoding="utf-8")
    broken.write_text(text.replace("stages:", "stagez:").replace("runs-on:", "runs-onn:"), "utf-8")
    assert _validate(broken, schema).returncode != 0


@pytest.mark.parametrize("name", TEMPLATES)
def test_the_template_runs_each_profile_and_keeps_its_reports(name: str) -> None:
    text = (CI / name).read_text(encoding="utf-8")
    assert text.count("profiles/") >= 2  # a matrix over profiles
    assert 'conformance run --profile "' in text
    assert "reports/junit.xml" in text  # JUnit to the CI's test view
    assert "reports/" in text and ("when: always" in text or "!cancelled()" in text)
    assert "CONFORMANCE_KEY_PASSWORD" in text  # the key's password from the CI's secrets


def test_the_github_workflow_runs_nightly() -> None:
    text = (CI / "github-actions.yml").read_text(encoding="utf-8")
    assert "schedule:\n    - cron:" in text and "matrix:" in text and "fail-fast: false" in text


def test_the_gitlab_job_runs_on_its_schedule() -> None:
    text = (CI / "gitlab-ci.yml").read_text(encoding="utf-8")
    assert '$CI_PIPELINE_SOURCE == "schedule"' in text and "parallel:\n    matrix:" in text
    assert "junit: reports/junit.xml" in text
