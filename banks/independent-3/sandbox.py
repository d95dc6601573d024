"""Sandbox mock-data operations (E3-E7, E9-E15 and the named creation operations)."""
import datetime as dt

from common import (ApiError, boolean, country, currency, date_field, fmt, int32, is_uuid, link,
                    new_id, obj, parse_query_bool, parse_query_date, parse_query_int, string, today)
from store import bban_to_iban, new_bban, random_digits

SB = "/v1/sandbox"
ROLES = {"OWNER", "DISPOSAL", "VIEW", "REGISTER", "APPROVE", "INTERNAL_TRANSFER", "SALARY"}
CASH_TYPES = set("CACC CASH CHAR CISH COMM CPAC LLSV LOAN MGLD MOMA NREX ODFT ONDP OTHR SACC SLRY SVGS TAXE TRAN TRAS".split())


def _list_body(body, path="$"):
    if not isinstance(body, list):
        raise fmt(path, "body must be a JSON array")
    if not body:
        raise fmt(path, "array must not be empty")
    return body


def _owner(ctx, body, path="$"):
    ref = body.get("customerId") or body.get("customerNumber") or body.get("owner")
    if not ref:
        raise fmt(path + ".customerNumber", "is required (customerNumber or customerId of the owning customer)")
    c = ctx.store.customer_by_ref(str(ref))
    if not c:
        raise ApiError(400, "RESOURCE_UNKNOWN", f"customer {ref} does not exist in the sandbox")
    return c


# ---------------- customers ----------------

def render_customer(ctx, c, with_accounts=True, with_agreements=True):
    s = ctx.store
    ags = []
    if with_agreements:
        for ag in s.agreements.all():
            if ag["ownerCustomerId"] == c["customerId"] or any(
                    e["customer"] in (c["customerId"], c["customerNumber"]) for e in ag["engagements"]):
                ags.append({"id": ag["id"], "name": ag["name"], "engagements": [e["id"] for e in ag["engagements"]],
                            "_links": {"self": link(f"{SB}/agreements/{ag['id']}"),
                                       "engagements": link(f"{SB}/agreements/{ag['id']}/engagements", "GET", "POST")}})
    return {"customerId": c["customerId"], "customerNumber": c["customerNumber"], "customerType": c["customerType"],
            "customerName": c["customerName"], "agreements": ags,
            "accounts": [a["id"] for a in s.accounts.find(ownerCustomerId=c["customerId"])] if with_accounts else [],
            "cardAccounts": [a["resourceId"] for a in s.card_accounts.find(ownerCustomerId=c["customerId"])]
            if with_accounts else [],
            "_links": {"self": link(f"{SB}/customers/{c['customerId']}")}}


def create_customer(ctx, body=None):
    body = body if body is not None else ctx.json_object()
    ctype = string(body, "customerType", "$")
    if ctype.upper() not in ("PRIVATE", "CORPORATE"):
        raise ApiError(400, "FORMAT_ERROR", "customerType must be PRIVATE or CORPORATE", path="$.customerType")
    ctype = ctype.upper()
    name = string(body, "customerName", "$", maxlen=70, minlen=1)
    cid = string(body, "customerId", "$", required=False) or new_id()
    if not is_uuid(cid):
        raise fmt("$.customerId", "must be a UUID")
    num = string(body, "customerNumber", "$", required=False, pattern=r"\d{9}|\d{11}")
    if num is None:
        num = random_digits(11 if ctype == "PRIVATE" else 9)
    with ctx.store.lock:
        if ctx.store.customers.get(cid) or ctx.store.customer_by_number(num):
            raise ApiError(409, "CONFLICT", "a customer with this customerId or customerNumber already exists")
        c = ctx.store.customers.add({"customerId": cid, "customerNumber": num, "customerType": ctype,
                                     "customerName": name}, key="customerId")
    return 201, render_customer(ctx, c)


def list_customers(ctx):
    wa = parse_query_bool(ctx.query, "withAccounts")
    wg = parse_query_bool(ctx.query, "withAgreements")
    return 200, [render_customer(ctx, c, wa is not False, wg is not False) for c in ctx.store.customers.all()]


def get_customer(ctx):
    c = ctx.store.customer_by_ref(ctx.params["mockCustomerId"])
    if not c:
        raise ApiError(404, "RESOURCE_UNKNOWN", "customer not found")
    return 200, render_customer(ctx, c)


# ---------------- accounts ----------------

