"""Taking away what was made on the target: the payments and consents an exchange created
(:func:`created_by`), cancelled or deleted again as the identity that made them
(:func:`clean_up_one`). ``conformance run --cleanup`` (``conformance.plugin.cleanup``) notes a
run's creations and calls it at the end of each worker; ``conformance discover`` calls it for the
few things its probes made.

A payment's status is read (PS) and the payment cancelled (PC) while it is still unauthorised
(RCVD); an authorised or finished payment is left as it is. A consent is deleted where the
contract has an operation that deletes one (``DELETE /v1/consents/{consentId}``); without one it
is counted as kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conformance.contract import bounded_json

if TYPE_CHECKING:
    from conformance.bankside.request import Psu, Target
    from conformance.contract import Contract, Operation
    from conformance.exchange import Exchange

__all__ = [
    "CleanupResult",
    "Created",
    "clean_up_one",
    "consent_delete",
    "created_by",
]

#: The payment creations (spec 4.1) whose payments the clean-up cancels.
_PAYMENT_CREATIONS = frozenset({"E16", "E17", "E18"})
_PERIODIC = "E17"
_UNAUTHORISED = "RCVD"


@dataclass(frozen=True)
class Created:
    """One payment or consent made on the target: what it is, who made it (the PSU headers and
    the TPP certificate of the creating request) and how to name it again (product, periodic)."""

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
    """What a clean-up did: counts, and each thing it could not do with why."""

    payments_cancelled: int = 0
    payments_left: int = 0
    consents_deleted: int = 0
    #: Consents left because the contract has no operation that deletes one.
    consents_kept: int = 0
    could_not: list[str] = field(default_factory=list)

    @property
    def nothing_left(self) -> bool:
        """Whether everything made was taken away again."""
        return not (self.payments_left or self.consents_kept or self.could_not)


def _headers(exchange: Exchange) -> dict[str, str]:
    return {name.lower(): value for name, value in exchange.request_headers}


def created_by(exchange: Exchange, op_id: str, contract: Contract) -> Created | None:
    """The payment or consent an exchange of ``op_id`` created, or None. A payment creation may
    answer 401 with the payment and its SCA link (spec 5 item 6): that payment exists too."""
    from conformance.bankside.setup_data import PRODUCT_OF_OPERATION

    if exchange.status not in (201, 401):
        return None
    try:
        document = bounded_json.loads(exchange.response_body or b"null")
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


def consent_delete(contract: Contract) -> Operation | None:
    """The contract's operation deleting a consent, if it has one."""
    return next(
        (
            op
            for op in contract.operations.values()
            if op.method == "DELETE" and op.path == "/v1/consents/{consentId}"
        ),
        None,
    )


def _psu(created: Created) -> Psu:
    from conformance.bankside.request import Psu

    return Psu(
        psu_id=created.psu_id,
        corporate_id=created.corporate_id,
        corporate=created.corporate_id is not None,
        national_id=created.national_id,
    )


def _cancel(target: Target, created: Created, result: CleanupResult) -> None:
    """PS, then PC when the payment is still unauthorised (RCVD)."""
    from conformance.bankside.request import OperationRequest
    from conformance.profile import PAYMENT_SERVICE, PERIODIC_SERVICE

    values = {
        "payment-product": created.product or "",
        "payment-id": created.resource_id,
        PAYMENT_SERVICE: PERIODIC_SERVICE if created.operation == _PERIODIC else "payments",
    }
    what = f"payment {created.resource_id} ({created.operation})"
    psu = _psu(created)
    read = OperationRequest.build(target, "PS", psu=psu, path_values=values).send(target)
    try:
        status = bounded_json.loads(read.response_body or b"{}").get("transactionStatus")
    except (ValueError, AttributeError):
        status = None
    if read.status != 200 or status is None:
        result.could_not.append(f"{what}: its status was answered HTTP {read.status}")
        return
    if status != _UNAUTHORISED:
        result.payments_left += 1  # authorised or finished: not the clean-up's to undo
        return
    cancelled = OperationRequest.build(target, "PC", psu=psu, path_values=values).send(target)
    if 200 <= cancelled.status < 300:
        result.payments_cancelled += 1
    else:
        result.could_not.append(f"{what}: its cancellation was answered HTTP {cancelled.status}")


def _delete(target: Target, operation: Operation, created: Created, result: CleanupResult) -> None:
    from conformance.bankside.request import OperationRequest

    request = OperationRequest.build(
        target,
        operation.id,
        psu=_psu(created),
        path_values={"consentId": created.resource_id},
    )
    answer = request.send(target)
    if 200 <= answer.status < 300:
        result.consents_deleted += 1
    else:
        result.could_not.append(
            f"consent {created.resource_id}: its deletion ({operation.id}) was answered HTTP "
            f"{answer.status}"
        )


def clean_up_one(target: Target, created: Created, result: CleanupResult) -> None:
    """Cancel the payment (while unauthorised) or delete the consent ``created`` names, as
    ``target``'s client signs; what it could not do is a line of ``result``, never an error."""
    what = f"{created.kind} {created.resource_id}"
    try:
        if created.kind == "payment":
            _cancel(target, created, result)
            return
        delete = consent_delete(target.contract)
        if delete is None:
            result.consents_kept += 1
        else:
            _delete(target, delete, created, result)
    except Exception as error:  # a clean-up never fails its caller; it says what went wrong
        result.could_not.append(f"{what}: {type(error).__name__}: {error}")
