"""The SCA step of spec 5 item 6, chosen by the profile (:func:`sca_step_for`): the reference
server's page filled in (``reference``), a person at a terminal (``manual``), or a command
(``command``); for a bank whose SCA is decoupled (``[sca] approach``), the same PSU's decision
followed by polling the authorisation's ``scaStatus`` until it ends (``decoupled``); for the OAuth
approach, the PSU's authorisation at the bank's OAuth server followed by the code's exchange
(``oauth``).

Every strategy follows the :class:`ScaStep` protocol of ``base``; ``links`` finds the link an
answer gives the step and turns a step that ended badly into a verdict. A new strategy is one
module here and one branch of :func:`sca_step_for`. Callers import from this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conformance.bankside.sca.base import ScaError, ScaOutcome, ScaRedirectBroken, ScaStep
from conformance.bankside.sca.command import CommandSca
from conformance.bankside.sca.decoupled import FINAL_SCA_STATUSES, DecoupledSca
from conformance.bankside.sca.links import require_sca_link, sca_blocked, sca_failure, sca_link
from conformance.bankside.sca.manual import ManualSca
from conformance.bankside.sca.oauth import OAuthSca
from conformance.bankside.sca.reference import ReferenceSca

if TYPE_CHECKING:
    from conformance.bankside.client import TargetClient
    from conformance.profile import TargetProfile

__all__ = [
    "FINAL_SCA_STATUSES",
    "CommandSca",
    "DecoupledSca",
    "ManualSca",
    "OAuthSca",
    "ReferenceSca",
    "ScaError",
    "ScaOutcome",
    "ScaRedirectBroken",
    "ScaStep",
    "require_sca_link",
    "sca_blocked",
    "sca_failure",
    "sca_link",
    "sca_step_for",
]


def sca_step_for(profile: TargetProfile, client: TargetClient) -> ScaStep:
    """The SCA step the profile asks for (``[sca] mode``), polling when SCA is decoupled."""
    settings = profile.sca
    step: ScaStep
    if settings.mode == "manual":
        step = ManualSca(decoupled=settings.decoupled)
    elif settings.mode == "command":
        assert settings.command is not None  # the profile loader insists on it
        step = CommandSca(
            settings.command,
            profile.redirect_uri,
            nok_redirect_uri=profile.lifecycle.nok_redirect_uri,
        )
    else:
        step = ReferenceSca(
            client, profile.redirect_uri, nok_redirect_uri=profile.lifecycle.nok_redirect_uri
        )
    if settings.decoupled:
        return DecoupledSca(step, client, settings)
    if settings.oauth:
        return OAuthSca(step, client, profile.redirect_uri)
    return step
