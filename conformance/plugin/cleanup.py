"""``conformance run --cleanup``: what the run made on the target, taken away again (issue 23).

A production-like run leaves hundreds of payments and consents on one test account. With
``--cleanup`` every worker notes, after each scenario, the payments (E16, E17, E18) and consents
(a consent operation's 201 answer naming a ``consentId``) its exchanges created, with the PSU
and the TPP certificate that made them. When the worker's last scenario is done (its run
context's finalizer: the bundled server still listens), it reads each payment's status (PS) and
cancels (PC) those still unauthorised (RCVD), signing as the identity that made it; an
authorised or finished payment is left as it is. Consents are deleted where the contract has an
operation that deletes one (``DELETE /v1/consents/{consentId}``); without one they are listed as
not deleted. Each worker writes what it did to ``cleanup-<worker>.json`` in the reports
directory; the terminal summary merges them into ``cleanup.json`` and prints the counts and
everything it could not clean up, with the reason.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cryptography.hazmat.primitives import serialization

from conformance.plugin.timings import operation_of

if TYPE_CHECKING:
    from conformance.contract import Contract, Operation
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
#: The payment creations (spec 4.1) whose payments the clean-up cancels.
_PAYMENT_CREATIONS = frozenset({"E16", "E17", "E18"})
_PERIODIC = "E17"
_UNAUTHORISED = "RCVD"


@dataclass(frozen=True)
class Created:
    """One payment or consent the run made: what it is, who made it (the PSU headers and the
    TPP certificate of the creating request) and how to name it again (product, periodic)."""

    kind: str  # "payment" or "consent"
    resource_id: str
    operation: str
    certificate: str
    psu_id: str | None = None
    corporate_id: str | None = None
    national_id: str | None = None
    product: str | None = None


@dataclass
class CleanupResult:
    """What one worker's clean-up did: counts, and each thing it could not do with why."""

    payments_cancelled: int = 0
    payments_left: int = 0
    consents_deleted: int = 0
    #: Consents left because the contract has no operation that deletes one.
    consents_kept: int = 0
    could_not: list[str] = field(default_factory=list)


def cleanup_requested(config: pytest.Config) -> bool:
    return bool(config.getoption("cleanup", False))


def _headers(exchange: Exchange) -> dict[str, str]:
    return {name.lower(): value for name, value in exchange.request_headers}


def _created(exchange: Exchange, op_id: str, contract: Contract) -> Created | None:
    """The payment or consent an exchange created, or None. A payment creation may answer 401
    with the payment and its SCA link (spec 5 item 6): that payment exists too."""
    # on use: the plugin loads in every pytest process (start-up time)
    from conformance.bankside.setup_data import PRODUCT_OF_OPERATION

    if exchange.status not in (201, 401):
        return None
    try:
        document = json.loads(exchange.response_body or b"null")
    except ValueError:
        return None
    if not isinstance(document, Mapping):
        return None
    headers = _headers(exchange)
    product = None
    if op_id in _PAYMENT_CREATIONS and document.get("paymentId"):
        kind, resource = "payment", str(document["paymentId"])
        product = PRODUCT_OF_OPERATION[op_id]  # the contract's: PS and PC take it in their path
    elif contract.operations[op_id].family == "consents" and exchange.status == 201:
        if not document.get("consentId"):
            return None
        kind, resource = "consent", str(document["consentId"])
    else:
        return None
    return Created(
        kind=kind,
        resource_id=resource,
        operation=op_id,
        certificate=headers.get("tpp-signature-certificate", ""),
        psu_id=headers.get("psu-id"),
        corporate_id=headers.get("psu-corporate-id"),
        national_id=headers.get("x-psu-identity"),
        product=product,
    )


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
        created = _created(exchange, op_id, contract)
        if created is not None:
            ledger.setdefault((created.kind, created.resource_id), created)


def _certificate(context: RunContext) -> str:
    der = context.client.identity().certificate.public_bytes(serialization.Encoding.DER)
    return base64.b64encode(der).decode("ascii")


def _consent_delete(contract: Contract) -> Operation | None:
    """The contract's operation deleting a consent, if it has one."""
    return next(
        (
            op
            for op in contract.operations.values()
            if op.method == "DELETE" and op.path == "/v1/consents/{consentId}"
        ),
        None,
    )


def _psu(created: Created) -> Any:
    # on use: the plugin loads in every pytest process (start-up time)
    from conformance.bankside.request import Psu

    return Psu(
        psu_id=created.psu_id,
        corporate_id=created.corporate_id,
        corporate=created.corporate_id is not None,
        national_id=created.national_id,
    )


def _cancel(context: RunContext, created: Created, result: CleanupResult) -> None:
    """PS, then PC when the payment is still unauthorised (RCVD)."""
    # on use: the plugin loads in every pytest process (start-up time)
    from conformance.bankside.request import OperationRequest
    from conformance.profile import PAYMENT_SERVICE, PERIODIC_SERVICE

    values = {
        "payment-product": created.product or "",
        "payment-id": created.resource_id,
        PAYMENT_SERVICE: PERIODIC_SERVICE if created.operation == _PERIODIC else "payments",
    }
    what = f"payment {created.resource_id} ({created.operation})"
    psu = _psu(created)
    read = OperationRequest.build(context, "PS", psu=psu, path_values=values).send(context)
    try:
        status = json.loads(read.response_body or b"{}").get("transactionStatus")
    except (ValueError, AttributeError):
        status = None
    if read.status != 200 or status is None:
        result.could_not.append(f"{what}: its status was answered HTTP {read.status}")
        return
    if status != _UNAUTHORISED:
        result.payments_left += 1  # authorised or finished: not the clean-up's to undo
        return
    cancelled = OperationRequest.build(context, "PC", psu=psu, path_values=values).send(context)
    if 200 <= cancelled.status < 300:
        result.payments_cancelled += 1
    else:
        result.could_not.append(f"{what}: its cancellation was answered HTTP {cancelled.status}")


def _delete(
    context: RunContext, operation: Operation, created: Created, result: CleanupResult
) -> None:
    # on use: the plugin loads in every pytest process (start-up time)
    from conformance.bankside.request import OperationRequest

    request = OperationRequest.build(
        context,
        operation.id,
        psu=_psu(created),
        path_values={"consentId": created.resource_id},
    )
    answer = request.send(context)
    if 200 <= answer.status < 300:
        result.consents_deleted += 1
    else:
        result.could_not.append(
            f"consent {created.resource_id}: its deletion ({operation.id}) was answered HTTP "
            f"{answer.status}"
        )


def clean_up(config: pytest.Config, context: RunContext) -> None:
    """Cancel the worker's unauthorised payments and delete its consents (module docstring),
    and write what it did; a request that fails is one line of what it could not do."""
    ledger = config.stash.get(_LEDGER, {})
    contexts = {_certificate(item): item for item in (context, *context.identity_contexts())}
    delete = _consent_delete(context.contract)
    result = CleanupResult()
    for created in ledger.values():
        owner = contexts.get(created.certificate)
        what = f"{created.kind} {created.resource_id}"
        if owner is None:
            result.could_not.append(f"{what}: made with a certificate this run no longer signs as")
            continue
        try:
            if created.kind == "payment":
                _cancel(owner, created, result)
            elif delete is not None:
                _delete(owner, delete, created, result)
            else:
                result.consents_kept += 1
        except Exception as error:  # a clean-up never fails the run; it says what went wrong
            result.could_not.append(f"{what}: {type(error).__name__}: {error}")
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
