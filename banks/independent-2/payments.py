"""Payment initiation (E16-E18, status, detail, cancel, authorisations), signing baskets (E1, E2) and batch runs."""
import datetime as dt
from decimal import Decimal

import sca
import validate
from common import ApiError, fmt, obj, new_id, link, now, today, qbool, only_query
from store import LOCK, AUTHS

PRODUCTS = {
    ("payments", "norwegian-domestic-credit-transfers"): validate.ndct,
    ("payments", "norwegian-cross-border-credit-transfers"): validate.ncbct,
    ("periodic-payments", "norwegian-domestic-credit-transfers"): validate.periodic,
}
BATCH_HOURS = (2, 7, 11, 15, 20)  # five simulated batch runs a day (UTC)
NCBCT_FEE = "75.00"


def _product(service, product):
    fn = PRODUCTS.get((service, product))
    if fn is None:
        known = any(p == product for _, p in PRODUCTS)
        if known:
            raise ApiError(403, "PRODUCT_INVALID", f"product {product} is not offered as {service}")
        raise ApiError(404, "PRODUCT_UNKNOWN", f"unknown payment product {product}")
    return fn


def debtor_of(w, p):
    da = p["body"]["debtorAccount"]
    if "other" in da:
        ident = da["other"]["identification"]
        for k in w.cards.values():
            if ident in (k["resourceId"], k["accountNumber"]):
                return {"customerNumber": k["customerNumber"], "iban": None, "bban": k["accountNumber"],
                        "card": k, "currency": k["currency"]}
        return None
    return w.account_by(bban=da.get("bban"), iban=da.get("iban"))


def _is_logical_duplicate(w, tpp_body, service, product):
    for p in w.payments.values():
        if p["service"] == service and p["product"] == product and p["body"] == tpp_body and \
                p["status"] not in ("RJCT", "CANC") and now() - p["created"] < dt.timedelta(days=1):
            return True
    return False


def _links(p, a=None):
    base = f"/v1/{p['service']}/{p['product']}/{p['id']}"
    ln = {"self": link(base, "GET", "DELETE"), "status": link(base + "/status")}
    if a:
        ln["scaRedirect"] = link(sca.redirect_url(a))
        ln["scaStatus"] = link(a["selfHref"])
    else:
        ln["startAuthorisation"] = link(base + "/authorisations", "POST")
    return ln


def create(ctx, service, product):
    fn = _product(service, product)
    allowed_q = ("allowLogicalDuplicate",) if service == "payments" else ()
    only_query(ctx.query, allowed_q)
    allow_dup = qbool(ctx.query, "allowLogicalDuplicate", False)
    info = fn(ctx.body)
    h = ctx.headers
    w = ctx.world
    with LOCK:
        if not allow_dup and _is_logical_duplicate(w, ctx.body, service, product):
            raise ApiError(409, "CONFLICT", "a logically identical payment exists; use allowLogicalDuplicate=true")
        p = {"id": new_id(), "service": service, "product": product, "body": ctx.body, "status": "RCVD",
             "created": now(), "psuId": h.get("psu-id"), "psuContext": h.get("psu-context"),
             "corporateId": h.get("psu-corporate-id"), "redirectUri": h["tpp-redirect-uri"],
             "amount": info["amount"], "amountStr": ctx.body["instructedAmount"]["amount"],
             "currency": info["currency"], "execDate": info["execDate"], "auths": [], "basketId": None}
        w.payments[p["id"]] = p
        a = None
        if p["psuContext"]:  # single-SCA initiation
            a = sca.start(w, "payment", p["id"], f"/v1/{service}/{product}/{p['id']}", p["redirectUri"], p["psuId"])
            p["auths"].append(a["id"])
        resp = {"paymentId": p["id"], "transactionStatus": "RCVD"}
        if product == "norwegian-cross-border-credit-transfers":
            resp["transactionFees"] = {"amount": NCBCT_FEE, "currency": "NOK"}
            resp["transactionFeeIndicator"] = True
        else:
            resp["transactionFeeIndicator"] = False
        resp["_links"] = _links(p, a)
        return 201, resp, {"Location": f"/v1/{service}/{product}/{p['id']}"}


