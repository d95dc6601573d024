"""SCA by redirect: authorisation records, the PSU's page and its completion."""
import datetime as dt
import hashlib
import hmac
import html
import secrets
import urllib.parse

from common import ApiError, new_id, now, today, link
from store import LOCK, AUTHS

SCA_TTL = dt.timedelta(minutes=15)
MAX_ATTEMPTS = 3
OTP_KEY = secrets.token_bytes(32)
PUBLIC_URL = {"base": "http://localhost"}


def otp_for(auth):
    return str(int(hmac.new(OTP_KEY, auth["id"].encode(), hashlib.sha256).hexdigest()[:8], 16) % 1000000).zfill(6)


def start(world, kind, target_id, self_href, redirect_uri, psu_id, extra=None):
    a = {"id": new_id(), "world": world, "kind": kind, "target": target_id, "scaStatus": "STARTED",
         "token": secrets.token_urlsafe(24), "created": now(), "attempts": 0, "redirectUri": redirect_uri,
         "psuId": psu_id, "selfHref": f"{self_href}/authorisations", "extra": extra or {}}
    a["selfHref"] = f"{self_href}/authorisations/{a['id']}"
    AUTHS[a["id"]] = a
    return a


def redirect_url(a):
    return f"{PUBLIC_URL['base']}/sca/{a['id']}?token={a['token']}"


def refresh(a):
    """Expire a started authorisation after SCA_TTL."""
    if a["scaStatus"] == "STARTED" and now() - a["created"] > SCA_TTL:
        a["scaStatus"] = "FAILED"
        a["failure"] = "SCA_EXPIRED"
    return a["scaStatus"]


def started_links(a):
    return {"self": link(a["selfHref"]), "scaRedirect": link(redirect_url(a))}


def auth_response(a):
    return 201, {"scaStatus": a["scaStatus"], "_links": started_links(a)}, {"Location": a["selfHref"]}


def in_progress_error(a):
    return ApiError(401, "SCA_INVALID", "an authorisation is already in progress; the PSU must authenticate at scaRedirect",
                    links={"scaRedirect": link(redirect_url(a))})


def check_restart(auth_ids):
    """Common rule for starting an authorisation on a resource that may already have some."""
    for aid in auth_ids:
        a = AUTHS[aid]
        st = refresh(a)
        if st == "STARTED":
            raise in_progress_error(a)
        if st == "FINALISED":
            raise ApiError(400, "RESOURCE_BLOCKED", "the resource is already authorised")


def get_auth(auth_ids, authorisationId):
    if authorisationId not in auth_ids:
        raise ApiError(404, "RESOURCE_UNKNOWN", "authorisation not found")
    a = AUTHS[authorisationId]
    refresh(a)
    return 200, {"scaStatus": a["scaStatus"], "_links": {"self": link(a["selfHref"])}}, {}


# ------------------------------------------------------------------ PSU pages
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Independent-2 Bank - SCA</title></head>
<body><h1>Confirm with your code device</h1><p>{what}</p>{msg}
<p>Sandbox code device shows: <output id="otp">{otp}</output></p>
<form method="post" action="/sca/{aid}">
<input type="hidden" name="token" value="{token}">
<label>Customer number <input name="customerNumber" autocomplete="off"></label>
<label>One-time code <input name="otp" autocomplete="off"></label>
<button name="action" value="approve">Approve</button> <button name="action" value="deny">Deny</button>
</form></body></html>"""

DONE = """<!doctype html><html><head><meta charset="utf-8"><title>SCA {status}</title></head>
<body><h1 id="scaStatus" data-sca-status="{status}">{status}</h1><p>{msg}</p><a href="{uri}">Return to the provider</a></body></html>"""


def _describe(a):
    w = a["world"]
    if a["kind"] == "payment":
        p = w.payments[a["target"]]
        return f"Payment of {p['amountStr']} {p['currency']} to {html.escape(p['body']['creditorName'])}"
    if a["kind"] == "basket":
        return f"Signing basket with {len(w.baskets[a['target']]['paymentIds'])} payment(s)"
    return "Access to your account information"


def _lookup(aid, token):
    a = AUTHS.get(aid)
    if not a or not token or not hmac.compare_digest(a["token"], token):
        return None
    return a


def page_get(aid, query):
    with LOCK:
        a = _lookup(aid, query.get("token"))
        if not a:
            return 404, "text/html", "<h1>Unknown or invalid authorisation link</h1>", {}
        st = refresh(a)
        if st != "STARTED":
            return 410, "text/html", DONE.format(status=st, msg="This authorisation is no longer open.",
                                                 uri=html.escape(a["redirectUri"])), {}
        return 200, "text/html", PAGE.format(what=_describe(a), msg="", otp=otp_for(a), aid=a["id"],
                                             token=html.escape(a["token"])), {}


def page_post(aid, form):
    import completion
    with LOCK:
        a = _lookup(aid, form.get("token"))
        if not a:
            return 404, "text/html", "<h1>Unknown or invalid authorisation link</h1>", {}
        st = refresh(a)
        if st != "STARTED":
            return 410, "text/html", DONE.format(status=st, msg="This authorisation is no longer open.",
                                                 uri=html.escape(a["redirectUri"])), {}
        if form.get("action") == "deny":
            completion.fail(a, "PSU denied")
            return _finish(a, "You refused the request.")
        if form.get("action") != "approve":
            return 400, "text/html", "<h1>action must be approve or deny</h1>", {}
        w = a["world"]
        cust = w.customer_by_number(form.get("customerNumber", ""))
        if cust is None or not hmac.compare_digest(form.get("otp", ""), otp_for(a)):
            a["attempts"] += 1
            if a["attempts"] >= MAX_ATTEMPTS:
                completion.fail(a, "too many failed attempts")
                return _finish(a, "Too many failed attempts.", 403)
            left = MAX_ATTEMPTS - a["attempts"]
            return 401, "text/html", PAGE.format(what=_describe(a), otp=otp_for(a), aid=a["id"],
                                                 token=html.escape(a["token"]),
                                                 msg=f"<p id='error'>Wrong customer number or code; {left} attempt(s) left.</p>"), {}
        msg = completion.complete(a, cust)
        return _finish(a, msg)


def _finish(a, msg, status=303):
    uri = a["redirectUri"]
    body = DONE.format(status=a["scaStatus"], msg=html.escape(msg), uri=html.escape(uri))
    return status, "text/html", body, ({"Location": uri, "X-SCA-Status": a["scaStatus"]} if status == 303
                                       else {"X-SCA-Status": a["scaStatus"]})