def balance_items(items, path):
    out = []
    for i, b in enumerate(items):
        p = f"{path}[{i}]"
        if not isinstance(b, dict):
            raise fmt(p, "must be an object")
        ba = obj(b, "balanceAmount", p)
        out.append({"balanceAmount": {"currency": currency(ba, "currency", p + ".balanceAmount"),
                                      "amount": int32(ba, "amount", p + ".balanceAmount")},
                    "balanceType": string(b, "balanceType", p, allowed={"closingBooked", "expected"})})
    return out


def render_account(a):
    return {"id": a["id"], "customerNumber": a["customerNumber"], "accountName": a["accountName"], "bban": a["bban"],
            "iban": a["iban"], "currency": a["currency"], "product": a["product"],
            "cashAccountType": a["cashAccountType"], "creditLine": a["creditLine"], "balances": a["balances"],
            "_links": {"self": link(f"{SB}/accounts/{a['id']}"),
                       "transactions": link(f"{SB}/accounts/{a['id']}/transactions", "GET", "POST")}}


def create_account(ctx, body=None):
    body = body if body is not None else ctx.json_object()
    owner = _owner(ctx, body)
    cur = currency(body, "currency", "$", required=False) or "NOK"
    bban = string(body, "bban", "$", required=False, pattern=r"\d{11}") or new_bban()
    acc = {"id": string(body, "id", "$", required=False, minlen=1, maxlen=64) or new_id(),
           "customerNumber": owner["customerNumber"], "ownerCustomerId": owner["customerId"],
           "accountName": string(body, "accountName", "$", required=False, maxlen=70) or "Brukskonto",
           "bban": bban, "iban": bban_to_iban(bban), "currency": cur,
           "product": string(body, "product", "$", required=False, maxlen=70) or "Brukskonto",
           "cashAccountType": string(body, "cashAccountType", "$", required=False, allowed=CASH_TYPES) or "CACC",
           "creditLine": int32(body, "creditLine", "$", required=False) or 0}
    if body.get("balances") is not None:
        if not isinstance(body["balances"], list):
            raise fmt("$.balances", "must be an array")
        acc["balances"] = balance_items(body["balances"], "$.balances")
    else:
        acc["balances"] = [{"balanceAmount": {"currency": cur, "amount": 0}, "balanceType": t}
                           for t in ("closingBooked", "expected")]
    with ctx.store.lock:
        if ctx.store.accounts.get(acc["id"]) or ctx.store.account_by_ref(bban=bban):
            raise ApiError(409, "CONFLICT", "an account with this id or bban already exists")
        ctx.store.accounts.add(acc)
    return 201, render_account(acc)


def _account(ctx):
    a = ctx.store.accounts.get(ctx.params["mockAccountId"])
    if not a:
        raise ApiError(404, "RESOURCE_UNKNOWN", "mock account not found")
    return a


def get_account(ctx):
    return 200, [render_account(_account(ctx))]


def delete_account(ctx):
    a = _account(ctx)
    ctx.store.accounts.delete(a["id"])
    return 204, None


def change_balance(ctx):
    a = _account(ctx)
    items = balance_items(_list_body(ctx.body), "$")
    with ctx.store.lock:
        for b in items:
            a["balances"] = [x for x in a["balances"] if x["balanceType"] != b["balanceType"]] + [b]
    return 200, [render_account(a)]


# ---------------- account transactions ----------------

def _date_rules(book, value, p):
    t = today()
    if book > t:
        raise ApiError(400, "FORMAT_ERROR", f"{p}.bookingDate must be before the current time", path=p + ".bookingDate")
    if value is not None and value > t:
        raise ApiError(400, "FORMAT_ERROR", f"{p}.valueDate must be before the current time", path=p + ".valueDate")
    if value is not None and book > value:
        raise ApiError(400, "FORMAT_ERROR", f"{p}.bookingDate must not be after valueDate", path=p + ".bookingDate")


def _acct_ref(o, key, p):
    r = obj(o, key, p)
    iban = string(r, "iban", f"{p}.{key}", required=False, maxlen=34)
    bban = string(r, "bban", f"{p}.{key}", required=False, maxlen=30)
    if not iban and not bban:
        raise fmt(f"{p}.{key}", "needs iban or bban")
    return {"iban": iban or "", "bban": bban or ""}


