"""Payment initiation (E16-E18), payment status/cancel/authorisations, signing baskets (E1, E2), batch runs."""
import datetime as dt
from decimal import Decimal

from common import (BIC_RE, PURPOSE_CODES, ApiError, amount_str, country, currency, date_field, fmt, iso, link,
                    money, new_id, now, obj, parse_query_bool, string, today, valid_kid)
import sca

NDCT = "norwegian-domestic-credit-transfers"
NCBCT = "norwegian-cross-border-credit-transfers"
PRODUCTS = {"payments": {NDCT, NCBCT}, "periodic-payments": {NDCT}}
REG_CODES = set("14 26 29 31 35 38 41 43 45 51 52 53 71 79 81 82".split())
FREQUENCIES = set("Daily Weekly EveryTwoWeeks Monthly EveryTwoMonths Quarterly SemiAnnual Annual MonthlyVariable".split())
NOK_RATES = {"NOK": Decimal(1), "EUR": Decimal("11.60"), "USD": Decimal("10.80"), "GBP": Decimal("13.70"),
             "SEK": Decimal("1.00"), "DKK": Decimal("1.55"), "CHF": Decimal("12.30"), "ISK": Decimal("0.08"),
             "JPY": Decimal("0.07"), "PLN": Decimal("2.70")}
FINAL = {"ACSC", "RJCT", "CANC"}
BASKET_RANK = {"RJCT": 0, "RCVD": 1, "PATC": 2, "ACTC": 3}


# ---------------- validation ----------------

def _acct(body, key, path, required=True, bban_only=False):
    o = obj(body, key, path, required)
    if o is None:
        return None
    p = f"{path}.{key}"
    bban = string(o, "bban", p, required=bban_only, maxlen=30, minlen=1)
    iban = None if bban_only else string(o, "iban", p, required=False, maxlen=34, minlen=1)
    if not bban_only and not bban and not iban:
        raise fmt(p, "needs bban or iban")
    currency(o, "currency", p)
    return o


def _address(body, path, required):
    a = obj(body, "creditorAddress", path, required)
    if a is not None:
        p = path + ".creditorAddress"
        string(a, "street", p, required=False, maxlen=70)
        for k in ("buildingNumber", "postalCode", "city"):
            string(a, k, p, required=False, maxlen=70)
        country(a, "country", p)


def _structured(item, p):
    if not isinstance(item, dict):
        raise fmt(p, "must be an object")
    ref = item.get("reference")
    rtype = string(item, "referenceType", p, required=False, minlen=1, maxlen=35)
    string(item, "referenceIssuer", p, required=False, minlen=1, maxlen=35)
    is_kid = (rtype or "").upper() in ("KID", "OCR", "SCOR")
    if ref is None or ref == "":
        if is_kid:
            raise ApiError(400, "KID_MISSING", f"{p}.reference: KID is missing", path=p + ".reference")
        raise fmt(p + ".reference", "is required and non-empty")
    string(item, "reference", p, maxlen=35)
    if is_kid and not valid_kid(ref):
        raise ApiError(400, "KID_INVALID", f"{p}.reference: KID {ref} fails the MOD10/MOD11 check",
                       path=p + ".reference")


def _common(body, warnings, periodic=False):
    p = "$"
    amt, cur = money(body, "instructedAmount", p)
    string(body, "creditorName", p, maxlen=70, minlen=1)
    string(body, "ultimateDebtor", p, required=False, maxlen=70)
    ru = string(body, "remittanceInformationUnstructured", p, required=False, minlen=1, maxlen=140)
    string(body, "purposeCode", p, required=False, allowed=PURPOSE_CODES)
    if not periodic:
        if body.get("remittanceInformationStructured") is not None:
            _structured(body["remittanceInformationStructured"], "$.remittanceInformationStructured")
            warnings.append("remittanceInformationStructured is deprecated; use remittanceInformationStructuredArray")
        arr = body.get("remittanceInformationStructuredArray")
        if arr is not None:
            if not isinstance(arr, list) or not arr:
                raise fmt("$.remittanceInformationStructuredArray", "must be a non-empty array")
            for i, it in enumerate(arr):
                _structured(it, f"$.remittanceInformationStructuredArray[{i}]")
            if ru is not None:
                raise ApiError(400, "FORMAT_ERROR", "remittanceInformationUnstructured and "
                               "remittanceInformationStructuredArray are mutually exclusive",
                               path="$.remittanceInformationStructuredArray")
    return amt, cur


