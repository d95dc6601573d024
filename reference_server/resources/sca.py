"""The SCA redirect pages (spec 5 items 6 and 7): where the PSU is sent by ``scaRedirect``.

Reference-server routes, outside ``/v1`` and unsigned (a browser opens them), reachable from
other hosts (``loopback_only=False``) so that a TPP can run the flow against a sandbox elsewhere:

- ``GET /sca/{authorisationId}``: an HTML page saying what is authorised, with a form asking for
  the sandbox customer's ``customerNumber`` (spec 5 item 7) and two buttons, approve and cancel.
- ``POST /sca/{authorisationId}`` (form-encoded ``customerNumber``, ``action=approve|cancel``;
  a JSON object or query parameters with the same names are read too): finishes the authorisation
  (:func:`reference_server.services.sca_flow.complete`) and answers 303 to the TPP-Redirect-URI
  given when the authorisation started, with ``authorisationId`` and ``scaStatus`` added to its
  query (a cancelled one to the TPP-Nok-Redirect-URI, when it was given, and with
  ``error=access_denied``). A customerNumber that is unknown, or not the PSU the authorisation
  was started for, shows the page again with the error PSU_CREDENTIALS_INVALID and changes
  nothing.
- ``GET /sca/{authorisationId}/status``: the SCA status record (spec 2.5) as JSON; it is the
  ``self`` link of the record E2, PA and CA answer with (the contract has no such operation).
- ``GET /sca/{authorisationId}/oauth-authorization-server``: with the OAuth SCA approach
  (``--profile`` ``[sca] approach = "oauth"``), the metadata (RFC 8414) ``scaOAuth`` points at:
  the authorisation endpoint is the page above, the token endpoint the profile's. The page then
  takes an authorisation request (RFC 6749 4.1.1: ``response_type=code``, ``client_id``,
  ``redirect_uri``, ``state``, PKCE's ``code_challenge``), carries it through its form, and sends
  the PSU back with ``code`` and ``state`` (``error=access_denied`` when cancelled) instead of
  ``authorisationId`` and ``scaStatus``.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from urllib.parse import parse_qs

from reference_server.api import ApiError, Call, Response, Route
from reference_server.model import sandbox_data
from reference_server.model.payment_data import (
    AUTHORISATIONS,
    CONSENTS,
    Authorisation,
    Payment,
    ScaStatus,
    SubjectKind,
)
from reference_server.services import sca_flow
from reference_server.services.sca_flow import SCA_PREFIX

__all__ = ["ROUTES", "sca_page", "sca_status", "submit_sca"]

APPROVE = "approve"
CANCEL = "cancel"

_STYLE = (
    "body{font-family:sans-serif;max-width:36em;margin:2em auto;padding:0 1em}"
    ".error{color:#a00;border:1px solid #a00;padding:.5em}"
    "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.2em .5em}"
)


#: Payment ``transactionStatus`` codes (spec 2.6, spec 3) in words: their ISO 20022 names.
STATUS_NAMES = {
    "RCVD": "Received",
    "ACTC": "Accepted, technical validation",
    "ACCP": "Accepted, customer profile",
    "ACSP": "Accepted, settlement in process",
    "ACSC": "Accepted, settlement completed",
    "ACWC": "Accepted with change",
    "ACWP": "Accepted without posting",
    "PDNG": "Pending",
    "RJCT": "Rejected",
    "CANC": "Cancelled",
    "PART": "Partially accepted",
}
#: ``scaStatus`` codes (spec 3) in words.
SCA_STATUS_NAMES = {
    "RECEIVED": "received",
    "PSU_IDENTIFIED": "PSU identified",
    "PSU_AUTHENTICATED": "PSU authenticated",
    "SCA_METHOD_SELECTED": "method selected",
    "STARTED": "started",
    "FINALISED": "finalised (approved)",
    "FAILED": "failed (cancelled)",
    "EXEMPTED": "exempted",
}


def _status(code: str, names: Mapping[str, str]) -> str:
    name = names.get(code)
    return f"{html.escape(name)} (<code>{html.escape(code)}</code>)" if name else html.escape(code)


def _amount(payment: Payment) -> str:
    instructed = payment.request.get("instructedAmount") or {}
    return f"{instructed.get('amount', '?')} {instructed.get('currency', payment.currency)}"


def _authorisation(call: Call) -> Authorisation | None:
    return call.app.store.get(AUTHORISATIONS, call.path_params["authorisationId"])


def _describe(call: Call, authorisation: Authorisation) -> str:
    """What the PSU is asked to authorise, as HTML."""
    store = call.app.store
    if authorisation.subject_kind == SubjectKind.CONSENT:
        consent = store.get(CONSENTS, authorisation.subject_id)
        valid_until = html.escape(consent.valid_until) if consent is not None else "?"
        return (
            "<p>Give the TPP access to your account information (consent "
            f"<code>{html.escape(authorisation.subject_id)}</code>, valid until {valid_until}).</p>"
        )
    payments = sca_flow.subject_payments(store, authorisation)
    what = {
        SubjectKind.BASKET: "the payments of signing basket",
        SubjectKind.CANCELLATION: "the cancellation of payment",
    }.get(authorisation.subject_kind, "payment")
    rows = "".join(
        "<tr>"
        f"<td>{html.escape(str(p.request.get('creditorName', '')))}</td>"
        f'<td class="amount">{html.escape(_amount(p))}</td>'
        f"<td>{_status(p.status, STATUS_NAMES)}</td>"
        "</tr>"
        for p in payments
    )
    return (
        f"<p>Authorise {what} <code>{html.escape(authorisation.subject_id)}</code>:</p>"
        "<table><tr><th>creditor</th><th>amount</th><th>status</th></tr>"
        f"{rows}</table>"
    )


def _who(call: Call, authorisation: Authorisation) -> str:
    """Whom the page expects: the PSU the authorisation was started for, by name and sandbox
    customer number (spec 5 item 7), or any sandbox customer when the PSU was not known."""
    if authorisation.customer_id is None:
        return (
            '<p id="psu">The PSU was not known to the sandbox: identify with the customer number '
            "of any sandbox customer.</p>"
        )
    customer = call.app.store.get(sandbox_data.CUSTOMERS, authorisation.customer_id)
    if customer is None:
        return '<p id="psu">The PSU of this authorisation no longer exists in the sandbox.</p>'
    return (
        f'<p id="psu">Expected PSU: <strong>{html.escape(customer.name)}</strong>, sandbox '
        f"customer number <code>{html.escape(customer.customer_number)}</code>.</p>"
    )


def _outcomes(authorisation: Authorisation) -> str:
    """What Approve and Cancel will do (spec 3: what finishing an authorisation moves)."""
    back = " Either way you are sent back to the TPP."
    if authorisation.subject_kind == SubjectKind.CONSENT:
        approve = "the consent becomes valid: the TPP may read the accounts it names."
        cancel = "the consent is rejected: the TPP gets no access."
    elif authorisation.subject_kind == SubjectKind.CANCELLATION:
        approve = "the payment is Cancelled (CANC) and not executed."
        cancel = "the payment stays as it is and goes to execution."
    else:
        approve = (
            "the payments still Received (RCVD) become Accepted, technical validation (ACTC) "
            "and go to execution."
        )
        cancel = "the payments still Received (RCVD) are Rejected (RJCT) and not executed."
    return (
        f'<ul id="outcomes"><li><strong>Approve</strong>: {approve}</li>'
        f"<li><strong>Cancel</strong>: {cancel}</li></ul><p><small>{back}</small></p>"
    )


#: The parameters of an OAuth authorisation request (RFC 6749 4.1.1, RFC 7636 4.3) the page
#: carries through its form.
_OAUTH_PARAMETERS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "state",
    "scope",
    "code_challenge",
    "code_challenge_method",
)


def _oauth_request(call: Call, fields: Mapping[str, str] | None = None) -> dict[str, str]:
    """The OAuth authorisation request the PSU arrived with (empty without one)."""
    given = fields if fields is not None else {k: str(v) for k, v in call.query.items()}
    if given.get("response_type") != "code" or call.app.bank.oauth is None:
        return {}
    return {name: given[name] for name in _OAUTH_PARAMETERS if name in given}


def _page(
    call: Call,
    authorisation: Authorisation,
    *,
    error: str | None = None,
    status: int = 200,
    oauth: Mapping[str, str] | None = None,
) -> Response:
    action = f"{SCA_PREFIX}/{html.escape(authorisation.id)}"
    problem = f'<p class="error" id="error">{html.escape(error)}</p>' if error else ""
    carried = "".join(
        f'<input type="hidden" name="{html.escape(name)}" value="{html.escape(value)}">'
        for name, value in (oauth if oauth is not None else _oauth_request(call)).items()
    )
    if authorisation.status in ScaStatus.OPEN:
        form = (
            f"{_who(call, authorisation)}{_outcomes(authorisation)}"
            f'<form method="post" action="{action}">{carried}'
            '<p><label>Customer number <input name="customerNumber" autocomplete="off" '
            "autofocus></label></p>"
            f'<p><button name="action" value="{APPROVE}">Approve</button> '
            f'<button name="action" value="{CANCEL}">Cancel</button></p>'
            "</form>"
        )
    else:
        form = (
            "<p>This authorisation has ended: scaStatus "
            f'<strong id="scaStatus">{html.escape(authorisation.status)}</strong> '
            f"({html.escape(SCA_STATUS_NAMES.get(authorisation.status, ''))}).</p>"
        )
    text = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Sandbox SCA</title><style>{_STYLE}</style></head><body>"
        "<h1>Strong customer authentication (sandbox)</h1>"
        f"{problem}{_describe(call, authorisation)}{form}"
        "<p><small>Identify with the customerNumber of a sandbox customer "
        "(spec 5 item 7).</small></p></body></html>"
    )
    return Response.html(status, text)


def _not_found(call: Call) -> Response:
    name = html.escape(call.path_params["authorisationId"])
    return Response.html(
        404,
        "<!DOCTYPE html><html><head><title>Unknown authorisation</title></head><body>"
        f"<h1>RESOURCE_UNKNOWN</h1><p>No authorisation {name}.</p></body></html>",
    )


def sca_page(call: Call) -> Response:
    """``GET /sca/{authorisationId}``: the page the PSU is redirected to."""
    authorisation = _authorisation(call)
    if authorisation is None:
        return _not_found(call)
    return _page(call, authorisation)


def _form_fields(call: Call) -> dict[str, str]:
    """``customerNumber`` and ``action`` from the query, a JSON object body or a form body."""
    fields = {name: str(value) for name, value in call.query.items()}
    if isinstance(call.body, Mapping):
        fields.update({str(k): str(v) for k, v in call.body.items()})
    content_type = (call.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if content_type == "application/x-www-form-urlencoded" and call.request.body:
        parsed = parse_qs(call.request.body.decode("utf-8", "replace"), keep_blank_values=True)
        fields.update({name: values[0] for name, values in parsed.items() if values})
    return fields


def submit_sca(call: Call) -> Response:
    """``POST /sca/{authorisationId}``: approve or cancel, then back to the TPP (303)."""
    authorisation = _authorisation(call)
    if authorisation is None:
        return _not_found(call)
    if authorisation.status not in ScaStatus.OPEN:
        return _page(
            call, authorisation, error="SCA_INVALID: this authorisation has ended", status=409
        )
    fields = _form_fields(call)
    oauth = _oauth_request(call, fields)
    action = fields.get("action", "").strip().lower()
    if action not in (APPROVE, CANCEL):
        return _page(
            call,
            authorisation,
            error="FORMAT_ERROR: choose approve or cancel",
            status=400,
            oauth=oauth,
        )
    refused = _oauth_problem(call, authorisation, oauth)
    if refused is not None:
        return _page(call, authorisation, error=refused, status=400, oauth=oauth)
    store = call.app.store
    customer = None
    if action == APPROVE:
        number = fields.get("customerNumber", "").strip()
        customer = sandbox_data.customer_by_number(store, number) if number else None
        if customer is None or (
            authorisation.customer_id is not None and customer.id != authorisation.customer_id
        ):
            return _page(
                call,
                authorisation,
                error="PSU_CREDENTIALS_INVALID: the customer number is not the one of the PSU "
                "this authorisation was started for",
                oauth=oauth,
            )
    finished = sca_flow.complete(
        call.app, authorisation, approved=action == APPROVE, customer=customer
    )
    if oauth:
        return Response.redirect(_oauth_answer(call, finished, oauth, action == APPROVE), 303)
    nok = finished.status == ScaStatus.FAILED and bool(finished.nok_redirect_uri)
    location = sca_flow.final_redirect(
        finished, ignore_nok=nok and call.app.faulty("nok-redirect-ignored")
    )
    stranded = finished.subject_kind == SubjectKind.BASKET and call.app.faulty("sca-no-return")
    if location is None or stranded:
        return _page(call, finished)
    return Response.redirect(location, status=303)


def sca_status(call: Call) -> Response:
    """``GET /sca/{authorisationId}/status``: the SCA status record (spec 2.5) as JSON."""
    authorisation = _authorisation(call)
    if authorisation is None:
        raise ApiError(
            404,
            "RESOURCE_UNKNOWN",
            f"no authorisation {call.path_params['authorisationId']!r}",
        )
    return Response.json(
        200,
        sca_flow.sca_status_document(
            authorisation, decoupled=call.app.bank.sca_decoupled, oauth=call.app.bank.sca_oauth
        ),
    )


def _oauth_problem(
    call: Call, authorisation: Authorisation, oauth: Mapping[str, str]
) -> str | None:
    """Why the OAuth authorisation request cannot be answered (None: it can): the bank's own
    client, back to the TPP-Redirect-URI the authorisation was started with."""
    style = call.app.bank.oauth
    if not oauth or style is None:
        return None
    if oauth.get("client_id") != style.client_id:
        return "invalid_request: unknown client_id"
    if not oauth.get("redirect_uri") or oauth["redirect_uri"] != authorisation.redirect_uri:
        return "invalid_request: redirect_uri is not the TPP-Redirect-URI of the authorisation"
    if "code_challenge" in oauth and oauth.get("code_challenge_method", "plain") != "S256":
        return "invalid_request: code_challenge_method must be S256"
    return None


def _oauth_answer(
    call: Call, authorisation: Authorisation, oauth: Mapping[str, str], approved: bool
) -> str:
    """Where the PSU goes back: the redirect_uri with ``code`` (approved) or
    ``error=access_denied``, and the ``state`` it came with (RFC 6749 4.1.2)."""
    state = {"state": oauth["state"]} if "state" in oauth else {}
    if not approved:
        return sca_flow.oauth_redirect(oauth["redirect_uri"], error="access_denied", **state)
    code = call.app.tokens.code(
        oauth["client_id"], oauth["redirect_uri"], oauth.get("code_challenge"), authorisation.id
    )
    return sca_flow.oauth_redirect(oauth["redirect_uri"], code=code, **state)


def oauth_metadata(call: Call) -> Response:
    """``GET /sca/{authorisationId}/oauth-authorization-server``: the metadata of the
    authorisation server ``scaOAuth`` names (RFC 8414; paths on this server)."""
    authorisation = _authorisation(call)
    style = call.app.bank.oauth
    if authorisation is None or style is None or not call.app.bank.sca_oauth:
        raise ApiError(404, "RESOURCE_UNKNOWN", "no OAuth authorisation server here")
    return Response.json(
        200,
        {
            "issuer": f"{SCA_PREFIX}/{authorisation.id}",
            "authorization_endpoint": f"{SCA_PREFIX}/{authorisation.id}",
            "token_endpoint": style.token_path,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
        },
    )


ROUTES = (
    Route("GET", f"{SCA_PREFIX}/{{authorisationId}}", sca_page, loopback_only=False),
    Route("POST", f"{SCA_PREFIX}/{{authorisationId}}", submit_sca, loopback_only=False),
    Route("GET", f"{SCA_PREFIX}/{{authorisationId}}/status", sca_status, loopback_only=False),
    Route(
        "GET",
        f"{SCA_PREFIX}/{{authorisationId}}/{sca_flow.OAUTH_METADATA}",
        oauth_metadata,
        loopback_only=False,
    ),
)
