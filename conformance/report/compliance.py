"""The compliance matrix: ``compliance.json`` for machines; ``compliance.md`` and
``compliance.html`` for people (rendered by ``compliance_render``)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance import SPEC_VERSION, __version__
from conformance.contract import operation_order, quoted
from conformance.contract.coverage import LEDGER_FILE, judged_statements, load_statements
from conformance.contract.identifiers import mask_identity
from conformance.report.causes import causes_of
from conformance.report.compliance_render import render_html, render_markdown
from conformance.report.eligibility import eligibility
from conformance.report.masking import (
    certificate_summary,
    mask_value,
    scrub,
    secrets_masked,
)
from conformance.report.timings import answer_times
from conformance.report.verdicts import (
    NOT_APPLICABLE,
    VERDICTS,
    ScenarioVerdict,
)

if TYPE_CHECKING:
    from conformance.contract import Contract
    from conformance.profile import TargetProfile

__all__ = [
    "COMPLIANCE_HTML",
    "COMPLIANCE_JSON",
    "COMPLIANCE_MD",
    "FORMAT",
    "RunInfo",
    "build_document",
    "profile_summary",
    "render_markdown",
    "write_compliance",
]

COMPLIANCE_JSON = "compliance.json"
COMPLIANCE_MD = "compliance.md"
COMPLIANCE_HTML = "compliance.html"
#: Names the layout of ``compliance.json``; bumped when a field changes meaning.
FORMAT = "psd2-conformance/compliance-matrix/1"


def _count_key(verdict: str) -> str:
    """``failed (should)`` → ``failed_should``: JSON keys without spaces or brackets."""
    return re.sub(r"[^a-z]+", "_", verdict).strip("_")


COUNT_KEYS: tuple[str, ...] = tuple(_count_key(verdict) for verdict in VERDICTS)


@dataclass(frozen=True)
class RunInfo:
    """The run the matrix describes; ``profile`` is :func:`profile_summary`'s (already masked)."""

    started: datetime
    finished: datetime
    seed: int
    strict: bool
    target: str
    profile: Mapping[str, Any] = field(default_factory=dict)
    #: How the scenarios were chosen (``-k``, ``-m``, paths, deselected count); empty: all.
    selection: Mapping[str, Any] = field(default_factory=dict)
    #: The suite's git commit when it runs from a checkout, else None.
    commit: str | None = None
    #: A bundled run: the ``conformance serve`` command its replay commands need (its server
    #: stopped with the run), else None.
    replay_server: str | None = None
    #: How many scenarios the run was to run (0: as many as have a verdict).
    to_run: int = 0
    #: What stopped the run before every scenario had a verdict (Ctrl-C, SIGTERM, the bundled
    #: server), else None: its verdict is INTERRUPTED.
    interrupted: str | None = None
    #: Whether the run could certify a bank: False for the bundled reference server, a played
    #: profile and judged traffic, whose reports then state no eligibility at all.
    certifies: bool = True
    #: The installed suite held to its release manifest (``report/release.py``
    #: :func:`check_installed`), for a run that certifies; None: not checked (a library caller).
    release: Mapping[str, Any] | None = None


def _file_digest(path: Path | None) -> str | None:
    """The SHA-256 of a profile file, so two reports can tell whether they ran the same one."""
    if path is None:
        return None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def profile_summary(profile: TargetProfile | None) -> dict[str, Any]:
    """What the report says about the profile: what it declares, never a secret.

    The key file and its password are left out; the certificate is shortened; the private
    PSU's national identity number is masked (spec 4.2 X-PSU-IDENTITY is a real person's).
    """
    if profile is None:
        return {}
    private = profile.psu_private
    corporate = profile.psu_corporate
    return {
        "name": profile.name,
        "source": str(profile.source) if profile.source is not None else None,
        "sha256": _file_digest(profile.source),
        "base_url": profile.base_url,
        "products": sorted(profile.products),
        "supported_operations": (
            None if profile.supported_operations is None else sorted(profile.supported_operations)
        ),
        "unsupported_operations": sorted(profile.unsupported_operations),
        # the interface release the bank runs (None: the one the spec shows)
        "release": None if profile.lifecycle.release is None else str(profile.lifecycle.release),
        "optional_operations": sorted(profile.lifecycle.optional_operations),
        "paths": dict(sorted(profile.paths.items())),
        "periodic_paths": dict(sorted(profile.periodic_paths.items())),
        "methods": dict(sorted(profile.methods.items())),
        "sandbox": profile.sandbox,
        "reference_server": profile.reference_server,
        "sca_mode": profile.sca.mode,
        "x_accept_fix": profile.x_accept_fix,
        "certificate": (
            None
            if profile.certificate is None
            else certificate_summary(profile.certificate).as_dict()
        ),
        "psu": {
            "private": {
                "psu_id": _secret(private.psu_id),
                "national_id": None
                if private.national_id is None
                else mask_identity(private.national_id),
                "customer_number": private.customer_number,
            },
            "corporate": {
                "psu_id": _secret(corporate.psu_id),
                "corporate_id": _secret(corporate.corporate_id),
                "customer_number": corporate.customer_number,
            },
        },
    }


