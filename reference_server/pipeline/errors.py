"""Error answers in the spec 7 form, in one place.

Every refusal of the server (a handler's :class:`~reference_server.api.ApiError`, a routing or
HTTP-level failure, an unexpected exception) becomes the spec 7 body ``{id, system, status, code,
message}``; payment and basket operations add ``tppMessages`` (spec 2.6; spec 7 lists the codes).
The ``html-errors`` fault answers an HTML page instead, which the suite must notice; under the
``tpp-message-code-outside-list`` fault every ``tppMessages`` entry carries the error's own code,
also where spec 7's list for ``tppMessages`` lacks it (``SIGNATURE_INVALID``, ``RESOURCE_BLOCKED``).
"""

from __future__ import annotations

import html as html_escape
import uuid
from typing import Any

from reference_server.api import ApiError, Response

__all__ = ["SYSTEM", "error_document", "render"]

#: The ``system`` field of every error body (spec 7: "name of the reporting system").
SYSTEM = "psd2-reference-server"


def error_document(
    error: ApiError, *, payment_style: bool, own_codes: bool = False
) -> dict[str, Any]:
    """The JSON error body for ``error``; ``own_codes``: its ``tppMessages`` carry the error's
    own code instead of the code spec 7 allows there (the fault)."""
    document: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "system": SYSTEM,
        "status": error.status,
        "code": error.code,
    }
    if error.message is not None:
        document["message"] = error.message
    if payment_style:
        messages = [message.to_json() for message in error.tpp_messages()]
        if own_codes:
            messages = [{**message, "code": error.code} for message in messages]
        document["tppMessages"] = messages
    if error.links is not None:
        document["_links"] = dict(error.links)
    return document


def render(
    error: ApiError, *, payment_style: bool = False, html: bool = False, own_codes: bool = False
) -> Response:
    """The answer for ``error``: JSON (spec 7), or an HTML page under the ``html-errors`` fault;
    ``own_codes``: see :func:`error_document`."""
    if html:
        page = (
            "<!DOCTYPE html><html><head><title>Error</title></head><body>"
            f"<h1>{error.status} {html_escape.escape(error.code)}</h1>"
            f"<p>{html_escape.escape(error.message or '')}</p></body></html>"
        )
        return Response.html(error.status, page, error.headers)
    return Response.json(
        error.status,
        error_document(error, payment_style=payment_style, own_codes=own_codes),
        error.headers,
    )
