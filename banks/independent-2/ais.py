"""Account information: consents and accounts, balances, transactions, transaction details (E8)."""
import datetime as dt

import sca
from common import ApiError, fmt, obj, s, i32, boolean, parse_date, today, now, new_id, link, only_query, qdate, qint, qbool
from store import LOCK, AUTHS
from validate import iban as check_iban, bban as check_bban, currency, minor_units

MAX_VALID_DAYS = 180           # SCA renewal period (section 8)
HISTORY_WITHOUT_SCA = 90       # days of history without fresh SCA
FRESH_SCA = dt.timedelta(minutes=60)
DETAILS_PER_DAY = 4
DETAILS_CONSENT_AGE = dt.timedelta(days=90)
PAGE_SIZE = 200


def _refs(v, path):
    if not isinstance(v, list):
        raise fmt("must be an array", path)
    for n, r in enumerate(v):
        p = f"{path}[{n}]"
        obj(r, p, (), ("iban", "bban", "currency"))
        if ("iban" in r) == ("bban" in r):
            raise fmt("exactly one of iban or bban is required", p)
        if "iban" in r:
            check_iban(r["iban"], p + ".iban")
        else:
            check_bban(r["bban"], p + ".bban")
        if "currency" in r:
            currency(r["currency"], p + ".currency")


def create_consent(ctx):
    only_query(ctx.query, ())
    b = obj(ctx.body, "body", ("access", "recurringIndicator", "validUntil", "frequencyPerDay"),
            ("combinedServiceIndicator",))
    acc = obj(b["access"], "access", (), ("accounts", "balances", "transactions", "availableAccounts", "allPsd2"))
    lists = [k for k in ("accounts", "balances", "transactions") if k in acc]
    globs = [k for k in ("availableAccounts", "allPsd2") if k in acc]
    if bool(lists) == bool(globs) or len(globs) > 1:
        raise fmt("give either account lists or exactly one of availableAccounts/allPsd2", "access")
    for k in lists:
        _refs(acc[k], "access." + k)
    for k in globs:
        s(acc[k], "access." + k, enum={"allAccounts"})
    boolean(b["recurringIndicator"], "recurringIndicator")
    vu = parse_date(b["validUntil"], "validUntil")
    if vu < today() or vu > today() + dt.timedelta(days=MAX_VALID_DAYS):
        raise fmt(f"must be between today and {MAX_VALID_DAYS} days ahead", "validUntil")
    f = i32(b["frequencyPerDay"], "frequencyPerDay", minimum=1, maximum=4)
    if not b["recurringIndicator"] and f != 1:
        raise fmt("must be 1 for a one-off consent", "frequencyPerDay")
    if b.get("combinedServiceIndicator", False) is not False:
        raise fmt("combined service is not supported", "combinedServiceIndicator")
    w = ctx.world
    with LOCK:
        c = {"id": new_id(), "access": acc, "recurringIndicator": b["recurringIndicator"], "validUntil": vu,
             "frequencyPerDay": f, "consentStatus": "received", "created": now(), "lastActionDate": today(),
             "auths": [], "accountIds": [], "psuId": ctx.headers.get("psu-id"), "usage": {}}
        w.consents[c["id"]] = c
        a = sca.start(w, "consent", c["id"], f"/v1/consents/{c['id']}", ctx.headers["tpp-redirect-uri"], c["psuId"])
        c["auths"].append(a["id"])
        base = f"/v1/consents/{c['id']}"
        return 201, {"consentStatus": "received", "consentId": c["id"],
                     "_links": {"self": link(base, "GET", "DELETE"), "status": link(base + "/status"),
                                "scaStatus": link(a["selfHref"]), "scaRedirect": link(sca.redirect_url(a))}}, \
            {"Location": base}


def _refresh_consent(c):
    if c["consentStatus"] == "valid" and today() > c["validUntil"]:
        c["consentStatus"] = "expired"
    for aid in c["auths"]:
        sca.refresh(AUTHS[aid])
    return c["consentStatus"]


def _consent(ctx, consentId):
    c = ctx.world.consents.get(consentId)
    if not c:
        raise ApiError(404, "RESOURCE_UNKNOWN", "consent not found")
    _refresh_consent(c)
    return c


