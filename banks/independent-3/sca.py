"""Authorisation resources and the simulated PSU-facing SCA (redirect) page."""
import datetime as dt
import html
import json
import urllib.parse

from common import ApiError, iso, link, new_id, now, today

SCA_TTL = dt.timedelta(minutes=30)
OPEN = ("RECEIVED", "PSU_IDENTIFIED", "STARTED")


def redirect_url(ctx, a):
    return f"{ctx.base_url}/sca/{a['id']}"


def start(ctx, kind, target_id, target):
    a = {"id": new_id(), "kind": kind, "targetId": target_id, "tpp": ctx.tpp, "scaStatus": "STARTED",
         "created": now(), "psuId": ctx.headers.get("psu-id") or ctx.headers.get("x-psu-identity"),
         "redirectUri": ctx.headers.get("tpp-redirect-uri") or target.get("redirectUri"),
         "preferBiometrics": (ctx.headers.get("tpp-redirect-preferred") or "true").lower() == "false",
         "customerNumber": None}
    ctx.store.authorisations.add(a)
    target["authorisations"].append(a["id"])
    return a


def render(ctx, a, self_path):
    out = {"scaStatus": a["scaStatus"], "authorisationId": a["id"], "_links": {"self": link(self_path)}}
    if a["scaStatus"] in OPEN:
        out["_links"]["scaRedirect"] = link(redirect_url(ctx, a))
    return out


def _expire(store, a):
    if a["scaStatus"] in OPEN and now() - a["created"] > SCA_TTL:
        _finish(store, a, False)
        return True
    return False


def _describe(store, a):
    if a["kind"] == "payment":
        p = store.payments.get(a["targetId"])
        amt = p["body"]["instructedAmount"]
        return f"Payment of {amt['amount']} {amt['currency']} to {p['body'].get('creditorName', '')}"
    if a["kind"] == "basket":
        return f"Signing basket of {len(store.baskets.get(a['targetId'])['paymentIds'])} payments"
    return "Access to your accounts (consent)"


def _finish(store, a, approved, customer=None):
    a["scaStatus"] = "FINALISED" if approved else "FAILED"
    a["finishedAt"] = now()
    if a["kind"] in ("payment", "basket"):
        pids = [a["targetId"]] if a["kind"] == "payment" else store.baskets.get(a["targetId"])["paymentIds"]
        for pid in pids:
            p = store.payments.get(pid)
            if p["status"] != "RCVD":
                continue  # the basket operation is not atomic: already cancelled/rejected payments are skipped
            if not approved:
                p["status"] = "RJCT"
            else:
                ex = p["executionDate"]
                p["status"] = "PDNG" if (ex and ex > today() and p["service"] == "payments") else "ACTC"
            p["updated"] = now()
    else:
        c = store.consents.get(a["targetId"])
        if not approved:
            c["consentStatus"] = "rejected"
            return
        visible = store.visible_accounts(customer)
        wanted = c["requestedAccounts"]
        if wanted:
            chosen = [x for x in visible if x["iban"] in wanted or x["bban"] in wanted or x["id"] in wanted]
        else:
            chosen = visible
        c.update(consentStatus="valid", scaAt=now(), customerId=customer["customerId"],
                 accountIds=[x["id"] for x in chosen])


def complete(store, aid, customer_number, approve=True):
    """The PSU's action on the SCA page. Returns the authorisation."""
    with store.lock:
        a = store.authorisations.get(aid)
        if not a:
            raise ApiError(404, "SCA_NOT_FOUND", "authorisation not found")
        if _expire(store, a):
            raise ApiError(400, "SCA_EXPIRED", "the authorisation expired (30 minutes); start a new one")
        if a["scaStatus"] not in OPEN:
            raise ApiError(400, "SCA_INVALID", f"authorisation is already {a['scaStatus']}")
        if not approve:
            _finish(store, a, False)
            return a
        customer = store.customer_by_number((customer_number or "").strip())
        if not customer:
            raise ApiError(400, "PSU_CREDENTIALS_INVALID",
                           "unknown customerNumber; use the customerNumber of a sandbox customer")
        a["customerNumber"] = customer["customerNumber"]
        if a["kind"] == "payment":
            p = store.payments.get(a["targetId"])
            d = p["body"].get("debtorAccount", {})
            acc = store.account_by_ref(bban=d.get("bban"), iban=d.get("iban"))
            if acc and acc not in store.visible_accounts(customer):
                _finish(store, a, False)
                raise ApiError(400, "SCA_INVALID", "the PSU has no payment rights on the debtor account; "
                               "the payment is rejected")
        _finish(store, a, True, customer)
        return a


def _redirect_target(a):
    uri = a.get("redirectUri")
    if not uri:
        return None
    sep = "&" if "?" in uri else "?"
    return uri + sep + urllib.parse.urlencode({"authorisationId": a["id"], "scaStatus": a["scaStatus"]})


# ---------------- WSGI-level handlers (no TPP signature: this is the PSU's browser) ----------------

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Fjordbank sandbox BankID</title></head>
<body><h1>Fjordbank sandbox &ndash; confirm with BankID</h1><p>{what}</p><p>Status: {status}</p>
<form method="post"><label>customerNumber <input name="customerNumber" value=""></label>
<button name="action" value="approve">Approve</button><button name="action" value="reject">Reject</button>
</form><p>Automated clients: POST JSON {{"customerNumber": "...", "action": "approve"}} to this URL.</p></body></html>"""


def page(store, aid):
    a = store.authorisations.get(aid)
    if not a:
        return 404, "text/html; charset=utf-8", "<h1>Unknown authorisation</h1>", {}
    _expire(store, a)
    body = PAGE.format(what=html.escape(_describe(store, a)), status=html.escape(a["scaStatus"]))
    return 200, "text/html; charset=utf-8", body, {}


def submit(store, aid, content_type, raw, accept):
    if "json" in (content_type or ""):
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            data = {}
    else:
        data = {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode("utf-8", "replace")).items()}
    action = str(data.get("action", "approve")).lower()
    want_json = "json" in (content_type or "") or "application/json" in (accept or "")
    try:
        a = complete(store, aid, data.get("customerNumber") or data.get("psuId"), action != "reject")
    except ApiError as e:
        if want_json:
            return e.status, "application/json", json.dumps(e.body()), {}
        return e.status, "text/html; charset=utf-8", f"<h1>{html.escape(e.code)}</h1><p>{html.escape(e.message or '')}</p>", {}
    target = _redirect_target(a)
    if want_json:
        return 200, "application/json", json.dumps({"authorisationId": a["id"], "scaStatus": a["scaStatus"],
                                                    "redirectUri": target, "completedAt": iso(now())}), {}
    if target:
        return 302, "text/html; charset=utf-8", "", {"Location": target}
    return 200, "text/html; charset=utf-8", f"<h1>{a['scaStatus']}</h1>", {}