def render_tx(t):
    out = {k: t[k] for k in ("id", "amount", "currency", "valueDate", "bookingDate", "remittanceInformationUnstructured",
                             "creditorName", "creditorAccount", "debtorName", "debtorAccount", "bankTransactionCode",
                             "ultimateDebtor", "ultimateCreditor", "purposeCode")}
    out["_links"] = {"self": link(f"{SB}/accounts/{t['accountId']}/transactions/{t['id']}")}
    return out


def create_transactions(ctx):
    a = _account(ctx)
    items = _list_body(ctx.body)
    new = []
    for i, it in enumerate(items):
        p = f"$[{i}]"
        if not isinstance(it, dict):
            raise fmt(p, "must be an object")
        tx = {"id": new_id(), "accountId": a["id"], "amount": int32(it, "amount", p),
              "currency": currency(it, "currency", p)}
        for k in ("remittanceInformationUnstructured", "creditorName", "debtorName", "ultimateDebtor",
                  "ultimateCreditor", "creditorId"):
            tx[k] = string(it, k, p, maxlen=140 if k.startswith("remit") else 70)
        tx["bankTransactionCode"] = string(it, "bankTransactionCode", p, minlen=4, maxlen=14)
        tx["purposeCode"] = string(it, "purposeCode", p, minlen=1, maxlen=4)
        book, value = date_field(it, "bookingDate", p, True), date_field(it, "valueDate", p, True)
        _date_rules(book, value, p)
        tx["bookingDate"], tx["valueDate"] = book.isoformat(), value.isoformat()
        tx["creditorAccount"] = _acct_ref(it, "creditorAccount", p)
        tx["debtorAccount"] = _acct_ref(it, "debtorAccount", p)
        d = tx["debtorAccount"]
        if (d["iban"] and d["iban"] != a["iban"]) or (d["bban"] and d["bban"] != a["bban"]):
            raise ApiError(400, "DEBTOR_ACCOUNT_MISMATCH",
                           f"{p}.debtorAccount must be the mock account {a['id']} itself (iban {a['iban']})",
                           path=p + ".debtorAccount")
        new.append(tx)
    with ctx.store.lock:
        for tx in new:
            ctx.store.transactions.add(tx)
    return 201, [render_tx(t) for t in new]


def list_transactions(ctx):
    a = _account(ctx)
    q = ctx.query
    f, t = parse_query_date(q, "fromDate"), parse_query_date(q, "toDate")
    off = parse_query_int(q, "offset", 0) or 0
    lim = parse_query_int(q, "limit", 1)
    txs = [x for x in ctx.store.transactions.find(accountId=a["id"])
           if (not f or x["bookingDate"] >= f.isoformat()) and (not t or x["bookingDate"] <= t.isoformat())]
    txs.sort(key=lambda x: (x["bookingDate"], x["id"]), reverse=True)
    txs = txs[off:] if lim is None else txs[off:off + lim]
    return 200, [render_tx(x) for x in txs]


def get_transaction(ctx):
    a = _account(ctx)
    tx = ctx.store.transactions.get(ctx.params["mockTransactionId"])
    if not tx or tx["accountId"] != a["id"]:
        raise ApiError(404, "RESOURCE_UNKNOWN", "mock transaction not found")
    return 200, render_tx(tx)


# ---------------- card accounts ----------------

def render_card(c):
    return {"cardAccount": {k: c[k] for k in ("resourceId", "maskedPan", "currency", "creditLimit", "balances", "cardId",
                                              "cardIdVNo", "accountNumber", "expiry", "name", "product", "status")}
            | {"_links": {"self": link(f"{SB}/card-accounts/{c['resourceId']}"),
                          "transactions": link(f"{SB}/card-accounts/{c['resourceId']}/transactions", "GET", "POST")}}}


def create_card_account(ctx, body=None):
    body = body if body is not None else ctx.json_object()
    owner = _owner(ctx, body)
    cur = currency(body, "currency", "$", required=False) or "NOK"
    pan = "5" + random_digits(15)
    lim = body.get("creditLimit") or {"currency": cur, "amount": 50000}
    c = {"resourceId": new_id(), "ownerCustomerId": owner["customerId"], "maskedPan": pan[:6] + "******" + pan[-4:],
         "currency": cur, "creditLimit": {"currency": currency(lim, "currency", "$.creditLimit"),
                                          "amount": int32(lim, "amount", "$.creditLimit")},
         "cardId": random_digits(10), "cardIdVNo": random_digits(2),
         "accountNumber": string(body, "accountNumber", "$", required=False) or random_digits(11),
         "expiry": string(body, "expiry", "$", required=False) or f"{(today().year + 3) % 100:02d}/12",
         "name": string(body, "name", "$", required=False, maxlen=70) or owner["customerName"],
         "product": string(body, "product", "$", required=False) or "Mastercard Gold",
         "status": string(body, "status", "$", required=False, allowed={"enabled", "deleted", "blocked"}) or "enabled"}
    c["balances"] = [{"balanceAmount": {"currency": cur, "amount": 0}, "balanceType": t}
                     for t in ("closingBooked", "expected")]
    with ctx.store.lock:
        ctx.store.card_accounts.add(c, key="resourceId")
    return 201, render_card(c)