def _exec_date(body, key="requestedExecutionDate"):
    d = date_field(body, key, "$")
    if d is not None and (d < today() or d > today() + dt.timedelta(days=366)):
        raise ApiError(400, "EXECUTION_DATE_INVALID", f"{key} must be between today and one year ahead", path="$." + key)
    return d


def validate_ndct(body, warnings):
    amt, cur = _common(body, warnings)
    agent = string(body, "creditorAgent", "$", required=False)
    if agent is not None and not BIC_RE.fullmatch(agent):
        raise fmt("$.creditorAgent", "must be a BIC")
    _acct(body, "creditorAccount", "$", bban_only=True)
    _address(body, "$", True)
    d = obj(body, "debtorAccount", "$")
    has_b, has_o = d.get("bban") is not None, d.get("other") is not None
    if has_b == has_o:
        raise fmt("$.debtorAccount", "needs exactly one of bban or other")
    if has_b:
        string(d, "bban", "$.debtorAccount", maxlen=30, minlen=1)
    else:
        o = obj(d, "other", "$.debtorAccount")
        string(o, "identification", "$.debtorAccount.other", minlen=1)
        string(o, "schemeNameProprietary", "$.debtorAccount.other", allowed={"creditCardAccount"})
    currency(d, "currency", "$.debtorAccount")
    return amt, cur, _exec_date(body)


def validate_ncbct(body, warnings):
    amt, cur = _common(body, warnings, periodic=True)  # NCBCT has only the unstructured form
    ca = _acct(body, "creditorAccount", "$")
    agent = string(body, "creditorAgent", "$", required=False)
    if agent is not None and not BIC_RE.fullmatch(agent):
        raise fmt("$.creditorAgent", "must be a BIC")
    if ca.get("bban") and not agent:
        raise fmt("$.creditorAgent", "is required when creditorAccount is given as bban")
    _address(body, "$", False)
    _acct(body, "debtorAccount", "$")
    code = string(body, "regulatoryReportingCode", "$", required=False, allowed=REG_CODES)
    info = string(body, "regulatoryReportingInformation", "$", required=False, minlen=1, maxlen=140)
    nok = amt * NOK_RATES.get(cur, Decimal(1))
    if nok >= 100000 and (code is None or info is None):
        raise ApiError(400, "FORMAT_ERROR", "regulatoryReportingCode and regulatoryReportingInformation are required "
                       "for transfers of NOK 100 000 or more", path="$.regulatoryReportingCode" if code is None
                       else "$.regulatoryReportingInformation")
    return amt, cur, _exec_date(body)


def validate_periodic(body, warnings):
    amt, cur = _common(body, warnings, periodic=True)
    _acct(body, "creditorAccount", "$")
    _address(body, "$", False)
    _acct(body, "debtorAccount", "$")
    start = date_field(body, "startDate", "$", True)
    if start < today():
        raise ApiError(400, "EXECUTION_DATE_INVALID", "startDate must not be in the past", path="$.startDate")
    end = date_field(body, "endDate", "$")
    if end is not None and end < start:
        raise ApiError(400, "EXECUTION_DATE_INVALID", "endDate must not be before startDate", path="$.endDate")
    string(body, "executionRule", "$", required=False, allowed={"following", "preceeding"})
    freq = string(body, "frequency", "$", allowed=FREQUENCIES)
    day = string(body, "dayOfExecution", "$", required=False, pattern=r"\d{1,2}")
    if day is not None and not 1 <= int(day) <= 31:
        raise fmt("$.dayOfExecution", "must be a day of month 1-31")
    key = "monthsOfExecution" if "monthsOfExecution" in body else "months" if "months" in body else "monthsOfExecution"
    months = body.get(key)
    if freq == "MonthlyVariable":
        if not isinstance(months, list) or not 1 <= len(months) <= 11:
            raise fmt("$." + key, "is required for MonthlyVariable: a list of 1 to 11 months")
        if any(isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= 12 for m in months):
            raise fmt("$." + key, "months must be integers 1-12")
        if len(set(months)) != len(months):
            raise ApiError(400, "FORMAT_ERROR", f"{key} lists a month more than once", path="$." + key)
    elif months is not None:
        warnings.append(f"{key} is only used with frequency MonthlyVariable and was ignored")
    return amt, cur, start


