"""Error answers in the spec 7 form, in one place.

Every refusal of the server (a handler's :class:`~reference_server.api.ApiError`, a routing or
HTTP-level failure, an unexpected exception) becomes the spec 7 body ``{id, system, status, code,
message}``; payment and basket operations add ``tppMessages`` (spec 2.6; spec 7 lists the codes).
The ``html-errors`` fault answers an HTML page instead, which the suite must notice; under the
``tpp-message-code-outside-list`` fault every ``tppMessages`` entry carries the error's own code,
also where spec 7's list for ``tppMessages`` lacks it (``SIGNATURE_INVALID``, ``RESOURCE_BLOCKED``).

The permissive reading (``model/readings.py``) changes the body's members: ``minimal-error-bodies``
keeps ``code`` and ``message`` where spec 7 shows the operation's errors or a rule names a code
(E1, E2, E16-E18) and ``message`` alone elsewhere; ``no-tpp-messages`` drops ``tppMessages`` from
the payment operations; ``basket-own-codes`` writes a basket error's own code into its
``tppMessages``. ``_links`` (the 401 ``scaRedirect``) always stays.
"""

from __future__ import annotations

import html as html_escape
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from reference_server.api import ApiError, Response

if TYPE_CHECKING:
    from conformance.contract import Operation
    from reference_server.api import ServerState

__all__ = ["FULL", "SYSTEM", "ErrorForm", "error_document", "form_for", "render"]

#: The ``system`` field of every error body (spec 7: "name of the reporting system").
SYSTEM = "psd2-reference-server"

#: The operations whose errors keep their ``code`` under ``minimal-error-bodies``: spec 7 shows
#: E2's and E17's statuses and codes, E16 and E18 send their errors "listed in part 7", and rule 1
#: names E1's code (REFERENCE_MIX_INVALID).
_CODED = frozenset({"E1", "E2", "E16", "E17", "E18"})


@dataclass(frozen=True)
class ErrorForm:
    """The members of an error body: the spec 7 ones (``id``, ``system``, ``status``) beside
    ``code`` and ``message``, ``code`` at all, ``tppMessages`` (payments and baskets), and whose
    code the ``tppMessages`` carry (the one spec 7's list allows, or the error's own)."""

    spec7: bool = True
    code: bool = True
    tpp_messages: bool = False
    own_codes: bool = False
    #: The fault ``tpp-message-code-outside-list``: every ``tppMessages`` entry carries the
    #: error's own code, also where spec 7's list lacks it.
    every_own_code: bool = False


#: The bundled server's form of an operation outside the payment side.
FULL = ErrorForm()


def form_for(app: ServerState, operation: Operation | None, *, payment_style: bool) -> ErrorForm:
    """The error body form for a request of ``operation`` (None: no operation matched)."""
    op_id = operation.id if operation is not None else None
    tpp_messages = payment_style
    if operation is not None and operation.family == "payments":
        tpp_messages = tpp_messages and not app.reads("no-tpp-messages")
    minimal = app.reads("minimal-error-bodies")
    return ErrorForm(
        spec7=not minimal,
        code=not minimal or op_id in _CODED,
        tpp_messages=tpp_messages,
        own_codes=operation is not None
        and operation.family == "baskets"
        and app.reads("basket-own-codes"),
        # asked only where it changes the answer (an answer with tppMessages): the self-check
        # runs the fault on the scenarios that asked it
        every_own_code=tpp_messages and app.faulty("tpp-message-code-outside-list"),
    )


def error_document(
    error: ApiError, *, payment_style: bool, form: ErrorForm | None = None
) -> dict[str, Any]:
    """The JSON error body for ``error`` (``payment_style``: with ``tppMessages``)."""
    form = form or ErrorForm(tpp_messages=payment_style)
    document: dict[str, Any] = {}
    if form.spec7:
        document.update(id=str(uuid.uuid4()), system=SYSTEM, status=error.status)
    if form.code:
        document["code"] = error.code
    if error.message is not None or not document:
        document["message"] = error.message or error.code
    if form.tpp_messages:
        messages = error.tpp_messages()
        if form.every_own_code:
            messages = tuple(replace(message, code=error.code) for message in messages)
        elif form.own_codes and not error.messages:
            messages = (replace(messages[0], code=error.code),)
        document["tppMessages"] = [message.to_json() for message in messages]
    if error.links is not None:
        document["_links"] = dict(error.links)
    return document


def render(
    error: ApiError,
    *,
    payment_style: bool = False,
    html: bool = False,
    form: ErrorForm | None = None,
) -> Response:
    """The answer for ``error``: JSON (spec 7), or an HTML page under the ``html-errors`` fault."""
    if html:
        page = (
            "<!DOCTYPE html><html><head><title>Error</title></head><body>"
            f"<h1>{error.status} {html_escape.escape(error.code)}</h1>"
            f"<p>{html_escape.escape(error.message or '')}</p></body></html>"
        )
        return Response.html(error.status, page, error.headers)
    document = error_document(error, payment_style=payment_style, form=form)
    return Response.json(error.status, document, error.headers)
