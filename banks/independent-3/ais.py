"""Account information: house consent model, accounts, balances, transactions list, transaction details (E8)."""
import datetime as dt

from common import (ApiError, amount_str, boolean, date_field, fmt, int32, iso, link, new_id, now,
                    parse_query_date, parse_query_int, today)
from payments import _psu_context_checks
import sca

MAX_VALIDITY = dt.timedelta(days=180)        # SCA renewal every 180 days
UNATTENDED_CONSENT_AGE = dt.timedelta(days=90)
HISTORY_WITHOUT_SCA = dt.timedelta(days=90)
FRESH_SCA = dt.timedelta(minutes=60)
PAGE_SIZE = 200


# ---------------- consents ----------------

def _consent(ctx, cid=None):
    c = ctx.store.consents.get(cid or ctx.params["consentId"])
    if not c or c["tpp"] != ctx.tpp:
        raise ApiError(404 if cid is None else 403, "CONSENT_UNKNOWN", "consent not found for this TPP")
    _refresh(c)
    return c


def _refresh(c):
    if c["consentStatus"] == "valid":
        if today() > c["validUntil"] or now() - c["scaAt"] > MAX_VALIDITY:
            c["consentStatus"] = "expired"


def render_consent(ctx, c):
    base = f"/v1/consents/{c['consentId']}"
    out = {"consentId": c["consentId"], "consentStatus": c["consentStatus"], "validUntil": c["validUntil"].isoformat(),
           "frequencyPerDay": c["frequencyPerDay"], "recurringIndicator": c["recurringIndicator"],
           "access": {"accounts": c["requestedAccounts"]} if c["requestedAccounts"] else {"allAccounts": True},
           "_links": {"self": link(base, "GET", "DELETE"), "status": link(base + "/status")}}
    if c["consentStatus"] == "valid":
        out["accounts"] = list(c["accountIds"])
        out["lastScaAt"] = iso(c["scaAt"])
        out["_links"]["accounts"] = link("/v1/accounts")
    a = ctx.store.authorisations.get(c["authorisations"][-1]) if c["authorisations"] else None
    if a and a["scaStatus"] in sca.OPEN:
        out["_links"]["scaRedirect"] = link(sca.redirect_url(ctx, a))
        out["_links"]["scaStatus"] = link(f"{base}/authorisations/{a['id']}")
    return out


def create_consent(ctx):
    body = ctx.json_object(allow_empty=True)
    access = body.get("access") or {}
    if not isinstance(access, dict):
        raise fmt("$.access", "must be an object")
    accounts = access.get("accounts") or []
    if not isinstance(accounts, list) or any(not isinstance(x, str) for x in accounts):
        raise fmt("$.access.accounts", "must be an array of account ids, IBANs or BBANs")
    vu = date_field(body, "validUntil", "$") or (today() + dt.timedelta(days=180))
    if vu < today():
        raise fmt("$.validUntil", "must not be in the past")
    if vu > today() + MAX_VALIDITY:
        vu = today() + MAX_VALIDITY
    freq = int32(body, "frequencyPerDay", "$", required=False, minimum=1) or 4
    rec = boolean(body, "recurringIndicator", "$")
    _psu_context_checks(ctx)
    c = {"consentId": new_id(), "tpp": ctx.tpp, "consentStatus": "received", "validUntil": vu,
         "frequencyPerDay": freq, "recurringIndicator": True if rec is None else rec, "requestedAccounts": accounts,
         "accountIds": [], "scaAt": None, "created": now(), "authorisations": [],
         "redirectUri": ctx.headers.get("tpp-redirect-uri")}
    with ctx.store.lock:
        ctx.store.consents.add(c, key="consentId")
        sca.start(ctx, "consent", c["consentId"], c)
    return 201, render_consent(ctx, c), {"Location": f"/v1/consents/{c['consentId']}"}


def get_consent(ctx):
    return 200, render_consent(ctx, _consent(ctx))


def get_consent_status(ctx):
    return 200, {"consentStatus": _consent(ctx)["consentStatus"]}


def delete_consent(ctx):
    c = _consent(ctx)
    c["consentStatus"] = "terminatedByTpp"
    return 204, None


def start_consent_authorisation(ctx):
    with ctx.store.lock:
        c = _consent(ctx)
        if c["consentStatus"] not in ("received", "valid", "expired"):
            raise ApiError(400, "CONSENT_INVALID", f"consent is {c['consentStatus']}")
        a = sca.start(ctx, "consent", c["consentId"], c)
    path = f"/v1/consents/{c['consentId']}/authorisations/{a['id']}"
    return 201, sca.render(ctx, a, path), {"Location": path}


