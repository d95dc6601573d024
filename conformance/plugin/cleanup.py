"""``conformance run --cleanup``: what the run made on the target, taken away again (issue 23).

A production-like run leaves hundreds of payments and consents on one test account. With
``--cleanup`` every worker notes, after each scenario, the payments (E16, E17, E18) and consents
(a consent operation's 201 answer naming a ``consentId``) its exchanges created, with the PSU
and the TPP certificate that made them. When the worker's last scenario is done (its run
context's finalizer: the bundled server still listens), it reads each payment's status (PS) and
cancels (PC) those still unauthorised (RCVD), signing as the identity that made it
(``conformance.bankside.cleanup``, which ``conformance discover`` shares); an
authorised or finished payment is left as it is. Consents are deleted where the contract has an
operation that deletes one (``DELETE /v1/consents/{consentId}``); without one they are listed as
not deleted. Each worker writes what it did to ``cleanup-<worker>.json`` in the reports
directory; the terminal summary merges them into ``cleanup.json`` and prints the counts and
everything it could not clean up, with the reason.
"""

from __future__ import annotations

import base64
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cryptography.hazmat.primitives import serialization

from conformance.bankside.cleanup import CleanupResult, Created, clean_up_one, created_by
from conformance.plugin.timings import operation_of

if TYPE_CHECKING:
    from collections.abc import Sequence

    from conformance.exchange import Exchange
    from conformance.runners.context import RunContext

__all__ = [
    "CLEANUP_FILE",
    "Created",
    "clean_up",
    "cleanup_requested",
    "note_creations",
    "write_summary",
]

#: The merged result of every worker, in the reports directory.
CLEANUP_FILE = "cleanup.json"
_WORKER_FILE = "cleanup-{worker}.json"
_LEDGER = pytest.StashKey[dict[tuple[str, str], "Created"]]()


def cleanup_requested(config: pytest.Config) -> bool:
    return bool(config.getoption("cleanup", False))


def note_creations(config: pytest.Config, context: Any) -> None:
    """Note what the scenario's exchanges created (payments and consents), once each."""
    exchanges: Sequence[Exchange] = getattr(context, "exchanges", ())
    contract = getattr(context, "contract", None)
    profile = getattr(context, "profile", None)
    if not exchanges or contract is None or profile is None:
        return
    ledger = config.stash.setdefault(_LEDGER, {})
    for exchange in exchanges:
        op_id = operation_of(exchange, contract, profile)
        if op_id is None or contract.operations[op_id].method != "POST":
            continue
        created = created_by(exchange, op_id, contract)
        if created is not None:
            ledger.setdefault((created.kind, created.resource_id), created)


def _certificate(context: RunContext) -> str:
    der = context.client.identity().certificate.public_bytes(serialization.Encoding.DER)
    return base64.b64encode(der).decode("ascii")


def clean_up(config: pytest.Config, context: RunContext) -> None:
    """Cancel the worker's unauthorised payments and delete its consents (module docstring),
    and write what it did; a request that fails is one line of what it could not do."""
    ledger = config.stash.get(_LEDGER, {})
    contexts = {_certificate(item): item for item in (context, *context.identity_contexts())}
    result = CleanupResult()
    for created in ledger.values():
        owner = contexts.get(created.certificate)
        if owner is None:
            result.could_not.append(
                f"{created.kind} {created.resource_id}: made with a certificate this run no "
                "longer signs as"
            )
            continue
        clean_up_one(owner, created, result)
    worker = getattr(config, "workerinput", {}).get("workerid", "main")
    reports = Path(config.getoption("reports"))
    reports.mkdir(parents=True, exist_ok=True)
    path = reports / _WORKER_FILE.format(worker=worker)
    path.write_text(json.dumps(asdict(result), indent=2) + "\n", encoding="utf-8")


def write_summary(config: pytest.Config, terminalreporter: Any) -> None:
    """Merge the workers' results into ``cleanup.json`` and print them (controller only)."""
    reports = Path(config.getoption("reports"))
    parts = sorted(reports.glob(_WORKER_FILE.format(worker="*")))
    if not parts:
        return
    merged = CleanupResult()
    for part in parts:
        document = json.loads(part.read_text(encoding="utf-8"))
        merged.payments_cancelled += int(document["payments_cancelled"])
        merged.payments_left += int(document["payments_left"])
        merged.consents_deleted += int(document["consents_deleted"])
        merged.consents_kept += int(document["consents_kept"])
        merged.could_not += list(document["could_not"])
        part.unlink()
    merged.could_not.sort()
    (reports / CLEANUP_FILE).write_text(json.dumps(asdict(merged), indent=2) + "\n", "utf-8")
    terminalreporter.section("clean-up (--cleanup)", sep="-")
    terminalreporter.line(
        f"cancelled {merged.payments_cancelled} unauthorised payment(s); left "
        f"{merged.payments_left} authorised or finished; deleted {merged.consents_deleted} "
        f"consent(s); could not clean up {len(merged.could_not)} (reports: {CLEANUP_FILE})"
    )
    if merged.consents_kept:
        terminalreporter.line(
            f"  kept {merged.consents_kept} consent(s): the contract has no operation that "
            "deletes a consent"
        )
    for line in merged.could_not[:20]:
        terminalreporter.line(f"  could not: {line}")
    if len(merged.could_not) > 20:
        terminalreporter.line(f"  ... and {len(merged.could_not) - 20} more ({CLEANUP_FILE})")