def _payment(ctx, service, product, paymentId):
    _product(service, product)
    p = ctx.world.payments.get(paymentId)
    if not p or p["service"] != service or p["product"] != product:
        raise ApiError(404, "RESOURCE_UNKNOWN", "payment not found")
    return p


def get(ctx, service, product, paymentId):
    only_query(ctx.query, ())
    with LOCK:
        p = _payment(ctx, service, product, paymentId)
        out = dict(p["body"])
        out["transactionStatus"] = p["status"]
        out["_links"] = {"self": link(f"/v1/{service}/{product}/{paymentId}", "GET", "DELETE"),
                         "status": link(f"/v1/{service}/{product}/{paymentId}/status")}
        return 200, out, {}


def funds_available(w, p):
    acct = debtor_of(w, p)
    if acct is None or "card" in acct or acct["currency"] != p["currency"]:
        return None
    return acct["balances"]["expected"] + acct["creditLine"] >= p["amount"]


def status(ctx, service, product, paymentId):
    only_query(ctx.query, ())
    with LOCK:
        p = _payment(ctx, service, product, paymentId)
        out = {"transactionStatus": p["status"]}
        if p["status"] in ("ACTC", "PDNG"):
            fa = funds_available(ctx.world, p)
            if fa is not None:
                out["fundsAvailable"] = fa
        return 200, out, {}


def cancel(ctx, service, product, paymentId):
    only_query(ctx.query, ())
    with LOCK:
        p = _payment(ctx, service, product, paymentId)
        for aid in p["auths"]:
            sca.refresh(AUTHS[aid])
        if p["status"] == "PDNG":
            raise ApiError(400, "BAD_REQUEST", "a payment in status PDNG cannot be deleted")
        if p["status"] not in ("RCVD", "ACTC"):
            raise ApiError(400, "BAD_REQUEST", f"a payment in status {p['status']} cannot be deleted")
        busy = [AUTHS[a] for a in p["auths"] if AUTHS[a]["scaStatus"] == "STARTED"]
        b = ctx.world.baskets.get(p["basketId"] or "")
        if b:
            busy += [AUTHS[a] for a in b["auths"] if sca.refresh(AUTHS[a]) == "STARTED"]
        if busy:
            raise ApiError(400, "RESOURCE_BLOCKED", "an authorisation of this payment is in progress")
        p["status"] = "CANC"
        return 204, None, {}


def start_auth(ctx, service, product, paymentId):
    only_query(ctx.query, ())
    if ctx.raw_body not in (b"", b"{}"):
        raise fmt("body must be empty or {}")
    if "psu-context" not in ctx.headers:
        raise ApiError(400, "HTTP_HEADER_REQUIRED", "PSU-Context is required for single-SCA initiation")
    with LOCK:
        p = _payment(ctx, service, product, paymentId)
        sca.check_restart(p["auths"])
        if p["basketId"]:
            raise ApiError(400, "RESOURCE_BLOCKED", "the payment is part of a signing basket")
        if p["status"] != "RCVD":
            raise ApiError(400, "RESOURCE_BLOCKED", f"a payment in status {p['status']} cannot be authorised")
        a = sca.start(ctx.world, "payment", p["id"], f"/v1/{service}/{product}/{p['id']}",
                      ctx.headers["tpp-redirect-uri"], ctx.headers.get("psu-id"))
        p["auths"].append(a["id"])
        return sca.auth_response(a)


def list_auths(ctx, service, product, paymentId):
    only_query(ctx.query, ())
    with LOCK:
        return 200, {"authorisationIds": list(_payment(ctx, service, product, paymentId)["auths"])}, {}


