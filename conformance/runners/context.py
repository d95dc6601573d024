"""The run context: what every runner is given, built once per worker."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.bankside.client import TargetClient
    from conformance.bankside.sca import ScaStep
    from conformance.bankside.setup_data import DataFactory
    from conformance.contract import Contract
    from conformance.exchange import Exchange
    from conformance.profile import TargetProfile
    from conformance.scenario import Scenario
    from conformance.signing import CertificateAuthority, TppIdentity

__all__ = ["RunContext", "Runner"]


@dataclass
class RunContext:
    """What a runner needs, built once per worker; ``exchanges`` is cleared per scenario.

    ``seed`` is the run seed (printed by the plugin); a scenario's own data is seeded from
    :func:`scenario_seed`. ``strict`` makes ``should`` failures count (``--strict``: a should
    finding fails the run as a must failure does); runners check ``should`` requirements either
    way and leave the verdict's weight to the plugin.

    ``trust_anchor`` is the CA the target is known to trust *exclusively* for signing
    certificates, with its key (the run started the reference server with ``--trust`` for it, or
    the user supplied it): the auth scenarios then mint expired, role-less and UTF-8-named
    certificates from it and expect certificates of any other CA to be refused. Without it,
    certificates are minted from the suite's default CA when the client signs with the default
    identity, and the untrusted-CA case is not applicable.

    ``utf8_trust_anchor`` is a second CA the target trusts (beside ``trust_anchor``), whose name
    has a character outside ASCII, with its key: the RFC 2047 scenario signs with a certificate
    it issues, so that the keyId ``CA=`` and the Signature header are not ASCII (spec 5 item 3).

    ``revoked_identity`` is a signing certificate its CA has revoked, with its key (the bundled
    run's, or ``--revoked-cert``): the revocation scenarios sign with it unless the profile names
    one (``[negative_certificates] revoked``). ``tls_trust_anchor`` is the CA the target accepts
    TLS client certificates from, with its key (the bundled ``--tls`` run's client CA, or
    ``--tls-trust-anchor``): the checks of the QWAC mint theirs from it.
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
    revoked_identity: TppIdentity | None = None
    tls_trust_anchor: CertificateAuthority | None = None
    _unsupported: dict[str, str | None] = field(default_factory=dict, init=False, repr=False)

    def unsupported_reason(self, op_id: str) -> str | None:
        """``profile.unsupported_reason(op_id)``, remembered: the profile is frozen and every
        scenario asks it for its operation and its steps."""
        try:
            return self._unsupported[op_id]
        except KeyError:
            operation = self.contract.operations[op_id]
            reason = self._unsupported[op_id] = self.profile.unsupported_reason(operation)
            return reason


#: The one signature every runner has.
Runner = Callable[["Scenario", RunContext], None]