def _secret(value: str | None) -> str | None:
    """A PSU id of the profile, masked when the run masks secrets."""
    return value if value is None or not secrets_masked() else mask_value(value)


def _empty_counts() -> dict[str, int]:
    return dict.fromkeys(COUNT_KEYS, 0)


class _Assumptions:
    """Assumption texts numbered in first-seen order, with what rests on each."""

    def __init__(self, contract: Contract | None) -> None:
        self._contract = contract
        self._ids: dict[str, str] = {}
        self._topics: dict[str, str] = {}
        self._operations: dict[str, set[str]] = {}
        self._scenarios: dict[str, int] = {}

    def _operation_assumptions(self, operation: str) -> list[tuple[str, str]]:
        if self._contract is None:
            return []
        op = self._contract.operations.get(operation)
        if op is None:
            return []
        return [(item.text, item.topic) for item in op.assumptions]

    def ids_for(self, verdict: ScenarioVerdict) -> list[str]:
        facts = verdict.facts
        texts = [(text, "") for text in facts.assumptions]
        texts += self._operation_assumptions(facts.operation)
        ids: list[str] = []
        for text, topic in texts:
            key = text.strip()
            if not key:
                continue
            if key not in self._ids:
                self._ids[key] = f"A{len(self._ids) + 1}"
            if topic:
                self._topics.setdefault(key, topic)
            self._operations.setdefault(key, set()).add(facts.operation)
            assumption_id = self._ids[key]
            if assumption_id not in ids:
                ids.append(assumption_id)
                self._scenarios[key] = self._scenarios.get(key, 0) + 1
        return ids

    def listed(self) -> list[dict[str, Any]]:
        return [
            {
                "id": assumption_id,
                "text": text,
                "topic": self._topics.get(text, ""),
                "operations": sorted(self._operations[text], key=operation_order),
                "scenarios": self._scenarios.get(text, 0),
            }
            for text, assumption_id in self._ids.items()
        ]