def get_consent_authorisation(ctx):
    c = _consent(ctx)
    aid = ctx.params["authorisationId"]
    if aid not in c["authorisations"]:
        raise ApiError(404, "RESOURCE_UNKNOWN", "authorisation not found")
    return 200, sca.render(ctx, ctx.store.authorisations.get(aid),
                           f"/v1/consents/{c['consentId']}/authorisations/{aid}")


# ---------------- account access ----------------

def _valid_consent(ctx):
    cid = ctx.headers.get("consent-id")
    if not cid:
        raise ApiError(400, "HTTP_HEADER_REQUIRED", "Consent-ID header is required", path="Consent-ID")
    c = _consent(ctx, cid)
    if c["consentStatus"] == "expired":
        raise ApiError(401, "CONSENT_EXPIRED", "consent expired; create a new consent (SCA renewal every 180 days)")
    if c["consentStatus"] == "received":
        a = ctx.store.authorisations.get(c["authorisations"][-1])
        raise ApiError(401, "CONSENT_INVALID", "consent is not yet authorised by the PSU",
                       links={"scaRedirect": link(sca.redirect_url(ctx, a))})
    if c["consentStatus"] != "valid":
        raise ApiError(401, "CONSENT_INVALID", f"consent is {c['consentStatus']}")
    _psu_context_checks(ctx)
    return c


def _account(ctx, c):
    aid = ctx.params["accountId"]
    if aid not in c["accountIds"]:
        raise ApiError(403, "CONSENT_INVALID", "the consent does not cover this account")
    a = ctx.store.accounts.get(aid)
    if not a:
        raise ApiError(404, "RESOURCE_UNKNOWN", "account no longer exists")
    return a


def _balances(a):
    return [{"balanceAmount": {"currency": b["balanceAmount"]["currency"],
                               "amount": amount_str(b["balanceAmount"]["amount"], b["balanceAmount"]["currency"])},
             "balanceType": b["balanceType"]} for b in a["balances"]]


def render_account(ctx, a, with_balance=False):
    limit = 70 if "longer-name" in ctx.fixes else 35
    out = {"resourceId": a["id"], "bban": a["bban"], "iban": a["iban"], "currency": a["currency"],
           "name": a["accountName"][:limit], "product": a["product"], "cashAccountType": a["cashAccountType"],
           "_links": {"self": link(f"/v1/accounts/{a['id']}"), "balances": link(f"/v1/accounts/{a['id']}/balances"),
                      "transactions": link(f"/v1/accounts/{a['id']}/transactions")}}
    if with_balance:
        out["balances"] = _balances(a)
    return out


def list_accounts(ctx):
    c = _valid_consent(ctx)
    wb = ctx.query.get("withBalance", "").lower() == "true"
    accs = [ctx.store.accounts.get(i) for i in c["accountIds"]]
    return 200, {"accounts": [render_account(ctx, a, wb) for a in accs if a]}  # vanished accounts are skipped


def get_account(ctx):
    c = _valid_consent(ctx)
    return 200, {"account": render_account(ctx, _account(ctx, c), ctx.query.get("withBalance", "").lower() == "true")}


def get_balances(ctx):
    c = _valid_consent(ctx)
    a = _account(ctx, c)
    return 200, {"account": {"iban": a["iban"], "bban": a["bban"], "currency": a["currency"]},
                 "balances": _balances(a)}


def _tx_item(a, t):
    return {"transactionId": t["id"], "bookingDate": t["bookingDate"], "valueDate": t["valueDate"],
            "transactionAmount": {"amount": amount_str(t["amount"], t["currency"]), "currency": t["currency"]},
            "creditorName": t["creditorName"], "creditorAccount": t["creditorAccount"],
            "debtorName": t["debtorName"], "debtorAccount": t["debtorAccount"],
            "remittanceInformationUnstructured": t["remittanceInformationUnstructured"],
            "bankTransactionCode": t["bankTransactionCode"],
            "_links": {"transactionDetails": link(f"/v1/accounts/{a['id']}/transactions/{t['id']}")}}