def get_consent(ctx, consentId):
    only_query(ctx.query, ())
    with LOCK:
        c = _consent(ctx, consentId)
        return 200, {"access": c["access"], "recurringIndicator": c["recurringIndicator"],
                     "validUntil": c["validUntil"].isoformat(), "frequencyPerDay": c["frequencyPerDay"],
                     "lastActionDate": c["lastActionDate"].isoformat(), "consentStatus": c["consentStatus"],
                     "_links": {"self": link(f"/v1/consents/{consentId}", "GET", "DELETE")}}, {}


def consent_status(ctx, consentId):
    only_query(ctx.query, ())
    with LOCK:
        return 200, {"consentStatus": _consent(ctx, consentId)["consentStatus"]}, {}


def delete_consent(ctx, consentId):
    only_query(ctx.query, ())
    with LOCK:
        c = _consent(ctx, consentId)
        if c["consentStatus"] in ("terminatedByTpp", "revokedByPsu"):
            raise ApiError(400, "CONSENT_INVALID", "consent already terminated")
        c["consentStatus"] = "terminatedByTpp"
        return 204, None, {}


def start_consent_auth(ctx, consentId):
    only_query(ctx.query, ())
    if ctx.raw_body not in (b"", b"{}"):
        raise fmt("body must be empty or {}")
    with LOCK:
        c = _consent(ctx, consentId)
        for aid in c["auths"]:
            if sca.refresh(AUTHS[aid]) == "STARTED":
                raise sca.in_progress_error(AUTHS[aid])
        if c["consentStatus"] not in ("received", "valid"):
            raise ApiError(400, "RESOURCE_BLOCKED", f"a consent in status {c['consentStatus']} cannot be authorised")
        a = sca.start(ctx.world, "consent", c["id"], f"/v1/consents/{c['id']}", ctx.headers["tpp-redirect-uri"],
                      c["psuId"])
        c["auths"].append(a["id"])
        return sca.auth_response(a)


def list_consent_auths(ctx, consentId):
    only_query(ctx.query, ())
    with LOCK:
        return 200, {"authorisationIds": list(_consent(ctx, consentId)["auths"])}, {}


def get_consent_auth(ctx, consentId, authorisationId):
    only_query(ctx.query, ())
    with LOCK:
        return sca.get_auth(_consent(ctx, consentId)["auths"], authorisationId)


# ------------------------------------------------------------------ consent use
def _renew(ctx, c, code, msg):
    """401 with a fresh authorisation for the consent (SCA renewal)."""
    live = [AUTHS[a] for a in c["auths"] if sca.refresh(AUTHS[a]) == "STARTED"]
    a = live[0] if live else sca.start(ctx.world, "consent", c["id"], f"/v1/consents/{c['id']}",
                                       ctx.headers["tpp-redirect-uri"], c["psuId"])
    if not live:
        c["auths"].append(a["id"])
    return ApiError(401, code, msg, links={"scaRedirect": link(sca.redirect_url(a))})