def get_auth(ctx, service, product, paymentId, authorisationId):
    only_query(ctx.query, ())
    with LOCK:
        return sca.get_auth(_payment(ctx, service, product, paymentId)["auths"], authorisationId)


# ------------------------------------------------------------------ signing baskets
def basket_status(w, b):
    sts = [w.payments[pid]["status"] for pid in b["paymentIds"]]
    if any(s in ("RJCT", "CANC") for s in sts):
        return "RJCT"
    if all(s == "RCVD" for s in sts):
        return "RCVD"
    if any(s == "RCVD" for s in sts):
        return "PATC"
    return "ACTC"


def _basket_links(b):
    base = f"/v1/signing-baskets/{b['id']}"
    return {"self": link(base, "GET", "DELETE"), "status": link(base + "/status"),
            "startAuthorisation": link(base + "/authorisations", "POST")}


def create_basket(ctx):
    only_query(ctx.query, ())
    b = obj(ctx.body, "body", ("paymentIds",))
    ids = b["paymentIds"]
    if not isinstance(ids, list) or not ids:
        raise fmt("must be a non-empty array", "paymentIds")
    if len(ids) > 10:
        raise fmt("a signing basket holds at most 10 payments", "paymentIds")
    if any(not isinstance(x, str) for x in ids) or len(set(ids)) != len(ids):
        raise fmt("must be distinct payment id strings", "paymentIds")
    w = ctx.world
    with LOCK:
        ps = []
        for pid in ids:
            p = w.payments.get(pid)
            if not p:
                raise ApiError(400, "RESOURCE_UNKNOWN", f"payment {pid} not found")
            ps.append(p)
        if any(p["service"] != "payments" for p in ps):
            raise ApiError(400, "REFERENCE_MIX_INVALID", "periodic and bulk payments cannot be added to a signing basket")
        for p in ps:
            for aid in p["auths"]:
                sca.refresh(AUTHS[aid])
            if p["status"] != "RCVD" or p["auths"] or p["basketId"]:
                raise ApiError(400, "RESOURCE_BLOCKED", f"payment {p['id']} is already authorised, in authorisation or in a basket")
            if p["psuId"] != ctx.headers.get("psu-id"):
                raise ApiError(400, "BAD_REQUEST", f"payment {p['id']} was created for another PSU")
        bk = {"id": new_id(), "paymentIds": list(ids), "auths": [], "psuId": ctx.headers.get("psu-id"),
              "created": now()}
        for p in ps:
            p["basketId"] = bk["id"]
        w.baskets[bk["id"]] = bk
        return 201, {"basketId": bk["id"], "transactionStatus": basket_status(w, bk), "_links": _basket_links(bk)}, \
            {"Location": f"/v1/signing-baskets/{bk['id']}"}


def _basket(ctx, basketId):
    b = ctx.world.baskets.get(basketId)
    if not b:
        raise ApiError(404, "RESOURCE_UNKNOWN", "signing basket not found")
    return b


def get_basket(ctx, basketId):
    only_query(ctx.query, ())
    with LOCK:
        b = _basket(ctx, basketId)
        return 200, {"basketId": b["id"], "paymentIds": list(b["paymentIds"]),
                     "transactionStatus": basket_status(ctx.world, b), "_links": _basket_links(b)}, {}


def get_basket_status(ctx, basketId):
    only_query(ctx.query, ())
    with LOCK:
        return 200, {"transactionStatus": basket_status(ctx.world, _basket(ctx, basketId))}, {}


def delete_basket(ctx, basketId):
    only_query(ctx.query, ())
    with LOCK:
        b = _basket(ctx, basketId)
        for aid in b["auths"]:
            if sca.refresh(AUTHS[aid]) in ("STARTED", "FINALISED"):
                raise ApiError(400, "RESOURCE_BLOCKED", "the basket has an authorisation in progress or finalised")
        for pid in b["paymentIds"]:
            ctx.world.payments[pid]["basketId"] = None
        del ctx.world.baskets[basketId]
        return 204, None, {}


