"""``conformance verify --policy``: a certifier's policy held against a sealed record, eligibility
recomputed from what the record sealed, never from its own claim."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conformance.errors import ConformanceError
from conformance.evidence.policy import Policy, judge_policy, load_policy
from conformance.report import compliance
from conformance.report.compliance import RunInfo, build_document
from conformance.report.verdicts import PASSED, ScenarioFacts, ScenarioVerdict

SEALED = datetime(2026, 11, 1, 8, 0, tzinfo=UTC)
RELEASE = "3e24" * 16
OTHER_RELEASE = "ab12" * 16


def _verdict(scenario: str, operation: str, verdict: str = PASSED) -> ScenarioVerdict:
    facts = ScenarioFacts(
        id=scenario, operation=operation, rule="SCH-maxLength", spec="spec 2.7", level="must",
        kind="constraint", title=scenario, assumptions=(), quotes=(),
    )  # fmt: skip
    return ScenarioVerdict(facts, verdict, "why")


def _record(
    unsupported: tuple[str, ...] = ("E18",), release: str = RELEASE
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A sealed record's compliance.json and manifest.json: an eligible run by its own claim."""
    profile = {
        "name": "Bank", "products": ["ndct", "periodic-ndct"], "supported_operations": None,
        "unsupported_operations": list(unsupported), "release": None, "optional_operations": [],
    }  # fmt: skip
    info = RunInfo(
        started=SEALED, finished=SEALED + timedelta(seconds=9), seed=1, strict=False,
        target="https://bank.example", profile=profile,
        release={"manifest_sha256": release, "version": "1.0.0", "changed": [], "missing": [],
                 "added": []},
    )  # fmt: skip
    verdicts = (_verdict("E1-a", "E1"), _verdict("E16-a", "E16"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compliance, "__version__", "1.0.0")
        document = build_document(verdicts, info)
    manifest = {"suite_version": "1.0.0", "sealed_at": SEALED.isoformat()}
    return document, manifest


POLICY = Policy(
    source="policy.toml",
    accepted_releases=frozenset({RELEASE}),
    required_operations=("E1", "E16"),
    required_products=("ndct",),
    least_judged_share=0.9,
    longest_age_days=60,
)
NOW = SEALED + timedelta(days=28)


def test_a_record_within_the_policy_is_eligible() -> None:
    document, manifest = _record()
    assert document["eligibility"]["eligible"] is True
    judged = judge_policy(document, manifest, POLICY, NOW)
    assert judged.reasons == []
    assert judged.line() == "ELIGIBLE under the policy: recomputed from the sealed record"
    assert "operations unsupported: E18" in judged.scope
    assert judged.not_checked == []


def test_a_required_operation_the_profile_left_unsupported_is_refused() -> None:
    document, manifest = _record(unsupported=("E16", "E18"))
    judged = judge_policy(document, manifest, POLICY, NOW)
    assert not judged.eligible
    assert "operation E16 is required, and the profile left it unsupported" in judged.reasons


def test_a_record_of_a_release_the_policy_does_not_accept_is_refused() -> None:
    document, manifest = _record(release=OTHER_RELEASE)
    judged = judge_policy(document, manifest, POLICY, NOW)
    assert judged.reasons == [
        f"made by the suite release sha256:{OTHER_RELEASE} (version 1.0.0), which the policy "
        "does not accept"
    ]


def test_the_record_s_own_claim_counts_for_nothing() -> None:
    """A record that says it is eligible, made from a checkout and edited installed files."""
    document, manifest = _record()
    document["release"] = {"manifest_sha256": None}
    assert document["eligibility"]["eligible"] is True  # the bank's claim
    judged = judge_policy(document, manifest, POLICY, NOW)
    assert judged.reasons == [
        "the record names no release manifest (a run from a checkout, not a release)"
    ]
    document["release"] = {"manifest_sha256": RELEASE, "changed": ["conformance/checks.py"]}
    assert judge_policy(document, manifest, POLICY, NOW).reasons == [
        "the suite that ran was not its release as published: conformance/checks.py"
    ]


def test_age_share_products_and_a_bundled_run() -> None:
    document, manifest = _record()
    strict = Policy(
        required_products=("ncbct",), least_judged_share=1.0, longest_age_days=7,
        accepted_releases=frozenset({RELEASE}),
    )  # fmt: skip
    document["scenarios"][0]["verdict"] = "blocked"
    document["run"]["certifies"] = False
    reasons = judge_policy(document, manifest, strict, NOW).reasons
    assert reasons[0] == (
        "a run of the bundled reference server or a played profile certifies no bank"
    )
    assert "1 must scenario(s) blocked by their set-up, not judged" in reasons
    assert "payment product ncbct is required, and the profile does not offer it" in reasons
    assert "1 of 2 must scenarios judged (50.0%), the policy wants at least 100.0%" in reasons
    assert any(
        reason.startswith("sealed 2026-11-01T08:00:00+00:00, 28 days ago") for reason in reasons
    )


def test_a_policy_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(
        f'accepted_releases = ["sha256:{RELEASE}"]\nrequired_operations = ["E16"]\n'
        "least_judged_share = 0.95\n",
        encoding="utf-8",
    )
    policy = load_policy(path)
    assert policy.accepted_releases == frozenset({RELEASE})
    assert policy.required_operations == ("E16",)
    assert policy.unset() == [
        "the payment products the certifier requires are in scope",
        "the record is recent enough",
    ]
    path.write_text("required_operation = ['E16']\n", encoding="utf-8")
    with pytest.raises(ConformanceError, match="did you mean 'required_operations'"):
        load_policy(path)
    path.write_text("least_judged_share = 2\n", encoding="utf-8")
    with pytest.raises(ConformanceError, match="at most 1"):
        load_policy(path)