# ---------------- helpers ----------------

def payment_path(p):
    return f"/v1/{p['service']}/{p['product']}/{p['paymentId']}"


def _psu_context_checks(ctx):
    h = ctx.headers
    pc = h.get("psu-context")
    if pc is not None and pc.upper() not in ("PRIVATE", "CORPORATE"):
        raise ApiError(400, "FORMAT_ERROR", "PSU-Context must be PRIVATE or CORPORATE", path="PSU-Context")
    pc = pc.upper() if pc else None
    if pc == "CORPORATE" and not h.get("psu-corporate-id"):
        raise ApiError(400, "HTTP_HEADER_REQUIRED", "PSU-Corporate-ID is required for a corporate user",
                       path="PSU-Corporate-ID")
    return pc


def _load(ctx, service=None):
    s = ctx.store
    p = s.payments.get(ctx.params["paymentId"])
    service = service or ctx.params.get("service")
    if not p or p["tpp"] != ctx.tpp or p["service"] != service or p["product"] != ctx.params["product"]:
        raise ApiError(404, "RESOURCE_UNKNOWN", "payment not found for this product and TPP")
    return p


def _product(ctx, service):
    prod = ctx.params["product"]
    if prod not in PRODUCTS["payments"]:
        raise ApiError(404, "PRODUCT_UNKNOWN", f"payment product {prod} is not offered")
    if prod not in PRODUCTS[service]:
        raise ApiError(403, "PRODUCT_INVALID", f"payment product {prod} is not offered as {service}")
    return prod


def _duplicate(ctx, prod, body, service):
    keys = ("instructedAmount", "creditorAccount", "debtorAccount", "requestedExecutionDate", "startDate",
            "remittanceInformationUnstructured", "remittanceInformationStructuredArray")
    sig = {k: body.get(k) for k in keys}
    for p in ctx.store.payments.all():
        if p["tpp"] == ctx.tpp and p["product"] == prod and p["service"] == service and \
                p["status"] not in ("RJCT", "CANC") and now() - p["created"] < dt.timedelta(hours=24) and \
                {k: p["body"].get(k) for k in keys} == sig:
            return p
    return None


def render_initiation(ctx, p, warnings=()):
    base = payment_path(p)
    links = {"self": link(base, "GET", "DELETE"), "status": link(base + "/status")}
    out = {"paymentId": p["paymentId"], "transactionStatus": p["status"],
           "transactionFeeIndicator": p["fee"] is not None}
    if p["fee"] is not None:
        out["transactionFees"] = {"amount": p["fee"], "currency": "NOK"}
    auth = ctx.store.authorisations.get(p["authorisations"][-1]) if p["authorisations"] else None
    if auth:
        links["scaRedirect"] = link(sca.redirect_url(ctx, auth))
        links["scaStatus"] = link(f"{base}/authorisations/{auth['id']}")
        out["psuMessage"] = "Please confirm the payment with BankID in your bank."
    else:
        links["startAuthorisation"] = link(f"{base}/authorisations", "POST")
    if warnings:
        out["tppMessages"] = [{"category": "WARNING", "code": "FORMAT_ERROR", "text": w[:512]} for w in warnings]
    out["_links"] = links
    return out


# ---------------- operations ----------------