def start_basket_auth(ctx, basketId):
    only_query(ctx.query, ())
    if ctx.raw_body not in (b"", b"{}"):
        raise fmt("body must be empty or {}")
    with LOCK:
        b = _basket(ctx, basketId)
        sca.check_restart(b["auths"])
        bad = [pid for pid in b["paymentIds"] if ctx.world.payments[pid]["status"] != "RCVD"]
        if bad:
            raise ApiError(400, "RESOURCE_BLOCKED", f"payment(s) {', '.join(bad)} can no longer be authorised")
        if b["psuId"] != ctx.headers.get("psu-id"):
            raise ApiError(400, "RESOURCE_BLOCKED", "the basket belongs to another PSU")
        a = sca.start(ctx.world, "basket", b["id"], f"/v1/signing-baskets/{b['id']}",
                      ctx.headers["tpp-redirect-uri"], ctx.headers.get("psu-id"))
        b["auths"].append(a["id"])
        return sca.auth_response(a)


def list_basket_auths(ctx, basketId):
    only_query(ctx.query, ())
    with LOCK:
        return 200, {"authorisationIds": list(_basket(ctx, basketId)["auths"])}, {}


def get_basket_auth(ctx, basketId, authorisationId):
    only_query(ctx.query, ())
    with LOCK:
        return sca.get_auth(_basket(ctx, basketId)["auths"], authorisationId)


# ------------------------------------------------------------------ simulated batch processing
def _execute(w, p):
    acct = debtor_of(w, p)
    if acct is None:
        p["status"] = "RJCT"
        return
    if "card" not in acct and acct["currency"] == p["currency"]:
        need = int(p["amount"].to_integral_value(rounding="ROUND_CEILING"))
        if acct["balances"]["expected"] + acct["creditLine"] < need:
            p["status"] = "RJCT"
            p["reason"] = "insufficient funds"
            return
        acct["balances"]["expected"] -= need
        acct["balances"]["closingBooked"] -= need
        b = p["body"]
        d = today().isoformat()
        cref = b["creditorAccount"]
        w.transactions[acct["id"]].append({
            "id": new_id(), "amount": need, "currency": p["currency"], "valueDate": d, "bookingDate": d,
            "remittanceInformationUnstructured": b.get("remittanceInformationUnstructured") or
            " ".join(r["reference"] for r in b.get("remittanceInformationStructuredArray", [])) or "Payment",
            "creditorName": b["creditorName"], "creditorAccount": {"iban": cref.get("iban", ""), "bban": cref.get("bban", "")},
            "debtorName": w.customer_by_number(acct["customerNumber"])["customerName"],
            "debtorAccount": {"iban": acct["iban"], "bban": acct["bban"]}, "bankTransactionCode": "PMNT-ICDT-DMCT",
            "ultimateDebtor": b.get("ultimateDebtor", ""), "ultimateCreditor": "", "purposeCode": b.get("purposeCode", "OTHR"),
            "creditorId": "", "endToEndId": b.get("endToEndIdentification") or p["id"].replace("-", "")[:35]})
    p["status"] = "ACSC"


def batch_run(w):
    n = 0
    with LOCK:
        for p in w.payments.values():
            if p["service"] == "periodic-payments":
                continue
            if p["status"] in ("ACTC", "PDNG") and (p["execDate"] is None or p["execDate"] <= today()):
                _execute(w, p)
                n += 1
        w.last_batch = now()
    return n


def scheduled_batches(w):
    """Run the batches that fell due since the last one (five fixed times a day)."""
    last = getattr(w, "last_batch", None)
    t = now()
    if last is None:
        w.last_batch = t
        return
    d = last.date()
    while d <= t.date():
        for hr in BATCH_HOURS:
            run_at = dt.datetime(d.year, d.month, d.day, hr, tzinfo=dt.timezone.utc)
            if last < run_at <= t:
                batch_run(w)
                return
        d += dt.timedelta(days=1)