def _card(ctx):
    c = ctx.store.card_accounts.get(ctx.params["mockCardAccountId"])
    if not c:
        raise ApiError(404, "RESOURCE_UNKNOWN", "mock card account not found")
    return c


def get_card_account(ctx):
    return 200, render_card(_card(ctx))


def _amt(o, key, p):
    m = obj(o, key, p)
    a = m.get("amount")
    if isinstance(a, str) and a.lstrip("-").isdigit():
        a = int(a)
    if isinstance(a, bool) or not isinstance(a, int):
        raise fmt(f"{p}.{key}.amount", "must be an integer")
    return {"currency": currency(m, "currency", f"{p}.{key}"), "amount": a}


def card_tx_response(ctx, c, txs):
    swap = "cardaccount-switch-originalamount-and-transactionamount" in ctx.fixes
    booked = []
    for t in txs:
        ta, oa = (t["originalAmount"], t["transactionAmount"]) if swap else (t["transactionAmount"], t["originalAmount"])
        booked.append({"cardTransactionId": t["cardTransactionId"], "bookingDate": t["bookingDate"],
                       "transactionDate": t["transactionDate"], "transactionAmount": ta, "originalAmount": oa,
                       "merchantCategoryCode": t["merchantCategoryCode"]} |
                      {k: t[k] for k in ("terminalId", "cardAcceptorId", "transactionDetails", "invoiced",
                                         "proprietaryBankTransactionCode") if k in t})
    return {"cardAccount": {"maskedPan": c["maskedPan"]}, "cardTransactions": {"booked": booked, "pending": []}}


def create_card_transactions(ctx):
    c = _card(ctx)
    items = _list_body(ctx.body)
    new = []
    for i, it in enumerate(items):
        p = f"$[{i}]"
        if not isinstance(it, dict):
            raise fmt(p, "must be an object")
        t = {"cardAccountId": c["resourceId"]}
        for k in ("cardTransactionId", "terminalId", "merchantCategoryCode", "cardAcceptorId", "maskedPan",
                  "transactionDetails", "proprietaryBankTransactionCode", "markupFeePercentage"):
            t[k] = string(it, k, p)
        inv = it.get("invoiced")
        if isinstance(inv, bool):
            inv = "true" if inv else "false"
        if inv not in ("true", "false"):
            raise fmt(p + ".invoiced", "must be the string true or false")
        t["invoiced"] = inv
        book, txd = date_field(it, "bookingDate", p, True), date_field(it, "transactionDate", p, True)
        vd = date_field(it, "valueDate", p, False)
        _date_rules(book, vd, p)
        if txd > today():
            raise fmt(p + ".transactionDate", "must be before the current time")
        t["bookingDate"], t["transactionDate"] = book.isoformat(), txd.isoformat()
        t["transactionAmount"], t["originalAmount"] = _amt(it, "transactionAmount", p), _amt(it, "originalAmount", p)
        t["markupFee"] = _amt(it, "markupFee", p)
        addr = obj(it, "cardAcceptorAddress", p)
        pa = p + ".cardAcceptorAddress"
        t["cardAcceptorAddress"] = {"street": string(addr, "street", pa, required=False, maxlen=70),
                                    "buildingNumber": string(addr, "buildingNumber", pa, required=False),
                                    "postalCode": string(addr, "postalCode", pa, required=False),
                                    "city": string(addr, "city", pa, required=False),
                                    "country": country(addr, "country", pa)}
        cx = obj(it, "currencyExchange", p, required=False)
        if cx is not None:
            pc = p + ".currencyExchange"
            for k in ("sourceCurrency", "targetCurrency", "unitCurrency"):
                currency(cx, k, pc)
            string(cx, "exchangeRate", pc)
            date_field(cx, "quotationDate", pc, True)
            t["currencyExchange"] = cx
        with ctx.store.lock:
            if ctx.store.card_transactions.get(t["cardTransactionId"]) or \
                    any(n["cardTransactionId"] == t["cardTransactionId"] for n in new):
                raise ApiError(409, "CONFLICT", f"{p}.cardTransactionId already exists")
        new.append(t)
    with ctx.store.lock:
        for t in new:
            ctx.store.card_transactions.add(t, key="cardTransactionId")
    return 201, card_tx_response(ctx, c, new)


