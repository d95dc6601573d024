"""``conformance verify --policy POLICY.toml``: the certifier's policy held against a sealed record.

The policy is the certifier's, the record the bank's. Eligibility is recomputed here from what the
record sealed (the scenario verdicts of ``compliance.json``, which ``verify`` holds to
``verdicts.json`` and to every exchange judged again; the run's selection; the release check of
the installed suite; the record's manifest) and from the policy, never read from the record's own
``eligibility``. A policy is a TOML file; every key may be left out, and verify then says which
check it did not make::

    # the release manifests (conformance/_release.json, "sha256:<hex>" or "<hex>") accepted
    accepted_releases = ["sha256:3e24eb2c..."]
    # operations and payment products that must be in scope (offered, and judged)
    required_operations = ["E1", "E16", "E17"]
    required_products = ["ndct", "periodic-ndct"]
    # the least share of the run's must scenarios judged (passed or failed), 0 to 1
    least_judged_share = 0.9
    # the longest age of a record, in days from its sealing
    longest_age_days = 30

What the profile put out of scope (operations unsupported, products not offered, the interface
release it runs, optional operations it offers) is listed (:func:`scope_lines`) and held against
the policy.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from conformance.errors import ConformanceError, did_you_mean
from conformance.evidence.record import MANIFEST
from conformance.report.compliance import COMPLIANCE_JSON
from conformance.report.compliance_page import overall_verdict
from conformance.report.eligibility import eligibility, eligibility_line
from conformance.report.verdicts import FAILED, FAILED_SHOULD, PASSED

__all__ = [
    "POLICY_CHECKS",
    "Policy",
    "PolicyJudgement",
    "judge_policy",
    "load_policy",
    "policy_of_record",
    "read_record",
    "record_lines",
    "scope_lines",
]

#: Each key of a policy and the check it makes (said when a policy leaves it out).
POLICY_CHECKS: Final[Mapping[str, str]] = {
    "accepted_releases": "the suite release that made the record is one the certifier accepts",
    "required_operations": "the operations the certifier requires are in scope and judged",
    "required_products": "the payment products the certifier requires are in scope",
    "least_judged_share": "enough of the run's must scenarios were judged",
    "longest_age_days": "the record is recent enough",
}
#: A scenario's verdicts that judged it.
_JUDGED: Final = frozenset({PASSED, FAILED, FAILED_SHOULD})


@dataclass(frozen=True)
class Policy:
    """A certifier's policy (see the module); None or empty: that check is not made."""

    source: str = ""
    accepted_releases: frozenset[str] | None = None
    required_operations: tuple[str, ...] = ()
    required_products: tuple[str, ...] = ()
    least_judged_share: float | None = None
    longest_age_days: float | None = None

    def unset(self) -> list[str]:
        """The checks this policy does not make."""
        return [words for key, words in POLICY_CHECKS.items() if not getattr(self, key)]


@dataclass
class PolicyJudgement:
    """The record under the policy: ``reasons`` why it is not eligible (none: eligible)."""

    reasons: list[str] = field(default_factory=list)
    scope: list[str] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)

    @property
    def eligible(self) -> bool:
        return not self.reasons

    def line(self) -> str:
        """The eligibility under the policy, in one line."""
        if self.eligible:
            return "ELIGIBLE under the policy: recomputed from the sealed record"
        return "NOT ELIGIBLE under the policy: " + "; ".join(self.reasons)


