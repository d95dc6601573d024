"""The runners' shared vocabulary: the verdict "not applicable", the run context, the seed."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.certs import CertificateAuthority
    from conformance.client import Exchange, TargetClient
    from conformance.contract import Contract
    from conformance.fixtures import DataFactory
    from conformance.profile import TargetProfile
    from conformance.sca import ScaStep
    from conformance.scenario import Scenario

__all__ = ["NotApplicable", "RunContext", "Runner", "scenario_seed"]


class NotApplicable(Exception):
    """The scenario cannot judge this target; ``reason`` is the one sentence the report shows.

    Raised when the profile declares the operation or product unsupported, when the scenario
    needs a control the target lacks (the reference server's clock or batch), a trust anchor
    the profile does not name, or data the target cannot be asked to create (no sandbox).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class RunContext:
    """What a runner needs, built once per worker; ``exchanges`` is cleared per scenario.

    ``seed`` is the run seed (printed by the plugin); a scenario's own data is seeded from
    :func:`scenario_seed`. ``strict`` makes ``should`` failures count (DESIGN.md, Verdicts);
    runners check ``should`` requirements either way and leave the verdict's weight to the plugin.

    ``trust_anchor`` is the CA the target is known to trust *exclusively* for signing
    certificates, with its key (the run started the reference server with ``--trust`` for it, or
    the user supplied it): the auth scenarios then mint expired, role-less and UTF-8-named
    certificates from it and expect certificates of any other CA to be refused. Without it,
    certificates are minted from the suite's default CA when the client signs with the default
    identity, and the untrusted-CA case is not applicable.

    ``utf8_trust_anchor`` is a second CA the target trusts (beside ``trust_anchor``), whose name
    has a character outside ASCII, with its key: the RFC 2047 scenario signs with a certificate
    it issues, so that the keyId ``CA=`` and the Signature header are not ASCII (spec 5 item 3).
    """

    contract: Contract
    profile: TargetProfile
    client: TargetClient
    seed: int
    data: DataFactory
    sca: ScaStep
    exchanges: list[Exchange] = field(default_factory=list)
    strict: bool = False
    trust_anchor: CertificateAuthority | None = None
    utf8_trust_anchor: CertificateAuthority | None = None
    _unsupported: dict[str, str | None] = field(default_factory=dict, init=False, repr=False)

    def unsupported_reason(self, op_id: str) -> str | None:
        """``profile.unsupported_reason(op_id)``, remembered: the profile is frozen and every
        scenario asks it for its operation and its steps."""
        try:
            return self._unsupported[op_id]
        except KeyError:
            reason = self._unsupported[op_id] = self.profile.unsupported_reason(op_id)
            return reason


#: The one signature every runner has.
Runner = Callable[["Scenario", RunContext], None]


def scenario_seed(run_seed: int, scenario_id: str) -> int:
    """The seed of one scenario's data: stable across runs, machines and xdist workers."""
    digest = hashlib.sha256(f"{run_seed}:{scenario_id}".encode()).hexdigest()
    return int(digest[:8], 16)
