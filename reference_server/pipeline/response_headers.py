"""The response headers a certifier checks, on a contract operation's answer (our readings, the
``RH-*`` rows of ``schemas/rules.json``; spec 4.2 shows request headers only).

- ``ASPSP-SCA-Approach`` on the answers that start or lead to an authorisation (the operations of
  ``RH-sca-approach-named``: a 2xx, or spec 5 item 6's 401 with ``_links.scaRedirect``): the
  bank's approach, ``REDIRECT`` (OAuth too: Berlin Group subsumes it) or ``DECOUPLED``. The fault
  ``sca-approach-header-wrong`` names ``EMBEDDED``, which this server never runs.
- ``Location`` is set by the handlers of the creations (``RH-location-on-creation``); the fault
  ``location-missing`` takes it off every 2xx answer.
- ``X-Request-ID`` is echoed by the transport on every answer (``transport/http.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.contract import Operation
    from reference_server.api import Response, ServerState

__all__ = ["SCA_APPROACH", "SCA_APPROACH_RULE", "sca_approach", "stamp"]

#: The response header naming the SCA approach (Berlin Group NextGenPSD2).
SCA_APPROACH = "ASPSP-SCA-Approach"
#: The rule row whose operations carry it.
SCA_APPROACH_RULE = "RH-sca-approach-named"
#: The links that lead the PSU to an authorisation (a 401 carrying one is spec 5 item 6's form).
_SCA_LINKS = frozenset({"scaRedirect", "scaOAuth", "scaStatus", "startAuthorisation"})


def sca_approach(app: ServerState) -> str:
    """The approach this bank runs, as Berlin Group names it."""
    if app.faulty("sca-approach-header-wrong"):
        return "EMBEDDED"
    return "DECOUPLED" if app.bank.sca_decoupled else "REDIRECT"


def _leads_to_sca(response: Response) -> bool:
    if 200 <= response.status < 300:
        return True
    document = response.document
    links = document.get("_links") if isinstance(document, Mapping) else None
    return response.status == 401 and isinstance(links, Mapping) and bool(_SCA_LINKS & set(links))


def stamp(app: ServerState, operation: Operation | None, response: Response) -> Response:
    """``response`` to ``operation`` with the headers above (the answer as it is elsewhere)."""
    if operation is None:
        return response
    if (
        200 <= response.status < 300
        and any(name.lower() == "location" for name, _ in response.headers)
        and app.faulty("location-missing")
    ):
        kept = tuple(pair for pair in response.headers if pair[0].lower() != "location")
        response = replace(response, headers=kept)
    if operation.id in app.contract.rule(SCA_APPROACH_RULE).operations and _leads_to_sca(response):
        response = response.with_headers((SCA_APPROACH, sca_approach(app)))
    return response
