"""What the judge needs to know of the bank besides the contract: the profile's choices where the
spec leaves them open (its paths and methods, product ids, required header sets, query names, KID
reference type, clock skew) and, when given, the CAs it trusts for signing certificates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from conformance.contract.crossfield import KID_REFERENCE_TYPES

if TYPE_CHECKING:
    from cryptography import x509

    from conformance.contract import Contract, Operation
    from conformance.profile import ScaSettings, TargetProfile

__all__ = ["BankPath", "TrafficSettings"]

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True)
class BankPath:
    """A method and path template the profile puts where the spec shows none (``[paths]``)."""

    operation: str
    method: str
    pattern: re.Pattern[str]
    names: tuple[str, ...]

    @classmethod
    def of(cls, operation: str, method: str, template: str) -> BankPath:
        parts = _PLACEHOLDER.split(template)
        regex = "".join(
            re.escape(part) if index % 2 == 0 else "([^/]+)" for index, part in enumerate(parts)
        )
        return cls(operation, method, re.compile(regex), tuple(_PLACEHOLDER.findall(template)))

    def match(self, method: str, path: str) -> dict[str, str] | None:
        found = self.pattern.fullmatch(path)
        if found is None or method != self.method:
            return None
        return dict(zip(self.names, found.groups(), strict=True))


@dataclass(frozen=True)
class TrafficSettings:
    """The bank's choices the judge reads (all empty: the contract's own)."""

    #: The profile's name, for the report ("" without a profile).
    profile_name: str = ""
    required_headers: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    #: Contract product id → the bank's (``[product_ids]``).
    product_ids: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Operation → contract query name → the bank's (``[query.<op>]``).
    query_names: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    paths: tuple[BankPath, ...] = ()
    kid_reference_types: frozenset[str] = KID_REFERENCE_TYPES
    #: Seconds a signed Date may be off the judge's clock (the profile's ``date_skew``).
    date_skew: float = 300.0
    #: CAs a signing certificate must chain to (``--trust``); empty: trust is not judged.
    trust: tuple[x509.Certificate, ...] = ()
    #: The profile's SCA settings where it starts every payment's SCA at its creation (``[sca]
    #: start = "creation"``: a creation's answer carries the SCA link), else None.
    sca_at_creation: ScaSettings | None = None

    @classmethod
    def of(
        cls,
        profile: TargetProfile | None,
        contract: Contract,
        trust: tuple[x509.Certificate, ...] = (),
    ) -> TrafficSettings:
        if profile is None:
            return cls(trust=trust)
        chosen = {*profile.paths, *profile.methods, *profile.periodic_paths}
        paths: list[BankPath] = []
        for op_id in sorted(chosen):
            operation = contract.operations[op_id]
            templates = {profile.path_for(operation), profile.path_for(operation, periodic=True)}
            paths += [
                BankPath.of(op_id, profile.method_for(operation), template)
                for template in sorted(templates)
            ]
        paths.sort(key=lambda bank_path: len(bank_path.names))
        return cls(
            profile_name=profile.name,
            required_headers=MappingProxyType(dict(profile.required_headers)),
            product_ids=MappingProxyType(dict(profile.product_ids)),
            query_names=MappingProxyType({k: dict(v) for k, v in profile.query_names.items()}),
            paths=tuple(paths),
            kid_reference_types=frozenset({profile.kid_reference_type.upper()}),
            date_skew=profile.date_skew,
            trust=trust,
            sca_at_creation=profile.sca if profile.sca.start == "creation" else None,
        )

    def required_for(self, operation: Operation) -> tuple[str, ...]:
        return self.required_headers.get(operation.id, operation.required_headers)

    def bank_query_name(self, op_id: str, name: str) -> str:
        return self.query_names.get(op_id, {}).get(name, name)
