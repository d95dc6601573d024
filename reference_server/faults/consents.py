"""The faults of the consent lifecycle (NextGenPSD2, our reading: graded should)."""

from __future__ import annotations

from reference_server.faults.model import Fault

__all__ = ["CONSENT_FAULTS"]

CONSENT_FAULTS: tuple[Fault, ...] = (
    Fault(
        "consent-termination-ignored",
        "spec 8 (the consent; its deletion by the TPP, terminatedByTpp, is NextGenPSD2's: should)",
        "answers a consent's deletion (CD) 204 and keeps the consent valid and usable",
        rules=("CNS-terminated-consent-refused", "STATE-consent-terminated"),
        level="should",
    ),
)