def _strings(path: Path, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConformanceError(f"{path}: {key} must be a list of strings")
    return tuple(value)


def _number(path: Path, key: str, value: Any, most: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConformanceError(f"{path}: {key} must be a number of at least 0, not {value!r}")
    if most is not None and value > most:
        raise ConformanceError(f"{path}: {key} must be at most {most}, not {value!r}")
    return float(value)


def load_policy(path: Path) -> Policy:
    """The policy in ``path``; a :class:`ConformanceError` names what is wrong with it."""
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConformanceError(f"cannot read the policy {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConformanceError(f"{path} is not TOML: {error}") from None
    for key in table:
        if key not in POLICY_CHECKS:
            raise ConformanceError(f"{path}: unknown key {key!r}{did_you_mean(key, POLICY_CHECKS)}")
    releases = table.get("accepted_releases")
    share, age = table.get("least_judged_share"), table.get("longest_age_days")
    return Policy(
        source=str(path),
        accepted_releases=None
        if releases is None
        else frozenset(
            item.removeprefix("sha256:") for item in _strings(path, "accepted_releases", releases)
        ),
        required_operations=_strings(
            path, "required_operations", table.get("required_operations", [])
        ),
        required_products=_strings(path, "required_products", table.get("required_products", [])),
        least_judged_share=None if share is None else _number(path, "least_judged_share", share, 1),
        longest_age_days=None if age is None else _number(path, "longest_age_days", age),
    )


def scope_lines(compliance: Mapping[str, Any]) -> list[str]:
    """What the sealed profile put out of scope, one line each (the run's scope as it sealed
    it)."""
    profile = compliance.get("profile") or {}
    if not profile:
        return ["profile: none (the bundled reference server's own)"]
    supported = profile.get("supported_operations")
    return [
        "operations unsupported: "
        + (", ".join(profile.get("unsupported_operations") or ()) or "none"),
        "operations supported: " + ("all but those" if supported is None else ", ".join(supported)),
        "payment products offered: " + (", ".join(profile.get("products") or ()) or "none"),
        "optional operations offered: "
        + (", ".join(profile.get("optional_operations") or ()) or "none"),
        "interface release: " + (profile.get("release") or "the one the spec shows"),
    ]


def _release_reasons(compliance: Mapping[str, Any], policy: Policy) -> list[str]:
    """The suite release that made the record, against the policy's accepted ones."""
    release = compliance.get("release") or {}
    sealed = release.get("manifest_sha256")
    if sealed is None:
        return ["the record names no release manifest (a run from a checkout, not a release)"]
    reasons = []
    changed = [*release.get("changed", ()), *release.get("missing", ()), *release.get("added", ())]
    if changed:
        reasons.append("the suite that ran was not its release as published: " + ", ".join(changed))
    if policy.accepted_releases is not None and sealed not in policy.accepted_releases:
        reasons.append(
            f"made by the suite release sha256:{sealed} (version {release.get('version')}), "
            "which the policy does not accept"
        )
    return reasons


def _operations_judged(compliance: Mapping[str, Any]) -> set[str]:
    return {
        str(item["operation"])
        for item in compliance.get("scenarios", ())
        if item.get("verdict") in _JUDGED
    }


def _scope_reasons(compliance: Mapping[str, Any], policy: Policy) -> list[str]:
    """The operations and products the policy requires, against the sealed scope."""
    profile = compliance.get("profile") or {}
    unsupported = set(profile.get("unsupported_operations") or ())
    supported = profile.get("supported_operations")
    judged = _operations_judged(compliance)
    reasons = []
    for operation in policy.required_operations:
        if operation in unsupported or (supported is not None and operation not in supported):
            reasons.append(
                f"operation {operation} is required, and the profile left it unsupported"
            )
        elif operation not in judged:
            reasons.append(f"operation {operation} is required, and no scenario of it was judged")
    products = set(profile.get("products") or ())
    reasons += [
        f"payment product {product} is required, and the profile does not offer it"
        for product in policy.required_products
        if product not in products
    ]
    return reasons


def _share_reasons(compliance: Mapping[str, Any], policy: Policy) -> list[str]:
    if policy.least_judged_share is None:
        return []
    musts = [item for item in compliance.get("scenarios", ()) if item.get("level") == "must"]
    judged = sum(1 for item in musts if item.get("verdict") in _JUDGED)
    share = judged / len(musts) if musts else 0.0
    if share >= policy.least_judged_share:
        return []
    return [
        f"{judged} of {len(musts)} must scenarios judged ({share:.1%}), the policy wants at "
        f"least {policy.least_judged_share:.1%}"
    ]


def _age_reasons(manifest: Mapping[str, Any], policy: Policy, now: datetime) -> list[str]:
    if policy.longest_age_days is None:
        return []
    sealed_at = datetime.fromisoformat(str(manifest["sealed_at"]))
    age = now - sealed_at
    if age <= timedelta(days=policy.longest_age_days):
        return []
    return [
        f"sealed {sealed_at.isoformat()}, {age.days} days ago: older than the policy's "
        f"{policy.longest_age_days:g} days"
    ]


def _run_reasons(compliance: Mapping[str, Any], manifest: Mapping[str, Any]) -> list[str]:
    """Why the run itself cannot certify: recomputed from the sealed scenarios and selection,
    the release check apart (the policy's, above), never the record's own ``eligibility``."""
    run = compliance.get("run") or {}
    reasons = []
    if run.get("certifies") is False:
        reasons.append(
            "a run of the bundled reference server or a played profile certifies no bank"
        )
    version = str(compliance.get("suite_version", ""))
    if manifest.get("suite_version") != version:
        reasons.append(
            f"the record's manifest names suite {manifest.get('suite_version')}, its report "
            f"{version}"
        )
    recomputed = eligibility({**compliance, "release": None})
    return reasons + list(recomputed["reasons"])


def judge_policy(
    compliance: Mapping[str, Any],
    manifest: Mapping[str, Any],
    policy: Policy,
    now: datetime | None = None,
) -> PolicyJudgement:
    """The sealed record (its ``compliance.json`` and ``manifest.json``) under ``policy``."""
    moment = now if now is not None else datetime.now(UTC)
    return PolicyJudgement(
        reasons=[
            *_run_reasons(compliance, manifest),
            *_release_reasons(compliance, policy),
            *_scope_reasons(compliance, policy),
            *_share_reasons(compliance, policy),
            *_age_reasons(manifest, policy, moment),
        ],
        scope=scope_lines(compliance),
        not_checked=policy.unset(),
    )


def read_record(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The sealed record's ``compliance.json`` and ``manifest.json`` (read after ``verify``
    checked them against their sealed digests)."""
    compliance = json.loads((folder / COMPLIANCE_JSON).read_text(encoding="utf-8"))
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    return compliance, manifest


def record_lines(compliance: Mapping[str, Any]) -> list[str]:
    """What the sealed record concludes, for ``verify`` to restate: its verdict line, its own
    eligibility (the bank's claim) and its scope."""
    claimed = eligibility_line(compliance) or (
        "none stated (a run of the bundled reference server or a played profile)"
    )
    return [
        f"sealed verdict: {overall_verdict(compliance)}",
        f"sealed eligibility (the record's own claim): {claimed}",
        *(f"scope: {line}" for line in scope_lines(compliance)),
    ]


def policy_of_record(folder: Path, policy: Policy, now: datetime | None = None) -> PolicyJudgement:
    """The sealed record in ``folder`` under ``policy``."""
    compliance, manifest = read_record(folder)
    return judge_policy(compliance, manifest, policy, now)
