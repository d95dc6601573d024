"""Where a single payment's SCA starts (``[sca] start``) and how it is done (``[sca]
approach``), from one NDCT payment the probe makes and never authorises (cancelled afterwards as
the clean-up does).

The creation's answer decides the start: ``_links.scaRedirect`` (or another approach's link) in
a 201, or in spec 5 item 6's 401 ("the 401 answer carries `_links.scaRedirect`"), is SCA started
at creation; a 201 without one (``startAuthorisation``) leaves it to the explicit start (PA), and
where the bank offers none, the creation is sent again with PSU-Context (spec 4.2: "required for
single-SCA initiation"): a link then is ``psu-context``.
The links of the answer that started it decide the approach: ``scaRedirect`` a redirect (spec 5
item 6), ``scaOAuth`` Berlin Group's OAuth approach, ``scaStatus`` alone a decoupled one. The
payment is made for a PSU the bank knows (the profile's, or the sandbox's first private
customer): a bank asks a PSU it does not know to identify at a redirect whatever its approach,
so a 401 for an unknown PSU leaves the approach open. Where the sandbox has no customer yet,
the probe makes one (SCU) and asks again for it: the sandbox API has no operation that deletes a
customer, so the clean-up report names it as kept (test data, as every run's)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from conformance.discover.evidence import Decision, decided, undecided
from conformance.discover.operations import NDCT
from conformance.discover.probe import document_of
from conformance.generate import factories
from conformance.profile.parts import ScaSettings

if TYPE_CHECKING:
    from conformance.bankside.request import Psu
    from conformance.discover.probe import Prober
    from conformance.exchange import Exchange

__all__ = ["approach_of", "decide_sca"]

_START = ("sca", "start")
_APPROACH = ("sca", "approach")
_SEED = 31


def approach_of(exchange: Exchange | None) -> str | None:
    """The SCA approach an answer's ``_links`` show, or None when they show none."""
    links = document_of(exchange).get("_links")
    if not isinstance(links, dict):
        return None
    if "scaRedirect" in links:
        return "redirect"
    if "scaOAuth" in links:
        return "oauth"
    if "scaStatus" in links:
        return "decoupled"
    return None


def decide_sca(prober: Prober, *, pa_offered: bool, scu_offered: bool) -> list[Decision]:
    """``[sca] start`` and ``approach`` (module docstring)."""
    psu = prober.known_psu()
    decisions = _decide_for(prober, psu, pa_offered=pa_offered)
    if psu is None and not decisions[1].is_decided and scu_offered and _unknown_psu(decisions):
        made = prober.new_customer()
        if made is not None:
            decisions = _decide_for(prober, made, pa_offered=pa_offered)
    return decisions


def _unknown_psu(decisions: list[Decision]) -> bool:
    return decisions[1].why.startswith(_UNKNOWN_PSU)


def _decide_for(prober: Prober, psu: Psu | None, *, pa_offered: bool) -> list[Decision]:
    body = factories.ndct_payment(_SEED, kid=False)
    made = prober.request("E16", path_values={"payment-product": NDCT}, body=body, psu=psu)
    payment_id = document_of(made).get("paymentId")
    if made is None or made.status not in (201, 401) or not isinstance(payment_id, str):
        why = "the payment the probe needs was not made"
        seen = () if made is None else (made,)
        return [
            undecided(_START, ScaSettings.start, why, *seen),
            undecided(_APPROACH, ScaSettings.approach, why, *seen),
        ]
    at_creation = approach_of(made)
    if at_creation is not None:
        return [decided(_START, "creation", made), _approach(made, at_creation, psu)]
    start = decided(_START, "authorisation", made)
    if not pa_offered:
        single = _single_sca(prober, psu)
        if single is not None:  # spec 4.2: PSU-Context "required for single-SCA initiation"
            return [decided(_START, "psu-context", single), _approach(single, "", psu)]
        why = "its creation started no SCA, with PSU-Context neither, and the bank has no "
        why += "explicit start (PA)"
        return [start, undecided(_APPROACH, ScaSettings.approach, why, made)]
    values = {"payment-product": NDCT, "payment-id": payment_id}
    started = prober.request("PA", path_values=values, psu=psu)
    approach = approach_of(started)
    if started is None or approach is None:
        seen = () if started is None else (started,)
        why = "the explicit start (PA) carried no SCA link"
        return [start, undecided(_APPROACH, ScaSettings.approach, why, *seen)]
    return [start, _approach(started, approach, psu)]


def _single_sca(prober: Prober, psu: Psu | None) -> Exchange | None:
    """A creation with PSU-Context, spec 4.2's single-SCA initiation, where the bank offers no
    explicit start: its answer when it carries an SCA link, else None. Its body is another
    payment's, so that a bank refusing logical duplicates does not refuse it as one."""
    body = factories.ndct_payment(_SEED + 1, kid=False)
    asked = replace(psu or prober.psu, context=True)
    made = prober.request("E16", path_values={"payment-product": NDCT}, body=body, psu=asked)
    return made if approach_of(made) is not None else None


_UNKNOWN_PSU = "the bank asked the probe's PSU, which it does not know, to identify first"


def _approach(exchange: Exchange, approach: str, psu: Psu | None) -> Decision:
    """The approach an answer shows (``approach``, or read from it when empty), unless it is a
    401 for a PSU the bank does not know."""
    approach = approach or approach_of(exchange) or ScaSettings.approach
    if exchange.status == 401 and psu is None:
        why = f"{_UNKNOWN_PSU}; name a PSU it knows in [psu.private] psu_id and discover again"
        return undecided(_APPROACH, ScaSettings.approach, why, exchange)
    return decided(_APPROACH, approach, exchange)
