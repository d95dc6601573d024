"""The parts of a target profile that are tables of their own: the PSUs of the test environment
(spec 5 items 5 and 7), existing production data (spec 4.3 E8), and how SCA is completed
(spec 5 item 6).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["SCA_MODES", "CorporatePsu", "PrivatePsu", "ProductionData", "ScaMode", "ScaSettings"]

#: How the SCA redirect of spec 5 item 6 is completed (see ``conformance.target.sca``).
SCA_MODES: tuple[str, ...] = ("reference", "manual", "command")
ScaMode = Literal["reference", "manual", "command"]


@dataclass(frozen=True)
class PrivatePsu:
    """A private PSU of the target's test environment (spec 5 items 5 and 7)."""

    psu_id: str | None = None
    national_id: str | None = None
    customer_number: str | None = None


@dataclass(frozen=True)
class CorporatePsu:
    """A corporate PSU: spec 5 item 5 ("corporate users also pass PSU-Corporate-ID")."""

    psu_id: str | None = None
    corporate_id: str | None = None
    customer_number: str | None = None


@dataclass(frozen=True)
class ProductionData:
    """Existing production resources for targets without a sandbox to create them (spec 4.3 E8).

    ``transaction_ids`` are transactions of the first of ``account_ids``, as taken from the
    account transactions list (spec 4.3 E8: "taken from the list result").
    """

    consent_id: str | None = None
    account_ids: tuple[str, ...] = ()
    transaction_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScaSettings:
    """How the suite gets past the SCA redirect (spec 5 item 6): ``command`` gets the link."""

    mode: ScaMode = "reference"
    command: str | None = None
