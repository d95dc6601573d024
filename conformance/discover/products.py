"""The NCBCT product identifier (``[product_ids] ncbct``; spec 4.1: "The NCBCT product
identifier: not shown") and the periodic service paths (``[paths] PS/PC/PA/PCA`` ``periodic``;
spec 4.1 shows no path for a periodic payment's status, cancellation or authorisation).

The product: an empty creation body posted under each candidate the platform's banks and
NextGenPSD2 use; a product the bank does not know is answered 404, a known one is refused for
its body (400, or 401 for the body's SCA) and nothing is made. The periodic paths: one periodic
payment is made (E17, never authorised) and its status read under NextGenPSD2's
``/v1/periodic-payments`` and under the contract's ``/v1/payments``; its authorisation paths are
asked there with a request the bank refuses or that starts nothing the PSU sees, and the
payment is cancelled under the path found, as the clean-up does."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from conformance.discover.evidence import Decision, decided, describe, undecided
from conformance.discover.operations import NDCT
from conformance.discover.probe import document_of, interface_answer
from conformance.generate import factories

if TYPE_CHECKING:
    from conformance.discover.probe import Prober
    from conformance.exchange import Exchange

__all__ = ["NCBCT", "NCBCT_CANDIDATES", "decide_ncbct", "decide_periodic_paths"]

#: The contract's NCBCT identifier (the suite's default).
NCBCT = "norwegian-cross-border-credit-transfers"
#: The identifiers banks give NCBCT: the contract's, the platform's gateway banks', NextGenPSD2's.
NCBCT_CANDIDATES = (NCBCT, "international-credit-transfers", "cross-border-credit-transfers")
#: NextGenPSD2's periodic service: the templates of PS, PC, PA and PCA under it.
PERIODIC = {
    "PS": "/v1/periodic-payments/{payment-product}/{payment-id}/status",
    "PC": "/v1/periodic-payments/{payment-product}/{payment-id}",
    "PA": "/v1/periodic-payments/{payment-product}/{payment-id}/authorisations",
    "PCA": "/v1/periodic-payments/{payment-product}/{payment-id}/cancellation-authorisations",
}
_SEED = 31


def decide_ncbct(prober: Prober) -> Decision:
    """``[product_ids] ncbct``: the first candidate the bank does not answer 404."""
    key = ("product_ids", "ncbct")
    seen: list[Exchange] = []
    for candidate in NCBCT_CANDIDATES:
        exchange = prober.request("E18", body={}, path=f"/v1/payments/{candidate}", repeat=True)
        if exchange is None or not interface_answer(exchange):
            continue
        seen.append(exchange)
        if exchange.status != 404:
            return decided(key, candidate, exchange, *seen[:-1])
    return undecided(key, NCBCT, "every candidate was answered 404 or not at all", *seen)


def decide_periodic_paths(prober: Prober, *, offered: bool) -> list[Decision]:
    """``[paths] PS/PC/PA/PCA periodic`` from one periodic payment (module docstring); the
    contract's paths when its status reads under ``/v1/payments``."""
    keys = {op_id: ("paths", op_id, "periodic") for op_id in PERIODIC}
    ops = prober.contract.operations
    defaults = {op_id: ops[op_id].path for op_id in PERIODIC}
    if not offered:
        return [
            undecided(key, defaults[op_id], "the bank has no periodic payment creation (E17)")
            for op_id, key in keys.items()
        ]
    body = factories.periodic_payment(_SEED, today=date.today())
    made = prober.request("E17", path_values={"payment-product": NDCT}, body=body)
    payment_id = document_of(made).get("paymentId")
    if made is None or not isinstance(payment_id, str):
        why = "the periodic payment the probe needs was not made"
        return [undecided(key, defaults[op], why, *_seen(made)) for op, key in keys.items()]
    values = {"payment-product": NDCT, "payment-id": payment_id}
    under_periodic = prober.request("PS", path=_fill(PERIODIC["PS"], values), repeat=True)
    if under_periodic is not None and under_periodic.status == 200:
        found = {"PS": decided(keys["PS"], PERIODIC["PS"], made, under_periodic)}
        for op_id in ("PA", "PCA"):
            found[op_id] = _authorisation_path(prober, op_id, keys[op_id], values)
        prober.adopt(periodic_paths={**prober.profile.periodic_paths, "PS": PERIODIC["PS"],
                                     "PC": PERIODIC["PC"]})  # fmt: skip
        cleaned = prober.clean_up()
        how = "cancelled" if cleaned.payments_cancelled else "not cancelled"
        found["PC"] = decided(
            keys["PC"], PERIODIC["PC"],
            f"DELETE {_fill(PERIODIC['PC'], values)}: the probe's payment {how} there",
        ) if cleaned.payments_cancelled else undecided(
            keys["PC"], defaults["PC"], f"the payment was {how} under {PERIODIC['PC']}"
        )  # fmt: skip
        return [found[op_id] for op_id in PERIODIC]
    contract_read = prober.request(
        "PS", path_values={**values, "payment-service": "payments"}, repeat=True
    )
    if contract_read is not None and contract_read.status == 200:
        line = f"{describe(made)}: made it; its status reads under /v1/payments"
        return [
            decided(key, defaults[op_id], line, *_seen(under_periodic), contract_read)
            for op_id, key in keys.items()
        ]
    why = "the probe's periodic payment's status read under neither service path"
    return [
        undecided(key, defaults[op_id], why, *_seen(under_periodic), *_seen(contract_read))
        for op_id, key in keys.items()
    ]


def _authorisation_path(
    prober: Prober, op_id: str, key: tuple[str, ...], values: dict[str, str]
) -> Decision:
    """PA or PCA under the periodic service, for the probe's payment: any answer but 404 (a
    started authorisation, or a refusal for the payment's state) says the path is there."""
    exchange = prober.request(op_id, body={}, path=_fill(PERIODIC[op_id], values))
    default = prober.contract.operations[op_id].path
    if exchange is None or not interface_answer(exchange):
        return undecided(key, default, "no answer under the periodic service", *_seen(exchange))
    if exchange.status == 404:
        return undecided(key, default, "answered 404 under the periodic service", exchange)
    return decided(key, PERIODIC[op_id], exchange)


def _fill(template: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


def _seen(exchange: Exchange | None) -> tuple[Exchange, ...]:
    return () if exchange is None else (exchange,)