def _create(ctx, service):
    prod = _product(ctx, service)
    body = ctx.json_object()
    h = ctx.headers
    if not h.get("psu-id") and not h.get("x-psu-identity"):
        raise ApiError(400, "HTTP_HEADER_REQUIRED", "PSU-ID (or X-PSU-IDENTITY) is required", path="PSU-ID")
    pc = _psu_context_checks(ctx)
    warnings = []
    if service == "periodic-payments":
        amt, cur, exec_date = validate_periodic(body, warnings)
    elif prod == NDCT:
        amt, cur, exec_date = validate_ndct(body, warnings)
    else:
        amt, cur, exec_date = validate_ncbct(body, warnings)
    allow_dup = parse_query_bool(ctx.query, "allowLogicalDuplicate")
    with ctx.store.lock:
        if not allow_dup:
            dup = _duplicate(ctx, prod, body, service)
            if dup:
                raise ApiError(409, "CONFLICT", f"logical duplicate of payment {dup['paymentId']}; "
                               "send allowLogicalDuplicate=true to create it anyway")
        p = {"paymentId": new_id(), "service": service, "product": prod, "tpp": ctx.tpp, "body": body,
             "status": "RCVD", "created": now(), "updated": now(), "amount": amt, "currency": cur,
             "executionDate": exec_date, "psuId": h.get("psu-id") or h.get("x-psu-identity"), "psuContext": pc,
             "corporateId": h.get("psu-corporate-id"), "redirectUri": h.get("tpp-redirect-uri"),
             "fee": amount_str(50, "NOK") if prod == NCBCT and service == "payments" else None,
             "authorisations": [], "basketId": None, "fundsAvailable": None}
        ctx.store.payments.add(p, key="paymentId")
        if pc:
            sca.start(ctx, "payment", p["paymentId"], p)
    return 201, render_initiation(ctx, p, warnings), {"Location": payment_path(p)}


def create_payment(ctx):
    return _create(ctx, "payments")


def create_periodic(ctx):
    return _create(ctx, "periodic-payments")


def get_payment(ctx):
    p = _load(ctx)
    return 200, p["body"] | {"paymentId": p["paymentId"], "transactionStatus": p["status"],
                             "createdAt": iso(p["created"]),
                             "_links": {"self": link(payment_path(p), "GET", "DELETE"),
                                        "status": link(payment_path(p) + "/status")}}


def get_status(ctx):
    p = _load(ctx)
    out = {"transactionStatus": p["status"]}
    if p["fundsAvailable"] is not None:
        out["fundsAvailable"] = p["fundsAvailable"]
    return 200, out


def cancel_payment(ctx):
    with ctx.store.lock:
        p = _load(ctx)
        if p["status"] == "PDNG":
            raise ApiError(400, "CANCELLATION_INVALID", "a payment in status PDNG cannot be deleted")
        if p["status"] in FINAL:
            raise ApiError(400, "CANCELLATION_INVALID", f"a payment in status {p['status']} cannot be deleted")
        if p["service"] == "payments" and p["status"] not in ("RCVD", "ACTC"):
            raise ApiError(400, "CANCELLATION_INVALID", f"a payment in status {p['status']} cannot be deleted")
        p["status"], p["updated"] = "CANC", now()
        for aid in p["authorisations"]:
            a = ctx.store.authorisations.get(aid)
            if a and a["scaStatus"] not in ("FINALISED", "FAILED"):
                a["scaStatus"] = "FAILED"
    return 204, None


def start_authorisation(ctx):
    with ctx.store.lock:
        p = _load(ctx)
        if p["status"] != "RCVD":
            raise ApiError(400, "RESOURCE_BLOCKED", f"payment is in status {p['status']} and needs no authorisation")
        if p["basketId"]:
            raise ApiError(400, "RESOURCE_BLOCKED", f"payment is part of signing basket {p['basketId']}")
        pc = _psu_context_checks(ctx) or p["psuContext"]
        if not pc:
            raise ApiError(400, "HTTP_HEADER_REQUIRED", "PSU-Context is required for single-SCA initiation",
                           path="PSU-Context")
        p["psuContext"] = pc
        a = sca.start(ctx, "payment", p["paymentId"], p)
    return 201, sca.render(ctx, a, f"{payment_path(p)}/authorisations/{a['id']}"), \
        {"Location": f"{payment_path(p)}/authorisations/{a['id']}"}


def list_authorisations(ctx):
    p = _load(ctx)
    return 200, {"authorisationIds": list(p["authorisations"])}