def use_consent(ctx, need=None, account_id=None):
    cid = ctx.headers["consent-id"]
    c = ctx.world.consents.get(cid)
    if not c:
        raise ApiError(403, "CONSENT_UNKNOWN", "Consent-ID is unknown")
    st = _refresh_consent(c)
    if st == "received":
        raise _renew(ctx, c, "CONSENT_INVALID", "the consent is not yet authorised by the PSU")
    if st == "expired":
        raise ApiError(403, "CONSENT_EXPIRED", "the consent has expired")
    if st != "valid":
        raise ApiError(403, "CONSENT_INVALID", f"the consent is {st}")
    if now() - c["scaTime"] > dt.timedelta(days=MAX_VALID_DAYS):
        raise _renew(ctx, c, "CONSENT_EXPIRED", "SCA must be renewed every 180 days")
    acc = c["access"]
    if need == "balances" and not (acc.get("allPsd2") or "balances" in acc):
        raise ApiError(403, "CONSENT_INVALID", "the consent does not cover balances")
    if need == "transactions" and not (acc.get("allPsd2") or "transactions" in acc):
        raise ApiError(403, "CONSENT_INVALID", "the consent does not cover transactions")
    acct = None
    if account_id is not None:
        if account_id not in c["accountIds"]:
            raise ApiError(403, "CONSENT_INVALID", "the consent does not cover this account")
        acct = ctx.world.accounts.get(account_id)
        if acct is None:
            raise ApiError(404, "RESOURCE_UNKNOWN", "account no longer exists")
        if need in ("balances", "transactions") and not acc.get("allPsd2"):
            refs = acc[need]
            if not any(r.get("iban") == acct["iban"] or r.get("bban") == acct["bban"] for r in refs):
                raise ApiError(403, "CONSENT_INVALID", f"the consent does not cover {need} of this account")
    if "psu-ip-address" not in ctx.headers:
        key = (getattr(ctx, "endpoint", need), account_id, today())
        used = c["usage"].get(key, 0)
        if used >= c["frequencyPerDay"]:
            raise ApiError(429, "ACCESS_EXCEEDED", "frequencyPerDay exceeded for requests without the PSU present")
        c["usage"][key] = used + 1
    c["lastActionDate"] = today()
    return c, acct


def money(n, cur):
    m = minor_units(cur)
    neg = n < 0
    n = abs(n)
    txt = f"{n}." + "0" * m if m else str(n)
    return ("-" if neg else "") + txt


def account_view(ctx, c, a):
    name = a["accountName"] if "longer-name" in ctx.fixes else a["accountName"][:35]
    base = f"/v1/accounts/{a['id']}"
    ln = {"self": link(base)}
    acc = c["access"]
    if acc.get("allPsd2") or any(r.get("iban") == a["iban"] or r.get("bban") == a["bban"] for r in acc.get("balances", [])):
        ln["balances"] = link(base + "/balances")
    if acc.get("allPsd2") or any(r.get("iban") == a["iban"] or r.get("bban") == a["bban"] for r in acc.get("transactions", [])):
        ln["transactions"] = link(base + "/transactions")
    return {"resourceId": a["id"], "iban": a["iban"], "bban": a["bban"], "currency": a["currency"], "name": name,
            "product": a["product"], "cashAccountType": a["cashAccountType"], "status": "enabled", "_links": ln}


def list_accounts(ctx):
    only_query(ctx.query, ())
    with LOCK:
        c, _ = use_consent(ctx)
        accts = [ctx.world.accounts[i] for i in c["accountIds"] if i in ctx.world.accounts]
        return 200, {"accounts": [account_view(ctx, c, a) for a in accts]}, {}


def get_account(ctx, id):
    only_query(ctx.query, ())
    with LOCK:
        c, a = use_consent(ctx, account_id=id)
        return 200, {"account": account_view(ctx, c, a)}, {}


def balances(ctx, id):
    only_query(ctx.query, ())
    with LOCK:
        c, a = use_consent(ctx, "balances", id)
        return 200, {"account": {"iban": a["iban"]},
                     "balances": [{"balanceAmount": {"currency": a["currency"], "amount": money(a["balances"][t], a["currency"])},
                                   "balanceType": t} for t in ("closingBooked", "expected")]}, {}


def _tx_summary(a, t):
    return {"transactionId": t["id"], "bookingDate": t["bookingDate"], "valueDate": t["valueDate"],
            "transactionAmount": {"amount": money(-t["amount"], t["currency"]), "currency": t["currency"]},
            "creditorName": t["creditorName"], "creditorAccount": {k: v for k, v in t["creditorAccount"].items() if v},
            "debtorName": t["debtorName"], "debtorAccount": dict(t["debtorAccount"]),
            "remittanceInformationUnstructured": t["remittanceInformationUnstructured"],
            "bankTransactionCode": t["bankTransactionCode"],
            "_links": {"transactionDetails": link(f"/v1/accounts/{a['id']}/transactions/{t['id']}")}}


