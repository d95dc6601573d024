"""The bank the server plays: the choices a target profile describes where the spec leaves them
open (``python -m reference_server --profile FILE``), read through the suite's own profile loader.

Played today: the static headers an API gateway requires on every contract request (a missing
one is answered 401 ``HTTP_HEADER_REQUIRED``, a wrong value 401 ``FORBIDDEN``, both with the
spec 7 body: assumptions.md, "Bank styles"), and the ``referenceType`` that marks a KID in the
structured remittance array, and the bank's names of query parameters (``[query]``: the
parameter is read under that name; the contract's name is then an unknown parameter, ignored),
and the required header set of an operation whose set the spec does not show
(``[required_headers]``), and the NCBCT product identifier (``[product_ids]``: requests are
read in the bank's identifier, answers and their links written in it).
Without a profile the server is the bundled one: no gateway headers, KID and OCR as KID types,
the contract's query names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from conformance.contract.crossfield import KID_REFERENCE_TYPES

if TYPE_CHECKING:
    from conformance.profile import TargetProfile

__all__ = ["BankStyle", "inbound_path", "outbound_text", "style_of"]


@dataclass(frozen=True)
class BankStyle:
    """What differs from the bundled server's defaults."""

    gateway_headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    kid_reference_types: frozenset[str] = KID_REFERENCE_TYPES
    #: Per operation, the bank's names of its query parameters (AT: ``fromDate`` → ``dateFrom``).
    query_names: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    #: The contract's product identifier → the bank's (NCBCT's, which the spec does not show).
    product_ids: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Per operation, the bank's required header set where the spec does not show it.
    required_headers: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )


def style_of(profile: TargetProfile, environ: Mapping[str, str] | None = None) -> BankStyle:
    """The style a profile describes; its ``env:`` header values are read from ``environ``
    (the server's environment by default), as the suite reads them from its own."""
    kid = profile.kid_reference_type.upper()
    return BankStyle(
        gateway_headers=MappingProxyType(profile.static_headers(environ)),
        kid_reference_types=KID_REFERENCE_TYPES if kid in KID_REFERENCE_TYPES else frozenset({kid}),
        query_names=profile.query_names,
        required_headers=profile.required_headers,
        product_ids=profile.product_ids,
    )


#: The segment a contract product id is turned into where the bank uses its own: no product.
_UNKNOWN_HERE = "unknown-product"


def inbound_path(style: BankStyle, path: str) -> str:
    """A request path in the contract's product ids: the bank's id becomes the contract's, and
    the contract's (which this bank does not use) an unknown product, as a gateway in front of
    the bundled routes would do."""
    if not style.product_ids:
        return path
    contract_of = {bank: contract for contract, bank in style.product_ids.items()}
    segments = path.split("/")
    for index, segment in enumerate(segments):
        if segment in contract_of:
            segments[index] = contract_of[segment]
        elif segment in style.product_ids:
            segments[index] = _UNKNOWN_HERE
    return "/".join(segments)


def outbound_text(style: BankStyle, data: bytes) -> bytes:
    """An answer (body or a Location header) in the bank's product ids."""
    for contract, bank in style.product_ids.items():
        data = data.replace(f"/{contract}/".encode(), f"/{bank}/".encode())
        data = data.replace(f'/{contract}"'.encode(), f'/{bank}"'.encode())
    return data