def get_authorisation(ctx):
    p = _load(ctx)
    aid = ctx.params["authorisationId"]
    if aid not in p["authorisations"]:
        raise ApiError(404, "RESOURCE_UNKNOWN", "authorisation not found")
    a = ctx.store.authorisations.get(aid)
    return 200, sca.render(ctx, a, f"{payment_path(p)}/authorisations/{aid}")


# ---------------- signing baskets ----------------

def basket_status(store, b):
    ranks = []
    for pid in b["paymentIds"]:
        s = store.payments.get(pid)["status"]
        ranks.append("RJCT" if s in ("RJCT", "CANC") else "RCVD" if s == "RCVD" else "PATC" if s == "PART" else "ACTC")
    return min(ranks, key=BASKET_RANK.get)


def render_basket(ctx, b, with_auth_link=True):
    base = f"/v1/signing-baskets/{b['basketId']}"
    links = {"self": link(base, "GET", "DELETE"), "status": link(base + "/status")}
    st = basket_status(ctx.store, b)
    if with_auth_link and st == "RCVD" and not b["authorisations"]:
        links["startAuthorisation"] = link(base + "/authorisations", "POST")
    return {"basketId": b["basketId"], "transactionStatus": st, "paymentIds": b["paymentIds"], "_links": links}


def create_basket(ctx):
    body = ctx.json_object()
    ids = body.get("paymentIds")
    if not isinstance(ids, list) or not ids or any(not isinstance(i, str) for i in ids):
        raise fmt("$.paymentIds", "must be a non-empty array of payment ids")
    if len(ids) > 10:
        raise ApiError(400, "FORMAT_ERROR", "a signing basket holds at most 10 payments", path="$.paymentIds")
    if len(set(ids)) != len(ids):
        raise fmt("$.paymentIds", "lists a payment more than once")
    _psu_context_checks(ctx)
    with ctx.store.lock:
        pays = []
        for i in ids:
            p = ctx.store.payments.get(i)
            if not p or p["tpp"] != ctx.tpp:
                raise ApiError(400, "RESOURCE_UNKNOWN", f"payment {i} is unknown", path="$.paymentIds")
            if p["service"] != "payments":
                raise ApiError(400, "REFERENCE_MIX_INVALID",
                               f"payment {i} is a {p['service']} payment; periodic and bulk payments cannot be added")
            if p["status"] != "RCVD":
                raise ApiError(400, "RESOURCE_BLOCKED", f"payment {i} is in status {p['status']}")
            if p["basketId"] or any(ctx.store.authorisations.get(a)["scaStatus"] not in ("FAILED",)
                                    for a in p["authorisations"]):
                raise ApiError(400, "RESOURCE_BLOCKED", f"payment {i} is already in a basket or under authorisation")
            pays.append(p)
        b = {"basketId": new_id(), "tpp": ctx.tpp, "paymentIds": ids, "authorisations": [], "created": now(),
             "deleted": False, "psuId": ctx.headers.get("psu-id"), "redirectUri": ctx.headers.get("tpp-redirect-uri")}
        for p in pays:
            p["basketId"] = b["basketId"]
        ctx.store.baskets.add(b, key="basketId")
    return 201, render_basket(ctx, b), {"Location": f"/v1/signing-baskets/{b['basketId']}"}


def _basket(ctx):
    b = ctx.store.baskets.get(ctx.params["basketId"])
    if not b or b["tpp"] != ctx.tpp or b["deleted"]:
        raise ApiError(404, "RESOURCE_UNKNOWN", "signing basket not found")
    return b


def get_basket(ctx):
    return 200, render_basket(ctx, _basket(ctx))


def get_basket_status(ctx):
    return 200, {"transactionStatus": basket_status(ctx.store, _basket(ctx))}


def delete_basket(ctx):
    with ctx.store.lock:
        b = _basket(ctx)
        if any(ctx.store.authorisations.get(a)["scaStatus"] != "FAILED" for a in b["authorisations"]):
            raise ApiError(400, "RESOURCE_BLOCKED", "the basket is under or after authorisation and cannot be deleted")
        b["deleted"] = True
        for pid in b["paymentIds"]:
            ctx.store.payments.get(pid)["basketId"] = None
    return 204, None