def list_card_transactions(ctx):
    c = _card(ctx)
    q = ctx.query
    bs = q.get("bookingStatus")
    if not bs:
        raise ApiError(400, "QUERY_PARAMETER_REQUIRED", "query parameter bookingStatus is required", path="bookingStatus")
    if bs not in ("booked", "pending", "both"):
        raise ApiError(400, "FORMAT_ERROR", "bookingStatus must be booked, pending or both", path="bookingStatus")
    f, t = parse_query_date(q, "fromDate"), parse_query_date(q, "toDate")
    off = parse_query_int(q, "offset", 0) or 0
    lim = parse_query_int(q, "limit", 1)
    txs = [] if bs == "pending" else [
        x for x in ctx.store.card_transactions.find(cardAccountId=c["resourceId"])
        if (not f or x["bookingDate"] >= f.isoformat()) and (not t or x["bookingDate"] <= t.isoformat())]
    txs.sort(key=lambda x: (x["bookingDate"], x["cardTransactionId"]), reverse=True)
    txs = txs[off:] if lim is None else txs[off:off + lim]
    return 200, card_tx_response(ctx, c, txs)


# ---------------- agreements and engagements ----------------

def _rights(roles):
    r = set(roles)
    return {"accessRights": bool(r & {"OWNER", "VIEW", "DISPOSAL"}),
            "paymentRights": bool(r & {"OWNER", "DISPOSAL", "REGISTER", "APPROVE"}),
            "transferRights": bool(r & {"OWNER", "DISPOSAL", "INTERNAL_TRANSFER"})}


def render_agreement(ag):
    return {"id": ag["id"], "name": ag["name"], "owner": ag["owner"], "engagements": ag["engagements"],
            "_links": {"self": link(f"{SB}/agreements/{ag['id']}"),
                       "engagements": link(f"{SB}/agreements/{ag['id']}/engagements", "POST")}}


def _engagement(ctx, ag, e, p):
    cust = string(e, "customer", p, minlen=1)
    c = ctx.store.customer_by_ref(cust)
    if not c:
        raise ApiError(400, "RESOURCE_UNKNOWN", f"{p}.customer: customer {cust} does not exist", path=p + ".customer")
    acc_ref = obj(e, "account", p)
    iban = string(acc_ref, "iban", p + ".account", required=False)
    bban = string(acc_ref, "bban", p + ".account", required=False)
    a = ctx.store.account_by_ref(bban=bban, iban=iban)
    if not a:
        raise ApiError(400, "RESOURCE_UNKNOWN", f"{p}.account: account does not exist", path=p + ".account")
    if a["ownerCustomerId"] != ag["ownerCustomerId"]:
        raise ApiError(400, "ENGAGEMENT_INVALID",
                       f"{p}.account must be owned by the agreement owner {ag['owner']}", path=p + ".account")
    roles = e.get("roles")
    if not isinstance(roles, list) or not roles or any(r not in ROLES for r in roles):
        raise fmt(p + ".roles", "must be a non-empty array of " + ", ".join(sorted(ROLES)))
    out = {"id": new_id(), "customer": c["customerId"] if cust == c["customerId"] else cust,
           "account": {"bban": a["bban"], "iban": a["iban"]}, "roles": list(dict.fromkeys(roles)),
           "registerLimit": int32(e, "registerLimit", p), "approvalLimit": int32(e, "approvalLimit", p)}
    out.update(_rights(roles))
    name = string(e, "name", p, required=False, maxlen=70)
    if name:
        out["name"] = name
    return out


def create_agreement(ctx, body=None):
    body = body if body is not None else ctx.json_object()
    owner = _owner(ctx, {"owner": body.get("owner") or body.get("customerNumber") or body.get("customerId")})
    ag = {"id": new_id(), "name": string(body, "name", "$", minlen=1, maxlen=70),
          "owner": owner["customerNumber"], "ownerCustomerId": owner["customerId"], "engagements": []}
    engs = body.get("engagements") or []
    if not isinstance(engs, list):
        raise fmt("$.engagements", "must be an array")
    ag["engagements"] = [_engagement(ctx, ag, e if isinstance(e, dict) else {}, f"$.engagements[{i}]")
                         for i, e in enumerate(engs)]
    with ctx.store.lock:
        ctx.store.agreements.add(ag)
    return 201, render_agreement(ag)


