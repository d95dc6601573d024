"""The SCA link an answer gives (``scaRedirect``, or ``scaStatus`` when SCA is decoupled) and the
verdicts when an SCA step ends badly: blocked on the suite's side, failed on the target's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from conformance.bankside.sca.base import ScaError, ScaRedirectBroken
from conformance.checks import (
    ConformanceFailure,
    SetUpFailure,
    check_json_body,
    check_sca_redirect,
)

if TYPE_CHECKING:
    from conformance.exchange import Exchange
    from conformance.profile import ScaSettings

__all__ = ["require_sca_link", "sca_blocked", "sca_failure", "sca_link"]


def sca_link(document: object, settings: ScaSettings) -> str | None:
    """The link an answer gives the SCA step: ``scaRedirect`` (redirect), ``scaStatus``
    (decoupled: the link polled; an SCA status record's ``self`` too), or ``scaOAuth`` (the
    OAuth approach: the authorisation server's metadata), None when it has none."""
    if not isinstance(document, Mapping):
        return None
    links = document.get("_links")
    if not isinstance(links, Mapping):
        return None
    # An SCA status record's own ``self`` is the authorisation; a payment's is the payment.
    record = "scaStatus" in document
    names = ("scaStatus", "self") if record else ("scaStatus",)
    if not settings.decoupled:
        names = ("scaOAuth",) if settings.oauth else ("scaRedirect",)
    for name in names:
        link = links.get(name)
        href = link.get("href") if isinstance(link, Mapping) else None
        if isinstance(href, str) and href:
            return href
    return None


def require_sca_link(
    exchange: Exchange, settings: ScaSettings, *, spec: str = "spec 5 item 6"
) -> str:
    """The SCA link of a started authorisation; its absence fails the scenario.

    With a redirect that is spec 5 item 6's ``_links.scaRedirect``; with decoupled SCA the
    ``scaStatus`` link the TPP polls (the profile's choice, not the spec's).
    """
    if not settings.decoupled and not settings.oauth:
        return check_sca_redirect(exchange, spec=spec)
    link = sca_link(check_json_body(exchange, spec=spec), settings)
    if link is not None:
        return link
    if settings.oauth:
        raise ConformanceFailure(
            "the answer has no _links.scaOAuth link to the bank's OAuth authorisation server",
            spec=spec,
            sent=exchange,
            expected="the OAuth SCA approach ([sca] approach): the answer carries "
            "_links.scaOAuth (the authorisation server's metadata)",
        )
    raise ConformanceFailure(
        "the answer has no _links.scaStatus link to follow the decoupled SCA",
        spec=spec,
        sent=exchange,
        expected="decoupled SCA ([sca] approach): the answer carries _links.scaStatus "
        "(or self) for the TPP to poll",
    )


def sca_blocked(error: ScaError, exchanges: Sequence[Exchange]) -> SetUpFailure:
    """An SCA step that could not be completed on the suite's side (a command that failed, a
    decoupled authorisation nobody decided in time): the scenario is blocked, not failed."""
    return SetUpFailure(
        f"Set-up failed: SCA: {error.message}",
        spec="spec 5 item 6",
        sent=exchanges[-1] if exchanges else None,
        expected="the PSU completes SCA ([sca] in the profile)",
    )


def sca_failure(error: ScaRedirectBroken, exchanges: Sequence[Exchange]) -> ConformanceFailure:
    """A redirect that did not bring the PSU back as spec 5.6 says, as a failure of the target
    (the last exchange of the redirect is the one judged)."""
    last = exchanges[-1] if exchanges else None
    return ConformanceFailure(
        f"SCA redirect: {error.message}",
        spec="spec 5 item 6",
        sent=last,
        related=tuple(exchanges[-4:-1]),
        expected="the PSU completes SCA at the scaRedirect link and is sent back to the "
        "TPP-Redirect-URI",
        quotes=("5-6",),
    )