def start_basket_authorisation(ctx):
    with ctx.store.lock:
        b = _basket(ctx)
        if basket_status(ctx.store, b) != "RCVD" or any(
                ctx.store.authorisations.get(a)["scaStatus"] not in ("FAILED",) for a in b["authorisations"]):
            raise ApiError(400, "RESOURCE_BLOCKED", "the signing basket is already under or after authorisation")
        _psu_context_checks(ctx)
        a = sca.start(ctx, "basket", b["basketId"], b)
    path = f"/v1/signing-baskets/{b['basketId']}/authorisations/{a['id']}"
    if not (ctx.headers.get("psu-id") or ctx.headers.get("x-psu-identity")):
        # PSU unknown to the bank: it must identify and authenticate itself at the redirect
        err = ApiError(401, "SCA_REQUIRED", "The PSU is not identified (no PSU-ID); send it to scaRedirect",
                       links={"self": link(path), "scaRedirect": link(sca.redirect_url(ctx, a))},
                       headers={"Location": path})
        err.extra = {"scaStatus": a["scaStatus"], "authorisationId": a["id"]}
        raise err
    return 201, sca.render(ctx, a, path), {"Location": path}


def list_basket_authorisations(ctx):
    return 200, {"authorisationIds": list(_basket(ctx)["authorisations"])}


def get_basket_authorisation(ctx):
    b = _basket(ctx)
    aid = ctx.params["authorisationId"]
    if aid not in b["authorisations"]:
        raise ApiError(404, "RESOURCE_UNKNOWN", "authorisation not found")
    return 200, sca.render(ctx, ctx.store.authorisations.get(aid),
                           f"/v1/signing-baskets/{b['basketId']}/authorisations/{aid}")


# ---------------- simulated batch processing ----------------

def run_batch(store):
    """ACTC/PDNG single payments whose execution date has come are settled (ACSC) or rejected (RJCT)."""
    moved = []
    with store.lock:
        for p in store.payments.all():
            if p["service"] != "payments" or p["status"] not in ("ACTC", "PDNG"):
                continue
            if p["executionDate"] and p["executionDate"] > today():
                p["status"] = "PDNG"
                continue
            d = p["body"].get("debtorAccount", {})
            acc = store.account_by_ref(bban=d.get("bban"), iban=d.get("iban"))
            whole = int(p["amount"].to_integral_value())
            if acc:
                bal = next((b["balanceAmount"]["amount"] for b in acc["balances"] if b["balanceType"] == "expected"), 0)
                p["fundsAvailable"] = bal + acc["creditLine"] >= whole
                if not p["fundsAvailable"]:
                    p["status"] = "RJCT"
                    moved.append(p["paymentId"])
                    continue
                for b in acc["balances"]:
                    b["balanceAmount"]["amount"] -= whole
                body = p["body"]
                day = today().isoformat()
                store.transactions.add({
                    "id": new_id(), "accountId": acc["id"], "amount": -whole, "currency": p["currency"],
                    "valueDate": day, "bookingDate": day,
                    "remittanceInformationUnstructured": body.get("remittanceInformationUnstructured") or
                    ", ".join(r.get("reference", "") for r in body.get("remittanceInformationStructuredArray") or []),
                    "creditorName": body.get("creditorName", ""),
                    "creditorAccount": {"iban": body["creditorAccount"].get("iban", ""),
                                        "bban": body["creditorAccount"].get("bban", "")},
                    "debtorName": "", "debtorAccount": {"iban": acc["iban"], "bban": acc["bban"]},
                    "bankTransactionCode": "PMNT-ICDT-DMCT" if p["product"] == NDCT else "PMNT-ICDT-XBCT",
                    "ultimateDebtor": body.get("ultimateDebtor", ""), "ultimateCreditor": "",
                    "purposeCode": body.get("purposeCode", "OTHR"), "creditorId": "", "paymentId": p["paymentId"]})
            p["status"], p["updated"] = "ACSC", now()
            moved.append(p["paymentId"])
    return moved


def batch_run(ctx):
    moved = run_batch(ctx.store)
    return 200, {"processedPayments": moved, "runAt": iso(now())}