def _agreement(ctx):
    ag = ctx.store.agreements.get(ctx.params["mockAgreementId"])
    if not ag:
        raise ApiError(404, "RESOURCE_UNKNOWN", "mock agreement not found")
    return ag


def get_agreement(ctx):
    return 200, render_agreement(_agreement(ctx))


def render_engagement(ag, e):
    return e | {"_links": {"self": link(f"{SB}/agreements/{ag['id']}/engagements/{e['id']}")}}


def create_engagement(ctx):
    ag = _agreement(ctx)
    e = _engagement(ctx, ag, ctx.json_object(), "$")
    with ctx.store.lock:
        ag["engagements"].append(e)
    return 201, render_engagement(ag, e)


def get_engagement(ctx):
    ag = _agreement(ctx)
    for e in ag["engagements"]:
        if e["id"] == ctx.params["mockEngagementId"]:
            return 200, render_engagement(ag, e)
    raise ApiError(404, "RESOURCE_UNKNOWN", "engagement not found in this agreement")


# ---------------- seed data ----------------

class _SeedCtx:
    def __init__(self, store):
        self.store, self.fixes = store, set()


def seed(store):
    ctx = _SeedCtx(store)
    ola = create_customer(ctx, {"customerType": "PRIVATE", "customerName": "Ola Nordmann",
                                "customerNumber": "31125461118",
                                "customerId": "0f8f3a52-6c1e-4a8e-9d7c-3f1b2a6e9c01"})[1]
    corp = create_customer(ctx, {"customerType": "CORPORATE", "customerName": "Fjord Demo AS",
                                 "customerNumber": "912345678",
                                 "customerId": "7d2c9b1e-2f4a-4c3d-8e5f-6a7b8c9d0e12"})[1]
    bal = lambda cur, n: [{"balanceAmount": {"currency": cur, "amount": n}, "balanceType": t}
                          for t in ("closingBooked", "expected")]
    a1 = create_account(ctx, {"customerNumber": ola["customerNumber"], "id": "a1b2c3d4-0001-4000-8000-000000000001",
                              "bban": "12345678903", "accountName": "Ola brukskonto", "balances": bal("NOK", 25000)})[1]
    create_account(ctx, {"customerNumber": ola["customerNumber"], "id": "a1b2c3d4-0002-4000-8000-000000000002",
                         "accountName": "Ola sparekonto", "cashAccountType": "SVGS", "product": "Høyrentekonto",
                         "balances": bal("NOK", 120000)})
    ca = create_account(ctx, {"customerNumber": corp["customerNumber"], "id": "a1b2c3d4-0003-4000-8000-000000000003",
                              "accountName": "Fjord Demo driftskonto", "product": "Bedriftskonto",
                              "balances": bal("NOK", 2500000)})[1]
    create_agreement(ctx, {"name": "Fjord Demo nettbank", "owner": corp["customerNumber"],
                           "engagements": [{"customer": ola["customerId"], "account": {"iban": ca["iban"]},
                                            "roles": ["REGISTER", "VIEW", "APPROVE"], "registerLimit": 1000000,
                                            "approvalLimit": 500000}]})
    create_card_account(ctx, {"customerNumber": ola["customerNumber"], "name": "Ola Nordmann"})
    d = (today() - dt.timedelta(days=3)).isoformat()
    store.transactions.add({"id": "7b0e8f6c-0001-4000-9000-000000000001", "accountId": a1["id"], "amount": -450,
                            "currency": "NOK", "valueDate": d, "bookingDate": d,
                            "remittanceInformationUnstructured": "Strømregning oktober", "creditorName": "Fjordkraft AS",
                            "creditorAccount": {"iban": "NO9386011117947", "bban": "86011117947"},
                            "debtorName": "Ola Nordmann", "debtorAccount": {"iban": a1["iban"], "bban": a1["bban"]},
                            "bankTransactionCode": "PMNT-ICDT-DMCT", "ultimateDebtor": "Ola Nordmann",
                            "ultimateCreditor": "Fjordkraft AS", "purposeCode": "OTHR", "creditorId": ""})