def list_transactions(ctx):
    c = _valid_consent(ctx)
    a = _account(ctx, c)
    q = ctx.query
    f = parse_query_date(q, "fromDate") or parse_query_date(q, "dateFrom")
    t = parse_query_date(q, "toDate") or parse_query_date(q, "dateTo")
    bs = q.get("bookingStatus") or "booked"
    if bs not in ("booked", "pending", "both", "all"):
        raise ApiError(400, "FORMAT_ERROR", "bookingStatus must be booked, pending, both or all", path="bookingStatus")
    page = parse_query_int(q, "page", 1) or 1
    size = parse_query_int(q, "pageSize", 1) or PAGE_SIZE
    size = min(size, 1000)
    if f and f < today() - HISTORY_WITHOUT_SCA and now() - c["scaAt"] > FRESH_SCA:
        auth = sca.start(ctx, "consent", c["consentId"], c)
        raise ApiError(401, "SCA_REQUIRED", "transaction history older than 90 days needs a fresh SCA "
                       "(within 60 minutes)", links={"scaRedirect": link(sca.redirect_url(ctx, auth))})
    txs = [x for x in ctx.store.transactions.find(accountId=a["id"])
           if (not f or x["bookingDate"] >= f.isoformat()) and (not t or x["bookingDate"] <= t.isoformat())]
    txs.sort(key=lambda x: (x["bookingDate"], x["id"]), reverse=True)
    booked = [] if bs == "pending" else txs
    chunk = booked[(page - 1) * size: page * size]
    base = f"/v1/accounts/{a['id']}/transactions?bookingStatus={bs}" + \
           (f"&fromDate={f.isoformat()}" if f else "") + (f"&toDate={t.isoformat()}" if t else "")
    last = max(1, -(-len(booked) // size))
    links = {"first": link(f"{base}&page=1&pageSize={size}"), "last": link(f"{base}&page={last}&pageSize={size}")}
    if page < last:
        links["next"] = link(f"{base}&page={page + 1}&pageSize={size}")
    if page > 1:
        links["prev"] = link(f"{base}&page={page - 1}&pageSize={size}")
    return 200, {"account": {"iban": a["iban"], "bban": a["bban"], "currency": a["currency"]},
                 "transactions": {"booked": [_tx_item(a, x) for x in chunk], "pending": [], "_links": links},
                 "page": page, "pageSize": size, "totalBooked": len(booked)}


def transaction_details(ctx):
    c = _valid_consent(ctx)
    a = _account(ctx, c)
    tx = ctx.store.transactions.get(ctx.params["transactionId"])
    if not tx or tx["accountId"] != a["id"]:
        raise ApiError(404, "RESOURCE_UNKNOWN", "transaction not found on this account")
    if not ctx.headers.get("psu-ip-address"):
        if now() - c["scaAt"] > UNATTENDED_CONSENT_AGE:
            raise ApiError(401, "CONSENT_EXPIRED", "calls without PSU-IP-Address need a consent at most 90 days old")
        key = (c["consentId"], a["id"], today().isoformat())
        with ctx.store.lock:
            n = ctx.store.detail_calls.get(key, 0)
            if n >= 4:
                raise ApiError(429, "ACCESS_EXCEEDED", "at most 4 transaction details calls per day and account "
                               "without PSU-IP-Address")
            ctx.store.detail_calls[key] = n + 1
    d = {"transactionId": tx["id"], "endToEndId": tx.get("paymentId", tx["id"])[:35].replace("-", "")[:35],
         "bookingDate": tx["bookingDate"], "valueDate": tx["valueDate"],
         "transactionAmount": {"amount": amount_str(tx["amount"], tx["currency"]), "currency": tx["currency"]},
         "creditorAccount": {k: v for k, v in tx["creditorAccount"].items() if v},
         "debtorAccount": {k: v for k, v in tx["debtorAccount"].items() if v},
         "bankTransactionCode": tx["bankTransactionCode"], "purposeCode": tx["purposeCode"]}
    for k, n in (("creditorName", 70), ("debtorName", 70), ("remittanceInformationUnstructured", 140)):
        if tx.get(k):
            d[k] = tx[k][:n]
    if tx.get("remittanceInformationUnstructured"):
        d["remittanceInformationUnstructuredArray"] = [tx["remittanceInformationUnstructured"][:140]]
    if (ctx.headers.get("psu-context") or "").upper() == "CORPORATE":
        d["_links"] = {"self": link(f"/v1/accounts/{a['id']}/transactions/{tx['id']}")}
    return 200, {"transactionsDetails": d}