def transactions(ctx, id):
    only_query(ctx.query, ("bookingStatus", "dateFrom", "dateTo", "offset", "limit"))
    bs = ctx.query.get("bookingStatus")
    if bs is None:
        raise ApiError(400, "QUERY_PARAMETER_REQUIRED", "query parameter bookingStatus is required")
    if bs not in ("booked", "pending", "both", "all"):
        raise ApiError(400, "FORMAT_ERROR", "bookingStatus must be booked, pending, both or all")
    fd = qdate(ctx.query, "dateFrom") or today() - dt.timedelta(days=HISTORY_WITHOUT_SCA)
    td = qdate(ctx.query, "dateTo") or today()
    if fd > td:
        raise ApiError(400, "FORMAT_ERROR", "dateFrom is after dateTo")
    off = qint(ctx.query, "offset", 0, 0)
    lim = qint(ctx.query, "limit", 1, PAGE_SIZE)
    with LOCK:
        c, a = use_consent(ctx, "transactions", id)
        if fd < today() - dt.timedelta(days=HISTORY_WITHOUT_SCA) and now() - c["scaTime"] > FRESH_SCA:
            raise _renew(ctx, c, "CONSENT_INVALID", "history older than 90 days needs a fresh SCA")
        txs = [t for t in ctx.world.transactions.get(a["id"], [])
               if fd.isoformat() <= t["bookingDate"] <= td.isoformat()]
        txs.sort(key=lambda t: t["bookingDate"], reverse=True)
        booked = [_tx_summary(a, t) for t in txs[off:off + lim]] if bs != "pending" else []
        base = f"/v1/accounts/{a['id']}/transactions?bookingStatus={bs}&dateFrom={fd}&dateTo={td}"
        ln = {"account": link(f"/v1/accounts/{a['id']}")}
        if bs != "pending" and off + lim < len(txs):
            ln["next"] = link(f"{base}&offset={off + lim}&limit={lim}")
        if bs != "pending" and off > 0:
            ln["previous"] = link(f"{base}&offset={max(0, off - lim)}&limit={lim}")
        return 200, {"account": {"iban": a["iban"]}, "transactions": {"booked": booked, "pending": [], "_links": ln}}, {}


def transaction_details(ctx, id, transactionId):
    only_query(ctx.query, ())
    with LOCK:
        c, a = use_consent(ctx, "transactions", id)
        if "psu-ip-address" not in ctx.headers:
            if now() - c["scaTime"] > DETAILS_CONSENT_AGE:
                raise _renew(ctx, c, "CONSENT_EXPIRED", "without the PSU present the consent must be at most 90 days old")
            key = ("details", c["id"], a["id"], today())
            n = ctx.world.detail_calls.get(key, 0)
            if n >= DETAILS_PER_DAY:
                raise ApiError(429, "ACCESS_EXCEEDED", "at most 4 transaction details calls per day without PSU-IP-Address")
            ctx.world.detail_calls[key] = n + 1
        for t in ctx.world.transactions.get(a["id"], []):
            if t["id"] == transactionId:
                break
        else:
            raise ApiError(404, "RESOURCE_UNKNOWN", "transaction not found")
        d = {"transactionId": t["id"], "bookingDate": t["bookingDate"], "valueDate": t["valueDate"],
             "transactionAmount": {"amount": money(-t["amount"], t["currency"]), "currency": t["currency"]},
             "bankTransactionCode": t["bankTransactionCode"]}
        if t.get("endToEndId"):
            d["endToEndId"] = t["endToEndId"][:35]
        for k in ("creditorName", "debtorName"):
            if t.get(k):
                d[k] = t[k][:70]
        d["creditorAccount"] = {k: v for k, v in t["creditorAccount"].items() if v}
        d["debtorAccount"] = dict(t["debtorAccount"], currency=a["currency"])
        if t.get("remittanceInformationUnstructured"):
            d["remittanceInformationUnstructured"] = t["remittanceInformationUnstructured"][:140]
        if t.get("purposeCode"):
            d["purposeCode"] = t["purposeCode"][:4]
        if ctx.headers.get("psu-context") == "CORPORATE":
            d["_links"] = {"self": link(f"/v1/accounts/{a['id']}/transactions/{t['id']}")}
        return 200, {"transactionsDetails": d}, {}
