"""Whether a run is eligible for certification, and why not: every report of a run that could
certify a bank says so (``compliance.json``'s ``eligibility``, a line under the verdict in
``compliance.md`` and ``.html``, the line above the verdict in the terminal, JUnit's ``eligible``
property). A run of the bundled reference server or of a profile it plays, and judged traffic,
certify no bank: their ``eligibility`` is null and their reports state none.

A run is eligible when all of these hold:

- it is complete: every scenario was selected (no ``--smoke``, ``-k``, ``-m``, node ids,
  ``--deselect``, ``--last-failed`` or scenario list) and none was left without its verdict
  (not INTERRUPTED);
- every must scenario of what the profile offers was judged: none blocked by its set-up, none
  erred, none waived, and none not applicable for lack of a control the profile could supply
  ("not judged here"; a scenario of an operation or product the profile does not offer is not
  applicable and does not count);
- no waiver of the profile covers a must scenario;
- the suite is a released version: a final ``MAJOR.MINOR.PATCH`` of at least 1.0.0 (no ``.dev``,
  pre-release or local part; 0.x is initial development, whose verdicts may still change);
- the installed suite is that release as published (``compliance.json``'s ``release``,
  ``report/release.py``): it has its release manifest (a checkout has none), and every installed
  file has the manifest's digest, none missing and no module added (each one named otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from conformance.report.release import release_reasons
from conformance.report.verdicts import BLOCKED, ERROR, SKIPPED, WAIVED

__all__ = ["ELIGIBLE_WORDS", "NOT_ELIGIBLE_WORDS", "eligibility", "eligibility_line", "released"]

#: How the eligibility line starts, either way.
ELIGIBLE_WORDS: Final = "ELIGIBLE for certification"
NOT_ELIGIBLE_WORDS: Final = "NOT ELIGIBLE for certification"

_RELEASED: Final = re.compile(r"^[1-9][0-9]*\.[0-9]+\.[0-9]+$")


def released(version: str) -> bool:
    """Whether ``version`` is a released suite version (see the module)."""
    return bool(_RELEASED.match(version))


def _must_counts(scenarios: Any, verdict: str) -> int:
    return sum(1 for item in scenarios if item["level"] == "must" and item["verdict"] == verdict)


def eligibility(document: Mapping[str, Any]) -> dict[str, Any]:
    """``{"eligible": bool, "reasons": [why not, ...]}`` of a run's compliance document."""
    run = document["run"]
    scenarios = document.get("scenarios", ())
    reasons: list[str] = []
    selection = run.get("selection") or {}
    if "smoke" in selection:
        reasons.append("a smoke run")
    elif selection:
        chosen = ", ".join(f"{key} {value}" for key, value in selection.items())
        reasons.append(f"a partial run ({chosen})")
    if run.get("interrupted"):
        reasons.append(f"interrupted ({run['interrupted']})")
    for verdict, words in (
        (BLOCKED, "blocked by their set-up"),
        (ERROR, "erred"),
        (SKIPPED, "skipped"),
    ):
        count = _must_counts(scenarios, verdict)
        if count:
            reasons.append(f"{count} must scenario(s) {words}, not judged")
    waived = _must_counts(scenarios, WAIVED)
    if waived:
        reasons.append(f"{waived} must scenario(s) waived by the profile")
    lacking = sum(1 for item in document.get("not_judged") or () if item["level"] == "must")
    if lacking:
        reasons.append(f"{lacking} must scenario(s) not judged here for lack of a control")
    version = str(document.get("suite_version", ""))
    if not released(version):
        reasons.append(f"suite version {version} is not a released version")
    release = document.get("release")
    if release is not None:
        reasons += release_reasons(release)
    return {"eligible": not reasons, "reasons": reasons}


def eligibility_line(document: Mapping[str, Any]) -> str:
    """The eligibility in one line ("" for a document without one: a run of the bundled reference
    server or a played profile, judged traffic)."""
    said = document.get("eligibility")
    if not said:
        return ""
    if said["eligible"]:
        return (
            f"{ELIGIBLE_WORDS}: a complete run, every must scenario judged, none "
            f"waived, a released suite ({document.get('suite_version')})"
        )
    return f"{NOT_ELIGIBLE_WORDS}: " + "; ".join(said["reasons"])
