"""Error answers in the spec 7 form, in one place.

Every refusal of the server (a handler's :class:`~reference_server.api.ApiError`, a routing or
HTTP-level failure, an unexpected exception) becomes the spec 7 body ``{id, system, status, code,
message}``; payment and basket operations add ``tppMessages`` (spec 2.6; spec 7 lists the codes).
The ``html-errors`` fault answers an HTML page instead, which the suite must notice.
"""

from __future__ import annotations

import html as html_escape
import uuid
from typing import Any

from reference_server.api import ApiError, Response

__all__ = ["SYSTEM", "error_document", "render"]

#: The ``system`` field of every error body (spec 7: "name of the reporting system").
SYSTEM = "psd2-reference-server"


def error_document(error: ApiError, *, payment_style: bool) -> dict[str, Any]:
    """The JSON error body for ``error``."""
    document: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "system": SYSTEM,
        "status": error.status,
        "code": error.code,
    }
    if error.message is not None:
        document["message"] = error.message
    if payment_style:
        document["tppMessages"] = [message.to_json() for message in error.tpp_messages()]
    if error.links is not None:
        document["_links"] = dict(error.links)
    return document


def render(error: ApiError, *, payment_style: bool = False, html: bool = False) -> Response:
    """The answer for ``error``: JSON (spec 7), or an HTML page under the ``html-errors`` fault."""
    if html:
        page = (
            "<!DOCTYPE html><html><head><title>Error</title></head><body>"
            f"<h1>{error.status} {html_escape.escape(error.code)}</h1>"
            f"<p>{html_escape.escape(error.message or '')}</p></body></html>"
        )
        return Response.html(error.status, page, error.headers)
    return Response.json(
        error.status, error_document(error, payment_style=payment_style), error.headers
    )
