"""Where the SCA redirect returns the PSU (spec 5 item 6: "afterwards the flow returns to
TPP-Redirect-URI"): a failed SCA returns where the TPP asked, to its TPP-Nok-Redirect-URI when
it sent one (the profile's ``nok_redirect_uri``; Berlin Group's header, which the platform's
contracts list), else to its TPP-Redirect-URI, with an error marker and no success marker.

The landing URL comes from the SCA step: the reference server's page followed to the TPP's
address, or the line the profile's SCA command prints (``[sca] mode = "command"``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from conformance.checks import NotApplicable
from conformance.operations.payments import payment_request
from conformance.runners.flow.steps import (
    complete_sca,
    fail,
    start_authorisation,
)

if TYPE_CHECKING:
    from conformance.runners.context import RunContext
    from conformance.scenario import Scenario

__all__ = ["sca_failure_return"]

#: Query values that mark a failed SCA: an ``error`` (OAuth's word, RFC 6749 4.1.2.1, as banks
#: use it on a redirect back) or ``scaStatus=FAILED``.
_FAILED_SCA_STATUS = "FAILED"
#: Query values that mark a success, which a failed SCA must not carry.
_SUCCESS_MARKERS = ("code",)
_SUCCESS_SCA_STATUSES = frozenset({"FINALISED", "EXEMPTED"})


def sca_failure_return(scenario: Scenario, ctx: RunContext, seed: int) -> None:
    """The PSU cancels a payment's SCA: the redirect back lands on the TPP-Nok-Redirect-URI the
    run sent (else the TPP-Redirect-URI), and its query marks the failure (``error``, or
    ``scaStatus=FAILED``) and carries no success (``code``, ``scaStatus=FINALISED``)."""
    settings = ctx.profile.sca
    if settings.decoupled or settings.oauth:
        raise NotApplicable(
            f"with {settings.approach} SCA the bank does not send the PSU back through the "
            "TPP-Redirect-URI, so where a failed SCA returns cannot be seen"
        )
    payment = ctx.data.payment(seed, "E16")
    if settings.starts_at_creation and payment.sca_link and payment.created:
        started, link = payment.created, payment.sca_link
    else:
        reason = ctx.unsupported_reason("PA")
        if reason is not None:
            raise NotApplicable(f"the scenario starts a payment's SCA with PA: {reason}")
        started, link = start_authorisation(scenario, ctx, payment_request(ctx, "PA", payment))
    outcome = complete_sca(ctx, link, payment.psu, approve=False)
    landing = outcome.redirect_url
    nok = ctx.profile.lifecycle.nok_redirect_uri
    if landing is None:
        raise NotApplicable(
            "the SCA step did not say where the PSU landed (in command mode: the command printed "
            "no line starting with the TPP-Redirect-URI"
            + (" or the TPP-Nok-Redirect-URI" if nok else "")
            + "), so where the failed SCA returned cannot be judged"
        )
    wanted, header = (nok, "TPP-Nok-Redirect-URI") if nok else (ctx.profile.redirect_uri, "")
    if not landing.startswith(wanted):
        sent = f"the {header} sent ({wanted})" if header else f"the TPP-Redirect-URI ({wanted})"
        raise fail(
            f"the failed SCA returned the PSU to {landing}, not to {sent}",
            scenario.spec,
            started,
            "a failed SCA returns to the TPP-Nok-Redirect-URI when the TPP sent one, else to "
            "the TPP-Redirect-URI",
        )
    query = parse_qs(urlsplit(landing).query)
    statuses = set(query.get("scaStatus", ()))
    success = [name for name in _SUCCESS_MARKERS if name in query]
    success += sorted(statuses & _SUCCESS_SCA_STATUSES)
    if success:
        raise fail(
            f"the failed SCA returned with a success marker ({', '.join(success)}): {landing}",
            scenario.spec,
            started,
            "the way back from a failed SCA carries no success marker (no code, no scaStatus "
            "FINALISED)",
        )
    if "error" not in query and _FAILED_SCA_STATUS not in statuses:
        raise fail(
            f"the failed SCA returned without an error marker: {landing}",
            scenario.spec,
            started,
            "the way back from a failed SCA says it failed (an error parameter, or scaStatus "
            "FAILED)",
        )