def build_document(
    verdicts: Iterable[ScenarioVerdict], run: RunInfo, contract: Contract | None = None
) -> dict[str, Any]:
    """The whole ``compliance.json`` document (a plain, JSON-ready dict)."""
    ordered = sorted(
        verdicts, key=lambda v: (operation_order(v.facts.operation), v.facts.rule, v.facts.id)
    )
    assumptions = _Assumptions(contract)
    totals = _empty_counts()
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    per_operation: dict[str, dict[str, int]] = {}
    scenarios: list[dict[str, Any]] = []
    for verdict in ordered:
        facts = verdict.facts
        key = _count_key(verdict.verdict)
        if key not in totals:
            key = _count_key("error")
        ids = assumptions.ids_for(verdict)
        totals[key] += 1
        per_operation.setdefault(facts.operation, _empty_counts())[key] += 1
        cell = cells.setdefault(
            (facts.operation, facts.rule),
            {
                "operation": facts.operation,
                "rule": facts.rule,
                "spec": facts.spec,
                "levels": [],
                "counts": _empty_counts(),
                "assumptions": [],
            },
        )
        cell["counts"][key] += 1
        if facts.level not in cell["levels"]:
            cell["levels"].append(facts.level)
        cell["assumptions"] += [i for i in ids if i not in cell["assumptions"]]
        scenarios.append(
            {
                "id": facts.id,
                "operation": facts.operation,
                "rule": facts.rule,
                "spec": facts.spec,
                "level": facts.level,
                "kind": facts.kind,
                "title": facts.title,
                "verdict": verdict.verdict,
                "reason": scrub(verdict.reason),
                "duration": round(verdict.duration, 4),
                "assumptions": ids,
                "quotes": list(facts.quotes),
                "reading": facts.reading,
                "requirement": facts.requirement,
                "findings": [finding.as_dict() for finding in verdict.findings],
                "retries": verdict.retries,
                "reproduce": scrub(verdict.reproduce),
            }
        )
    # every exchange's answer time, by the operation it called (not the scenario's operation:
    # a scenario's set-up calls others)
    times = answer_times(timing for verdict in ordered for timing in verdict.timings)
    document = {
        "format": FORMAT,
        "spec_version": SPEC_VERSION,
        "suite_version": __version__,
        "run": {
            "started": run.started.isoformat(timespec="seconds"),
            "finished": run.finished.isoformat(timespec="seconds"),
            "duration_seconds": round((run.finished - run.started).total_seconds(), 3),
            "seed": run.seed,
            "strict": run.strict,
            "complete": not run.selection and not run.interrupted,
            "interrupted": run.interrupted,
            "scenarios_to_run": max(run.to_run, len(ordered)),
            "throttled_answers": sum(verdict.retries for verdict in ordered),
            "selection": dict(run.selection),
            "suite_commit": run.commit,
            "reproduce": f"--seed {run.seed}",
            "replay_server": run.replay_server,
            "certifies": run.certifies,
        },
        "release": dict(run.release) if run.release is not None else None,
        "target": run.target,
        "profile": dict(run.profile),
        "totals": totals,
        "operations": [
            {"operation": operation, "counts": counts, "answer_times": times.get(operation)}
            for operation, counts in sorted(
                per_operation.items(), key=lambda item: operation_order(item[0])
            )
        ],
        "operation_names": (
            {op_id: op.name for op_id, op in contract.operations.items()}
            if contract is not None
            else {}
        ),
        "matrix": list(cells.values()),
        "causes": [
            cause.as_dict()
            for level in ("must", "should")
            for cause in causes_of(ordered, level, operation_order)
        ],
        "not_judged": _not_judged(ordered),
        "scenarios": scenarios,
        "assumptions": assumptions.listed(),
        "quotes": _quotes_of(scenarios, contract),
        "coverage": _coverage(scenarios, contract),
    }
    # Only a run that could certify a bank says whether it is eligible to.
    document["eligibility"] = eligibility(document) if run.certifies else None
    return document


def _quotes_of(scenarios: Iterable[Mapping[str, Any]], contract: Contract | None) -> dict[str, Any]:
    """Every quote of the spec a scenario or finding of the run names: label → spec and text."""
    labels = dict.fromkeys(
        label
        for scenario in scenarios
        for label in (
            *scenario["quotes"],
            *(label for finding in scenario["findings"] for label in finding["quotes"]),
        )
    )
    return {
        quote.label: {"spec": quote.spec, "text": quote.text} for quote in quoted(labels, contract)
    }


def _coverage(
    scenarios: Iterable[Mapping[str, Any]], contract: Contract | None
) -> dict[str, Any] | None:
    """How many statements of interface.md the run judged (``schemas/coverage.json``), and
    which its scope left unjudged; None for a contract without the ledger."""
    root = contract.root if contract is not None else None
    if root is not None and not (root / LEDGER_FILE).is_file():
        return None
    return judged_statements(load_statements(root), scenarios).as_dict()


def _not_judged(verdicts: Iterable[ScenarioVerdict]) -> list[dict[str, str]]:
    """The scenarios not judged here for lack of a control (not applicable, with what the
    profile could supply to judge them), must ones first."""
    listed = [
        {
            "scenario": verdict.facts.id,
            "operation": verdict.facts.operation,
            "rule": verdict.facts.rule,
            "spec": verdict.facts.spec,
            "level": verdict.facts.level,
            "why": scrub(verdict.reason),
            "supply": verdict.not_judged,
        }
        for verdict in verdicts
        if verdict.verdict == NOT_APPLICABLE and verdict.not_judged
    ]
    return sorted(listed, key=lambda item: (item["level"] != "must", item["scenario"]))


def write_compliance(directory: Path, document: Mapping[str, Any]) -> tuple[Path, Path]:
    """Write ``compliance.json``, ``compliance.md`` and ``compliance.html`` into ``directory``
    (created if needed)."""
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / COMPLIANCE_JSON
    md_path = directory / COMPLIANCE_MD
    json_path.write_text(
        json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    md_path.write_text(render_markdown(document), encoding="utf-8")
    (directory / COMPLIANCE_HTML).write_text(render_html(document), encoding="utf-8")
    return json_path, md_path
