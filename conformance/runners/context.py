"""The run context: what every runner is given, built once per worker, and the context of a
second identity the run signs as (:meth:`RunContext.as_identity`)."""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from conformance.bankside.client import TargetClient
from conformance.bankside.sca import sca_step_for
from conformance.bankside.setup_data import DataFactory
from conformance.scenario import scenario_seed

if TYPE_CHECKING:
    from conformance.bankside.sca import ScaStep
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
    ``pool`` runs upcoming scenarios in threads ahead of their pytest items (``--threads``,
    :mod:`conformance.runners.pool`); None runs each in its item, one at a time. A scenario run
    in the pool gets a context of its own (:meth:`for_scenario`): the same client, data factory
    and SCA step, its own ``exchanges``.
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
    #: A :class:`conformance.runners.pool.ScenarioPool` (typed loosely: that module builds on
    #: this one).
    pool: Any = None
    _unsupported: dict[str, str | None] = field(default_factory=dict, init=False, repr=False)
    _identities: _Identities = field(default_factory=lambda: _Identities(), init=False, repr=False)

    def as_identity(self, name: str, identity: TppIdentity) -> RunContext:
        """The context of a scenario that signs as ``identity`` (a TPP certificate other than the
        run's), made once per worker under ``name``: its own client signing as it, its own SCA
        step and its own data factory, so that the customers, accounts, payments, baskets and
        consents its requests name are its own (a bank may own them per certificate, spec 5
        item 1 knowing a TPP by its signing certificate). Its shared data has its own seed, so it
        never meets the run's; without the sandbox it takes its own consent through SCA rather
        than the profile's, which was given to the run's certificate."""
        with self._identities.lock:  # scenarios in flight in threads make it once between them
            return self._identity(name, identity)

    def _identity(self, name: str, identity: TppIdentity) -> RunContext:
        derived = self._identities.contexts.get(name)
        if derived is None:
            client = TargetClient.from_profile(self.profile, identity=identity)
            sca = sca_step_for(self.profile, client)
            data = DataFactory(
                self.contract,
                self.profile,
                client,
                run_seed=scenario_seed(self.data.run_seed, f"identity:{name}"),
                sca=sca,
                own_consent=True,
            )
            derived = dataclasses.replace(self, client=client, data=data, sca=sca, exchanges=[])
            self._identities.contexts[name] = derived
            # Its connections close with the worker's identities, at the end of the run: not
            # with this context, which may be one scenario's (:meth:`for_scenario`).
            weakref.finalize(self._identities, client.close)
        return derived

    def identity_contexts(self) -> tuple[RunContext, ...]:
        """The contexts of the other identities this worker signed as (:meth:`as_identity`),
        so that what they made can be cleaned up as them (``conformance run --cleanup``)."""
        return tuple(self._identities.contexts.values())

    def for_scenario(self) -> RunContext:
        """A context for one scenario run beside others: everything shared but ``exchanges``."""
        own = dataclasses.replace(self, exchanges=[], pool=None)
        own._unsupported = self._unsupported
        own._identities = self._identities  # a second identity is made once per worker
        return own

    def runs(self, scenario: Scenario) -> bool:
        """Whether the suite's test runs ``scenario``: its operation is supported and the
        profile does not waive it (else the test reports it not applicable or waived)."""
        return (
            self.unsupported_reason(scenario.operation) is None
            and self.profile.waiver_for(scenario.id) is None
        )

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


class _Identities:
    """The contexts of the other identities one worker signed as (:meth:`RunContext.as_identity`),
    shared by the contexts of its scenarios in flight, and the lock that makes each once."""

    def __init__(self) -> None:
        self.contexts: dict[str, RunContext] = {}
        self.lock = threading.Lock()
